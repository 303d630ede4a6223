//! `torch.cuda.memory_stats()` read back: the allocator's own counters (current and peak
//! bytes, retries, OOMs), with what they say about pressure. Counters absent in a dump are
//! null (older torch versions lack `requested_bytes`, `num_sync_all_streams`, …).

use serde::Serialize;
use strobe_model::memory::MemoryStats;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StatsReport {
    pub format: &'static str,
    pub allocated_bytes: Option<u64>,
    pub allocated_peak_bytes: Option<u64>,
    pub reserved_bytes: Option<u64>,
    pub reserved_peak_bytes: Option<u64>,
    pub active_bytes: Option<u64>,
    pub requested_bytes: Option<u64>,
    pub requested_peak_bytes: Option<u64>,
    /// Free bytes in split (partly used) blocks: cached memory only same-sized requests reuse.
    pub inactive_split_bytes: Option<u64>,
    pub segments: Option<u64>,
    pub num_alloc_retries: Option<u64>,
    pub num_ooms: Option<u64>,
    pub num_device_alloc: Option<u64>,
    pub num_device_free: Option<u64>,
    pub num_sync_all_streams: Option<u64>,
    /// What the counters point at, in words.
    pub notes: Vec<String>,
}

pub fn stats_report(s: &MemoryStats) -> StatsReport {
    let g = |k: &str| s.get_u64(k);
    let mut r = StatsReport {
        format: "memory_stats",
        allocated_bytes: g("allocated_bytes.all.current"),
        allocated_peak_bytes: g("allocated_bytes.all.peak"),
        reserved_bytes: g("reserved_bytes.all.current"),
        reserved_peak_bytes: g("reserved_bytes.all.peak"),
        active_bytes: g("active_bytes.all.current"),
        requested_bytes: g("requested_bytes.all.current"),
        requested_peak_bytes: g("requested_bytes.all.peak"),
        inactive_split_bytes: g("inactive_split_bytes.all.current"),
        segments: g("segment.all.current"),
        num_alloc_retries: g("num_alloc_retries"),
        num_ooms: g("num_ooms"),
        num_device_alloc: g("num_device_alloc"),
        num_device_free: g("num_device_free"),
        num_sync_all_streams: g("num_sync_all_streams"),
        notes: Vec::new(),
    };
    if let Some(n) = r.num_ooms.filter(|&n| n > 0) {
        r.notes.push(format!("{n} OOM(s) raised: open the snapshot taken then for the verdict."));
    }
    if let Some(n) = r.num_alloc_retries.filter(|&n| n > 0) {
        r.notes.push(format!(
            "{n} allocation(s) failed in cudaMalloc and were retried after freeing the cache (each a full synchronisation): memory pressure."
        ));
    }
    if let (Some(split), Some(res)) = (r.inactive_split_bytes, r.reserved_bytes) {
        if res > 0 && split * 10 >= res {
            r.notes.push(format!(
                "{} of {} reserved sits free inside split blocks (only requests that fit reuse it): fragmentation; expandable_segments:True helps.",
                super::bytes(split),
                super::bytes(res)
            ));
        }
    }
    if let (Some(p), Some(q)) = (r.allocated_peak_bytes, r.requested_peak_bytes) {
        if p > q && (p - q) * 20 >= p {
            r.notes.push(format!("rounding: peak allocated {} for {} requested.", super::bytes(p), super::bytes(q)));
        }
    }
    r
}

pub fn stats_text(r: &StatsReport) -> String {
    use std::fmt::Write;
    let b = |v: Option<u64>| v.map(super::bytes).unwrap_or_else(|| "—".into());
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "—".into());
    let mut o = String::from("torch.cuda.memory_stats()\n");
    let _ = writeln!(o, "  allocated          {:>12}   peak {}", b(r.allocated_bytes), b(r.allocated_peak_bytes));
    let _ = writeln!(o, "  reserved           {:>12}   peak {}", b(r.reserved_bytes), b(r.reserved_peak_bytes));
    let _ = writeln!(o, "  requested          {:>12}   peak {}", b(r.requested_bytes), b(r.requested_peak_bytes));
    let _ = writeln!(o, "  active             {:>12}", b(r.active_bytes));
    let _ = writeln!(o, "  free in splits     {:>12}", b(r.inactive_split_bytes));
    let _ = writeln!(o, "  segments           {:>12}", n(r.segments));
    let _ = writeln!(o, "  alloc retries      {:>12}   OOMs {}", n(r.num_alloc_retries), n(r.num_ooms));
    let _ = writeln!(o, "  cudaMalloc / Free  {:>12} / {}", n(r.num_device_alloc), n(r.num_device_free));
    for note in &r.notes {
        let _ = writeln!(o, "  - {note}");
    }
    o
}
