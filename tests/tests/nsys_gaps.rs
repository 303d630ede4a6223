//! The headline figures (over the steps where there are steps), the largest idle gaps with
//! the op that held the host, and the export's diagnostics, against figures computed
//! independently by tests/expected/nsys/gaps_expected.py (stdlib Python over the export's
//! own tables).

mod common;
use common::*;
use strobe_analysis::headline::Covers;

fn i(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap()
}

/// The real exports among the samples (the `nsys_fx_*` fixtures are layout variants the
/// oracle does not read).
const REAL_EXPORTS: [&str; 6] = [
    "nsys_gpt_single",
    "nsys_fuser_h200",
    "nsys_ddp_2proc",
    "nsys_extrap_concurrent",
    "nsys_pipit_saxpy_mpi",
    "nsys_uvmtorch_cpu_only",
];

#[test]
fn headline_and_largest_gaps_match_the_oracle() {
    for stem in REAL_EXPORTS {
        let s = load(&format!("{stem}.sqlite"));
        let exp = expected(&format!("nsys/{stem}.gaps.json"));
        let r = strobe_analysis::report::report(&s, 5);
        let h = &r.headline;
        let eh = &exp["headline"];
        let covers = match h.covers {
            Covers::Steps => "steps",
            Covers::Capture => "capture",
            Covers::Trace => "trace",
        };
        assert_eq!(covers, eh["covers"].as_str().unwrap(), "{stem}");
        assert_eq!(h.steps as i64, i(&eh["steps"]), "{stem}");
        let ed = eh["devices"].as_array().unwrap();
        assert_eq!(h.devices.len(), ed.len(), "{stem}");
        for (d, e) in h.devices.iter().zip(ed) {
            let got = (d.device, d.window_ns, d.busy_ns, d.idle_ns, d.host_wait_ns, d.kernel_wait_ns, d.other_ns);
            let want = (
                i(&e["device"]),
                i(&e["window_ns"]),
                i(&e["busy_ns"]),
                i(&e["idle_ns"]),
                i(&e["host_wait_ns"]),
                i(&e["kernel_wait_ns"]),
                i(&e["other_ns"]),
            );
            assert_eq!(got, want, "{stem}");
            assert_eq!(d.long_gaps as i64, i(&e["long_gaps"]), "{stem}");
            assert_eq!(d.host_wait_ns + d.kernel_wait_ns + d.other_ns, d.idle_ns, "{stem}: the breakdown adds up");
        }
        let eg = exp["largest_gaps"].as_array().unwrap();
        assert_eq!(r.largest_gaps.len(), eg.len(), "{stem}");
        for (g, e) in r.largest_gaps.iter().zip(eg) {
            assert_eq!(
                (g.device, g.start_ns, g.len_ns),
                (i(&e["device"]), i(&e["start_ns"]), i(&e["len_ns"])),
                "{stem}"
            );
            assert_eq!(g.cause.label(), e["cause"].as_str().unwrap(), "{stem} gap at {}", g.start_ns);
            assert_eq!(g.held_by_name.as_deref(), e["held_by"].as_str(), "{stem} gap at {}", g.start_ns);
        }
        let mut rows = Vec::new();
        let n = strobe_analysis::export::export(
            &s,
            strobe_analysis::export::What::Gaps,
            strobe_analysis::export::Format::Csv,
            &mut rows,
        )
        .unwrap();
        assert_eq!(n as i64, i(&exp["long_gaps"]), "{stem}: every long gap exported");
    }
}

#[test]
fn the_headline_says_what_it_covers() {
    let s = load("nsys_gpt_single.sqlite");
    let r = strobe_analysis::report::report(&s, 5);
    // six NVTX steps, 130.899 ms from the first step's start to the last one's end
    assert_eq!(r.headline.scope_text(), "over 6 steps, 130.899 ms");
    let text = strobe_analysis::report::to_text(&r);
    assert!(text.contains("Headline (over 6 steps, 130.899 ms):"), "{text}");
    assert!(text.contains("GPU 0 over the whole trace: window"), "{text}");
    assert!(text.contains("Largest idle gaps"), "{text}");
    let f = load("nsys_fuser_h200.sqlite");
    let r = strobe_analysis::report::report(&f, 5);
    assert_eq!(r.headline.scope_text(), "over the whole trace");
    // without steps the headline is the whole-trace figures
    assert_eq!(r.headline.devices[0].idle_ns, r.gpus[0].idle_ns);
}

#[test]
fn the_profilers_warnings_are_load_notes() {
    for stem in REAL_EXPORTS {
        let s = load(&format!("{stem}.sqlite"));
        let exp = expected(&format!("nsys/{stem}.gaps.json"));
        let got: Vec<&String> = s.meta.load.notes.iter().filter(|n| n.starts_with("nsys ")).collect();
        let want: Vec<String> = exp["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let n = i(&d["count"]);
                let times = if n > 1 { format!(" (reported {n} times)") } else { String::new() };
                format!("nsys {}: {}{times}", d["severity"].as_str().unwrap(), d["text"].as_str().unwrap().trim())
            })
            .collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>(), "{stem}");
        // and the report prints them among its notes
        let text = strobe_analysis::report::to_text(&strobe_analysis::report::report(&s, 5));
        for w in &want {
            assert!(text.contains(&format!("note: {w}")), "{stem}: {w}");
        }
    }
    // exports without the table load as before
    for stem in ["nsys_fx_v2_tables", "nsys_fx_string_table", "nsys_fx_old_gpu_info"] {
        let s = load(&format!("{stem}.sqlite"));
        assert!(!s.meta.load.notes.iter().any(|n| n.starts_with("nsys ") || n.contains("DIAGNOSTIC")), "{stem}");
    }
}

#[test]
fn the_efficiency_note_says_what_is_missing() {
    // gpt_single links its GPU operations to their runtime calls — 2 628 kernel, 227 memcpy
    // and 382 memset flows = 3 237 (figures.sql's flows_* counts in nsys_gpt_single.nsys.json)
    // — but has no framework op to own them
    let s = load("nsys_gpt_single.sqlite");
    let r = strobe_analysis::report::report(&s, 5);
    let note = r.efficiency.notes.join(" ");
    assert!(note.contains("3237 correlation flows"), "{note}");
    assert!(!note.contains("no correlation flows"), "{note}");
}
