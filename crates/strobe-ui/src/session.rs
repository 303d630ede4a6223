//! Sessions: the view state of a workspace — which files are open, the time window and
//! scroll, folded groups, pinned lanes, marks and notes, the rank alignment, the label width,
//! the bottom tab and the panels' sizes — saved as a small JSON `.strobe` file, and reopened by
//! `strobe session.strobe` (the files open again, then the state is applied once they have
//! loaded). The last session is kept in the config dir and restored on start when the
//! setting says so. Traces are referred to by their position in `files`, lanes by name, so a
//! session survives the files being rebuilt or moved together with it (relative paths are
//! taken from the session file's folder).

use crate::app::BottomTab;
use crate::timeline::marks::Mark;
use crate::timeline::{GroupKey, TimelineView};
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
    pub view: Option<ViewState>,
    /// Groups toggled from how they start.
    pub folds: Vec<Fold>,
    pub pinned: Vec<LaneRef>,
    pub marks: Vec<Mark>,
    /// `recorded`, `step_start` or `collective_end`.
    pub alignment: Option<String>,
    pub label_w: Option<f32>,
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

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    pub origin: i64,
    pub t0: f64,
    pub npp: f64,
    pub scroll_y: f32,
}

/// A folded (or unfolded) group: the trace by its index in `files`, the group by kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fold {
    pub file: usize,
    /// `trace`, `gpu`, `process`, `counters`, `series`, `profiler`.
    pub group: String,
    /// The GPU's device id or the process's position; 0 otherwise.
    #[serde(default)]
    pub arg: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaneRef {
    pub file: usize,
    /// The lane's display name (stable across rebuilds of the store).
    pub lane: String,
}

fn alignment_of(s: &str) -> Option<Alignment> {
    [Alignment::Recorded, Alignment::StepStart, Alignment::CollectiveEnd].into_iter().find(|a| a.as_str() == s)
}

impl Session {
    /// What `ws` and the panes show now.
    pub fn capture(
        ws: &Workspace,
        tl: &TimelineView,
        alignment: Alignment,
        tab: BottomTab,
        panels: Option<PanelSizes>,
    ) -> Session {
        let mut files: Vec<PathBuf> = ws.traces.iter().map(|t| t.path.clone()).collect();
        files.extend(ws.memory.as_ref().map(|m| m.path.clone()));
        files.extend(ws.ncu.as_ref().map(|n| n.path.clone()));
        let file_of = |id: TraceId| ws.index_of(id);
        let folds = tl
            .collapsed
            .iter()
            .filter_map(|k| {
                let (id, group, arg) = match *k {
                    GroupKey::Trace(id) => (id, "trace", 0),
                    GroupKey::Gpu(id, d) => (id, "gpu", d),
                    GroupKey::Process(id, p) => (id, "process", p as i64),
                    GroupKey::Counters(id) => (id, "counters", 0),
                    GroupKey::Series(id) => (id, "series", 0),
                    GroupKey::Profiler(id) => (id, "profiler", 0),
                };
                Some(Fold { file: file_of(id)?, group: group.into(), arg })
            })
            .collect();
        let pinned = tl
            .pinned
            .iter()
            .filter_map(|&(id, lane)| {
                let t = ws.trace(id)?;
                Some(LaneRef { file: file_of(id)?, lane: t.store.lanes.get(lane as usize)?.name.clone() })
            })
            .collect();
        let v = tl.view;
        Session {
            version: VERSION,
            files,
            view: Some(ViewState { origin: v.origin, t0: v.t0, npp: v.npp, scroll_y: tl.scroll_y }),
            folds,
            pinned,
            marks: tl.marks.list.clone(),
            alignment: Some(alignment.as_str().to_string()),
            label_w: Some(tl.label_w),
            bottom_tab: Some(tab),
            panels,
        }
    }

    /// Applies the view state to the panes once the files are open (`ws` holds them).
    /// Returns the alignment to use, if the session names one.
    pub fn apply(&self, ws: &Workspace, tl: &mut TimelineView) -> Option<Alignment> {
        // a file of several ranks is listed once per rank, in rank order: its n-th entry is
        // its n-th trace
        let id_of = |file: usize| -> Option<TraceId> {
            let p = self.files.get(file)?;
            let nth = self.files[..file].iter().filter(|f| *f == p).count();
            ws.traces.iter().filter(|t| &t.path == p).nth(nth).map(|t| t.id)
        };
        tl.collapsed = self
            .folds
            .iter()
            .filter_map(|f| {
                let id = id_of(f.file)?;
                Some(match f.group.as_str() {
                    "trace" => GroupKey::Trace(id),
                    "gpu" => GroupKey::Gpu(id, f.arg),
                    "process" => GroupKey::Process(id, usize::try_from(f.arg).ok()?),
                    "counters" => GroupKey::Counters(id),
                    "series" => GroupKey::Series(id),
                    "profiler" => GroupKey::Profiler(id),
                    _ => return None,
                })
            })
            .collect();
        tl.pinned = self
            .pinned
            .iter()
            .filter_map(|l| {
                let id = id_of(l.file)?;
                let lane = ws.trace(id)?.store.lanes.iter().position(|d| d.name == l.lane)?;
                Some((id, lane as u32))
            })
            .collect();
        tl.marks.list = self.marks.clone();
        tl.marks.list.sort_by_key(|m| m.t);
        if let Some(w) = self.label_w.filter(|w| w.is_finite()) {
            tl.label_w = w;
        }
        if let Some(v) = self.view.filter(|v| v.npp.is_finite() && v.npp > 0.0 && v.t0.is_finite()) {
            tl.view.origin = v.origin;
            tl.view.t0 = v.t0;
            tl.view.npp = v.npp;
            tl.scroll_y = if v.scroll_y.is_finite() { v.scroll_y.max(0.0) } else { 0.0 };
            tl.fit_pending = false;
        }
        self.alignment.as_deref().and_then(alignment_of)
    }

    pub fn is_session_file(p: &Path) -> bool {
        p.extension().is_some_and(|e| e == "strobe")
    }

    /// Reads a session; relative file paths are taken from the session file's folder.
    pub fn read(path: &Path) -> Result<Session, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut s: Session =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a Strobe session: {e}", path.display()))?;
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
        let s = Session {
            version: VERSION,
            files: vec![dir.path().join("rank0.json.gz"), PathBuf::from("/elsewhere/x.pickle")],
            view: Some(ViewState { origin: 5, t0: 1.5, npp: 100.0, scroll_y: 20.0 }),
            folds: vec![Fold { file: 0, group: "gpu".into(), arg: 0 }],
            pinned: vec![LaneRef { file: 0, lane: "GPU 0 · stream 7".into() }],
            marks: vec![Mark { t: 42, note: "slow step".into() }],
            alignment: Some("step_start".into()),
            label_w: Some(300.0),
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
