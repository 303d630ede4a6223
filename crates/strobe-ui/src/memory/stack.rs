//! An allocation's stack as a user reads it: the first user frame first (the script line
//! that asked for the memory), then its callers; the allocator's, dispatcher's and
//! interpreter's frames (`strobe_analysis::memory::frames`) folded behind one click.

use strobe_analysis::memory::frames::{first_user_frame, is_internal};
use strobe_model::memory::{Frame, MemorySnapshot, StackId};

/// The frame a one-line summary names: the first user frame.
pub fn user_frame(s: &MemorySnapshot, id: StackId) -> Option<&Frame> {
    let frames: Vec<&Frame> = s.stack(id).collect();
    first_user_frame(&frames).map(|i| frames[i])
}

pub fn line(f: &Frame) -> String {
    format!("{}  {}:{}", f.name, f.filename, f.line)
}

/// The user's frames of stack `id`, from the first user frame outwards, at most `n`.
pub fn user_frames(s: &MemorySnapshot, id: StackId, n: usize) -> Vec<&Frame> {
    let frames: Vec<&Frame> = s.stack(id).collect();
    let from = first_user_frame(&frames).unwrap_or(0);
    frames[from..].iter().copied().filter(|f| !is_internal(f)).take(n).collect()
}

/// The stack in a scroll area: user frames, with a toggle that shows every frame. `salt`
/// keeps the toggle per place it is shown.
pub fn ui(ui: &mut egui::Ui, s: &MemorySnapshot, id: StackId, salt: &str, max_height: f32) {
    let frames: Vec<&Frame> = s.stack(id).collect();
    if frames.is_empty() {
        ui.weak("No stack recorded.");
        return;
    }
    let key = ui.scope_id().with(("strobe_stack_all", salt));
    let mut all = ui.data(|d| d.get_temp::<bool>(key)).unwrap_or(false);
    let from = first_user_frame(&frames).unwrap_or(0);
    let hidden = frames.iter().enumerate().filter(|(i, f)| *i < from || is_internal(f)).count();
    if hidden > 0 {
        let label = if all {
            format!("hide the {hidden} allocator and interpreter frames")
        } else {
            format!("{hidden} allocator and interpreter frames hidden: show all {}", frames.len())
        };
        if ui.small_button(label).clicked() {
            all = !all;
            ui.data_mut(|d| d.insert_temp(key, all));
        }
    }
    egui::ScrollArea::vertical().id_salt(("strobe_stack", salt)).max_height(max_height).show(ui, |ui| {
        for (i, f) in frames.iter().enumerate() {
            let internal = i < from || is_internal(f);
            if internal && !all {
                continue;
            }
            let t = egui::RichText::new(line(f)).monospace();
            if i == from {
                ui.label(t.strong());
            } else if internal {
                ui.label(t.weak());
            } else {
                ui.label(t);
            }
        }
    });
}
