//! The flight-recorder report as text: the verdicts first (mismatches, where each group
//! stopped), then the ranks.

use super::{FrReport, Mismatch};
use std::fmt::Write;

fn group_name(name: &str, desc: &str) -> String {
    if desc.is_empty() {
        format!("group {name}")
    } else {
        format!("group {name} ({desc})")
    }
}

fn ranks(r: &[u32]) -> String {
    let s: Vec<String> = r.iter().map(u32::to_string).collect();
    match r.len() {
        1 => format!("rank {}", s[0]),
        _ => format!("ranks {}", s.join(", ")),
    }
}

/// "rank 1 called all_reduce, the other 3 all_gather".
pub fn mismatch_sentence(m: &Mismatch) -> String {
    if m.p2p {
        return p2p_sentence(m);
    }
    let at = format!("at seq {} on {}", m.seq, group_name(&m.group, &m.desc));
    let majority = &m.values[0];
    match m.kind.as_str() {
        "missing" => {
            let present: usize = m.values.iter().filter(|v| v.value != "(not arrived)").map(|v| v.ranks.len()).sum();
            format!(
                "{at}: {} never arrived; {present} other{} called {}",
                ranks(&m.ranks),
                if present == 1 { "" } else { "s" },
                if m.majority.is_empty() { "nothing".into() } else { m.majority.clone() }
            )
        }
        kind => {
            let what = if kind == "op" { "called" } else { "passed" };
            let odd: Vec<String> =
                m.values[1..].iter().map(|v| format!("{} {what} {}", ranks(&v.ranks), v.value)).collect();
            let n = majority.ranks.len();
            let others = if n == 1 { "the other rank".to_string() } else { format!("the other {n}") };
            let label = match kind {
                "op" => "desync",
                "size" => "size mismatch",
                _ => "dtype mismatch",
            };
            format!("{at}: {label}: {}, {others} {}", odd.join("; "), majority.value)
        }
    }
}

/// "at p2p seq 3 on group 1 (pp): rank 1 never posted its end of rank 0's send to 1".
fn p2p_sentence(m: &Mismatch) -> String {
    let at = format!("at p2p seq {} on {}", m.seq, group_name(&m.group, &m.desc));
    let side = |i: usize| m.values.get(i).map(|v| (ranks(&v.ranks), v.value.as_str())).unwrap_or_default();
    let ((ra, va), (rb, vb)) = (side(0), side(1));
    match m.kind.as_str() {
        "missing" => format!("{at}: {rb} never posted its end of {ra}'s {va}"),
        "op" => format!("{at}: unpaired: {ra} called {va}, {rb} {vb} there"),
        kind => format!("{at}: {kind} mismatch: {ra} {va}, {rb} {vb}"),
    }
}

pub fn to_text(r: &FrReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Flight recorder: {} rank dump(s), {} group(s)", r.ranks.len(), r.groups.len());
    if !r.missing_dumps.is_empty() {
        let _ = writeln!(o, "  no dump from {}", ranks(&r.missing_dumps));
    }
    let _ = writeln!(o, "\nMismatches");
    if r.mismatches.is_empty() {
        let _ = writeln!(o, "  none: every member called the same op with the same sizes at every sequence number");
    }
    for m in &r.mismatches {
        let _ = writeln!(o, "  {}", mismatch_sentence(m));
    }
    let _ = writeln!(o, "\nWhere each group stopped");
    for g in &r.groups {
        let last = r.last_completed_everywhere.iter().find(|l| l.group == g.name);
        let last = match last {
            Some(l) => format!("last completed by every member: seq {} ({})", l.seq, l.op),
            None if g.seqs.is_empty() => "no collectives recorded (point-to-point only)".into(),
            None => "no collective completed by every member".into(),
        };
        let _ =
            writeln!(o, "  {} [{} from {}]: {last}", group_name(&g.name, &g.desc), ranks(&g.members), g.members_from);
        for s in r.stuck.iter().filter(|s| s.group == g.name) {
            let _ = write!(o, "    stuck at seq {} ({}): ", s.seq, if s.op.is_empty() { "?" } else { &s.op });
            let mut parts = Vec::new();
            if !s.arrived.is_empty() {
                parts.push(format!("{} arrived", ranks(&s.arrived)));
            }
            if !s.not_completed.is_empty() {
                parts.push(format!("{} not completed", ranks(&s.not_completed)));
            }
            for b in &s.not_arrived {
                parts.push(match (&b.last_seq, &b.last_op) {
                    (Some(seq), Some(op)) => format!("rank {} never arrived (last: seq {seq} {op})", b.rank),
                    _ => format!("rank {} never arrived (nothing recorded on the group)", b.rank),
                });
            }
            let _ = writeln!(o, "{}", parts.join("; "));
        }
    }
    let odd_p2p = r.mismatches.iter().filter(|m| m.p2p).count();
    if r.p2p_matched + odd_p2p > 0 {
        let _ = writeln!(
            o,
            "\nPoint-to-point: {} transfer(s) matched send to receive, {odd_p2p} odd (above)",
            r.p2p_matched
        );
    }
    if !r.pending_p2p.is_empty() {
        let _ = writeln!(o, "\nPoint-to-point ops not completed");
        for p in &r.pending_p2p {
            let _ = writeln!(
                o,
                "  rank {}: {} (p2p seq {}) on group {}, {}, {}",
                p.rank, p.entry.op, p.entry.seq, p.entry.group, p.entry.state, p.sizes
            );
        }
    }
    let _ = writeln!(o, "\nRanks");
    for k in &r.ranks {
        let last = match &k.last {
            Some(l) => format!(
                "last: {} {} {} on group {} ({})",
                if l.p2p { "p2p seq" } else { "seq" },
                l.seq,
                l.op,
                l.group,
                l.state
            ),
            None => "no entries".into(),
        };
        let _ = writeln!(
            o,
            "  rank {:>3}: {} entries ({} collectives, {} p2p), version {} {}; {last}",
            k.rank, k.entries, k.collectives, k.p2p, k.version, k.form
        );
        for n in &k.notes {
            let _ = writeln!(o, "      note: {n}");
        }
    }
    for n in &r.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}
