//! Strobe's trace store. Built once per source by an importer through [`StoreBuilder`],
//! written to the cache dir, then memory-mapped by [`Store`]: per-lane start-sorted span
//! columns, an implicit interval tree (cgranges layout) and a level-of-detail pyramid.

pub mod bind;
mod builder;
pub mod cache;
pub mod codec;
mod deferred;
pub mod format;
pub mod interval;
mod lazy;
pub mod lod;
mod names;
pub mod nesting;
mod output;
pub mod prefault;
mod purge;
mod queries;
pub use queries::LaunchTable;
mod reader;
mod runs;
pub mod scratch;
mod spare_maps;
mod strings;
pub mod timing;

pub use builder::{FlowEnd, FlowInput, SpanInput, StoreBuilder};
pub use format::{CounterSeries, FlowRec, LaneDesc, LaneIndex, Names, SpanMeta, FLOW_CORRELATION, FLOW_EXPLICIT};
pub use lod::LodItem;
pub use output::{Built, Output};
pub use reader::{LaneSpans, LaneView, Store, StoreError};
pub use strings::Interner;
