//! The verdict as a paragraph that gives its evidence: the limiter's figures, the cache hit
//! rates or occupancy that explain them, the top stall reason, and ncu's largest estimate —
//! "memory-bound: DRAM at 91 %, L2 hit rate 12 %; 61 % of stalls are long_scoreboard
//! (waiting on L1TEX data …); ncu estimates up to 28 % from uncoalesced global access".
//! Only figures the report has are named.

use crate::roofline::{KernelSol, Verdict};

fn pct(v: f64) -> String {
    if v != 0.0 && v.abs() < 1.0 {
        format!("{v:.2} %")
    } else {
        format!("{v:.0} %")
    }
}

/// `UncoalescedGlobalAccess` → `uncoalesced global access`.
pub fn rule_words(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let prev_lower = i > 0 && chars[i - 1].is_lowercase();
        if i > 0 && c.is_uppercase() && (prev_lower || next_lower) {
            out.push(' ');
        }
        out.push(c);
    }
    // Keep acronyms (`SOL`, `FP`, `L2`) as written; lower-case the plain words.
    out.split(' ')
        .map(|w| if w.chars().skip(1).all(|c| c.is_lowercase()) { w.to_lowercase() } else { w.to_string() })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn paragraph(k: &KernelSol) -> Option<String> {
    let v = k.verdict?;
    let mut parts: Vec<String> = Vec::new();
    let mem = k.memory.as_ref();
    let occ = k.occupancy.as_ref();
    let mut head = Vec::new();
    match v {
        Verdict::MemoryBound => {
            if let Some(d) = k.dram_pct {
                head.push(format!("DRAM at {}", pct(d)));
            }
            if let Some(m) = k.memory_pct.filter(|m| k.dram_pct.is_none_or(|d| *m > d + 10.0)) {
                head.push(format!("memory pipes at {}", pct(m)));
            }
            if let Some(h) = mem.and_then(|m| m.l2_hit_pct) {
                head.push(format!("L2 hit rate {}", pct(h)));
            }
            if let Some(h) = mem.and_then(|m| m.l1_hit_pct) {
                head.push(format!("L1 hit rate {}", pct(h)));
            }
        }
        Verdict::ComputeBound => {
            if let Some(s) = k.sm_pct {
                head.push(format!("SM at {}", pct(s)));
            }
            if let Some(t) = k.tensor_pipe_pct.filter(|t| *t > 1.0) {
                head.push(format!("tensor pipe at {}", pct(t)));
            }
        }
        Verdict::UnderSaturated | Verdict::Balanced => {
            if let (Some(s), Some(m)) = (k.sm_pct, k.memory_pct) {
                head.push(format!("SM at {}, memory at {}", pct(s), pct(m)));
            }
            if let Some(w) = occ.and_then(|o| o.waves_per_sm).filter(|w| *w < 1.0) {
                head.push(if w < 0.01 {
                    "under 0.01 waves per SM".to_string()
                } else {
                    format!("{w:.2} waves per SM")
                });
            }
        }
    }
    let name = match v {
        Verdict::MemoryBound => "memory-bound",
        Verdict::ComputeBound => "compute-bound",
        Verdict::UnderSaturated => "under-saturated",
        Verdict::Balanced => "balanced",
    };
    parts.push(if head.is_empty() { name.to_string() } else { format!("{name}: {}", head.join(", ")) });
    if let Some(o) = occ {
        if let (Some(a), Some(t)) = (o.achieved_pct, o.theoretical_pct) {
            if t < 50.0 || a < 0.8 * t {
                let by = o
                    .limiter
                    .as_deref()
                    .filter(|_| t < 100.0)
                    .map(|l| format!(", limited by {}", l.replace('_', " ").replace('+', " and ")))
                    .unwrap_or_default();
                parts.push(format!("occupancy {} of a theoretical {}{by}", pct(a), pct(t)));
            }
        }
    }
    if let Some(s) = k.stalls.first() {
        let m = if s.meaning.is_empty() { String::new() } else { format!(" ({})", s.meaning) };
        parts.push(format!("{} of stalls are {}{m}", pct(s.pct), s.reason));
    }
    if let Some(e) = &k.estimated_speedup {
        parts.push(format!("ncu estimates up to {} from {}", pct(e.pct), rule_words(&e.rule)));
    }
    let mut s = parts.join("; ");
    s.push_str(&format!(". To try: {}.", v.advice()));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(rule_words("UncoalescedGlobalAccess"), "uncoalesced global access");
        assert_eq!(rule_words("SOLBottleneck"), "SOL bottleneck");
        assert_eq!(rule_words("CPIStall"), "CPI stall");
        assert_eq!(rule_words("MemoryL2Compression"), "memory L2 compression");
    }
}
