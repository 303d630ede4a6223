//! Save session…: the desktop's save dialog on its own thread (it blocks); where the desktop
//! has none, the built-in one. Where the session went, or why it could not be written, is
//! said in the status line.

use super::StrobeApp;
use crate::jobs::{Pending, Poll};
use crate::native_dialog::Answer;
use std::path::PathBuf;

pub(super) type SaveJob = Pending<Answer<PathBuf>>;

impl StrobeApp {
    /// Asks where to save: the desktop's dialog, or the built-in one once the desktop is known
    /// to have none.
    pub(super) fn show_save_dialog(&mut self, ctx: &egui::Context) {
        let (dir, name) = self.save_proposal();
        if !self.native_dialogs || self.no_native_dialog.is_some() {
            self.save_browser.show(dir, &name);
            return;
        }
        self.save_dialog = Some(Pending::spawn_ui(ctx, move || {
            crate::native_dialog::ask(|| {
                let mut d = rfd::FileDialog::new().add_filter("Strobe session", &["strobe"]).set_file_name(name);
                if let Some(dir) = dir {
                    d = d.set_directory(dir);
                }
                d.save_file()
            })
        }));
    }

    /// The desktop dialog's answer, and the built-in dialog's.
    pub(super) fn poll_save(&mut self, ctx: &egui::Context) {
        if let Some(job) = &self.save_dialog {
            let answer = match job.poll() {
                Poll::Running => None,
                Poll::Ready(a) => Some(a),
                Poll::Lost => Some(Answer::Unavailable("the dialog's thread stopped".into())),
            };
            if let Some(a) = answer {
                self.save_dialog = None;
                match a {
                    Answer::Picked(p) => self.write_session(p),
                    Answer::Cancelled => {}
                    Answer::Unavailable(why) => {
                        self.dialog_missing(why);
                        let (dir, name) = self.save_proposal();
                        self.save_browser.show(dir, &name);
                    }
                }
            }
        }
        if let Some(p) = self.save_browser.ui(ctx) {
            self.write_session(p);
        }
    }

    /// Where a session is proposed to go: beside the first trace, named after it
    /// ("gpt_train.json.gz" → "gpt_train.strobe").
    fn save_proposal(&self) -> (Option<PathBuf>, String) {
        let first = self.ws.traces.first().map(|t| t.path.as_path());
        let dir = first.and_then(|p| p.parent()).map(|d| d.to_path_buf());
        let stem = first
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().split('.').next().unwrap_or_default().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "session".into());
        (dir, format!("{stem}.strobe"))
    }

    /// Writes the session of what is open to `p` (a `.strobe` file), and says how it went.
    pub(super) fn write_session(&mut self, p: PathBuf) {
        let p = if crate::session::Session::is_session_file(&p) {
            p
        } else {
            let mut s = p.into_os_string();
            s.push(".strobe");
            PathBuf::from(s)
        };
        match self.session().write(&p) {
            Ok(()) => self.say(super::Notice { text: format!("Session saved to {}", p.display()), detail: None }),
            Err(e) => self.errors.push(format!("the session was not saved: {e}")),
        }
    }

    /// The desktop has no file dialog: the built-in ones are used from now on, and the status
    /// line says so once.
    pub(super) fn dialog_missing(&mut self, why: String) {
        if self.no_native_dialog.is_none() {
            let text = "No desktop file dialog here (no portal, no zenity): using the built-in one";
            self.say(super::Notice { text: text.into(), detail: Some(why.clone()) });
            self.no_native_dialog = Some(why);
        }
    }

    /// A line in the status area until dismissed (the newest few are kept).
    pub(super) fn say(&mut self, msg: super::Notice) {
        self.notices.retain(|n| *n != msg);
        self.notices.push(msg);
        if self.notices.len() > 3 {
            self.notices.remove(0);
        }
    }
}
