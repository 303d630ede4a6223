//! Two runs compared in the attribution's terms: the median step of each side, part by part
//! and op class by op class, and the thresholds that make the comparison a regression gate.

use super::{StepBreakdown, PART_NAMES};
use serde::Serialize;

/// The step a side is represented by: the step of median duration (the lower of the two
/// middle ones for an even count), over every rank's steps. An actual step, not per-part
/// medians, so its parts still add up to its duration.
pub fn median_step(steps: &[StepBreakdown]) -> Option<&StepBreakdown> {
    let mut order: Vec<&StepBreakdown> = steps.iter().filter(|s| s.dur_ns > 0).collect();
    if order.is_empty() {
        return None;
    }
    order.sort_by(|a, b| a.dur_ns.cmp(&b.dur_ns).then(a.start_ns.cmp(&b.start_ns)));
    Some(order[(order.len() - 1) / 2])
}

/// One side's median step, as compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub step: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<i64>,
    pub dur_ns: i64,
    /// How many steps the median was taken over.
    pub steps: usize,
}

/// One part (or op class, or the step itself) on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delta {
    /// The part's JSON key (`model_ops_inefficiency_ns`), the op class, or `step`.
    pub name: String,
    pub label: String,
    pub a_ns: i64,
    pub b_ns: i64,
    /// B − A.
    pub delta_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BreakdownDiff {
    pub a: Side,
    pub b: Side,
    /// The step time, then every part in the fixed order.
    pub parts: Vec<Delta>,
    /// The model-op inefficiency per op class, by |B − A|.
    pub classes: Vec<Delta>,
}

/// The median steps of `a` and `b` side by side; none where a side has no step.
pub fn compare(a: &[StepBreakdown], b: &[StepBreakdown]) -> Option<BreakdownDiff> {
    let (ma, mb) = (median_step(a)?, median_step(b)?);
    let side = |m: &StepBreakdown, all: &[StepBreakdown]| Side {
        step: m.step.clone(),
        rank: m.rank,
        dur_ns: m.dur_ns,
        steps: all.iter().filter(|s| s.dur_ns > 0).count(),
    };
    let delta = |name: &str, label: &str, a_ns: i64, b_ns: i64| Delta {
        name: name.to_string(),
        label: label.to_string(),
        a_ns,
        b_ns,
        delta_ns: b_ns - a_ns,
    };
    let mut parts = vec![delta("step", "step time", ma.dur_ns, mb.dur_ns)];
    let (va, vb) = (ma.parts.values(), mb.parts.values());
    for (i, (key, label)) in PART_NAMES.iter().enumerate() {
        parts.push(delta(key, label, va[i], vb[i]));
    }
    let mut classes: Vec<Delta> = Vec::new();
    for e in &ma.details.inefficiency_by_class {
        let b_ns = mb.details.inefficiency_by_class.iter().find(|x| x.name == e.name).map_or(0, |x| x.ns);
        classes.push(delta(&e.name, &format!("{} inefficiency", e.name), e.ns, b_ns));
    }
    for e in &mb.details.inefficiency_by_class {
        if !classes.iter().any(|c| c.name == e.name) {
            classes.push(delta(&e.name, &format!("{} inefficiency", e.name), 0, e.ns));
        }
    }
    classes.sort_by(|x, y| y.delta_ns.unsigned_abs().cmp(&x.delta_ns.unsigned_abs()).then(x.name.cmp(&y.name)));
    Some(BreakdownDiff { a: side(ma, a), b: side(mb, b), parts, classes })
}

/// "+11.8 ms GEMM inefficiency, +4.1 ms comm wait, −0.6 ms host idle": the changes of at
/// least `min_ns`, largest first, op classes in place of their part's total.
pub fn headline(d: &BreakdownDiff, min_ns: i64) -> String {
    let mut items: Vec<&Delta> = d.parts[1..].iter().filter(|p| p.name != "model_ops_inefficiency_ns").collect();
    items.extend(d.classes.iter());
    if d.classes.is_empty() {
        items.extend(d.parts.iter().filter(|p| p.name == "model_ops_inefficiency_ns"));
    }
    items.retain(|p| p.delta_ns.abs() >= min_ns.max(1));
    items.sort_by(|x, y| y.delta_ns.unsigned_abs().cmp(&x.delta_ns.unsigned_abs()).then(x.name.cmp(&y.name)));
    items.iter().map(|p| format!("{} {}", signed_ms(p.delta_ns), p.label)).collect::<Vec<_>>().join(", ")
}

/// "Median step: A ProfilerStep#3 (rank 0) of 3 steps, B …": which steps are compared.
pub fn title(d: &BreakdownDiff) -> String {
    let side = |s: &Side| {
        let rank = s.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        format!("{}{rank} of {} steps", s.step, s.steps)
    };
    format!("Median step: A {}, B {}", side(&d.a), side(&d.b))
}

