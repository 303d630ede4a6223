//! Importers, one module per source format. Each reads its file and pushes lanes, spans,
//! flows and counters into a `StoreBuilder`; none of them draws or analyses anything.

pub mod chrome_json;
mod detect;
mod dir;
mod error;
pub mod memory_snapshot;
pub mod ncu_csv;
pub mod ncu_rep;
pub mod nsys_sqlite;
mod open;
pub mod pickle;
mod progress;
pub mod time;

pub use detect::{detect, Format};
pub use dir::trace_files_in;
pub use error::ImportError;
pub use open::{load, LoadOptions};
pub use progress::Progress;
