//! A safe reader for plain-data pickles (protocols 0–5; integers of any width). It runs the pickle stack machine
//! over a byte slice and builds a compact value arena: containers are indices into the
//! arena, so a memoised list (a shared stack of frames) is stored once and shared by every
//! reference. It never imports or calls anything: object-building opcodes (GLOBAL,
//! STACK_GLOBAL, REDUCE, BUILD, NEWOBJ, INST, OBJ, PERSID, EXT*) are refused with an error.
//! Limits: declared lengths are checked against the remaining bytes before anything is
//! allocated; MARK nesting, stack depth and container element counts are bounded.

mod containers;
mod memo;
mod reader;
mod run;
mod scalars;
mod split;

pub use reader::{parse, parse_with, KeepAll, Limits, Pickle, PickleError, Sink, Value, WideInt};
pub use split::{chunks_spliced_on_this_thread, parse_split, SplitSink};
