//! Sampled GPU hardware metrics (Nsight Systems `--gpu-metrics-devices`): one counter series
//! per GPU and metric, stored as device counters named [`NAME`] whose series is the metric's
//! full name as the profiler gives it (`SMs Active [Throughput %]`).

/// Counter name of every GPU metric series (the series is the metric).
pub const NAME: &str = "GPU metrics";

/// The metrics a reader looks at first, in the order Nsight Systems draws them: whether the
/// SMs are busy, issuing and using their tensor cores, then the memory and link traffic.
/// Matched against a metric's short name (its name without the `[unit]` suffix), ignoring
/// case; the rest of the metrics (clocks, warps in flight, BAR1 requests, …) come after.
pub const USUAL: &[&str] = &[
    "SMs Active",
    "SM Issue",
    "Tensor Active",
    "DRAM Read Bandwidth",
    "DRAM Write Bandwidth",
    "PCIe RX Throughput",
    "PCIe TX Throughput",
    "NVLink RX",
    "NVLink TX",
];

/// A metric's name without its unit: `SMs Active [Throughput %]` → `SMs Active`.
pub fn short_name(full: &str) -> &str {
    match full.rfind(" [") {
        Some(i) if full.ends_with(']') => full[..i].trim_end(),
        _ => full.trim(),
    }
}

/// A metric's unit from its `[unit]` suffix: `[Throughput %]` → `%`, `[MHz]` → `MHz`;
/// empty when the name has none.
pub fn unit(full: &str) -> &str {
    match full.rfind(" [") {
        Some(i) if full.ends_with(']') => {
            let u = full[i + 2..full.len() - 1].trim();
            // nsys writes percentages as "Throughput %" (of the unit's peak)
            if u.ends_with('%') {
                "%"
            } else {
                u
            }
        }
        _ => "",
    }
}

/// Where a metric sorts: its place in [`USUAL`] (by prefix, so `NVLink RX Bandwidth` and
/// `NVLink RX Responses` both land on `NVLink RX`), else after every usual one.
pub fn rank(full: &str) -> usize {
    let short = short_name(full).to_ascii_lowercase();
    USUAL.iter().position(|u| short.starts_with(&u.to_ascii_lowercase())).unwrap_or(USUAL.len())
}

/// Whether the metric is one of the usual ones (drawn unfolded).
pub fn is_usual(full: &str) -> bool {
    rank(full) < USUAL.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_order() {
        assert_eq!(short_name("SMs Active [Throughput %]"), "SMs Active");
        assert_eq!(unit("SMs Active [Throughput %]"), "%");
        assert_eq!(unit("GPC Clock Frequency [MHz]"), "MHz");
        assert_eq!(unit("metric 7"), "");
        assert_eq!(short_name("metric 7"), "metric 7");
        assert!(rank("SMs Active [Throughput %]") < rank("Tensor Active [Throughput %]"));
        assert!(rank("DRAM Write Bandwidth [Throughput %]") < rank("PCIe RX Throughput [Throughput %]"));
        assert_eq!(rank("NVLink RX Responses User Data [Throughput %]"), 7);
        assert!(!is_usual("GPC Clock Frequency [MHz]"));
        assert!(is_usual("SM Issue [Throughput %]"));
        // "SMs Active" is not mistaken for "SM Issue" nor the other way round
        assert_eq!(rank("SM Issue [Throughput %]"), 1);
        assert_eq!(rank("SMs Active [Throughput %]"), 0);
    }
}
