//! Point-to-point transfers as a trace records them. One transfer is one `P2pOp`: the CPU
//! call that posted it, its peer where the trace names it, and the interval it was in flight.
//!
//! What Kineto writes for `torch.distributed.send/recv` (and `isend/irecv`, the pipelining
//! schedules' `batch_isend_irecv`):
//! - the dispatcher op `c10d::send` / `c10d::recv_` / `c10d::recv_any_source_`; with
//!   `record_shapes` its `Concrete Inputs` are `[tensors, group, peer, tag]`: the peer is the
//!   third, a rank of the op's process group (the default group: the global rank);
//! - inside it the backend's work record, `gloo:send` / `gloo:recv` / `nccl:send` /
//!   `nccl:recv`, a range from the post to the completion of the transfer (on another thread's
//!   time, recorded on the caller's), and with NCCL a `record_param_comms` op;
//! - with NCCL, the kernel that carried it, `ncclDevKernel_SendRecv*` / `ncclKernel_SendRecv*`,
//!   launched from inside the op.
//!
//! A work record or kernel outside any c10d op is still a transfer, with no peer.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    Send,
    Recv,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct P2pOp {
    pub dir: Dir,
    /// The other rank as a global rank, once resolved (`peers::resolve`).
    pub peer: Option<i64>,
    /// The peer as the trace names it (`Concrete Inputs`): a rank of the op's process group.
    pub group_peer: Option<i64>,
    /// How `peer` was found from `group_peer`.
    pub peer_rule: Option<super::peers::PeerRule>,
    /// The op's group where its record names it (NCCL's `record_param_comms`) or the
    /// resolution found it: name and global ranks.
    pub group: Option<String>,
    #[serde(skip)]
    pub group_ranks: Vec<i64>,
    /// The CPU span that posted it (the c10d op, else the work record), and its lane.
    pub span: u32,
    pub lane: u32,
    pub start_ns: i64,
    pub end_ns: i64,
    /// From post to completion: the backend's work record where there is one, else the call.
    pub flight_start_ns: i64,
    pub flight_end_ns: i64,
    /// The NCCL kernel that carried it, where there is one.
    pub kernel: Option<u32>,
    /// Bytes moved: the tensor's element count times its element size, where recorded.
    pub bytes: Option<u64>,
}

impl P2pOp {
    /// A transfer posted by the CPU span `span` (on `lane`, from `start` to `end`), its flight
    /// the call itself until a work record or kernel says more.
    fn posted(
        dir: Dir,
        peer: Option<i64>,
        span: u32,
        lane: u32,
        (start, end): (i64, i64),
        bytes: Option<u64>,
    ) -> P2pOp {
        P2pOp {
            dir,
            peer,
            group_peer: peer,
            peer_rule: None,
            group: None,
            group_ranks: Vec::new(),
            span,
            lane,
            start_ns: start,
            end_ns: end,
            flight_start_ns: start,
            flight_end_ns: end,
            kernel: None,
            bytes,
        }
    }

    pub fn flight_ns(&self) -> i64 {
        self.flight_end_ns - self.flight_start_ns
    }
}

/// The c10d dispatcher ops, by direction.
fn c10d_dir(name: &str) -> Option<Dir> {
    match name {
        "c10d::send" => Some(Dir::Send),
        "c10d::recv_" | "c10d::recv_any_source_" => Some(Dir::Recv),
        _ => None,
    }
}

/// The backends' work records, by direction.
fn work_dir(name: &str) -> Option<Dir> {
    match name {
        "gloo:send" | "nccl:send" => Some(Dir::Send),
        "gloo:recv" | "nccl:recv" => Some(Dir::Recv),
        _ => None,
    }
}

/// An NCCL point-to-point kernel (`ncclDevKernel_SendRecv(...)`, `ncclKernel_SendRecv_...`).
pub fn is_sendrecv_kernel(name: &str) -> bool {
    (name.starts_with("ncclDevKernel_") || name.starts_with("ncclKernel_")) && name.contains("SendRecv")
}

/// Any span name this module reads as part of a transfer (kept out of "work" and "idle").
pub fn is_p2p_name(name: &str) -> bool {
    c10d_dir(name).is_some() || work_dir(name).is_some() || name == "record_param_comms"
}

fn args(store: &Store, span: u32) -> Option<serde_json::Value> {
    serde_json::from_str(&store.span_args(span)).ok()
}

