//! `strobe diff A.pickle B.pickle`: two memory snapshots compared (strobe_analysis::memory::diff).

use std::path::Path;
use strobe_import::Source;
use strobe_import::{detect, Format};

/// Whether `path` is a memory snapshot (by content, as `strobe report` tells).
pub fn is_snapshot(path: &Path) -> bool {
    matches!(detect(path), Ok(Some(Format::MemorySnapshot)))
}

pub fn diff(a: &Path, b: &Path, cache_dir: Option<&Path>, json: bool, top: usize) -> anyhow::Result<()> {
    use strobe_analysis::memory;
    let open = |p: &Path| -> anyhow::Result<_> {
        match crate::load::open_with_progress(p, cache_dir)? {
            Source::MemorySnapshot(s) => {
                let r = memory::analyse_with_breakdown(&s);
                Ok((s, r))
            }
            _ => anyhow::bail!("{}: not a memory snapshot; both files of a snapshot diff must be one", p.display()),
        }
    };
    let (sa, ra) = open(a)?;
    let (sb, rb) = open(b)?;
    let d = memory::diff::diff(&a.display().to_string(), (&sa, &ra), &b.display().to_string(), (&sb, &rb));
    crate::emit(json, &d, |d| memory::diff::to_text(d, top))
}
