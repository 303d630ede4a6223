//! The NVTX range text PyTorch pushes for every op under
//! `torch.autograd.profiler.emit_nvtx(record_shapes=True)` (Megatron's `--profile`, nsys's
//! `--pytorch=autograd-shapes-nvtx`), read back into the op's name, autograd sequence
//! number, id, input shapes and producers, so an nsys capture's ops are ops (with shapes)
//! and not only NVTX ranges.
//!
//! The text (`getNvtxStr` in `torch/csrc/profiler/util.cpp`):
//!
//! ```text
//! NAME[, seq = N][, op_id = N][, sizes = [[d, d], [], …]][, input_op_ids = [(op,out), …]]
//! ```
//!
//! `seq` only when the op records an autograd sequence number, `op_id` (the record
//! function's handle) since PyTorch 1.12, `sizes` one list per input (`[]` for a scalar, an
//! undefined tensor or a tensor list), `input_op_ids` only with shapes. Older PyTorch wrote
//! no `op_id`, and wrote no name at all when an op had shapes but no sequence number (the
//! text begins `, sizes = `): such a range cannot be named and stays an NVTX range. A name
//! may itself hold commas (`record_function("a, b")`): the fields are found from the first
//! place where the rest of the text reads as fields.

/// One op range, read from its text.
#[derive(Clone, Debug, PartialEq)]
pub struct OpText<'a> {
    pub name: &'a str,
    pub seq: Option<i64>,
    pub op_id: Option<i64>,
    /// One shape per input; None when the range records none.
    pub sizes: Option<Vec<Vec<i64>>>,
    pub input_op_ids: Vec<(i64, i64)>,
    /// What could not be read (the shapes of a range whose `sizes` are malformed are
    /// dropped, its name and ids kept).
    pub problem: Option<String>,
}

const MARKERS: [&str; 4] = [", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "];

/// The op a range's text names, or None when it is not an op range: no field at all (a
/// user's range) unless the name is an ATen op's (`aten::…`, as PyTorch before 1.12 wrote
/// ops without a sequence number or shapes), or no name before the fields.
pub fn parse(text: &str) -> Option<OpText<'_>> {
    let starts: Vec<usize> = marker_starts(text);
    // the first place where everything after the name reads as fields
    for &i in &starts {
        if i == 0 {
            continue;
        }
        if let Ok(f) = fields(&text[i..]) {
            return Some(OpText { name: &text[..i], ..f });
        }
    }
    match starts.first() {
        Some(0) => None,
        Some(&i) => Some(lenient(&text[..i], &text[i..])),
        None if text.starts_with("aten::") && !text.contains(char::is_whitespace) => {
            Some(OpText { name: text, seq: None, op_id: None, sizes: None, input_op_ids: Vec::new(), problem: None })
        }
        None => None,
    }
}

fn marker_starts(text: &str) -> Vec<usize> {
    let mut out: Vec<usize> = MARKERS.iter().flat_map(|m| text.match_indices(m).map(|(i, _)| i)).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Every field of `s` (which begins `, key = `), read strictly: each known key once, each
/// value whole, nothing left over.
fn fields(s: &str) -> Result<OpText<'static>, String> {
    let mut out = OpText { name: "", seq: None, op_id: None, sizes: None, input_op_ids: Vec::new(), problem: None };
    let mut rest = s;
    let mut seen = [false; 4];
    while !rest.is_empty() {
        let (k, m) = MARKERS.iter().enumerate().find(|(_, m)| rest.starts_with(**m)).ok_or("not a field")?;
        if std::mem::replace(&mut seen[k], true) {
            return Err("a field twice".into());
        }
        let v = &rest[m.len()..];
        rest = match k {
            0 | 1 => {
                let end = v.find(", ").unwrap_or(v.len());
                let n = int(&v[..end])?;
                if k == 0 {
                    out.seq = Some(n);
                } else {
                    out.op_id = Some(n);
                }
                &v[end..]
            }
            2 => {
                let (sizes, after) = shapes(v)?;
                out.sizes = Some(sizes);
                after
            }
            _ => {
                let (ids, after) = op_ids(v)?;
                out.input_op_ids = ids;
                after
            }
        };
    }
    Ok(out)
}

/// The fields of a range whose text does not read strictly (a truncated or unbalanced
/// `sizes`, a field this reader does not know): each known field read where it can be.
fn lenient<'a>(name: &'a str, s: &str) -> OpText<'a> {
    let mut out = OpText { name, seq: None, op_id: None, sizes: None, input_op_ids: Vec::new(), problem: None };
    let mut problems: Vec<String> = Vec::new();
    for (k, m) in MARKERS.iter().enumerate() {
        let Some(i) = s.find(m) else { continue };
        let v = &s[i + m.len()..];
        match k {
            0 | 1 => {
                let end = v.find(", ").unwrap_or(v.len());
                match int(&v[..end]) {
                    Ok(n) if k == 0 => out.seq = Some(n),
                    Ok(n) => out.op_id = Some(n),
                    Err(e) => problems.push(format!("{}{e}", m.trim_start_matches(", "))),
                }
            }
            2 => match shapes(v) {
                Ok((sz, _)) => out.sizes = Some(sz),
                Err(e) => problems.push(format!("sizes: {e}")),
            },
            _ => match op_ids(v) {
                Ok((ids, _)) => out.input_op_ids = ids,
                Err(e) => problems.push(format!("input_op_ids: {e}")),
            },
        }
    }
    if problems.is_empty() {
        problems.push("text after the fields that is not a field".into());
    }
    out.problem = Some(problems.join("; "));
    out
}

