//! The settings remembered between runs.

/// What is remembered between runs (eframe storage).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// File > Recent, newest first: what was opened together is one entry.
    pub recent: Vec<super::Recent>,
    pub show_bands: bool,
    /// This run's idle threshold: not remembered, each start is at the default (View ▸ Idle
    /// threshold says so), so no figure depends on a value chosen in an earlier run.
    #[serde(skip)]
    pub idle_threshold_us: f64,
    /// Reopen the last session when started without files.
    pub restore_session: bool,
    /// `--steps REGEX` of the viewer (empty: the built-in rules).
    pub step_pattern: String,
    /// View > Theme: dark, light, or the desktop's.
    pub theme: egui::ThemePreference,
}

impl Settings {
    /// The figure settings these remembered ones give (a pattern that is not a regex: the
    /// built-in step rules).
    pub fn figure_settings(&self) -> crate::workspace::FigureSettings {
        let step_rule = strobe_analysis::steps::StepRule::from_pattern(self.step_pattern.trim())
            .ok()
            .filter(|_| !self.step_pattern.trim().is_empty())
            .unwrap_or_default();
        crate::workspace::FigureSettings { step_rule, idle_threshold_ns: (self.idle_threshold_us * 1e3) as i64 }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent: Vec::new(),
            show_bands: true,
            idle_threshold_us: strobe_analysis::idle::DEFAULT_THRESHOLD_NS as f64 / 1e3,
            restore_session: true,
            step_pattern: String::new(),
            theme: egui::ThemePreference::System,
        }
    }
}
