//! Search: substring (case-insensitive) or regex over span names. Names are interned, so a
//! query is matched once per distinct name, then spans are collected by name id; every match
//! is highlighted on the timeline and Enter / Shift+Enter step through them in time order.

use crate::commands::{Command, Highlight};
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Workspace};

/// Matches beyond this are highlighted but not listed for stepping.
pub const MAX_LISTED: usize = 2_000_000;

#[derive(Default)]
pub struct SearchBar {
    pub query: String,
    pub regex: bool,
    pub matches: Vec<SpanRef>,
    pub current: Option<usize>,
    pub error: Option<String>,
    /// Every match's name, per trace (the app highlights it: `Command::SearchResults`).
    pub highlight: Highlight,
    pub focus_request: bool,
    key: Option<(String, bool, u64)>,
}

impl SearchBar {
    /// Matches the query against the open traces when it or they changed; true when it did.
    pub fn recompute(&mut self, ws: &Workspace) -> bool {
        let key = (self.query.clone(), self.regex, ws.generation);
        if self.key.as_ref() == Some(&key) {
            return false;
        }
        self.key = Some(key);
        self.matches.clear();
        self.current = None;
        self.error = None;
        self.highlight = Highlight::default();
        if self.query.is_empty() {
            return true;
        }
        let matcher: Box<dyn Fn(&str) -> bool> = if self.regex {
            match regex::Regex::new(&self.query) {
                Ok(re) => Box::new(move |s: &str| re.is_match(s)),
                Err(e) => {
                    self.error = Some(e.to_string());
                    return true;
                }
            }
        } else {
            let q = self.query.to_lowercase();
            Box::new(move |s: &str| s.to_lowercase().contains(&q))
        };
        let mut any = false;
        for t in &ws.traces {
            let st = &*t.store;
            let mask: Vec<bool> = (0..st.string_count() as u32).map(|i| matcher(st.string(i))).collect();
            for (sid, m) in st.span_metas().iter().enumerate() {
                if mask.get(m.name as usize).copied().unwrap_or(false) {
                    any = true;
                    if self.matches.len() < MAX_LISTED {
                        self.matches.push(SpanRef { trace: t.id, span: sid as u32 });
                    }
                }
            }
            self.highlight.names.insert(t.id, mask);
        }
        self.highlight.active = any;
        let start = |r: &SpanRef| ws.trace(r.trace).map(|t| t.to_shared(t.store.span_start(r.span)));
        let mut keyed: Vec<_> = self.matches.iter().map(|r| (start(r), r.trace, r.span)).collect();
        keyed.sort_unstable();
        self.matches = keyed.into_iter().map(|(_, trace, span)| SpanRef { trace, span }).collect();
        true
    }

    /// Searches for spans named exactly `name` (a span's "Find all with this name"): an
    /// anchored regex, so `aten::add` does not also find `aten::addmm`.
    pub fn find_name(&mut self, name: &str) {
        self.query = format!("^{}$", regex::escape(name));
        self.regex = true;
    }

    /// Ends the search: the query goes, and with it the matches and their highlight (on the
    /// next `recompute`).
    pub fn end(&mut self) {
        self.query.clear();
    }

    /// Moves to the next (or previous) match and asks the timeline to show it.
    pub fn step(&mut self, forward: bool, cx: &mut ViewCtx) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        let i = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.current = Some(i);
        cx.emit(Command::RevealSpan(self.matches[i]));
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let id = egui::Id::unique("strobe_search");
        let lab = ui.label("Search");
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut self.query)
                    .id(id)
                    .hint_text("span name  ( / or Ctrl+F )")
                    .desired_width(280.0),
            )
            .labelled_by(lab.id);
        if self.focus_request {
            r.request_focus();
            self.focus_request = false;
        }
        ui.checkbox(&mut self.regex, "regex");
        // Esc in the box ends the search, as in Perfetto: the matches stop dimming the rest
        // (the key is taken: the timeline, drawn after, would clear the selection with it)
        if r.lost_focus() && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape)) {
            self.end();
        }
        if self.recompute(cx.ws) {
            cx.emit(Command::SearchResults(self.highlight.clone()));
        }
        if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            let back = ui.input(|i| i.modifiers.shift);
            self.step(!back, cx);
            r.request_focus();
        }
        if ui.small_button("<").on_hover_text("previous match (Shift+Enter)").clicked() {
            self.step(false, cx);
        }
        if ui.small_button(">").on_hover_text("next match (Enter)").clicked() {
            self.step(true, cx);
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::from_rgb(235, 90, 70), crate::timeline::truncate(e, 60));
        } else if !self.query.is_empty() {
            let txt = match self.current {
                Some(i) => format!("{} / {} matches", i + 1, self.matches.len()),
                None => format!("{} matches", self.matches.len()),
            };
            ui.label(txt);
        }
        if !self.query.is_empty() && ui.small_button("×").on_hover_text("end the search (Esc)").clicked() {
            self.end();
            if self.recompute(cx.ws) {
                cx.emit(Command::SearchResults(self.highlight.clone()));
            }
        }
    }
}
