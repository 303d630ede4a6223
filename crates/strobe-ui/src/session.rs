//! Sessions: the view state of a workspace — which files are open, the time window and
//! scroll, folded groups, pinned lanes, marks and notes, the rank alignment, the label width,
//! the bottom tab and the panels' sizes — saved as a small JSON `.strobe` file, and reopened by
//! `strobe session.strobe` (the files open again, then the state is applied once they have
//! loaded). The last session is kept in the config dir and restored on start when the
//! setting says so. Traces are referred to by their position in `files`, lanes by name, so a
//! session survives the files being rebuilt or moved together with it (relative paths are
//! taken from the session file's folder).

use crate::app::BottomTab;
use crate::timeline::{GroupKey, TimelineState};
use crate::workspace::{TraceId, Workspace};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use strobe_analysis::ranks::align::Alignment;

/// Bump when a field changes meaning; older files are read as far as they go.
pub const VERSION: u32 = 1;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    pub version: u32,
    /// Every open document (traces in rank order, then snapshot, stats, ncu).
    pub files: Vec<PathBuf>,
    /// The time window, scroll, label column and marks, as the app holds them.
    #[serde(flatten)]
    pub timeline: TimelineState,
    /// Groups toggled from how they start.
    pub folds: Vec<Fold>,
    pub pinned: Vec<LaneRef>,
    /// Lanes hidden from the timeline.
    pub hidden: Vec<LaneRef>,
    #[serde(with = "alignment")]
    pub alignment: Option<Alignment>,
    pub bottom_tab: Option<BottomTab>,
    pub panels: Option<PanelSizes>,
}

/// The sizes a user gave the window's panels by dragging their edges (logical points).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelSizes {
    /// The bottom panel's height (the tabs).
    pub bottom: f32,
    /// The Details panel's width.
    pub details: f32,
}

impl PanelSizes {
    /// Sizes from a file are kept only where they could be a panel's (finite, positive).
    pub fn usable(self) -> Option<PanelSizes> {
        let ok = |v: f32| v.is_finite() && v > 0.0;
        (ok(self.bottom) && ok(self.details)).then_some(self)
    }
}

/// A folded (or unfolded) group: the trace by its index in `files`, the group by kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fold {
    pub file: usize,
    #[serde(flatten)]
    pub group: FoldGroup,
}

/// `GroupKey` without its trace: `{"group": "gpu", "arg": 0}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "group", rename_all = "lowercase")]
pub enum FoldGroup {
    Trace,
    /// The GPU's device id.
    Gpu {
        arg: i64,
    },
    /// The process's position in the trace.
    Process {
        arg: usize,
    },
    Counters,
    Series,
    Profiler,
    /// A GPU's metrics past the usual ones; the GPU's device id.
    GpuMetrics {
        arg: i64,
    },
}

impl FoldGroup {
    fn of(k: GroupKey) -> (TraceId, FoldGroup) {
        match k {
            GroupKey::Trace(id) => (id, FoldGroup::Trace),
            GroupKey::Gpu(id, d) => (id, FoldGroup::Gpu { arg: d }),
            GroupKey::Process(id, p) => (id, FoldGroup::Process { arg: p }),
            GroupKey::Counters(id) => (id, FoldGroup::Counters),
            GroupKey::Series(id) => (id, FoldGroup::Series),
            GroupKey::Profiler(id) => (id, FoldGroup::Profiler),
            GroupKey::GpuMetrics(id, d) => (id, FoldGroup::GpuMetrics { arg: d }),
        }
    }