fn int(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if t.is_empty() || !t.trim_start_matches('-').bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("not an integer: {:?}", clip(t)));
    }
    t.parse::<i64>().map_err(|_| format!("integer out of range: {}", clip(t)))
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `[[8, 2], [], [3]]` → the shapes and the text after the closing bracket.
fn shapes(v: &str) -> Result<(Vec<Vec<i64>>, &str), String> {
    let mut rest = v.strip_prefix('[').ok_or("no opening bracket")?;
    let mut out = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return Ok((out, after));
    }
    loop {
        let inner = rest.strip_prefix('[').ok_or("a shape without its brackets")?;
        let close = inner.find(']').ok_or("unbalanced brackets")?;
        let body = &inner[..close];
        if body.contains('[') {
            return Err("unbalanced brackets".into());
        }
        let dims: Vec<i64> =
            if body.trim().is_empty() { Vec::new() } else { body.split(',').map(int).collect::<Result<_, _>>()? };
        out.push(dims);
        rest = &inner[close + 1..];
        if let Some(r) = rest.strip_prefix(", ") {
            rest = r;
        } else if let Some(after) = rest.strip_prefix(']') {
            return Ok((out, after));
        } else {
            return Err("unbalanced brackets".into());
        }
    }
}

/// (op id, output number) of each input's producer.
type OpIds = Vec<(i64, i64)>;

/// `[(40,0), (12,1)]` → the pairs and the text after the closing bracket.
fn op_ids(v: &str) -> Result<(OpIds, &str), String> {
    let mut rest = v.strip_prefix('[').ok_or("no opening bracket")?;
    let mut out = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return Ok((out, after));
    }
    loop {
        let inner = rest.strip_prefix('(').ok_or("a pair without its parentheses")?;
        let close = inner.find(')').ok_or("unbalanced parentheses")?;
        let (a, b) = inner[..close].split_once(',').ok_or("not a pair")?;
        out.push((int(a)?, int(b)?));
        rest = &inner[close + 1..];
        if let Some(r) = rest.strip_prefix(", ") {
            rest = r;
        } else if let Some(after) = rest.strip_prefix(']') {
            return Ok((out, after));
        } else {
            return Err("unbalanced brackets".into());
        }
    }
}

