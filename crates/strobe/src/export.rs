//! `strobe export`: the rows come from `strobe_analysis::export`; this picks the output and
//! reports what was written on stderr (only when writing to a file).

use std::path::Path;
use strobe_analysis::efficiency::PeakOverride;
use strobe_analysis::export::{export_with, Format, What};
use strobe_store::Store;

pub fn run(store: &Store, what: What, format: Format, out: Option<&Path>, peaks: PeakOverride) -> anyhow::Result<()> {
    match out {
        Some(p) => {
            let t0 = std::time::Instant::now();
            let f = std::fs::File::create(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            let rows =
                export_with(store, what, format, f, peaks).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            let secs = t0.elapsed().as_secs_f64();
            eprintln!(
                "strobe: wrote {rows} rows to {} in {:.3} s ({:.2} M rows/s)",
                p.display(),
                secs,
                rows as f64 / secs.max(1e-9) / 1e6
            );
            Ok(())
        }
        None => match export_with(store, what, format, std::io::stdout().lock(), peaks) {
            Ok(_) => Ok(()),
            // `strobe export … | head` is fine
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(e.into()),
        },
    }
}
