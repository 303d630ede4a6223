//! The level-of-detail query against brute force over random lanes: nothing visible is lost,
//! nothing invisible is returned, and the item count stays bounded by the pixels.

use proptest::prelude::*;
use strobe_model::{LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::{cache, SpanInput, StoreBuilder};

fn build(spans: &[(i64, i64)], gpu: bool) -> strobe_store::Store {
    let mut b = StoreBuilder::in_memory();
    let lane = if gpu {
        b.lane(LaneKind::GpuStream { device: 0, stream: 1 })
    } else {
        b.lane(LaneKind::CpuThread { pid: strobe_model::IdKey::Num(1), tid: strobe_model::IdKey::Num(1) })
    };
    // names and kinds vary so that the items' copies of them can be checked
    let names = [b.intern("x"), b.intern("y"), b.intern("z")];
    let kinds = [SpanKind::Kernel, SpanKind::Memcpy];
    for (k, &(s, e)) in spans.iter().enumerate() {
        b.push_span(SpanInput {
            lane,
            start: s,
            end: e,
            name: names[k % 3],
            cat: 0,
            kind: kinds[k % 2],
            flags: 0,
            args: &[],
            correlation: 0,
            copy_dir: None,
        })
        .unwrap();
    }
    cache::open_built(b.finish(&TraceMeta::new(SourceFormat::Chrome, "t")).unwrap()).unwrap()
}

/// Random nested spans (a CPU call tree) or back-to-back spans (a GPU stream).
fn lane_strategy() -> impl Strategy<Value = (Vec<(i64, i64)>, bool)> {
    (prop::collection::vec((1i64..5000, 0i64..3000, 0u8..4), 1..400), any::<bool>()).prop_map(|(v, gpu)| {
        let mut out = Vec::new();
        let mut t = 0i64;
        for (dur, gap, kids) in v {
            out.push((t, t + dur));
            if !gpu {
                // children inside the parent
                let mut c = t;
                for k in 0..kids {
                    let cd = dur / (2 + k as i64 * 2);
                    if c + cd <= t + dur && cd > 0 {
                        out.push((c, c + cd));
                        c += cd;
                    }
                }
            }
            t += dur + gap;
        }
        (out, gpu)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn lod_covers_exactly_what_is_visible((spans, gpu) in lane_strategy(), a in 0.0f64..1.0, wf in 0.0001f64..1.2, px in 1i64..2000) {
        let store = build(&spans, gpu);
        let v = store.lane_view(0);
        let end = *v.ends.iter().max().unwrap();
        let t0 = (end as f64 * a) as i64 - 100;
        let w = ((end as f64 * wf) as i64).max(1);
        let t1 = t0 + w;
        let r = (w / px).max(1);
        let mut items: Vec<(u32, strobe_store::LodItem)> = Vec::new();
        store.lod_query(0, t0, t1, r, |d, it| items.push((d, it)));
        // every span overlapping the window is inside one returned item of its depth
        for k in 0..v.starts.len() {
            let (s, e) = (v.starts[k], v.ends[k]);
            let visible = s < t1 && (e > t0 || (s == e && s >= t0));
            if visible {
                let d = v.depth[k];
                prop_assert!(items.iter().any(|(di, it)| *di == d && it.start <= s && e <= it.end),
                    "span {:?} at depth {} not covered", (s, e), d);
            }
        }
        // every item overlaps the window; single items are real spans
        for (d, it) in &items {
            prop_assert!(it.start < t1 && (it.end > t0 || it.start == it.end), "item {:?} outside", it);
            let m = it.member as usize;
            if it.count == 1 {
                prop_assert_eq!((v.starts[m], v.ends[m], v.depth[m]), (it.start, it.end, *d));
            }
            // the item carries the name and kind of the span it is drawn as: its longest member
            let meta = store.span_meta(v.span[m]);
            prop_assert_eq!((it.name, it.kind), (meta.name, meta.kind as u32));
            prop_assert_eq!(v.ends[m] - v.starts[m], it.longest);
        }
        // bounded: about 2 items per pixel per depth
        let pixels = (w / r) + 1;
        for d in 0..=v.max_depth {
            let n = items.iter().filter(|(di, _)| *di == d).count() as i64;
            prop_assert!(n <= 2 * pixels + 4, "depth {d}: {n} items for {pixels} px");
        }
    }
}
