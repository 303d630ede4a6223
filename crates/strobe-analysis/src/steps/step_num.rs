//! JAX's and TensorFlow's steps: `jax.profiler.StepTraceAnnotation("train", step_num=3)`
//! (`tf.profiler.experimental.Trace(…, step_num=…)`) records a range named `train` whose
//! args carry `step_num`, in the XSpace and in its Chrome JSON alike. Such a range is a step
//! named `train 3`.

use strobe_store::Store;

/// Which names are step annotations, decided per name on its first range (a name's ranges
/// are all made by one call site), so only one range's args are read per name.
pub struct StepNums {
    /// Per string id: 0 undecided, 1 a step annotation, 2 not.
    seen: Vec<u8>,
}

impl StepNums {
    pub fn new(store: &Store) -> StepNums {
        StepNums { seen: vec![0; store.string_count()] }
    }

    /// The step this range is, named `<name> <step_num>`; None when its name is not a step
    /// annotation's or it has no number.
    pub fn step_name(&mut self, store: &Store, span: u32, name_id: u32) -> Option<String> {
        let state = self.seen.get_mut(name_id as usize)?;
        if *state == 2 {
            return None;
        }
        let n = step_num(store.span_args_raw(span));
        if *state == 0 {
            *state = if n.is_some() { 1 } else { 2 };
        }
        Some(format!("{} {}", store.string(name_id), n?))
    }
}

/// The `step_num` of an args object (`"step_num":3` or `"step_num":"3"`).
pub(super) fn step_num(args: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\"step_num\"";
    let at = memchr::memmem::find(args, KEY)? + KEY.len();
    let rest = &args[at..];
    let rest = &rest[rest.iter().position(|&c| c != b' ' && c != b':' && c != b'"')?..];
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn step_num_is_read_as_a_number_or_a_string() {
        assert_eq!(super::step_num(br#"{"step_num":3}"#), Some(3));
        assert_eq!(super::step_num(br#"{"_r": 1, "step_num": "12"}"#), Some(12));
        assert_eq!(super::step_num(br#"{"step_num":"x"}"#), None);
        assert_eq!(super::step_num(br#"{"step":3}"#), None);
    }
}