    fn key(self, id: TraceId) -> GroupKey {
        match self {
            FoldGroup::Trace => GroupKey::Trace(id),
            FoldGroup::Gpu { arg } => GroupKey::Gpu(id, arg),
            FoldGroup::Process { arg } => GroupKey::Process(id, arg),
            FoldGroup::Counters => GroupKey::Counters(id),
            FoldGroup::Series => GroupKey::Series(id),
            FoldGroup::Profiler => GroupKey::Profiler(id),
            FoldGroup::GpuMetrics { arg } => GroupKey::GpuMetrics(id, arg),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaneRef {
    pub file: usize,
    /// The lane's display name (stable across rebuilds of the store).
    pub lane: String,
}

/// The rank alignment by its snake_case name (`recorded`, `step_start`, `collective_end`).
mod alignment {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use strobe_analysis::ranks::align::Alignment;

    #[derive(Serialize, Deserialize)]
    #[serde(remote = "Alignment", rename_all = "snake_case")]
    enum AlignmentDef {
        Recorded,
        StepStart,
        CollectiveEnd,
    }

    #[derive(Serialize, Deserialize)]
    struct Named(#[serde(with = "AlignmentDef")] Alignment);

    pub fn serialize<S: Serializer>(a: &Option<Alignment>, s: S) -> Result<S::Ok, S::Error> {
        a.map(Named).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Alignment>, D::Error> {
        Ok(Option::<Named>::deserialize(d)?.map(|n| n.0))
    }
}

impl Session {
    /// What `ws` and the panes show now.
    pub fn capture(
        ws: &Workspace,
        st: &TimelineState,
        alignment: Alignment,
        tab: BottomTab,
        panels: Option<PanelSizes>,
    ) -> Session {
        let mut files: Vec<PathBuf> = ws.traces.iter().map(|t| t.path.clone()).collect();
        files.extend(ws.memory.as_ref().map(|m| m.path.clone()));
        files.extend(ws.ncu.as_ref().map(|n| n.path.clone()));
        let file_of = |id: TraceId| ws.index_of(id);
        let folds = st
            .collapsed
            .iter()
            .filter_map(|&k| {
                let (id, group) = FoldGroup::of(k);
                Some(Fold { file: file_of(id)?, group })
            })
            .collect();
        let lane_refs = |lanes: &[(TraceId, u32)]| -> Vec<LaneRef> {
            lanes
                .iter()
                .filter_map(|&(id, lane)| {
                    let t = ws.trace(id)?;
                    Some(LaneRef { file: file_of(id)?, lane: t.store.lanes.get(lane as usize)?.name.clone() })
                })
                .collect()
        };
        let (pinned, hidden) = (lane_refs(&st.pinned), lane_refs(&st.hidden));
        Session {
            version: VERSION,
            files,
            timeline: st.clone(),
            folds,
            pinned,
            hidden,
            alignment: Some(alignment),
            bottom_tab: Some(tab),
            panels,
        }
    }

    /// Applies the view state to `st` once the files are open (`ws` holds them). Returns the
    /// alignment to use, if the session names one.
    pub fn apply(&self, ws: &Workspace, st: &mut TimelineState) -> Option<Alignment> {
        // a file of several ranks is listed once per rank, in rank order: its n-th entry is
        // its n-th trace
        let id_of = |file: usize| -> Option<TraceId> {
            let p = self.files.get(file)?;
            let nth = self.files[..file].iter().filter(|f| *f == p).count();
            ws.traces.iter().filter(|t| &t.path == p).nth(nth).map(|t| t.id)
        };
        st.collapsed = self.folds.iter().filter_map(|f| Some(f.group.key(id_of(f.file)?))).collect();
        let lanes = |refs: &[LaneRef]| -> Vec<(TraceId, u32)> {
            refs.iter()
                .filter_map(|l| {
                    let id = id_of(l.file)?;
                    let lane = ws.trace(id)?.store.lanes.iter().position(|d| d.name == l.lane)?;
                    Some((id, lane as u32))
                })
                .collect()
        };
        st.pinned = lanes(&self.pinned);
        st.hidden = lanes(&self.hidden);
        let saved = &self.timeline;
        st.marks = saved.marks.clone();
        st.marks.list.sort_by_key(|m| m.t);
        if saved.label_w.is_finite() {
            st.label_w = saved.label_w;
        }
        let v = saved.view;
        if v.npp.is_finite() && v.npp > 0.0 && v.t0.is_finite() {
            st.view = v;
            st.scroll_y = if saved.scroll_y.is_finite() { saved.scroll_y.max(0.0) } else { 0.0 };
            st.fit_pending = false;
        }
        self.alignment
    }

    pub fn is_session_file(p: &Path) -> bool {
        p.extension().is_some_and(|e| e == "strobe")
    }

    /// Reads a session; relative file paths are taken from the session file's folder.
    pub fn read(path: &Path) -> Result<Session, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let not_one = |e: serde_json::Error| format!("{}: not a Strobe session: {e}", path.display());
        let mut json: serde_json::Value = serde_json::from_str(&text).map_err(not_one)?;
        // files written before the scroll had its own field kept it in the window's
        if let Some(y) = json.pointer("/view/scroll_y").cloned() {
            if let Some(o) = json.as_object_mut() {
                o.entry("scroll_y").or_insert(y);
            }
        }
        let mut s: Session = serde_json::from_value(json).map_err(not_one)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for f in &mut s.files {
            if f.is_relative() {
                *f = dir.join(&*f);
            }
        }
        Ok(s)
    }

    /// Writes the session, its file paths relative to the session's folder where they are
    /// under it (so the folder can move as a whole). Written to a temporary file first: a
    /// crash never leaves half a session.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut s = self.clone();
        for f in &mut s.files {
            if let Ok(rel) = f.strip_prefix(dir) {
                *f = rel.to_path_buf();
            }
        }
        let text = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
        let tmp = path.with_extension("strobe.tmp");
        std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Where the last session is kept between runs.
    pub fn last_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("strobe").join("last.strobe"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut timeline = TimelineState {
            view: crate::timeline::View { origin: 5, t0: 1.5, npp: 100.0 },
            scroll_y: 20.0,
            label_w: 300.0,
            ..Default::default()
        };
        timeline.marks.add(42, "slow step".into());
        let s = Session {
            version: VERSION,
            files: vec![dir.path().join("rank0.json.gz"), PathBuf::from("/elsewhere/x.pickle")],
            timeline,
            folds: vec![Fold { file: 0, group: FoldGroup::Gpu { arg: 0 } }],
            pinned: vec![LaneRef { file: 0, lane: "GPU 0 · stream 7".into() }],
            hidden: vec![LaneRef { file: 0, lane: "GPU 0 · stream 13".into() }],
            alignment: Some(Alignment::StepStart),
            bottom_tab: Some(BottomTab::Ranks),
            panels: Some(PanelSizes { bottom: 321.0, details: 400.0 }),
        };
        let p = dir.path().join("job.strobe");
        s.write(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"rank0.json.gz\""), "stored relative: {text}");
        assert_eq!(Session::read(&p).unwrap(), s);
        assert!(Session::read(&dir.path().join("missing.strobe")).unwrap_err().contains("missing.strobe"));
        std::fs::write(&p, "{\"files\": 3}").unwrap();
        assert!(Session::read(&p).unwrap_err().contains("not a Strobe session"));
    }
}
