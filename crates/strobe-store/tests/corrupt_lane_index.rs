//! A cache whose lane index is corrupt but whose header checksum was made to match (a torn
//! or hostile file): open must refuse it, not hand the per-depth loops a huge bound.

use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::format::{sid, Header, LaneIndex, SectionEntry};
use strobe_store::{Built, SpanInput, Store, StoreBuilder};

/// A store of one CPU lane holding two nested spans (max_depth 1), as bytes.
fn two_nested_spans() -> Vec<u8> {
    let mut b = StoreBuilder::in_memory();
    let lane = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let name = b.intern("x");
    for (start, end) in [(0, 100), (10, 20)] {
        let s = SpanInput {
            lane,
            start,
            end,
            name,
            cat: 0,
            kind: SpanKind::CpuOp,
            flags: 0,
            args: &[],
            correlation: 0,
            copy_dir: None,
        };
        b.push_span(s).unwrap();
    }
    match b.finish(&TraceMeta::new(SourceFormat::Chrome, "t")).unwrap() {
        Built::Memory(v) => v,
        Built::File(_) => unreachable!("an in-memory builder"),
    }
}

/// Sets lane 0's max_depth (the lane index is outside the checksummed section table).
fn with_max_depth(mut bytes: Vec<u8>, max_depth: u32) -> Vec<u8> {
    let hs = std::mem::size_of::<Header>();
    let header: Header = bytemuck::pod_read_unaligned(&bytes[..hs]);
    let es = std::mem::size_of::<SectionEntry>();
    let table = &bytes[hs..hs + header.section_count as usize * es];
    let lane_index = (0..header.section_count as usize)
        .map(|i| bytemuck::pod_read_unaligned::<SectionEntry>(&table[i * es..(i + 1) * es]))
        .find(|e| e.id == sid::LANE_INDEX)
        .expect("a lane index section");
    let at = lane_index.offset as usize;
    let n = std::mem::size_of::<LaneIndex>();
    let mut li: LaneIndex = bytemuck::pod_read_unaligned(&bytes[at..at + n]);
    li.max_depth = max_depth;
    bytes[at..at + n].copy_from_slice(bytemuck::bytes_of(&li));
    bytes
}

#[test]
fn lane_max_depth_past_its_member_count_is_refused() {
    let good = two_nested_spans();
    let store = Store::from_bytes(good.clone()).expect("the built store opens");
    assert_eq!(store.lane_view(0).max_depth, 1, "two nested spans: depths 0 and 1");
    // the lane index is a column, not covered by the table checksum: only validation stands
    assert!(Store::from_bytes(with_max_depth(good.clone(), 2)).is_ok(), "a bound of its member count is kept");
    let err = Store::from_bytes(with_max_depth(good, u32::MAX)).err().expect("a depth of 4 billion is refused");
    assert!(err.to_string().contains("lane range out of bounds"), "{err}");
}
