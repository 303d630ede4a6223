//! Importers, one module per source format; none of them draws or analyses anything. The
//! timeline formats (`chrome_json`, `nsys_sqlite`, `xspace`) push lanes, spans, flows and counters into a
//! `StoreBuilder`; the others build a model value (`memory_snapshot` a `MemorySnapshot` or
//! `MemoryStats`, `ncu_csv` / `ncu_rep` an `NcuReport`). `open` detects the format once and
//! returns whichever it is as a `Source`.

pub mod chrome_json;
mod describe;
mod detect;
mod dir;
mod error;
pub mod flight_recorder;
mod gunzip_copy;
mod gz_peek;
pub mod memory_snapshot;
pub mod ncu_csv;
pub mod ncu_rep;
pub mod nsys_sqlite;
mod open;
#[cfg(test)]
mod pb_write;
pub mod perfetto_pb;
pub mod pickle;
mod progress;
pub mod sqlite_file;
pub mod time;
mod xla_names;
pub mod xspace;

pub use detect::{detect, Format};
pub use dir::trace_files_in;
pub use error::ImportError;
pub use open::{
    load, load_nsys_process, load_nsys_processes, nsys_ranks, nsys_window_ranks, open, LoadOptions, Source,
};
pub use progress::Progress;
