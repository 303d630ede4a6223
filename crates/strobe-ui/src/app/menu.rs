//! The top bar: File and View menus, the search bar, the key hints, then the status lines.

use super::{OpenMode, StrobeApp};
use crate::commands::Command;

impl StrobeApp {
    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        egui::Panel::top("strobe_menu").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.menu_button("File", |ui| self.file_menu(ui, cmds));
                // a click in a field of the View menu edits it; only a click outside closes it
                let config = egui::containers::menu::MenuConfig::new()
                    .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
                egui::containers::menu::MenuButton::new("View").config(config).ui(ui, |ui| self.view_menu(ui, cmds));
                if ui.button("?").on_hover_text("Keyboard shortcuts (?)").clicked() {
                    cmds.push(Command::ToggleShortcuts);
                }
                if !self.ws.traces.is_empty() {
                    ui.separator();
                    self.search.ui(ui, &mut view_ctx!(self, cmds));
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        ui.weak("W/S zoom · A/D pan · F fit · M mark · Shift-drag area · / search · ? all keys");
                    });
                }
            });
            self.status_lines(ui);
        });
    }

    fn file_menu(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        if ui.button("Open…").on_hover_text("Replaces what is open").clicked() {
            cmds.push(Command::ShowOpenDialog(OpenMode::Replace));
            ui.close();
        }
        if ui
            .button("Add as rank…")
            .on_hover_text(
                "Adds traces beside the open ones (ranks of one job), or a snapshot / ncu report beside them",
            )
            .clicked()
        {
            cmds.push(Command::ShowOpenDialog(OpenMode::AddRanks));
            ui.close();
        }
        if ui
            .button("Open folder…")
            .on_hover_text("A folder of rank traces (side by side), or of rank summaries (strobe summarize: the ranks views of a whole job)")
            .clicked()
        {
            cmds.push(Command::ShowOpenDialog(OpenMode::Folder));
            ui.close();
        }
        if ui.button("Open (built-in browser)…").clicked() {
            self.browser.show();
            ui.close();
        }
        ui.menu_button("Recent", |ui| {
            let shown: Vec<super::Recent> = super::recent::shown(&self.settings.recent).cloned().collect();
            if shown.is_empty() {
                ui.weak("nothing yet");
            }
            for r in shown {
                let b = ui.button(r.label());
                let b = if r.0.len() > 1 {
                    let all: Vec<String> = r.0.iter().map(|p| p.display().to_string()).collect();
                    b.on_hover_text(all.join("\n"))
                } else {
                    b
                };
                if b.clicked() {
                    cmds.push(Command::OpenFiles(r.0));
                    ui.close();
                }
            }
        });
        ui.separator();
        if ui.button("Save session…").on_hover_text("Open files, view, folds, pins, notes, alignment").clicked() {
            cmds.push(Command::SaveSession(None));
            ui.close();
        }
        if ui.button("Close all").clicked() {
            cmds.push(Command::CloseAll);
            ui.close();
        }
    }

    fn view_menu(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        if ui.checkbox(&mut self.timeline_state.show_bands, "Overlap and idle bands").changed() {
            self.settings.show_bands = self.timeline_state.show_bands;
        }
        let mut critical = self.timeline_state.show_critical_path;
        let r = ui
            .checkbox(&mut critical, "Critical path (C)")
            .on_hover_text("Outline the spans on each step's critical path; > / < step along it");
        if r.changed() {
            cmds.push(Command::ToggleCriticalPath);
        }
        super::idle_threshold::ui(ui, &mut self.settings, cmds);
        ui.horizontal(|ui| {
            ui.label("Steps (regex)").on_hover_text(
                "ranges whose whole name matches are the iterations (empty: ProfilerStep#N, NVTX step_N / iteration N…, else the repeating kernel pattern)",
            );
            let r = ui.add(egui::TextEdit::singleline(&mut self.settings.step_pattern).desired_width(160.0));
            if r.lost_focus() {
                cmds.push(Command::SetStepPattern(self.settings.step_pattern.clone()));
            }
        });
        ui.horizontal(|ui| {
            use egui::ThemePreference as T;
            ui.label("Theme");
            ui.radio_value(&mut self.settings.theme, T::Dark, "Dark");
            ui.radio_value(&mut self.settings.theme, T::Light, "Light");
            ui.radio_value(&mut self.settings.theme, T::System, "Follow system");
        });
        ui.checkbox(&mut self.settings.restore_session, "Reopen the last session when started without files");
        if ui.button("Fit all (F with nothing selected)").clicked() {
            cmds.push(Command::FitAll);
            ui.close();
        }
        if ui.button("Clear marks").clicked() {
            cmds.push(Command::ClearMarks);
            ui.close();
        }
    }
}
