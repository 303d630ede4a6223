//! Memory categories and the by-source breakdown against the independent Python oracle
//! (`tests/expected/memory_categories_expected.py`, from the rules of docs/memory.md), and
//! against what the recording script knew of its model (`*.model.json`: the parameters' bytes,
//! the optimizer state's bytes, the gradients' bytes).

mod common;
use common::{expected, sample};
use strobe_analysis::memory::categories::PhaseSource;
use strobe_analysis::memory::{analyse_with_breakdown, breakdown_at, AllocationTimeline, Classifier, PeakBreakdown};
use strobe_import::memory_snapshot;
use strobe_model::memory::MemorySnapshot;

/// Three recordings with record_function phases (AdamW at two batch sizes, SGD with momentum)
/// and a public snapshot with frames and no annotations.
const STEMS: [&str; 4] = ["mem_adamw_b8", "mem_adamw_b16", "mem_sgd_b8", "mem_cranberrii"];

fn open(stem: &str) -> MemorySnapshot {
    memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn category_bytes(b: &PeakBreakdown, name: &str) -> i64 {
    b.categories.iter().find(|c| c.category.as_str() == name).map_or(0, |c| c.bytes)
}

/// One breakdown against the oracle's: every category's bytes and count, every source line's
/// bytes, count and category.
fn same_as_oracle(stem: &str, what: &str, got: &PeakBreakdown, want: &serde_json::Value) {
    assert_eq!(got.position as u64, want["position"].as_u64().unwrap(), "{stem} {what}: position");
    assert_eq!(got.allocated_bytes, want["allocated_bytes"].as_i64().unwrap(), "{stem} {what}: allocated");
    let phases = match got.phases {
        PhaseSource::Annotations => "annotations",
        PhaseSource::Frames => "frames",
        PhaseSource::None => "none",
    };
    assert_eq!(phases, want["source"].as_str().unwrap(), "{stem} {what}: where the phases came from");
    let wc = want["categories"].as_object().unwrap();
    for c in &got.categories {
        let (bytes, count) =
            wc.get(c.category.as_str()).map_or((0, 0), |v| (v[0].as_i64().unwrap(), v[1].as_u64().unwrap()));
        assert_eq!((c.bytes, c.count as u64), (bytes, count), "{stem} {what}: {}", c.category.as_str());
    }
    assert_eq!(got.categories.iter().map(|c| c.bytes).sum::<i64>(), got.allocated_bytes, "{stem} {what}: parts add up");
    let ws = want["by_source"].as_object().unwrap();
    assert_eq!(got.by_source.len(), ws.len(), "{stem} {what}: source lines");
    for s in &got.by_source {
        let w = ws.get(&s.frame).unwrap_or_else(|| panic!("{stem} {what}: {} not in the oracle", s.frame));
        assert_eq!(
            (s.bytes, s.count as u64, s.category.as_str()),
            (w[0].as_i64().unwrap(), w[1].as_u64().unwrap(), w[2].as_str().unwrap()),
            "{stem} {what}: {}",
            s.frame
        );
        assert_eq!(s.allocations.len(), s.count, "{stem}: each line links to its allocations");
    }
    assert!(got.by_source.windows(2).all(|w| w[0].bytes >= w[1].bytes), "{stem}: largest first");
}

#[test]
fn categories_and_sources_match_the_python_oracle() {
    for stem in STEMS {
        let snap = open(stem);
        let want = expected(&format!("{stem}.categories.json"));
        let report = analyse_with_breakdown(&snap);
        for d in &report.devices {
            let w = &want["devices"][d.device.to_string()];
            let peak = d.peak_breakdown.as_ref().unwrap_or_else(|| panic!("{stem}: no breakdown"));
            same_as_oracle(stem, "peak", peak, &w["peak"]);
            assert_eq!(peak.allocated_bytes, d.peak_allocated_bytes, "{stem}: the breakdown is of the replayed peak");
            let tl = AllocationTimeline::build(&snap, d.device);
            let c = Classifier::new(&snap, d.device);
            for (j, wb) in w["after_backward"].as_array().unwrap().iter().enumerate() {
                let k = wb["position"].as_u64().unwrap() as usize;
                same_as_oracle(stem, &format!("after backward {j}"), &breakdown_at(&snap, &tl, &c, k), wb);
            }
        }
    }
}

#[test]
fn recordings_agree_with_what_the_model_holds() {
    for stem in ["mem_adamw_b8", "mem_adamw_b16", "mem_sgd_b8"] {
        let facts: serde_json::Value = expected(&format!("{stem}.model.json"));
        let fact = |k: &str| facts[k].as_i64().unwrap();
        let snap = open(stem);
        let report = analyse_with_breakdown(&snap);
        let peak = report.devices[0].peak_breakdown.as_ref().unwrap();
        // parameters = Σ numel × element size; the optimizer's state as it holds it (AdamW's
        // exp_avg and exp_avg_sq: 2×; SGD's momentum buffer: 1×)
        assert_eq!(category_bytes(peak, "parameter"), fact("parameter_bytes"), "{stem}");
        assert_eq!(category_bytes(peak, "optimizer_state"), fact("optimizer_state_bytes"), "{stem}");
        assert_eq!(
            fact("optimizer_state_bytes"),
            fact("optimizer_state_per_parameter") * fact("parameter_bytes"),
            "{stem}"
        );
        assert_eq!(peak.phases, PhaseSource::Annotations, "{stem}");
        // gradients, where alive (right after each backward), are the parameters' size
        let tl = AllocationTimeline::build(&snap, 0);
        let c = Classifier::new(&snap, 0);
        let want = expected(&format!("{stem}.categories.json"));
        let ends = want["devices"]["0"]["after_backward"].as_array().unwrap();
        assert_eq!(ends.len() as i64, fact("steps"), "{stem}: one backward per step");
        for e in ends {
            let b = breakdown_at(&snap, &tl, &c, e["position"].as_u64().unwrap() as usize);
            assert_eq!(category_bytes(&b, "gradient"), fact("gradient_bytes_when_alive"), "{stem} at {}", b.position);
        }
    }
}

#[test]
fn a_snapshot_without_annotations_says_its_phases_came_from_frames() {
    let snap = open("mem_cranberrii");
    let r = analyse_with_breakdown(&snap);
    let b = r.devices[0].peak_breakdown.as_ref().unwrap();
    assert_eq!(b.phases, PhaseSource::Frames);
    assert!(b.note.contains("no record_function annotations"), "{}", b.note);
    // a wrapped ring buffer (a real torch 2.0-era snapshot whose one entry frees a block made
    // before it): what the history never saw made is other, and the note says why
    let wrapped = open("mem_yiyi_legacy");
    let r = analyse_with_breakdown(&wrapped);
    let b = r.devices[0].peak_breakdown.as_ref().unwrap();
    assert!(b.allocated_bytes > 0);
    assert_eq!(category_bytes(b, "other"), b.allocated_bytes);
    let other = b.categories.iter().find(|c| c.category.as_str() == "other").unwrap();
    assert_eq!(other.rules[0].rule, strobe_analysis::memory::categories::Rule::BeforeHistoryWindow);
    assert!(b.note.contains("wrapped ring buffer"), "{}", b.note);
}

#[test]
fn profile_memory_trace_breaks_its_peak_down_too() {
    // torch.profiler(profile_memory=True, record_shapes=True, with_stack=True) over three steps
    // of the same model (tests/tools/record_memory_categories.py --kineto)
    let store = common::load("mem_profile_memory.json.gz");
    let got = strobe_analysis::memory::profile::profile_breakdowns(&store);
    let want = expected("mem_profile_memory.profile_categories.json");
    assert_eq!(got.len(), want["devices"].as_object().unwrap().len());
    for g in &got {
        same_as_oracle("mem_profile_memory", "profile peak", &g.peak_breakdown, &want["devices"][g.device.to_string()]);
        assert_eq!(g.with_op, g.events, "every instant of this trace sits inside an op");
        // the allocator's own peak total, which the profile's allocations and what it never saw
        // made add up to
        let peaks = strobe_analysis::memory_level::memory_peaks(&store);
        let p = peaks.iter().find(|p| p.device == g.device).unwrap();
        assert_eq!(Some(g.peak_breakdown.allocated_bytes as u64), p.peak_allocated_bytes);
    }
    // the optimizer state it saw made is AdamW's 2× the parameters of the snapshot recordings
    let facts: serde_json::Value = expected("mem_adamw_b8.model.json");
    assert_eq!(
        category_bytes(&got[0].peak_breakdown, "optimizer_state"),
        facts["optimizer_state_bytes"].as_i64().unwrap()
    );
    // a trace without [memory] instants has none
    assert!(strobe_analysis::memory::profile::profile_breakdowns(&common::load("catapult_flow.json")).is_empty());
}
