//! File-backed scratch arrays a build has freed, kept mapped for its next ones.
//!
//! An array in a file's pages pays a page fault the first time each 4 kB page is written
//! (the kernel finds the hole, zeroes a page for it and marks it dirty), where the heap's
//! pages come 2 MB at a time: on an nsys export's build, half of its column making. But a
//! build frees arrays as fast as it makes them (each staged field is dropped once its column
//! is gathered), and the freed ones' pages are mapped and written already. Kept here, the
//! next array of a fitting size takes one, and writes its pages without a fault.
//!
//! The pool belongs to one build's output (`Output`): arrays reach it through a weak
//! reference, so it is gone, and its pages with it, once the build is. It keeps a few maps
//! only; a taker is told how far the old contents reach, since they are not zero.

use std::fs::File;
use std::sync::{Arc, Mutex, Weak};

/// Maps kept at once: a build makes its arrays a few at a time.
const MAX_KEPT: usize = 4;

/// One freed array's file and map, and how many of its first bytes were written (past
/// them the file is a hole: zero).
pub struct Spare {
    pub file: File,
    pub map: memmap2::MmapMut,
    pub written: usize,
}

#[derive(Default)]
pub struct SpareMaps {
    kept: Mutex<Vec<Spare>>,
}

/// The handle an array keeps: the pool while its build lasts.
pub type SpareRef = Weak<SpareMaps>;

impl SpareMaps {
    pub fn new() -> Arc<SpareMaps> {
        Arc::new(SpareMaps::default())
    }

    /// Keeps a freed array's map (the oldest one goes when there are too many).
    pub fn keep(&self, spare: Spare) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= MAX_KEPT {
            kept.remove(0);
        }
        kept.push(spare);
    }

    /// The smallest map kept that holds `bytes`, if any.
    pub fn take(&self, bytes: usize) -> Option<Spare> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let best = (0..kept.len()).filter(|&i| kept[i].map.len() >= bytes).min_by_key(|&i| kept[i].map.len())?;
        Some(kept.remove(best))
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.kept.lock().unwrap().len()
    }
}
