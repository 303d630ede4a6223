//! What the unit tests build their stores with: a span of one lane, a finished builder as a
//! store, and a small seeded generator for spans that are random but the same every run.

use strobe_model::{SourceFormat, SpanKind, TraceMeta};
use strobe_store::{SpanInput, Store, StoreBuilder};

/// A span of `lane` with no flags, args, correlation or copy direction.
pub fn span(lane: u32, start: i64, end: i64, name: u32, cat: u32, kind: SpanKind) -> SpanInput<'static> {
    SpanInput { lane, start, end, name, cat, kind, flags: 0, args: b"", correlation: 0, copy_dir: None }
}

/// `b` finished as a Kineto trace's store.
pub fn finished(b: StoreBuilder) -> Store {
    b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap()
}

/// xorshift64: `below(m)` is in 0..m.
pub struct Seeded(pub u64);

impl Seeded {
    pub fn below(&mut self, m: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % m
    }
}
