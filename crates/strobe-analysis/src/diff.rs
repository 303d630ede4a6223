//! Two traces compared name by name (`strobe diff A B`): for each GPU kernel and each CPU op,
//! how often and how long it ran in A and in B, sorted by the size of the change. Kernels are
//! the `Kernel` spans on GPU lanes (as `kernels::kernel_stats` counts them); CPU ops the
//! `cpu_op` spans on CPU threads. Totals are plain sums of durations.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffStatus {
    Both,
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    pub name: String,
    pub count_a: u64,
    pub count_b: u64,
    pub total_a_ns: i64,
    pub total_b_ns: i64,
    /// B − A.
    pub delta_ns: i64,
    /// B / A; None when A is 0.
    pub ratio: Option<f64>,
    pub status: DiffStatus,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceDiff {
    pub a: String,
    pub b: String,
    pub kernels: Vec<DiffRow>,
    pub cpu_ops: Vec<DiffRow>,
    /// The median step of each side in the attribution's terms (`attribution::compare`);
    /// null where a side has no steps or the caller did not ask.
    pub step_breakdown: Option<crate::attribution::compare::BreakdownDiff>,
}

/// name → (count, total) of the spans of `kind` on lanes accepted by `lane_ok` that start in
/// `[window.0, window.1)`.
fn totals(
    store: &Store,
    kind: SpanKind,
    lane_ok: fn(&LaneKind) -> bool,
    window: (i64, i64),
) -> std::collections::HashMap<String, (u64, i64)> {
    // keyed by name id (Fx: SipHash was a tenth of this loop on millions of runtime calls)
    let mut by: rustc_hash::FxHashMap<u32, (u64, i64)> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !lane_ok(&desc.kind) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        // a lane's members are sorted by start: the window's are one contiguous run
        let (i0, i1) = (v.starts.partition_point(|&t| t < window.0), v.starts.partition_point(|&t| t < window.1));
        for k in i0..i1 {
            let Some(&sid) = v.span.get(k) else { break };
            let m = store.span_meta(sid);
            if SpanKind::from_u8(m.kind) == kind {
                let e = by.entry(m.name).or_default();
                e.0 += 1;
                e.1 += v.ends[k] - v.starts[k];
            }
        }
    }
    by.into_iter().map(|(n, v)| (store.string(n).to_string(), v)).collect()
}

fn rows(
    a: std::collections::HashMap<String, (u64, i64)>,
    mut b: std::collections::HashMap<String, (u64, i64)>,
) -> Vec<DiffRow> {
    let mut out: Vec<DiffRow> = Vec::with_capacity(a.len() + b.len());
    for (name, (ca, ta)) in a {
        let (cb, tb) = b.remove(&name).unwrap_or((0, 0));
        out.push(row(name, ca, ta, cb, tb));
    }
    for (name, (cb, tb)) in b {
        out.push(row(name, 0, 0, cb, tb));
    }
    out.sort_by(|x, y| y.delta_ns.unsigned_abs().cmp(&x.delta_ns.unsigned_abs()).then_with(|| x.name.cmp(&y.name)));
    out
}

fn row(name: String, count_a: u64, total_a_ns: i64, count_b: u64, total_b_ns: i64) -> DiffRow {
    DiffRow {
        name,
        count_a,
        count_b,
        total_a_ns,
        total_b_ns,
        delta_ns: total_b_ns - total_a_ns,
        ratio: if total_a_ns != 0 { Some(total_b_ns as f64 / total_a_ns as f64) } else { None },
        status: match (count_a, count_b) {
            (0, _) => DiffStatus::Added,
            (_, 0) => DiffStatus::Removed,
            _ => DiffStatus::Both,
        },
    }
}

pub fn diff(a: &Store, b: &Store) -> TraceDiff {
    const ALL: (i64, i64) = (i64::MIN, i64::MAX);
    diff_windows(a, ALL, b, ALL)
}

/// `diff` of what starts in window `wa` of `a` and window `wb` of `b` (two steps, say; `a` and
/// `b` may be the same store).
pub fn diff_windows(a: &Store, wa: (i64, i64), b: &Store, wb: (i64, i64)) -> TraceDiff {
    let gpu = |k: &LaneKind| matches!(k, LaneKind::GpuStream { .. });
    let cpu = |k: &LaneKind| matches!(k, LaneKind::CpuThread { .. });
    TraceDiff {
        a: a.meta.source.clone(),
        b: b.meta.source.clone(),
        kernels: rows(totals(a, SpanKind::Kernel, gpu, wa), totals(b, SpanKind::Kernel, gpu, wb)),
        cpu_ops: rows(totals(a, SpanKind::CpuOp, cpu, wa), totals(b, SpanKind::CpuOp, cpu, wb)),
        step_breakdown: None,
    }
}

pub fn to_text(d: &TraceDiff, top: usize) -> String {
    use std::fmt::Write;
    let fmt = crate::report::fmt_ns;
    let mut o = String::new();
    let _ = writeln!(o, "A: {}\nB: {}", d.a, d.b);
    if let Some(sb) = &d.step_breakdown {
        o.push_str(&crate::attribution::compare::to_text(sb));
    }
    for (title, rows) in [("GPU kernels", &d.kernels), ("CPU ops", &d.cpu_ops)] {
        let _ = writeln!(o, "\n{title} by |B − A| ({} names):", rows.len());
        let _ = writeln!(
            o,
            "  {:>7} {:>7} {:>12} {:>12} {:>12} {:>7}  name",
            "count A", "count B", "total A", "total B", "delta", "B/A"
        );
        for r in rows.iter().take(top) {
            let ratio = r.ratio.map(|x| format!("{x:.2}")).unwrap_or_else(|| "new".into());
            let name: String = if r.name.chars().count() > 80 {
                r.name.chars().take(79).chain(['…']).collect()
            } else {
                r.name.clone()
            };
            let _ = writeln!(
                o,
                "  {:>7} {:>7} {:>12} {:>12} {:>12} {:>7}  {}",
                r.count_a,
                r.count_b,
                fmt(r.total_a_ns),
                fmt(r.total_b_ns),
                fmt(r.delta_ns),
                ratio,
                name
            );
        }
    }
    o
}
