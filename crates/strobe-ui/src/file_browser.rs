//! The in-app file browser: Open… falls back to it when no desktop portal answers (rfd
//! returns nothing at once), so opening a file always works.

use std::path::{Path, PathBuf};

pub struct FileBrowser {
    pub open: bool,
    pub dir: PathBuf,
    pub path_text: String,
    pub show_all: bool,
    entries: Vec<(String, bool, u64)>,
    listed: Option<PathBuf>,
    pub error: Option<String>,
}

impl Default for FileBrowser {
    fn default() -> Self {
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        FileBrowser {
            open: false,
            path_text: dir.display().to_string(),
            dir,
            show_all: false,
            entries: Vec::new(),
            listed: None,
            error: None,
        }
    }
}

pub fn is_trace_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [".json", ".json.gz", ".sqlite", ".nsys-rep", ".pt.trace.json", ".gz", ".pb", ".pftrace", ".perfetto-trace"]
        .iter()
        .any(|e| n.ends_with(e))
}

/// A folder's entries as (name, is a folder, size in bytes): folders first, then by name.
pub fn list_dir(dir: &Path) -> Result<Vec<(String, bool, u64)>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut entries = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let md = e.metadata().ok();
        let is_dir = md.as_ref().map(|m| m.is_dir()).unwrap_or(false);
        let size = md.map(|m| m.len()).unwrap_or(0);
        entries.push((name, is_dir, size));
    }
    entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase())));
    Ok(entries)
}

impl FileBrowser {
    pub fn show(&mut self) {
        self.open = true;
        self.listed = None;
    }

    fn list(&mut self) {
        if self.listed.as_deref() == Some(self.dir.as_path()) {
            return;
        }
        self.error = None;
        self.entries = list_dir(&self.dir).unwrap_or_else(|e| {
            self.error = Some(e);
            Vec::new()
        });
        self.path_text = self.dir.display().to_string();
        self.listed = Some(self.dir.clone());
    }

    fn go(&mut self, p: &Path) {
        self.dir = p.to_path_buf();
        self.listed = None;
    }

    /// Shows the window; returns files the user picked.
    pub fn ui(&mut self, ctx: &egui::Context) -> Vec<PathBuf> {
        let mut picked = Vec::new();
        if !self.open {
            return picked;
        }
        self.list();
        let mut open = self.open;
        egui::Window::new("Open trace")
            .id(egui::Id::unique("file_browser"))
            .open(&mut open)
            .default_size([560.0, 420.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").clicked() {
                        if let Some(p) = self.dir.parent().map(|p| p.to_path_buf()) {
                            self.go(&p);
                        }
                    }
                    let lab = ui.label("Path");
                    let r = ui
                        .add(egui::TextEdit::singleline(&mut self.path_text).desired_width(340.0))
                        .labelled_by(lab.id);
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        let p = PathBuf::from(self.path_text.trim());
                        if p.is_dir() {
                            self.go(&p);
                        } else if p.is_file() {
                            picked.push(p);
                        } else {
                            self.error = Some(format!("{}: no such file or directory", p.display()));
                        }
                    }
                    ui.checkbox(&mut self.show_all, "all files");
                    if ui.button("Open this folder (ranks)").on_hover_text("every trace in it, side by side").clicked()
                    {
                        picked.push(self.dir.clone());
                    }
                });
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(235, 90, 70), e);
                }
                ui.separator();
                let mut go_to: Option<PathBuf> = None;
                egui::ScrollArea::vertical().id_salt("fb_scroll").auto_shrink([false, false]).show(ui, |ui| {
                    for (name, is_dir, size) in &self.entries {
                        if name.starts_with('.') && !self.show_all {
                            continue;
                        }
                        if *is_dir {
                            if ui.selectable_label(false, format!("[dir] {name}/")).clicked() {
                                go_to = Some(self.dir.join(name));
                            }
                        } else if self.show_all || is_trace_name(name) {
                            let label = format!("{name}   ({:.1} MiB)", *size as f64 / (1 << 20) as f64);
                            if ui.selectable_label(false, label).clicked() {
                                picked.push(self.dir.join(name));
                            }
                        }
                    }
                });
                if let Some(p) = go_to {
                    self.go(&p);
                }
            });
        self.open = open && picked.is_empty();
        picked
    }
}