/// The peer of a c10d op: `Concrete Inputs[2]`, a decimal string.
fn concrete_peer(a: &serde_json::Value) -> Option<i64> {
    let v = a.get("Concrete Inputs")?.as_array()?.get(2)?;
    v.as_str().and_then(|s| s.trim().parse().ok()).or_else(|| v.as_i64())
}

fn elem_size(ty: &str) -> Option<u64> {
    Some(match ty {
        "double" | "long int" | "long" | "c10::complex<float>" => 8,
        "float" | "int" | "unsigned int" => 4,
        "c10::Half" | "c10::BFloat16" | "short" => 2,
        "bool" | "signed char" | "unsigned char" | "c10::Float8_e4m3fn" | "c10::Float8_e5m2" => 1,
        _ => return None,
    })
}

/// Bytes of the work record's one tensor (`Input Dims[0]`, `Input type[0]`).
fn work_bytes(a: &serde_json::Value) -> Option<u64> {
    let dims = a.get("Input Dims")?.as_array()?.first()?.as_array()?;
    let ty = a.get("Input type")?.as_array()?.first()?.as_str()?;
    let mut n: u64 = 1;
    for d in dims {
        n = n.checked_mul(u64::try_from(d.as_i64()?).ok()?)?;
    }
    n.checked_mul(elem_size(ty)?)
}

/// Every transfer of `store`, by post time.
pub fn p2p_ops(store: &Store) -> Vec<P2pOp> {
    let mut out: Vec<P2pOp> = Vec::new();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::CpuThread { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        // the latest c10d op of this lane: its work record starts inside it
        let mut open: Option<usize> = None;
        for (k, &sid) in v.span.iter().enumerate() {
            let name = store.span_name(sid);
            let (s, e) = (v.starts[k], v.ends[k]);
            if let Some(dir) = c10d_dir(name) {
                let peer = args(store, sid).as_ref().and_then(concrete_peer);
                out.push(P2pOp::posted(dir, peer, sid, lane as u32, (s, e), None));
                open = Some(out.len() - 1);
            } else if name == "record_param_comms" {
                // NCCL records the op's group inside it: the peer's group is known
                if let Some(i) = open.filter(|&i| s >= out[i].start_ns && s <= out[i].end_ns) {
                    let rec = crate::ranks::comm_ops::op_from_args(
                        &store.span_args(sid),
                        sid,
                        (s, e),
                        crate::ranks::comm_ops::TimedBy::Call,
                    );
                    if let Some(rec) = rec.filter(|r| !r.group_ranks.is_empty()) {
                        out[i].group = rec.group;
                        out[i].group_ranks = rec.group_ranks;
                    }
                }
            } else if let Some(dir) = work_dir(name) {
                let a = args(store, sid);
                let bytes = a.as_ref().and_then(work_bytes);
                let owner = open.filter(|&i| {
                    let o = &out[i];
                    o.dir == dir && o.lane == lane as u32 && s >= o.start_ns && s <= o.end_ns
                });
                match owner {
                    Some(i) if out[i].flight_start_ns == out[i].start_ns && out[i].bytes.is_none() => {
                        let o = &mut out[i];
                        o.flight_start_ns = s;
                        o.flight_end_ns = e.max(s);
                        o.bytes = bytes;
                        open = None;
                    }
                    _ => out.push(P2pOp::posted(dir, None, sid, lane as u32, (s, e), bytes)),
                }
            }
        }
    }
    attach_kernels(store, &mut out);
    out.sort_by_key(|o| (o.start_ns, o.span));
    out
}

/// Each SendRecv kernel to the op whose call launched it (its launch lies inside the op).
fn attach_kernels(store: &Store, ops: &mut [P2pOp]) {
    let by_span: rustc_hash::FxHashMap<u32, usize> = ops.iter().enumerate().map(|(i, o)| (o.span, i)).collect();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for &sid in v.span {
            if store.span_kind(sid) != SpanKind::Kernel || !is_sendrecv_kernel(store.span_name(sid)) {
                continue;
            }
            let Some(launch) = store.launch_of(sid) else { continue };
            if let Some(&i) = store.enclosing_stack(launch).iter().find_map(|p| by_span.get(p)) {
                ops[i].kernel.get_or_insert(sid);
            }
        }
    }
}
