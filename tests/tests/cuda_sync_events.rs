//! CUPTI's synchronization records in a Kineto trace (`enable_cuda_sync_events`), recorded on
//! an H100 by `tests/tools/record_sync_events.py`. Counts from the JSON itself (`cat` =
//! `cuda_sync`): 4 "Stream Sync" and 4 "Stream Wait Event" on stream 7, 8 "Event Sync" and
//! 5 "Context Sync" with no stream (`"stream": -1`).

mod common;
use common::*;
use strobe_model::{LaneKind, SpanKind};

const FIXTURE: &str = "kineto_sync_events.json.gz";

fn names_on(store: &strobe_store::Store, lane: u32) -> Vec<String> {
    let spans = store.lane_spans(lane);
    spans.span.iter().map(|&s| store.span_name(s).to_string()).collect()
}

#[test]
fn syncs_sit_in_the_gpu_group_on_their_stream() {
    let store = load(FIXTURE);
    let lane_of = |want: &LaneKind| store.lanes.iter().position(|l| &l.kind == want).map(|i| i as u32);
    let stream = lane_of(&LaneKind::GpuAnnotation { device: 0, stream: 7 }).expect("stream 7's sync row");
    let device = lane_of(&LaneKind::GpuAnnotation { device: 0, stream: -1 }).expect("the device-wide sync row");
    let count = |lane: u32, name: &str| names_on(&store, lane).iter().filter(|n| *n == name).count();
    assert_eq!(count(stream, "Stream Sync"), 4);
    assert_eq!(count(stream, "Stream Wait Event"), 4);
    assert_eq!(count(device, "Event Sync"), 8);
    assert_eq!(count(device, "Context Sync"), 5);
    assert_eq!(store.lanes[device as usize].name, "GPU 0 · device syncs");
    // no CPU row is made of the GPU's pid
    assert!(!store.lanes.iter().any(|l| matches!(&l.kind, LaneKind::CpuThread { pid, .. } if pid.to_string() == "0")));
    // they are marks, not GPU work: the stream's busy time counts kernels only
    for lane in [stream, device] {
        for &s in store.lane_spans(lane).span {
            assert_eq!(store.span_kind(s), SpanKind::GpuAnnotation);
        }
    }
    // each one is linked to the runtime call that waited (same correlation id)
    let sync = store.lane_spans(stream).span.iter().copied().find(|&s| store.span_name(s) == "Stream Sync").unwrap();
    let from: Vec<_> = store.flows_to(sync).map(|f| store.span_name(f.from).to_string()).collect();
    assert_eq!(from, ["cudaStreamSynchronize"]);
}
