//! The settings remembered between runs.

use std::path::PathBuf;

/// What is remembered between runs (eframe storage).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub recent: Vec<PathBuf>,
    pub show_bands: bool,
    pub idle_threshold_us: f64,
    /// Reopen the last session when started without files.
    pub restore_session: bool,
    /// `--steps REGEX` of the viewer (empty: the built-in rules).
    pub step_pattern: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent: Vec::new(),
            show_bands: true,
            idle_threshold_us: strobe_analysis::idle::DEFAULT_THRESHOLD_NS as f64 / 1e3,
            restore_session: true,
            step_pattern: String::new(),
        }
    }
}
