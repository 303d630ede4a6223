//! The desktop's own file dialogs (rfd: the XDG desktop portal, else zenity), and telling a
//! cancel from there being no dialog at all. Under a bare X server (no portal, no zenity) rfd
//! answers `None` at once, exactly as for a cancel, and says why only through `log`: the
//! records rfd logs while a dialog is asked are caught here, per thread, so the window can fall
//! back to its built-in dialog and say why.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How asking the desktop for a file went.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer<T> {
    Picked(T),
    /// The user closed the dialog without picking.
    Cancelled,
    /// No dialog could be shown; why, in rfd's words.
    Unavailable(String),
}

/// Runs `dialog` (an rfd call, blocking) and says whether the user answered or no dialog came.
pub fn ask<T>(dialog: impl FnOnce() -> Option<T>) -> Answer<T> {
    let caught = install();
    RECORDS.with(|r| r.borrow_mut().clear());
    let started = Instant::now();
    let picked = dialog();
    let records = RECORDS.with(|r| std::mem::take(&mut *r.borrow_mut()));
    match picked {
        Some(v) => Answer::Picked(v),
        None if caught => match failure(&records) {
            Some(why) => Answer::Unavailable(why),
            None => Answer::Cancelled,
        },
        // someone else's logger took rfd's records: an answer faster than a person can
        // give one means no dialog was shown
        None if started.elapsed() < Duration::from_millis(1500) => {
            Answer::Unavailable("no desktop portal or zenity answered".into())
        }
        None => Answer::Cancelled,
    }
}

/// rfd tries the portal, logs a warning, then tries zenity: the dialog failed when the last
/// record is an error (zenity's own failure comes last). The errors, joined, say why.
fn failure(records: &[(log::Level, String)]) -> Option<String> {
    let (level, _) = records.last()?;
    if *level != log::Level::Error {
        return None;
    }
    let errors: Vec<&str> = records.iter().filter(|(l, _)| *l == log::Level::Error).map(|(_, m)| m.as_str()).collect();
    Some(errors.join("; "))
}

thread_local! {
    static RECORDS: RefCell<Vec<(log::Level, String)>> = const { RefCell::new(Vec::new()) };
}

/// Keeps rfd's warnings and errors for the thread that logged them; drops everything else
/// (nothing else in Strobe logs through `log`, and nothing printed these before).
struct RfdRecords;

impl log::Log for RfdRecords {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn && m.target().starts_with("rfd")
    }

    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            RECORDS.with(|v| v.borrow_mut().push((r.level(), r.args().to_string())));
        }
    }

    fn flush(&self) {}
}

/// Installs the catcher once; false when another logger was there first.
fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let ok = log::set_logger(&RfdRecords).is_ok();
        if ok {
            log::set_max_level(log::LevelFilter::Warn);
        }
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_fallback_is_no_dialog_and_a_cancel_is_a_cancel() {
        // the records rfd 0.17 logs without a session bus and without zenity
        let none = ask::<()>(|| {
            log::error!(target: "rfd::backend::xdg_desktop_portal::portal::libdbus", "Failed to connect to session bus: no bus");
            log::warn!(target: "rfd::backend::xdg_desktop_portal", "Using zenity fallback");
            log::error!(target: "rfd::backend::xdg_desktop_portal", "Failed to save file with zenity: No such file or directory (os error 2)");
            None
        });
        let Answer::Unavailable(why) = none else { panic!("{none:?}") };
        assert!(why.contains("session bus") && why.contains("zenity: No such file"), "{why}");
        // the portal is missing but zenity showed its dialog and the user closed it
        let cancelled = ask::<()>(|| {
            log::error!(target: "rfd::backend::xdg_desktop_portal::portal::libdbus", "Failed to connect to session bus: no bus");
            log::warn!(target: "rfd::backend::xdg_desktop_portal", "Using zenity fallback");
            None
        });
        assert_eq!(cancelled, Answer::Cancelled);
        assert_eq!(ask(|| Some(3)), Answer::Picked(3));
        // another crate's error is not the dialog's
        let other = ask::<()>(|| {
            log::error!(target: "wgpu", "device lost");
            None
        });
        assert_eq!(other, Answer::Cancelled);
    }
}
