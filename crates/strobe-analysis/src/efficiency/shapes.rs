//! The shapes, dtypes and scalar arguments Kineto records per CPU op with
//! `record_shapes=True`: `"Input Dims"` (one entry per argument: a list of sizes for a tensor,
//! `[]` for a scalar or an absent tensor, a list of lists for a `TensorList`), `"Input type"`
//! (`"c10::BFloat16"`, `"float"`, `"Scalar"`, `"ScalarList"`, `"TensorList"`, `""`) and
//! `"Concrete Inputs"` (scalars and scalar lists as text: `"True"`, `"[1, 1]"`, `"0."`).
//! Kineto's own FLOP estimate (`with_flops=True`) is the `"flops"` arg when it made one.

/// One argument's recorded shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Dims {
    /// A tensor: its sizes (`[]` is a 0-d tensor only when the type says a dtype).
    Tensor(Vec<i64>),
    /// A tensor list: the sizes of each tensor (empty when the profiler did not record them).
    List(Vec<Vec<i64>>),
}

/// The recorded inputs of one op.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpArgs {
    pub dims: Vec<Dims>,
    pub types: Vec<String>,
    pub concrete: Vec<String>,
    /// Kineto's `flops` arg.
    pub kineto_flops: Option<f64>,
}

/// Kineto's own FLOPs key as the args text holds it: an op's args are parsed only when they
/// hold it or `Input Dims` (`op_runs` looks for it in the raw bytes before parsing).
pub const KINETO_FLOPS_KEY: &str = "\"flops\"";

impl OpArgs {
    /// Parses a span's args text; None when it records no shapes (and no `flops`). Only the
    /// four keys read here are deserialized, straight into their types (`raw_args`); every
    /// other key (strides, ids, sequence numbers…) is skipped without building a value.
    pub fn parse(args: &str) -> Option<OpArgs> {
        if args.is_empty() || !(args.contains("Input Dims") || args.contains(KINETO_FLOPS_KEY)) {
            return None;
        }
        let o: super::raw_args::RawArgs = serde_json::from_str(args).ok()?;
        Some(OpArgs {
            dims: o.dims.map(|d| d.0).unwrap_or_default(),
            types: o.types.map(|t| t.0.into_iter().map(|x| x.0).collect()).unwrap_or_default(),
            concrete: o.concrete.map(|c| c.0.into_iter().map(|x| x.0).collect()).unwrap_or_default(),
            kineto_flops: o.flops.and_then(|f| f.0).filter(|f| f.is_finite() && *f >= 0.0),
        })
    }

    /// Sizes of tensor argument `i` (None when it is absent, a list, or a scalar).
    pub fn tensor(&self, i: usize) -> Option<&[i64]> {
        let t = self.types.get(i).map(String::as_str).unwrap_or("");
        match self.dims.get(i)? {
            Dims::Tensor(s) if !s.is_empty() || elem_bytes(t).is_some() => Some(s),
            _ => None,
        }
    }

    pub fn dtype(&self, i: usize) -> &str {
        self.types.get(i).map(String::as_str).unwrap_or("")
    }

    /// Bytes per element of argument `i`'s dtype.
    pub fn elem(&self, i: usize) -> Option<f64> {
        elem_bytes(self.dtype(i))
    }

    /// `numel × element size` of tensor argument `i`.
    pub fn tensor_bytes(&self, i: usize) -> Option<f64> {
        Some(numel(self.tensor(i)?) * self.elem(i)?)
    }

    /// A concrete scalar argument parsed as a boolean (`True`/`False`, `1`/`0`).
    pub fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete.get(i)?.trim() {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }

    pub fn int(&self, i: usize) -> Option<i64> {
        self.concrete.get(i)?.trim().parse().ok()
    }

    /// A concrete int list (`"[1, 1]"`).
    pub fn int_list(&self, i: usize) -> Option<Vec<i64>> {
        let s = self.concrete.get(i)?.trim();
        let s = s.strip_prefix('[')?.strip_suffix(']')?;
        if s.trim().is_empty() {
            return Some(Vec::new());
        }
        s.split(',').map(|x| x.trim().parse().ok()).collect()
    }
}

/// Element count (1 for a 0-d tensor); sizes are clamped at 0 so a corrupt negative size
/// gives 0 rather than a negative count.
pub fn numel(s: &[i64]) -> f64 {
    s.iter().map(|&d| d.max(0) as f64).product()
}

/// Bytes per element of a Kineto dtype name (`c10::ScalarType` as the profiler prints it).
pub fn elem_bytes(t: &str) -> Option<f64> {
    Some(match t {
        "double" | "long int" | "c10::complex<float>" | "long" | "int64_t" => 8.0,
        "float" | "int" | "unsigned int" => 4.0,
        "c10::BFloat16" | "c10::Half" | "short int" | "short" | "unsigned short" => 2.0,
        "bool" | "unsigned char" | "signed char" | "char" => 1.0,
        "c10::complex<double>" => 16.0,
        t if t.starts_with("c10::Float8_") => 1.0,
        _ => return None,
    })
}

/// The broadcast shape of several shapes (NumPy rules); None when they do not broadcast.
pub fn broadcast(shapes: &[&[i64]]) -> Option<Vec<i64>> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1i64; n];
    for s in shapes {
        for (k, &d) in s.iter().rev().enumerate() {
            let o = &mut out[n - 1 - k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kineto_args() {
        let a = OpArgs::parse(
            r#"{"Input Dims": [[[8, 1024], [8, 1024]], [4096], [], []], "Input type": ["TensorList", "c10::BFloat16", "Scalar", "ScalarList"], "Concrete Inputs": ["", "", "True", "[1, 2]"], "flops": 12}"#,
        )
        .unwrap();
        assert_eq!(a.dims[0], Dims::List(vec![vec![8, 1024], vec![8, 1024]]));
        assert_eq!(a.tensor(1), Some(&[4096][..]));
        assert_eq!(a.tensor(2), None);
        assert_eq!(a.tensor_bytes(1), Some(8192.0));
        assert_eq!(a.flag(2), Some(true));
        assert_eq!(a.int_list(3), Some(vec![1, 2]));
        assert_eq!(a.kineto_flops, Some(12.0));
        assert!(OpArgs::parse(r#"{"External id": 3}"#).is_none());
        assert!(OpArgs::parse(r#"{"Input Dims": 3"#).is_none());
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[&[8, 1024, 1024], &[1024, 1024]]), Some(vec![8, 1024, 1024]));
        assert_eq!(broadcast(&[&[8, 1, 4], &[3, 1]]), Some(vec![8, 3, 4]));
        assert_eq!(broadcast(&[&[2], &[3]]), None);
    }
}
