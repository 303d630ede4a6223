//! Marks and notes on the shared axis: M marks the time under the pointer, Shift+M a named
//! note. Each is drawn with its time (from the workspace's start, as the ruler reads) and
//! its distance from the mark before it, so two marks measure an interval; the Notes tab
//! lists them.

use serde::{Deserialize, Serialize};
use strobe_analysis::report::fmt_ns;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// Shared axis (absolute ns).
    pub t: i64,
    /// Empty for a plain mark.
    pub note: String,
}

/// Saved as the bare list (the layout sessions have always had).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Marks {
    /// In time order.
    pub list: Vec<Mark>,
}

impl Marks {
    /// Adds a mark in time order; returns its index.
    pub fn add(&mut self, t: i64, note: String) -> usize {
        let at = self.list.partition_point(|m| m.t <= t);
        self.list.insert(at, Mark { t, note });
        at
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn clear(&mut self) {
        self.list.clear();
    }

    /// The label drawn at mark `i`: its name (M1, or its note), its time from `origin`, and
    /// the distance from the previous mark.
    pub fn label(&self, i: usize, origin: i64) -> String {
        let m = &self.list[i];
        let name = if m.note.is_empty() { format!("M{}", i + 1) } else { m.note.clone() };
        let mut s = format!("{name} · {}", fmt_ns(m.t - origin));
        if let Some(prev) = i.checked_sub(1).map(|p| &self.list[p]) {
            s.push_str(&format!(" · Δ {}", fmt_ns(m.t - prev.t)));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_keep_time_order_and_measure_from_the_previous() {
        let mut m = Marks::default();
        m.add(5_000_000, String::new());
        assert_eq!(m.add(2_000_000, "warmup".into()), 0);
        assert_eq!(m.label(0, 1_000_000), format!("warmup · {}", fmt_ns(1_000_000)));
        assert_eq!(m.label(1, 1_000_000), format!("M2 · {} · Δ {}", fmt_ns(4_000_000), fmt_ns(3_000_000)));
    }
}
