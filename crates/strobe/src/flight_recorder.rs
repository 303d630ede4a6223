//! `strobe report` on flight-recorder dumps: one or many ranks' files, or a directory of them
//! (torchtitan's `comm_traces/`), read and matched across ranks.

use std::path::{Path, PathBuf};
use strobe_analysis::flight_recorder::{analyse, to_text, FrReport};

/// The dumps given, when every path is one or a directory holding some; None otherwise (the
/// paths are then some other kind of input).
pub fn dumps_given(paths: &[PathBuf]) -> anyhow::Result<Option<Vec<PathBuf>>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = strobe_import::flight_recorder::dumps_in(p)?;
            if found.is_empty() {
                return Ok(None);
            }
            out.extend(found);
        } else if is_dump(p) {
            out.push(p.clone());
        } else {
            return Ok(None);
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

fn is_dump(p: &Path) -> bool {
    matches!(strobe_import::detect(p), Ok(Some(strobe_import::Format::FlightRecorder)))
}

#[derive(serde::Serialize)]
struct Json<'a> {
    flight_recorder: &'a FrReport,
}

pub fn report(files: &[PathBuf], json: bool) -> anyhow::Result<()> {
    let dumps = files.iter().map(|f| strobe_import::flight_recorder::import(f)).collect::<Result<Vec<_>, _>>()?;
    let r = analyse(&dumps);
    crate::emit(json, &Json { flight_recorder: &r }, |j| to_text(j.flight_recorder))
}
