//! The in-app Save dialog: Save session… falls back to it where the desktop has no file dialog
//! (no portal, no zenity), as Open… falls back to the file browser. A folder list to walk, an
//! editable file name, and a question before an existing file is replaced.

use crate::file_browser::list_dir;
use std::path::{Path, PathBuf};

pub struct SaveBrowser {
    pub open: bool,
    pub dir: PathBuf,
    /// The folder field (Enter goes there).
    pub dir_text: String,
    /// The file name field: a name in `dir`, or a whole path.
    pub name: String,
    /// Sub-folders and the session files already there (a click takes the name).
    entries: Vec<(String, bool)>,
    listed: Option<PathBuf>,
    pub error: Option<String>,
    /// A file that exists, waiting for the user to say it may be replaced.
    pub confirm: Option<PathBuf>,
    /// A session was saved from here: the next one is proposed in the same folder.
    saved_here: bool,
}

impl Default for SaveBrowser {
    fn default() -> Self {
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        SaveBrowser {
            open: false,
            dir_text: dir.display().to_string(),
            dir,
            name: "session.strobe".into(),
            entries: Vec::new(),
            listed: None,
            error: None,
            confirm: None,
            saved_here: false,
        }
    }
}

/// The file `name` stands for in `dir`: a relative name is taken in `dir`, and a name without
/// the `.strobe` extension gets it (what reopens as a session).
pub fn session_path(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("type a file name".into());
    }
    let p = dir.join(name);
    if name.ends_with('/') || p.is_dir() {
        return Err(format!("{}: is a folder; type a file name", p.display()));
    }
    if crate::session::Session::is_session_file(&p) {
        return Ok(p);
    }
    // appended, not swapped: "run.v2" is "run.v2.strobe"
    let mut s = p.into_os_string();
    s.push(".strobe");
    Ok(PathBuf::from(s))
}

impl SaveBrowser {
    /// Opens the dialog in `dir` (where the open traces are; the folder of the last save
    /// once there was one) with `name` proposed.
    pub fn show(&mut self, dir: Option<PathBuf>, name: &str) {
        if let Some(d) = dir.filter(|d| d.is_dir() && !self.saved_here) {
            self.dir = d;
        }
        self.name = name.to_string();
        self.open = true;
        self.listed = None;
        self.error = None;
        self.confirm = None;
    }

    fn list(&mut self) {
        if self.listed.as_deref() == Some(self.dir.as_path()) {
            return;
        }
        self.error = None;
        self.entries = match list_dir(&self.dir) {
            Ok(e) => e
                .into_iter()
                .filter(|(n, d, _)| !n.starts_with('.') && (*d || n.ends_with(".strobe")))
                .map(|(n, d, _)| (n, d))
                .collect(),
            Err(e) => {
                self.error = Some(e);
                Vec::new()
            }
        };
        self.dir_text = self.dir.display().to_string();
        self.listed = Some(self.dir.clone());
    }

    fn go(&mut self, p: PathBuf) {
        self.dir = p;
        self.listed = None;
        self.confirm = None;
    }

    /// The path to save to, once the user pressed Save (and agreed to replace a file).
    fn try_save(&mut self) -> Option<PathBuf> {
        match session_path(&self.dir, &self.name) {
            Ok(p) if p.exists() && self.confirm.as_ref() != Some(&p) => {
                self.confirm = Some(p);
                None
            }
            Ok(p) => Some(p),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// Shows the window; returns the path the user chose to save to.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        if !self.open {
            return None;
        }
        self.list();
        let mut open = self.open;
        let mut chosen = None;
        let mut cancel = false;
        egui::Window::new("Save session")
            .id(egui::Id::unique("save_browser"))
            .open(&mut open)
            .default_size([560.0, 420.0])
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(ctx.content_rect().center())
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").clicked() {
                        if let Some(p) = self.dir.parent().map(Path::to_path_buf) {
                            self.go(p);
                        }
                    }
                    let lab = ui.label("Folder");
                    let r =
                        ui.add(egui::TextEdit::singleline(&mut self.dir_text).desired_width(400.0)).labelled_by(lab.id);
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        let p = PathBuf::from(self.dir_text.trim());
                        if p.is_dir() {
                            self.go(p);
                        } else {
                            self.error = Some(format!("{}: no such folder", p.display()));
                        }
                    }
                });
                ui.separator();
                let mut go_to = None;
                egui::ScrollArea::vertical().id_salt("save_scroll").max_height(240.0).auto_shrink([false, true]).show(
                    ui,
                    |ui| {
                        if self.entries.is_empty() {
                            ui.weak("no folders or sessions here");
                        }
                        for (name, is_dir) in &self.entries {
                            if *is_dir {
                                if ui.selectable_label(false, format!("[dir] {name}/")).clicked() {
                                    go_to = Some(self.dir.join(name));
                                }
                            } else if ui.selectable_label(false, name).on_hover_text("save over this session").clicked()
                            {
                                self.name = name.clone();
                            }
                        }
                    },
                );
                if let Some(p) = go_to {
                    self.go(p);
                }
                ui.separator();
                ui.horizontal(|ui| {
                    let lab = ui.label("File name");
                    let r = ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(300.0)).labelled_by(lab.id);
                    if r.changed() {
                        self.confirm = None;
                        self.error = None;
                    }
                    let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    if ui.button("Save").clicked() || enter {
                        chosen = self.try_save();
                    }
                    if ui.button("Cancel").clicked() {
                        cancel = true;
                    }
                });
                if let Some(p) = self.confirm.clone() {
                    ui.horizontal(|ui| {
                        ui.colored_label(
                            egui::Color32::from_rgb(230, 160, 40),
                            format!("{} already exists.", p.display()),
                        );
                        if ui.button("Replace it").clicked() {
                            chosen = Some(p);
                        }
                        if ui.button("Keep it").clicked() {
                            self.confirm = None;
                        }
                    });
                }
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(235, 90, 70), e);
                }
            });
        self.open = open && chosen.is_none() && !cancel;
        if let Some(d) = chosen.as_ref().and_then(|p| p.parent()).filter(|d| d.is_dir()) {
            self.dir = d.to_path_buf();
            self.listed = None;
            self.saved_here = true;
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_becomes_a_session_file_in_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(session_path(d, "job").unwrap(), d.join("job.strobe"));
        assert_eq!(session_path(d, " job.strobe ").unwrap(), d.join("job.strobe"));
        assert_eq!(session_path(d, "run.v2").unwrap(), d.join("run.v2.strobe"));
        assert_eq!(session_path(d, "/tmp/x.strobe").unwrap(), PathBuf::from("/tmp/x.strobe"));
        assert!(session_path(d, "  ").is_err());
        std::fs::create_dir(d.join("sub")).unwrap();
        assert!(session_path(d, "sub").unwrap_err().contains("is a folder"));
    }
}
