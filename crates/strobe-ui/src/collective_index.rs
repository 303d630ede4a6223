//! The ranks comparison's matched collectives, looked up by a span's own times: what the
//! details pane and the tooltip add to a collective's own figures (its transfer after every
//! rank arrived). Built once per comparison and handed to the workspace
//! (`Command::SetCollectives`).

use crate::ranks::Computed;
use crate::workspace::TraceId;
use std::collections::HashMap;
use std::sync::Arc;

/// A matched instance's figures: transfer ns, algbw, busbw, group label.
pub type Figures = (i64, Option<f64>, Option<f64>, String);

#[derive(Debug, Default, PartialEq)]
pub struct CollectiveIndex {
    /// Per trace: (start, end) of its op in its own clock, and the instance's figures' index,
    /// by start.
    per_trace: HashMap<TraceId, Vec<(i64, i64, usize)>>,
    figures: Vec<Figures>,
}

impl CollectiveIndex {
    /// The index of a comparison's matched collectives (None when it matched none).
    pub fn of(c: &Computed) -> Option<Arc<CollectiveIndex>> {
        let r = &c.report;
        if r.group_collectives.is_empty() {
            return None;
        }
        let label: HashMap<&str, String> = r.process_groups.iter().map(|g| (g.name.as_str(), g.label())).collect();
        let mut out = CollectiveIndex::default();
        for inst in &r.group_collectives {
            let at = out.figures.len();
            let g = label.get(inst.group.as_str()).cloned().unwrap_or_else(|| inst.group.clone());
            let from = if inst.group_from == "inferred" { ", inferred" } else { "" };
            out.figures.push((inst.transfer_ns, inst.algbw_gbps, inst.busbw_gbps, format!("{g}{from}")));
            for (j, rank) in inst.ranks.iter().enumerate() {
                let Some(ri) = r.ranks.iter().position(|e| e.rank == *rank) else { continue };
                let Some(Some(trace)) = c.trace_of_rank.get(ri) else { continue };
                let off = r.alignment.offsets_ns.get(ri).copied().unwrap_or(0);
                let (Some(s), Some(e)) = (inst.starts_ns.get(j), inst.ends_ns.get(j)) else { continue };
                out.per_trace.entry(*trace).or_default().push((s - off, e - off, at));
            }
        }
        for v in out.per_trace.values_mut() {
            v.sort_unstable();
        }
        Some(Arc::new(out))
    }

    /// The matched instance whose op on `trace` is the span `[start, end]`, or lies inside it
    /// (a record whose kernel timed the op).
    pub fn instance_of(&self, trace: TraceId, start: i64, end: i64) -> Option<Figures> {
        let v = self.per_trace.get(&trace)?;
        let from = v.partition_point(|x| x.0 < start);
        let hit = v[from..].iter().take_while(|x| x.0 <= end).find(|x| x.1 <= end.max(x.0))?;
        self.figures.get(hit.2).cloned()
    }
}
