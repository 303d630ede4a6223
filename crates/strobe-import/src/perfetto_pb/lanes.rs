//! Where each Perfetto track goes among Kineto's lanes: a CPU thread `(pid, tid)`, a GPU
//! stream `(device, stream)`, or a counter of a process or of a GPU. Producers name their
//! GPU tracks differently; the conventions read here are rocprofv3's
//! (`COMPUTE AGENT [n] STREAM [s]`, `COPY to AGENT [n] STREAM [s]`,
//! `COMPUTE GPU [n] QUEUE [q]`) and a `stream N` track under a track naming a GPU.

use super::model::Track;
use rustc_hash::{FxHashMap, FxHashSet};

/// A chrome pid or tid: a number, or a name where the trace gives none.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Num(i64),
    Str(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    Cpu {
        pid: Key,
        tid: Key,
    },
    /// A GPU queue's track; `cat` where the track says what runs on it (a copy track).
    Gpu {
        device: i64,
        stream: i64,
        cat: Option<&'static str>,
    },
}

pub struct Lanes {
    pub places: FxHashMap<u64, Place>,
    /// The GPU a counter track measures, where its name or an ancestor's says.
    pub counter_gpu: FxHashMap<u64, i64>,
    /// Each process's name, and each CPU lane's, for the metadata events.
    pub process_names: Vec<(Key, String)>,
    pub thread_names: Vec<(Key, Key, String)>,
}

