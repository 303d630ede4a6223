//! The window's title: what is open ("gpt_train.json.gz — Strobe", "4 ranks — rank0.json…
//! — Strobe"), "sample: …" for the bundled sample, plain "Strobe" when nothing is open. Sent to
//! the window only when it changes.

use super::StrobeApp;
use std::path::Path;

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| p.display().to_string())
}

impl StrobeApp {
    /// The title the window should have now.
    pub fn window_title(&self) -> String {
        let ws = &self.ws;
        let what = match ws.traces.as_slice() {
            [] => ws
                .memory
                .as_ref()
                .map(|m| file_name(&m.path))
                .or_else(|| ws.ncu.as_ref().map(|n| file_name(&n.path)))
                .or_else(|| ws.summaries.as_ref().map(|d| format!("rank summaries — {}", file_name(d)))),
            [one] if Some(&one.path) == self.sample.as_ref() => Some(format!("sample: {}", file_name(&one.path))),
            [one] => Some(file_name(&one.path)),
            [first, ..] => Some(format!("{} ranks — {}…", ws.traces.len(), file_name(&first.path))),
        };
        match what {
            Some(w) => format!("{w} — Strobe"),
            None => "Strobe".into(),
        }
    }

    /// Gives the window its title when what is open changed.
    pub(super) fn update_title(&mut self, ctx: &egui::Context) {
        if let Some(s) = &self.sample {
            if !self.ws.traces.is_empty() && !self.ws.traces.iter().any(|t| &t.path == s) {
                // the user's own files replaced the sample
                self.sample = None;
                self.notices.retain(|n| !n.text.starts_with("Showing the bundled sample"));
            }
        }
        let title = self.window_title();
        if self.shown_title.as_ref() != Some(&title) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.shown_title = Some(title);
        }
    }

    /// `strobe` started without a file: the bundled sample at `path` is what opens, and the
    /// title and the status line say so.
    pub fn showing_sample(&mut self, path: &Path) {
        self.sample = Some(path.to_path_buf());
        let text = format!(
            "Showing the bundled sample trace ({}): open yours with File > Open…, by dropping it here, or `strobe FILE`",
            file_name(path)
        );
        self.say(super::Notice { text, detail: Some(path.display().to_string()) });
    }
}
