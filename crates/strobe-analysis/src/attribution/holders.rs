//! What held the host while the GPU waited on it, instant by instant: on the thread that
//! launched the work closing the gap, the innermost annotation (`record_function`, NVTX: the
//! names people give phases — `data_loading`, `cpu_stall_sleep`) covering the instant, else the
//! innermost other range (a Python frame, an op, a runtime call), else nothing recorded. The
//! step ranges themselves name no cause and are passed over.

use strobe_model::SpanKind;
use strobe_store::Store;

/// A piece of an idle stretch and what held the host in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub start: i64,
    pub end: i64,
    pub holder: Option<u32>,
    /// The thread sat in a synchronisation (`idle_causes::is_sync_name`).
    pub sync: bool,
}

/// `[s, e)` cut where its holder changes.
pub fn holders(store: &Store, lanes: &[u32], (s, e): (i64, i64), names: &mut NameFlags) -> Vec<Held> {
    // (start, end, annotation?, span, sync?)
    let mut cands: Vec<(i64, i64, bool, u32, bool)> = Vec::new();
    for &lane in lanes {
        let v = store.lane_view(lane);
        store.query_window(lane, s, e, |i| {
            let sid = v.span[i];
            let kind = store.span_kind(sid);
            let annotation = matches!(kind, SpanKind::UserAnnotation | SpanKind::Nvtx);
            let other = matches!(
                kind,
                SpanKind::CpuOp
                    | SpanKind::PythonFunction
                    | SpanKind::CudaRuntime
                    | SpanKind::CudaDriver
                    | SpanKind::OsRuntime
            );
            if !(annotation || other) {
                return;
            }
            let (step, sync) = names.of(store, store.span_meta(sid).name);
            if !step {
                cands.push((v.starts[i].max(s), v.ends[i].min(e), annotation, sid, sync));
            }
        });
    }
    let mut cuts: Vec<i64> = cands.iter().flat_map(|c| [c.0, c.1]).chain([s, e]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    // by start: the candidates covering a piece are among those started by then
    cands.sort_unstable_by_key(|c| (c.0, std::cmp::Reverse(c.1)));
    let mut out: Vec<Held> = Vec::new();
    let mut active: Vec<(i64, i64, bool, u32, bool)> = Vec::new();
    let mut next = 0;
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b <= a || a < s || b > e {
            continue;
        }
        while next < cands.len() && cands[next].0 <= a {
            active.push(cands[next]);
            next += 1;
        }
        active.retain(|c| c.1 > a);
        // innermost: an annotation before any other, then the latest start, then the shortest
        let covering = || active.iter().filter(|c| c.0 <= a && c.1 >= b);
        let holder = covering().max_by_key(|c| (c.2, c.0, std::cmp::Reverse(c.1), c.3)).map(|c| c.3);
        let sync = covering().any(|c| c.4);
        match out.last_mut() {
            Some(last) if last.holder == holder && last.sync == sync && last.end == a => last.end = b,
            _ => out.push(Held { start: a, end: b, holder, sync }),
        }
    }
    out
}

/// Per name (string id), once: whether it names an iteration (passed over) and whether it is a
/// synchronisation. The names of a trace repeat millions of times; each is read once. The
/// step's own name (a `--steps` pattern's) is passed over too, told by its text.
#[derive(Default)]
pub struct NameFlags {
    step: String,
    flags: rustc_hash::FxHashMap<u32, (bool, bool)>,
}

impl NameFlags {
    pub fn new() -> NameFlags {
        NameFlags { step: String::new(), flags: Default::default() }
    }

    /// For the step named `name`: its own range is passed over too.
    pub fn for_step(&mut self, name: &str) {
        if self.step != name {
            self.step.clear();
            self.step.push_str(name);
        }
    }

    fn of(&mut self, store: &Store, name: u32) -> (bool, bool) {
        let (iteration, sync) = *self.flags.entry(name).or_insert_with(|| {
            let n = store.string(name);
            (crate::steps::is_iteration_name(n), super::idle_causes::is_sync_name(n))
        });
        (iteration || store.string(name) == self.step, sync)
    }
}