/// A GPU's number in a name like `GPU 0`, `gpu:1`, `cuda:0`, `/device:GPU:2`, `Device 3`,
/// `AGENT [4]`.
pub fn gpu_in_name(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    for key in ["agent [", "/device:gpu:", "cuda:", "gpu ", "gpu:", "gpu#", "gpu", "device "] {
        if let Some(i) = lower.find(key) {
            let rest = &lower[i + key.len()..];
            let digits: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

/// The number after `key [` in a rocprofv3 track name.
fn bracketed(name: &str, key: &str) -> Option<i64> {
    let i = name.find(key)?;
    let rest = name[i + key.len()..].trim_start().strip_prefix('[')?;
    rest.split(']').next()?.trim().parse().ok()
}

/// A rocprofv3 queue or stream track: (device, stream, category).
fn rocprof_queue(name: &str) -> Option<(i64, i64, &'static str)> {
    if !name.ends_with("(GPU)") && !name.trim_end().ends_with("(GPU)") {
        return None;
    }
    let cat = if name.starts_with("COPY") { "gpu_memcpy" } else { "kernel" };
    let device = bracketed(name, "AGENT").or_else(|| bracketed(name, "GPU"))?;
    let stream = bracketed(name, "STREAM").or_else(|| bracketed(name, "QUEUE"))?;
    Some((device, stream, cat))
}

fn is_stream_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("stream") || l.contains("queue")
}

impl Lanes {
    pub fn new(tracks: &FxHashMap<u64, Track>, used: &FxHashSet<u64>) -> Lanes {
        let mut lanes = Lanes {
            places: FxHashMap::default(),
            counter_gpu: FxHashMap::default(),
            process_names: Vec::new(),
            thread_names: Vec::new(),
        };
        let mut taken: FxHashSet<(Key, Key)> = FxHashSet::default();
        let mut named_pids: FxHashSet<Key> = FxHashSet::default();
        let chain = |uuid: u64| -> Vec<(u64, &Track)> {
            let mut out = Vec::new();
            let mut at = Some(uuid);
            while let Some(u) = at {
                let Some(t) = tracks.get(&u) else { break };
                if out.len() > 64 || out.iter().any(|(x, _)| *x == u) {
                    break; // a parent loop: the chain so far
                }
                out.push((u, t));
                at = t.parent;
            }
            out
        };
        for (uuid, t) in tracks {
            if t.is_process {
                if let Some(pid) = t.pid {
                    let k = Key::Num(pid as i64);
                    if !t.name.is_empty() && named_pids.insert(k.clone()) {
                        lanes.process_names.push((k, t.name.clone()));
                    }
                }
            }
            let _ = uuid;
        }
        let mut order: Vec<u64> = used.iter().copied().collect();
        order.sort_unstable();
        for uuid in order {
            let c = chain(uuid);
            let own = c.first().map(|(_, t)| *t);
            let own_name = own.map(|t| t.name.clone()).unwrap_or_default();
            if own.is_some_and(|t| t.counter.is_some()) {
                if let Some(d) = c.iter().find_map(|(_, t)| gpu_in_name(&t.name)) {
                    lanes.counter_gpu.insert(uuid, d);
                }
            }
            if let Some((device, stream, cat)) = rocprof_queue(&own_name) {
                lanes.places.insert(uuid, Place::Gpu { device, stream, cat: Some(cat) });
                continue;
            }
            if own.is_some_and(|t| t.pid.is_none() && t.counter.is_none()) && is_stream_name(&own_name) {
                if let Some(device) = c.iter().skip(1).find_map(|(_, t)| gpu_in_name(&t.name)) {
                    let stream = super::decode::stream_number(&own_name).unwrap_or(uuid as i64 & 0xffff);
                    lanes.places.insert(uuid, Place::Gpu { device, stream, cat: None });
                    continue;
                }
            }
            let pid = c.iter().find_map(|(_, t)| t.pid);
            let place = match own {
                Some(t) if t.tid.is_some() && !t.is_process => {
                    let (p, tid) = (Key::Num(t.pid.unwrap_or(0) as i64), Key::Num(t.tid.unwrap_or(0)));
                    if !t.name.is_empty() {
                        lanes.thread_names.push((p.clone(), tid.clone(), t.name.clone()));
                    }
                    Place::Cpu { pid: p, tid }
                }
                _ => {
                    let pid = match pid {
                        Some(p) => Key::Num(p as i64),
                        None => {
                            let root = c.last().map(|(_, t)| t.name.clone()).filter(|n| !n.is_empty());
                            Key::Str(root.unwrap_or_else(|| "tracks".into()))
                        }
                    };
                    let base = if own_name.is_empty() {
                        if own.is_some_and(|t| t.is_process) {
                            "process".to_string()
                        } else {
                            format!("track {uuid}")
                        }
                    } else {
                        own_name.clone()
                    };
                    let mut tid = Key::Str(base.clone());
                    if taken.contains(&(pid.clone(), tid.clone())) {
                        tid = Key::Str(format!("{base} ({uuid})"));
                    }
                    if let Key::Str(s) = &tid {
                        lanes.thread_names.push((pid.clone(), tid.clone(), s.clone()));
                    }
                    Place::Cpu { pid, tid }
                }
            };
            if let Place::Cpu { pid, tid } = &place {
                taken.insert((pid.clone(), tid.clone()));
            }
            lanes.places.insert(uuid, place);
        }
        lanes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_and_stream_names_of_the_producers_are_read() {
        assert_eq!(gpu_in_name("GPU 1"), Some(1));
        assert_eq!(gpu_in_name("/device:GPU:3"), Some(3));
        assert_eq!(gpu_in_name("cuda:0 counters"), Some(0));
        assert_eq!(gpu_in_name("python3"), None);
        assert_eq!(rocprof_queue("COMPUTE AGENT [2] STREAM [5] (GPU)"), Some((2, 5, "kernel")));
        assert_eq!(rocprof_queue("COPY to AGENT [0] STREAM [1] (GPU)"), Some((0, 1, "gpu_memcpy")));
        assert_eq!(rocprof_queue("COMPUTE GPU [1] QUEUE [0] (GPU)"), Some((1, 0, "kernel")));
        assert_eq!(rocprof_queue("THREAD 1 (1234)"), None);
        assert_eq!(super::super::decode::stream_number("[007] stream 7"), Some(7));
        assert_eq!(super::super::decode::stream_number("[012] DP"), Some(12));
        assert_eq!(super::super::decode::stream_number("Stream #14(Compute)"), Some(14));
    }
}
