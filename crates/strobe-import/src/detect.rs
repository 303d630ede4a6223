//! Which importer reads a file: by content first (each importer sniffs its own magic), then
//! by name. The one place that decides; `open` asks it once per file.

use std::io::Read;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Chrome trace-event JSON (Kineto or any other producer), plain or gzipped.
    ChromeJson,
    /// Nsight Systems SQLite export.
    NsysSqlite,
    /// Nsight Systems report: needs `nsys export` first.
    NsysRep,
    /// `torch.cuda.memory._dump_snapshot` pickle (plain or gzipped): not a timeline; read by
    /// `memory_snapshot` for `strobe report` and the memory pane.
    MemorySnapshot,
    /// Nsight Compute CSV export (`ncu --csv --page raw|details`, `--metrics`): not a
    /// trace; read by `ncu_csv` for `strobe report` and the kernel pane.
    NcuCsv,
    /// Nsight Compute report (`.ncu-rep`, plain or gzipped): read natively by `ncu_rep`.
    NcuRep,
    /// `torch.cuda.memory_stats()` dumped as a JSON object of counters.
    MemoryStats,
    /// A PyTorch flight-recorder dump (pickle or JSON), one rank's: read by
    /// `flight_recorder` for `strobe report` and the flight-recorder pane.
    FlightRecorder,
    /// XSpace protobuf (`jax.profiler` / TensorFlow / XProf `.xplane.pb`), plain or gzipped.
    XSpace,
    /// Nsight Systems SQLite export, gzipped: read through an inflated copy in the cache dir.
    GzippedSqlite,
    /// Perfetto protobuf trace (`.pftrace`, `.perfetto-trace`, `.pb`), plain or gzipped.
    Perfetto,
}

impl Format {
    /// Formats that become a timeline `Store` (the others become a model value).
    pub fn is_trace(self) -> bool {
        matches!(
            self,
            Format::ChromeJson
                | Format::NsysSqlite
                | Format::NsysRep
                | Format::XSpace
                | Format::Perfetto
                | Format::GzippedSqlite
        )
    }
}

pub fn detect(path: &Path) -> std::io::Result<Option<Format>> {
    let mut head = Vec::with_capacity(crate::flight_recorder::HEAD);
    std::fs::File::open(path)?.take(crate::flight_recorder::HEAD as u64).read_to_end(&mut head)?;
    if crate::flight_recorder::sniff(&head) {
        return Ok(Some(Format::FlightRecorder));
    }
    // a gzipped dump (`rank_3.pickle.gz`, `rank_3.json.gz`) is told by what it holds
    if head.starts_with(&crate::gz_peek::GZIP_MAGIC)
        && crate::flight_recorder::sniff(&crate::gz_peek::inflated_head(path, crate::flight_recorder::HEAD))
    {
        return Ok(Some(Format::FlightRecorder));
    }
    let head = &head[..head.len().min(16)];
    if head.starts_with(crate::nsys_sqlite::MAGIC) {
        return Ok(Some(Format::NsysSqlite));
    }
    if crate::ncu_rep::sniff(path, head) {
        return Ok(Some(Format::NcuRep));
    }
    if crate::xspace::sniff(path) {
        return Ok(Some(Format::XSpace));
    }
    if crate::perfetto_pb::sniff(path, head) {
        return Ok(Some(Format::Perfetto));
    }
    if crate::memory_snapshot::sniff_pickle(head) {
        return Ok(Some(Format::MemorySnapshot));
    }
    let name = path.file_name().map(|s| s.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if name.ends_with(".pickle") || name.ends_with(".pickle.gz") || name.ends_with(".pkl") || name.ends_with(".pkl.gz")
    {
        return Ok(Some(Format::MemorySnapshot));
    }
    if name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz") {
        return Ok(Some(Format::XSpace));
    }
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Ok(Some(Format::NsysRep));
    }
    if name.ends_with(".ncu-rep") || name.ends_with(".ncu-rep.gz") {
        return Ok(Some(Format::NcuRep));
    }
    if crate::ncu_csv::sniff(path, &name)? {
        return Ok(Some(Format::NcuCsv));
    }
    if crate::memory_snapshot::sniff_stats(path, head)? {
        return Ok(Some(Format::MemoryStats));
    }
    if head.starts_with(&crate::gz_peek::GZIP_MAGIC) {
        // what the gzip holds decides, so a gzipped export is not taken for a JSON trace
        let inner = crate::gz_peek::inflated_head(path, 64);
        if inner.starts_with(crate::nsys_sqlite::MAGIC) {
            return Ok(Some(Format::GzippedSqlite));
        }
        if crate::memory_snapshot::sniff_pickle(&inner) {
            return Ok(Some(Format::MemorySnapshot));
        }
        let first = inner.iter().find(|b| !b.is_ascii_whitespace());
        if matches!(first, Some(b'{') | Some(b'[')) || name.ends_with(".json.gz") {
            return Ok(Some(Format::ChromeJson));
        }
        return Ok(None);
    }
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        return Ok(Some(Format::ChromeJson));
    }
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        return Ok(Some(Format::ChromeJson));
    }
    if name.ends_with(".sqlite") {
        return Ok(Some(Format::NsysSqlite));
    }
    Ok(None)
}
