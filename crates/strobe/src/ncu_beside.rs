//! `strobe report TRACE NCU`: an Nsight Compute report (or CSV export) with the trace it was
//! profiled beside: the report's kernels as `strobe report NCU` gives them, plus each
//! kernel's possible gain weighed against the trace's steps ("where a faster kernel pays
//! most", `strobe_analysis::ncu_gain`), its launches linked to the trace's kernels by name
//! and launch order as the kernel pane links them.

use std::path::{Path, PathBuf};
use strobe_analysis::ncu_gain::{duration, StepGains};
use strobe_analysis::roofline::{self, RooflineReport};
use strobe_import::{Format, Source};

#[derive(serde::Serialize)]
struct Beside {
    #[serde(flatten)]
    report: RooflineReport,
    /// The trace the gains are weighed against.
    trace: String,
    /// None when no launch links to the trace's kernels or the trace has no steps.
    gains: Option<StepGains>,
}

fn is_ncu(p: &Path) -> bool {
    matches!(strobe_import::detect(p), Ok(Some(Format::NcuRep | Format::NcuCsv)))
}

/// (trace, ncu report) when `files` is exactly one of each.
pub fn given(files: &[PathBuf]) -> Option<(PathBuf, PathBuf)> {
    let [a, b] = files else { return None };
    match (is_ncu(a), is_ncu(b)) {
        (false, true) if a.is_file() => Some((a.clone(), b.clone())),
        (true, false) if b.is_file() => Some((b.clone(), a.clone())),
        _ => None,
    }
}

pub fn report(trace: &Path, ncu: &Path, cache_dir: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let Source::Ncu(n) = crate::load::open_with_progress(ncu, cache_dir)? else {
        anyhow::bail!("{}: not an Nsight Compute report", ncu.display())
    };
    let Source::Trace(store) = crate::load::open_with_progress(trace, cache_dir)? else {
        anyhow::bail!("{}: not a trace to weigh the Nsight Compute kernels against", trace.display())
    };
    let report = roofline::analyse(&n);
    let names: Vec<&str> = report.kernels.iter().map(|k| k.name.as_str()).collect();
    let links: Vec<Option<u32>> =
        strobe_analysis::ncu_match::match_stores(&names, &[&*store]).into_iter().map(|m| m.map(|(_, s)| s)).collect();
    let gains = strobe_analysis::ncu_gain::weigh(&report, &links, &store);
    let b = Beside { report, trace: trace.display().to_string(), gains };
    crate::emit(json, &b, text)
}

fn text(b: &Beside) -> String {
    use std::fmt::Write;
    let mut s = roofline::to_text(&b.report);
    let Some(g) = &b.gains else {
        let _ = writeln!(s, "\nno gains per step: no launch links to a kernel of {} or it has no steps", b.trace);
        return s;
    };
    let _ = writeln!(
        s,
        "\nwhere a faster kernel pays most, per step of {} (mean of {} steps, {}):",
        b.trace,
        g.steps,
        duration(g.step_ns)
    );
    for k in g.kernels.iter().take(15) {
        let why = match (k.gain_from, &k.ncu_rule) {
            ("ncu", Some(r)) => strobe_analysis::ncu_detail::paragraph::rule_words(r),
            _ => "roofline distance".into(),
        };
        let name: String = if k.timeline_name.chars().count() > 100 {
            k.timeline_name.chars().take(99).chain(['…']).collect()
        } else {
            k.timeline_name.clone()
        };
        let _ = writeln!(s, "  {} ({why})  {name}", k.sentence(g.step_ns));
    }
    s
}
