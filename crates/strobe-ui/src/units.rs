//! Numbers as a reader expects them: SI prefixes for FLOP/s and FLOP/byte, binary units for
//! bytes, thousands separators for counts, and a counter's value in the unit its name gives.

/// `v` with an SI prefix (k, M, G, T, P; m, µ, n below one) and three significant digits,
/// then `unit`: `si(1.2e12, "FLOP/s")` is "1.2 TFLOP/s".
pub fn si(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return format!("{v} {unit}");
    }
    if v == 0.0 {
        return format!("0 {unit}");
    }
    const UP: [&str; 6] = ["", "k", "M", "G", "T", "P"];
    const DOWN: [&str; 4] = ["", "m", "µ", "n"];
    let e = (v.abs().log10() / 3.0).floor() as i32;
    let (scaled, prefix) = if e >= 0 {
        let e = e.min(UP.len() as i32 - 1);
        (v / 1e3f64.powi(e), UP[e as usize])
    } else {
        let e = (-e).min(DOWN.len() as i32 - 1);
        (v * 1e3f64.powi(e), DOWN[e as usize])
    };
    format!("{} {prefix}{unit}", significant(scaled))
}

/// Three significant digits, no trailing zeros: 1.5, 12.3, 456.
fn significant(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A threshold in ns as µs, no trailing zeros: 10 000 ns is "10 µs", 2 500 ns "2.5 µs".
pub fn threshold_us(ns: i64) -> String {
    let s = format!("{:.3}", ns as f64 / 1e3);
    format!("{} µs", s.trim_end_matches('0').trim_end_matches('.'))
}

/// An integer with thousands separators: 3 063 becomes "3,063".
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Bytes in binary units (B, KiB, MiB, GiB, TiB), as the memory pane writes them.
pub fn bytes(b: f64) -> String {
    let s = strobe_analysis::memory::bytes(b.abs().round() as u64);
    if b < 0.0 {
        format!("-{s}")
    } else {
        s
    }
}

/// What a counter's values measure, from its name (the trace formats carry no unit field:
/// Kineto and nsys name their memory counters, the derived series name their rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterUnit {
    Bytes,
    /// A rate whose unit the name spells (e.g. "GB/s"): the value is shown with it.
    Rate(&'static str),
    Percent,
    /// A plain quantity (queue length, event counts, anything unnamed).
    Count,
}

impl CounterUnit {
    pub fn of(name: &str) -> CounterUnit {
        let n = name.to_ascii_lowercase();
        for r in ["GB/s", "MB/s", "kB/s", "B/s", "FLOP/s"] {
            if name.contains(r) {
                return CounterUnit::Rate(r);
            }
        }
        if n.contains("/s") || n.contains("per second") {
            return CounterUnit::Rate("/s");
        }
        if n.contains('%') || n.contains("percent") || n.contains("utilization") {
            return CounterUnit::Percent;
        }
        if ["memory", "bytes", "allocated", "reserved", "footprint", " mem "].iter().any(|k| n.contains(k)) {
            return CounterUnit::Bytes;
        }
        CounterUnit::Count
    }

    /// `v` in this unit.
    pub fn fmt(self, v: f64) -> String {
        match self {
            CounterUnit::Bytes => bytes(v),
            CounterUnit::Rate("/s") => si(v, "/s"),
            CounterUnit::Rate(u) => format!("{} {u}", significant(v)),
            CounterUnit::Percent => format!("{} %", significant(v)),
            CounterUnit::Count if v.fract() == 0.0 && v.abs() < 9e15 => count(v as i64),
            CounterUnit::Count if v.abs() >= 1e4 => si(v, "").trim_end().to_string(),
            CounterUnit::Count => significant(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_prefixes() {
        assert_eq!(si(1.2e12, "FLOP/s"), "1.2 TFLOP/s");
        assert_eq!(si(989e12, "FLOP/s"), "989 TFLOP/s");
        assert_eq!(si(1e6, "FLOP/s"), "1 MFLOP/s");
        assert_eq!(si(0.01, "FLOP/B"), "10 mFLOP/B");
        assert_eq!(si(1e-8, "FLOP/B"), "10 nFLOP/B");
        assert_eq!(si(3.35e3, "B/s"), "3.35 kB/s");
        assert_eq!(si(1.0, "FLOP/B"), "1 FLOP/B");
    }

    #[test]
    fn counts_and_bytes() {
        assert_eq!(count(3063), "3,063");
        assert_eq!(count(67108864), "67,108,864");
        assert_eq!(count(-1000), "-1,000");
        assert_eq!(count(999), "999");
        assert_eq!(threshold_us(10_000), "10 µs");
        assert_eq!(threshold_us(2_500), "2.5 µs");
        assert_eq!(threshold_us(50_000), "50 µs");
        assert_eq!(bytes(67108864.0), "64.00 MiB");
        assert_eq!(bytes(512.0), "512 B");
    }

    #[test]
    fn counter_units_from_their_names() {
        assert_eq!(CounterUnit::of("GPU 0 memory Device"), CounterUnit::Bytes);
        assert_eq!(CounterUnit::of("CPU memory Total Allocated"), CounterUnit::Bytes);
        assert_eq!(CounterUnit::of("GB/s · GPU 0 Memcpy HtoD"), CounterUnit::Rate("GB/s"));
        assert_eq!(CounterUnit::of("queue length · GPU 0 stream 7"), CounterUnit::Count);
        assert_eq!(CounterUnit::Bytes.fmt(67108864.0), "64.00 MiB");
        assert_eq!(CounterUnit::Count.fmt(12.0), "12");
        assert_eq!(CounterUnit::Count.fmt(1234567.0), "1,234,567");
        assert_eq!(CounterUnit::Rate("GB/s").fmt(12.345), "12.3 GB/s");
    }
}
