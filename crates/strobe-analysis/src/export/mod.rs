//! `strobe export`: spans, flows, counters, the kernel table, the op table and the per-op efficiency table as CSV or JSON Lines,
//! streamed straight from the store (constant memory apart from one u32 per flow for
//! ordering flows). Columns are documented in docs/export.md; the CLI and the tests call
//! [`export`] directly.

mod counters;
mod flows;
mod gaps;
mod kernels;
mod lanes;
mod op_efficiency;
mod ops;
mod sink;
mod spans;

use std::io::Write;
use strobe_store::Store;

pub use lanes::{LaneIds, ThreadKey};
pub use sink::Cell;

/// What to export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Spans,
    Flows,
    Counters,
    Kernels,
    /// The op table: torch.profiler's `key_averages()` per name and input shapes.
    Ops,
    /// The per-op efficiency table (docs/efficiency.md).
    OpEfficiency,
    /// The idle gaps at least the default threshold long, longest first (`gaps`).
    Gaps,
}

impl What {
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            What::Spans => spans::COLUMNS,
            What::Flows => flows::COLUMNS,
            What::Counters => counters::COLUMNS,
            What::Kernels => kernels::COLUMNS,
            What::Ops => ops::COLUMNS,
            What::OpEfficiency => op_efficiency::COLUMNS,
            What::Gaps => gaps::COLUMNS,
        }
    }
}

/// How rows are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// RFC 4180 CSV with a header row.
    Csv,
    /// One JSON object per line, keys as the CSV header.
    Jsonl,
}

/// Writes `what` of `store` to `out` as `format`; returns the number of rows (header not
/// counted). `out` need not be buffered: the sink buffers.
pub fn export<W: Write>(store: &Store, what: What, format: Format, out: W) -> std::io::Result<u64> {
    export_with(store, what, format, out, crate::efficiency::PeakOverride::default())
}

/// `export` with the device's ceilings overridden (the ops table's figures).
pub fn export_with<W: Write>(
    store: &Store,
    what: What,
    format: Format,
    out: W,
    peaks: crate::efficiency::PeakOverride,
) -> std::io::Result<u64> {
    match what {
        What::Spans => export_spans_in_pieces(store, format, spans::PIECE, out),
        _ => {
            let mut sink = sink::Sink::new(out, format, what.columns())?;
            let rows = match what {
                What::Flows => flows::write(store, &mut sink)?,
                What::Counters => counters::write(store, &mut sink)?,
                What::Ops => ops::write(store, &mut sink)?,
                What::OpEfficiency => op_efficiency::write(store, peaks, &mut sink)?,
                What::Gaps => gaps::write(store, &mut sink)?,
                _ => kernels::write(store, &mut sink)?,
            };
            sink.into_inner()?;
            Ok(rows)
        }
    }
}

/// The spans export, formatted in pieces of `piece` rows on all cores and written in order
/// (`export` uses a piece of 8 Ki rows; tests use tiny ones to check that cutting a merged
/// lane group anywhere changes nothing).
#[doc(hidden)]
pub fn export_spans_in_pieces<W: Write>(
    store: &Store,
    format: Format,
    piece: usize,
    mut out: W,
) -> std::io::Result<u64> {
    out.write_all(&sink::Sink::new(Vec::new(), format, spans::COLUMNS)?.into_inner()?)?;
    let rows = spans::write(store, &mut out, format, piece)?;
    out.flush()?;
    Ok(rows)
}