/// The op's args as Kineto writes them for a CPU op (`Input Dims`, `Sequence number`,
/// `Record function id`), so the efficiency figures and the op table read an nsys op as they
/// read a Kineto one; `input_op_ids` as (op id, output number) pairs. No `Input type`:
/// emit_nvtx records no dtypes.
pub fn kineto_args(op: &OpText<'_>, out: &mut String) {
    use std::fmt::Write as _;
    out.clear();
    out.push('{');
    let mut sep = "";
    if let Some(s) = &op.sizes {
        out.push_str("\"Input Dims\":[");
        for (i, d) in s.iter().enumerate() {
            out.push_str(if i > 0 { ",[" } else { "[" });
            for (j, x) in d.iter().enumerate() {
                let _ = write!(out, "{}{x}", if j > 0 { "," } else { "" });
            }
            out.push(']');
        }
        out.push(']');
        sep = ",";
    }
    if let Some(n) = op.seq {
        let _ = write!(out, "{sep}\"Sequence number\":{n}");
        sep = ",";
    }
    if let Some(n) = op.op_id {
        let _ = write!(out, "{sep}\"Record function id\":{n}");
        sep = ",";
    }
    if !op.input_op_ids.is_empty() {
        let pairs: Vec<String> = op.input_op_ids.iter().map(|(a, b)| format!("[{a},{b}]")).collect();
        let _ = write!(out, "{sep}\"input_op_ids\":[{}]", pairs.join(","));
        sep = ",";
    }
    if let Some(p) = &op.problem {
        let _ = write!(out, "{sep}\"nvtx text problem\":{}", serde_json::Value::String(p.clone()));
        sep = ",";
    }
    let _ = write!(out, "{sep}\"source\":\"emit_nvtx\"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_current_format() {
        let t = "aten::mm, seq = 12, op_id = 40, sizes = [[8192, 2048], [2048, 5632]], input_op_ids = [(38,0), (39,0)]";
        let op = parse(t).unwrap();
        assert_eq!(op.name, "aten::mm");
        assert_eq!(op.seq, Some(12));
        assert_eq!(op.op_id, Some(40));
        assert_eq!(op.sizes, Some(vec![vec![8192, 2048], vec![2048, 5632]]));
        assert_eq!(op.input_op_ids, vec![(38, 0), (39, 0)]);
        assert_eq!(op.problem, None);
        let mut a = String::new();
        kineto_args(&op, &mut a);
        let v: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert_eq!(v["Input Dims"], serde_json::json!([[8192, 2048], [2048, 5632]]));
        assert_eq!(v["Sequence number"], 12);
        assert_eq!(v["Record function id"], 40);
        assert_eq!(v["input_op_ids"], serde_json::json!([[38, 0], [39, 0]]));
    }

    #[test]
    fn reads_older_and_partial_formats() {
        // before op_id (PyTorch ≤ 1.11), scalars and undefined tensors as []
        let op = parse("aten::addmm, seq = 3, sizes = [[4096], [8192, 1024], [1024, 4096], [], []]").unwrap();
        assert_eq!((op.name, op.seq, op.op_id), ("aten::addmm", Some(3), None));
        assert_eq!(op.sizes.unwrap()[3], Vec::<i64>::new());
        // no sequence number (no autograd), no shapes recorded
        let op = parse("aten::empty, op_id = 7").unwrap();
        assert_eq!((op.name, op.seq, op.op_id, op.sizes), ("aten::empty", None, Some(7), None));
        // an op with no inputs: `sizes = []`
        assert_eq!(parse("aten::zeros, op_id = 9, sizes = []").unwrap().sizes, Some(vec![]));
        // a bare ATen name (record_shapes off, no sequence number, PyTorch before op ids)
        assert_eq!(parse("aten::empty").unwrap().name, "aten::empty");
        // a user's range is not an op; nor the nameless range old PyTorch wrote for an op
        // with shapes but no sequence number
        assert!(parse("forward").is_none());
        assert!(parse("step 3, epoch 1").is_none());
        assert!(parse(", sizes = [[2, 2]]").is_none());
    }

    #[test]
    fn names_with_commas_and_field_like_text() {
        let op = parse("layer 1, attention, op_id = 5, sizes = []").unwrap();
        assert_eq!(op.name, "layer 1, attention");
        assert_eq!(op.op_id, Some(5));
        let op = parse("foo, seq = bar, op_id = 6").unwrap();
        assert_eq!(op.name, "foo, seq = bar");
        assert_eq!(op.op_id, Some(6));
        // negative sequence numbers (ROCm) read as numbers
        assert_eq!(parse("aten::mm, seq = -2, op_id = 3").unwrap().seq, Some(-2));
    }

    #[test]
    fn malformed_sizes_keep_the_op_and_say_why() {
        for (t, why) in [
            ("aten::mm, seq = 1, op_id = 2, sizes = [[8, 2], [2, 4]", "unbalanced"),
            ("aten::mm, op_id = 2, sizes = [[8, 2]], [2, 4]]", "not a field"),
            ("aten::mm, op_id = 2, sizes = [[8, x]]", "not an integer"),
            ("aten::mm, op_id = 2, sizes = [[99999999999999999999999, 2]]", "out of range"),
            ("aten::mm, op_id = 2, sizes = [[[8]]]", "unbalanced"),
            ("aten::mm, op_id = 2, sizes = [[8, 2], [2", "unbalanced"),
            ("aten::mm, op_id = 2, input_op_ids = [(1,0), (2", "parenthes"),
        ] {
            let op = parse(t).unwrap_or_else(|| panic!("{t}"));
            assert_eq!(op.name, "aten::mm", "{t}");
            assert_eq!(op.op_id, Some(2), "{t}");
            let p = op.problem.unwrap_or_default();
            assert!(p.contains(why) || t.contains("[[8, 2]], [2, 4]]"), "{t}: {p}");
            if !t.contains("[[8, 2]], [2, 4]]") {
                assert!(op.sizes.is_none() || t.contains("input_op_ids"), "{t}");
            }
        }
        // a field this reader does not know: the known ones are still read
        let op = parse("aten::mm, op_id = 2, sizes = [[8, 2]], stream = 7").unwrap();
        assert_eq!(op.sizes, Some(vec![vec![8, 2]]));
        assert!(op.problem.is_some());
    }

    #[test]
    fn any_text_is_read_without_panic() {
        let samples = [
            "",
            ",",
            ", seq = ",
            "aten::x, seq = ",
            "a, sizes = [",
            "a, sizes = [[",
            "a, sizes = []]",
            "a, sizes = [[]]",
            "a, input_op_ids = [(",
            "a, input_op_ids = [(1)]",
            "é, op_id = 1",
            "a, op_id = 1é",
            "a, sizes = [[1,, 2]]",
        ];
        for s in samples {
            let _ = parse(s);
            for cut in 0..s.len() {
                if s.is_char_boundary(cut) {
                    let _ = parse(&s[..cut]);
                }
            }
        }
        assert_eq!(parse("a, sizes = [[]]").unwrap().sizes, Some(vec![vec![]]));
    }
}