/// The median steps side by side, a line per part and per op class that changed.
pub fn to_text(d: &BreakdownDiff) -> String {
    use std::fmt::Write;
    let fmt = crate::report::fmt_ns;
    let mut o = String::new();
    let _ = writeln!(o, "\n{}", title(d));
    let changed = headline(d, 100_000);
    if !changed.is_empty() {
        let _ = writeln!(o, "  {changed}");
    }
    let _ = writeln!(o, "  {:>12} {:>12} {:>12}  part", "A", "B", "B − A");
    for p in d.parts.iter().filter(|p| p.a_ns != 0 || p.b_ns != 0) {
        let _ = writeln!(o, "  {:>12} {:>12} {:>12}  {}", fmt(p.a_ns), fmt(p.b_ns), fmt(p.delta_ns), p.label);
    }
    for c in d.classes.iter().filter(|c| c.delta_ns != 0) {
        let _ = writeln!(o, "  {:>12} {:>12} {:>12}    {}", fmt(c.a_ns), fmt(c.b_ns), fmt(c.delta_ns), c.label);
    }
    o
}

fn signed_ms(ns: i64) -> String {
    let sign = if ns < 0 { "−" } else { "+" };
    format!("{sign}{:.1} ms", ns.unsigned_abs() as f64 / 1e6)
}

/// A regression threshold: `PART>+5%` (B's part more than 5 % above A's), `PART>+2ms`
/// (more than 2 ms above), `PART>+3pp` (its share of the step more than 3 points above).
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// As written by the user.
    pub text: String,
    /// The part's key, an op class, or `step`.
    pub name: String,
    pub limit: Limit,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// Growth relative to A's value, in %.
    Percent(f64),
    /// Growth in ns.
    Ns(i64),
    /// Growth of the share of the step, in percentage points.
    Points(f64),
}

/// Parses `NAME>+VALUE(%|ms|us|ns|s|pp)`. NAME is `step`, a part's key with or without its
/// `_ns`, its label with `_` for spaces (`host_idle`), or an op class (`GEMM`).
pub fn parse_threshold(text: &str) -> Result<Threshold, String> {
    let bad = |why: &str| format!("--fail-if {text:?}: {why} (e.g. `model_ops_inefficiency>+5%`, `step>+2ms`)");
    let (name, value) = text.split_once('>').ok_or_else(|| bad("no `>`"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(bad("no part named"));
    }
    let value = value.trim().trim_start_matches('+');
    let split = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(|| bad("no unit"))?;
    let (num, unit) = value.split_at(split);
    let x: f64 = num.parse().map_err(|_| bad("not a number"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(bad("the growth must be a number ≥ 0"));
    }
    let limit = match unit.trim() {
        "%" => Limit::Percent(x),
        "pp" => Limit::Points(x),
        "ns" => Limit::Ns(x as i64),
        "us" | "µs" => Limit::Ns((x * 1e3) as i64),
        "ms" => Limit::Ns((x * 1e6) as i64),
        "s" => Limit::Ns((x * 1e9) as i64),
        _ => return Err(bad("the unit is one of % pp ns us ms s")),
    };
    Ok(Threshold { text: text.to_string(), name: name.to_string(), limit })
}

/// A threshold that was crossed, with the figures that crossed it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crossed {
    pub threshold: String,
    pub name: String,
    pub a_ns: i64,
    pub b_ns: i64,
    pub delta_ns: i64,
}

/// The entry `t` names, matched by key, key without `_ns`, label (spaces as `_` or not) or op
/// class, case-insensitively.
fn find<'d>(d: &'d BreakdownDiff, name: &str) -> Option<&'d Delta> {
    let norm = |s: &str| s.to_ascii_lowercase().replace([' ', '-'], "_");
    let want = norm(name);
    let want_ns = format!("{want}_ns");
    d.parts
        .iter()
        .find(|p| p.name == want || p.name == want_ns || norm(&p.label) == want)
        .or_else(|| d.classes.iter().find(|c| norm(&c.name) == want))
}

