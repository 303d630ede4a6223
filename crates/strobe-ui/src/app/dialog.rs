//! The Open… dialog: the desktop portal on its own thread (it blocks), the in-app browser
//! when no portal answers.

use super::StrobeApp;
use crate::commands::Command;
use crate::jobs::{Pending, Poll};
use std::path::PathBuf;
use std::time::Duration;

/// What the dialog is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Files replace what is open.
    Replace,
    /// Files join what is open, as more ranks of the same job.
    AddRanks,
    /// A folder of rank traces, opened side by side.
    Folder,
}

pub(super) type DialogJob = Pending<(OpenMode, Option<Vec<PathBuf>>)>;

impl StrobeApp {
    pub(super) fn show_open_dialog(&mut self, mode: OpenMode, ctx: &egui::Context) {
        self.dialog = Some(Pending::spawn_ui(ctx, move || {
            let r = match mode {
                OpenMode::Folder => rfd::FileDialog::new().pick_folder().map(|d| vec![d]),
                OpenMode::Replace | OpenMode::AddRanks => rfd::FileDialog::new()
                    .add_filter("traces", &["json", "gz", "sqlite", "nsys-rep", "pickle", "csv", "ncu-rep"])
                    .add_filter("all files", &["*"])
                    .pick_files(),
            };
            (mode, r)
        }));
    }

    pub(super) fn poll_dialog(&mut self) {
        let Some(job) = &self.dialog else { return };
        let fast = job.started.elapsed() < Duration::from_millis(1500);
        match job.poll() {
            Poll::Running => return,
            Poll::Ready((mode, Some(paths))) if !paths.is_empty() => {
                let add = mode == OpenMode::AddRanks;
                self.pending.push(if add { Command::AddFiles(paths) } else { Command::OpenFiles(paths) });
            }
            // Nothing picked. An answer that fast means no portal is there to ask: fall back
            // to the built-in browser so Open… always works.
            Poll::Ready(_) if !fast => {}
            Poll::Ready(_) | Poll::Lost => self.browser.show(),
        }
        self.dialog = None;
    }
}
