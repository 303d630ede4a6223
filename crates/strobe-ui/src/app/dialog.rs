//! The Open… dialog: the desktop's dialog on its own thread (it blocks), the in-app browser
//! where the desktop has none.

use super::StrobeApp;
use crate::commands::Command;
use crate::jobs::{Pending, Poll};
use crate::native_dialog::Answer;
use std::path::PathBuf;

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

pub(super) type DialogJob = Pending<(OpenMode, Answer<Vec<PathBuf>>)>;

impl StrobeApp {
    pub(super) fn show_open_dialog(&mut self, mode: OpenMode, ctx: &egui::Context) {
        if !self.native_dialogs || self.no_native_dialog.is_some() {
            self.browser.show();
            return;
        }
        self.dialog = Some(Pending::spawn_ui(ctx, move || {
            let r = crate::native_dialog::ask(|| match mode {
                OpenMode::Folder => rfd::FileDialog::new().pick_folder().map(|d| vec![d]),
                OpenMode::Replace | OpenMode::AddRanks => rfd::FileDialog::new()
                    .add_filter("traces", &["json", "gz", "sqlite", "nsys-rep", "pickle", "csv", "ncu-rep"])
                    .add_filter("all files", &["*"])
                    .pick_files(),
            });
            (mode, r)
        }));
    }

    pub(super) fn poll_dialog(&mut self) {
        let Some(job) = &self.dialog else { return };
        match job.poll() {
            Poll::Running => return,
            Poll::Ready((mode, Answer::Picked(paths))) if !paths.is_empty() => {
                let add = mode == OpenMode::AddRanks;
                self.pending.push(if add { Command::AddFiles(paths) } else { Command::OpenFiles(paths) });
            }
            Poll::Ready((_, Answer::Picked(_) | Answer::Cancelled)) => {}
            // no dialog came: the built-in browser, so Open… always works
            Poll::Ready((_, Answer::Unavailable(why))) => {
                self.dialog_missing(why);
                self.browser.show();
            }
            Poll::Lost => {
                self.dialog_missing("the dialog's thread stopped".into());
                self.browser.show();
            }
        }
        self.dialog = None;
    }
}
