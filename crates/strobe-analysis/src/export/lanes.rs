//! Who a lane belongs to, in the source's terms: the pid/tid (or device/stream) and the
//! process and thread names that metadata gave them. Computed once per lane.

use rustc_hash::FxHashMap;
use strobe_model::{IdKey, LaneKind};
use strobe_store::Store;

/// Where a lane's rows sort among all rows: by pid, then thread (or stream), then async
/// tracks of the process after its threads.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThreadKey {
    Tid(IdKey),
    Async(String),
}

/// A lane's identity columns.
#[derive(Clone, Debug)]
pub struct LaneIds {
    pub pid: IdKey,
    /// None for async tracks (a process-wide track has no thread).
    pub tid: Option<IdKey>,
    pub process_name: Option<String>,
    pub thread_name: Option<String>,
    pub lane: String,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub key: ThreadKey,
}

impl LaneIds {
    /// One entry per lane of `store`; `None` for copy-engine lanes, which are a second index
    /// over spans exported with their stream.
    pub fn of_store(store: &Store) -> Vec<Option<LaneIds>> {
        // later metadata wins, as in Perfetto
        let mut procs: FxHashMap<&IdKey, &str> = FxHashMap::default();
        for (p, n) in &store.names.processes {
            procs.insert(p, n);
        }
        let mut threads: FxHashMap<(&IdKey, &IdKey), &str> = FxHashMap::default();
        for ((p, t), n) in &store.names.threads {
            threads.insert((p, t), n);
        }
        let pname = |p: &IdKey| procs.get(p).map(|s| s.to_string());
        let tname = |p: &IdKey, t: &IdKey| threads.get(&(p, t)).map(|s| s.to_string());
        store
            .lanes
            .iter()
            .map(|d| {
                let thread = |pid: &IdKey, tid: &IdKey, device: Option<i64>, stream: Option<i64>| LaneIds {
                    pid: pid.clone(),
                    tid: Some(tid.clone()),
                    process_name: pname(pid),
                    thread_name: tname(pid, tid),
                    lane: d.name.clone(),
                    device,
                    stream,
                    key: ThreadKey::Tid(tid.clone()),
                };
                match &d.kind {
                    LaneKind::CopyEngine { .. } => None,
                    LaneKind::GpuStream { device, stream } | LaneKind::GpuAnnotation { device, stream } => {
                        Some(thread(&IdKey::Num(*device), &IdKey::Num(*stream), Some(*device), Some(*stream)))
                    }
                    LaneKind::CpuThread { pid, tid } | LaneKind::Nvtx { pid, tid } => {
                        Some(thread(pid, tid, None, None))
                    }
                    LaneKind::Async { pid, track } => Some(LaneIds {
                        pid: pid.clone(),
                        tid: None,
                        process_name: pname(pid),
                        thread_name: None,
                        lane: d.name.clone(),
                        device: None,
                        stream: None,
                        key: ThreadKey::Async(track.clone()),
                    }),
                }
            })
            .collect()
    }

    pub fn sort_key(&self) -> (&IdKey, &ThreadKey) {
        (&self.pid, &self.key)
    }
}