/// The thresholds `d` crosses; an error names a threshold whose part does not exist.
pub fn crossed(d: &BreakdownDiff, thresholds: &[Threshold]) -> Result<Vec<Crossed>, String> {
    let mut out = Vec::new();
    for t in thresholds {
        let e = match find(d, &t.name) {
            Some(e) => e,
            // an op class neither side has: nothing grew
            None if is_known_name(&t.name) => continue,
            None => {
                return Err(format!(
                    "--fail-if {:?}: no part or op class {:?}; parts: step, {}",
                    t.text,
                    t.name,
                    PART_NAMES.iter().map(|(k, _)| k.trim_end_matches("_ns")).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        let over = match t.limit {
            Limit::Ns(n) => e.delta_ns > n,
            Limit::Percent(p) => {
                if e.a_ns > 0 {
                    e.delta_ns as f64 > e.a_ns as f64 * p / 100.0
                } else {
                    // from nothing: any growth is more than any share of nothing
                    e.b_ns > 0
                }
            }
            Limit::Points(p) => {
                let share = |v: i64, step: i64| if step > 0 { v as f64 * 100.0 / step as f64 } else { 0.0 };
                share(e.b_ns, d.b.dur_ns) - share(e.a_ns, d.a.dur_ns) > p
            }
        };
        if over {
            out.push(Crossed {
                threshold: t.text.clone(),
                name: e.name.clone(),
                a_ns: e.a_ns,
                b_ns: e.b_ns,
                delta_ns: e.delta_ns,
            });
        }
    }
    Ok(out)
}

/// Op class names a threshold may give though neither side ran them.
fn is_known_name(name: &str) -> bool {
    // `efficiency::OpClass` as it serializes
    const OP_CLASSES: [&str; 10] =
        ["gemm", "conv", "attention", "norm", "softmax", "elementwise", "copy", "reduction", "optimizer", "gather"];
    OP_CLASSES.iter().any(|c| c.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::{Details, Evidence, Parts};

    fn step(name: &str, start: i64, parts: Parts, classes: &[(&str, i64)]) -> StepBreakdown {
        StepBreakdown {
            step: name.into(),
            start_ns: start,
            dur_ns: parts.total(),
            parts,
            details: Details {
                inefficiency_by_class: classes
                    .iter()
                    .map(|(n, ns)| Evidence { name: n.to_string(), ns: *ns, ..Default::default() })
                    .collect(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn parts(peak: i64, ineff: i64, host: i64) -> Parts {
        Parts { model_at_peak_ns: peak, model_ops_inefficiency_ns: ineff, idle_host_ns: host, ..Default::default() }
    }

    #[test]
    fn the_median_step_is_a_real_step_and_the_lower_middle_on_even_counts() {
        let s = vec![
            step("s1", 0, parts(10, 10, 10), &[]),
            step("s2", 100, parts(10, 10, 50), &[]),
            step("s3", 200, parts(10, 10, 20), &[]),
            step("s4", 300, parts(10, 10, 30), &[]),
        ];
        // durations 30, 70, 40, 50: sorted 30 40 50 70, lower middle 40
        assert_eq!(median_step(&s).unwrap().step, "s3");
        assert!(median_step(&[]).is_none());
    }

    #[test]
    fn parts_and_classes_side_by_side_and_the_deltas_add_up_to_the_step() {
        let a =
            vec![step("a", 0, parts(30_000_000, 20_000_000, 10_000_000), &[("GEMM", 15_000_000), ("norm", 5_000_000)])];
        let b =
            vec![step("b", 0, parts(30_000_000, 31_800_000, 9_400_000), &[("GEMM", 26_800_000), ("norm", 5_000_000)])];
        let d = compare(&a, &b).unwrap();
        assert_eq!(d.parts[0].name, "step");
        assert_eq!(d.parts[0].delta_ns, 11_200_000);
        let sum: i64 = d.parts[1..].iter().map(|p| p.delta_ns).sum();
        assert_eq!(sum, d.parts[0].delta_ns);
        assert_eq!(d.classes[0].name, "GEMM");
        assert_eq!(d.classes[0].delta_ns, 11_800_000);
        assert_eq!(headline(&d, 100_000), "+11.8 ms GEMM inefficiency, −0.6 ms host idle");
    }

    #[test]
    fn thresholds_parse_and_gate() {
        let t = parse_threshold("model_ops_inefficiency>+5%").unwrap();
        assert_eq!(t.limit, Limit::Percent(5.0));
        assert_eq!(parse_threshold("step>+2ms").unwrap().limit, Limit::Ns(2_000_000));
        assert_eq!(parse_threshold("host_idle > 3pp").unwrap().limit, Limit::Points(3.0));
        for bad in ["step", ">+5%", "step>+x%", "step>+5", "step>+5 parsecs", "step>-5%"] {
            assert!(parse_threshold(bad).is_err(), "{bad}");
        }
        let a = vec![step("a", 0, parts(30_000_000, 20_000_000, 10_000_000), &[("GEMM", 15_000_000)])];
        let b = vec![step("b", 0, parts(30_000_000, 21_500_000, 10_000_000), &[("GEMM", 16_500_000)])];
        let d = compare(&a, &b).unwrap();
        let gate = |s: &str| crossed(&d, &[parse_threshold(s).unwrap()]);
        // 1.5 ms on 20 ms is 7.5 %
        assert_eq!(gate("model_ops_inefficiency>+5%").unwrap().len(), 1);
        assert!(gate("model_ops_inefficiency_ns>+10%").unwrap().is_empty());
        // GEMM: 1.5 ms on 15 ms is 10 %
        assert_eq!(gate("gemm>+9%").unwrap().len(), 1);
        assert!(gate("step>+2ms").unwrap().is_empty());
        assert_eq!(gate("step>+1ms").unwrap()[0].delta_ns, 1_500_000);
        // host idle: 16.7 % of 60 ms, then 16.3 % of 61.5 ms: its share fell
        assert!(gate("host_idle>+0pp").unwrap().is_empty());
        assert!(gate("no_such_part>+1%").is_err());
    }
}
