//! A directory given where a trace is expected: one trace per rank, as a job writes them,
//! or a JAX / TensorFlow profile directory (`plugins/profile/<run>/<host>.xplane.pb`).

use std::path::{Path, PathBuf};

/// The traces a directory holds, sorted by name. A profile directory (the log dir, its
/// `plugins/profile`, or one run) gives its newest run's hosts, one per rank: their
/// `.xplane.pb` files, else their `.trace.json.gz`. Any other directory gives the `*.json`,
/// `*.json.gz`, `*.sqlite`, `*.xplane.pb[.gz]`, `*.pftrace[.gz]` and `*.perfetto-trace[.gz]`
/// files directly in it, and its `*.pb[.gz]` files that hold a Perfetto trace or an XSpace
/// (a `.pb` may be any protobuf: only those are taken).
pub fn trace_files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if let Some(run) = newest_profile_run(dir) {
        return run_files(&run);
    }
    let mut found = files_where(dir, |n| {
        n.ends_with(".json") || n.ends_with(".json.gz") || n.ends_with(".sqlite") || is_xplane(n) || is_perfetto(n)
    })?;
    let other_pb = files_where(dir, |n| (n.ends_with(".pb") || n.ends_with(".pb.gz")) && !is_xplane(n))?;
    found.extend(other_pb.into_iter().filter(|p| is_trace_protobuf(p)));
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "{}: no .json, .json.gz, .sqlite, .xplane.pb or .pftrace traces in this directory",
            dir.display()
        ));
    }
    Ok(found)
}

/// A Perfetto trace by its name (PyTorch's and Perfetto's recorders' suffixes).
fn is_perfetto(name: &str) -> bool {
    [".pftrace", ".pftrace.gz", ".perfetto-trace", ".perfetto-trace.gz"].iter().any(|e| name.ends_with(e))
}

/// Whether a `.pb` file holds a trace Strobe reads, by its content.
fn is_trace_protobuf(path: &Path) -> bool {
    matches!(
        crate::detect::detect(path),
        Ok(Some(crate::detect::Format::Perfetto)) | Ok(Some(crate::detect::Format::XSpace))
    )
}

fn is_xplane(name: &str) -> bool {
    name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz")
}

/// Files directly in `dir` whose lowercase name passes `keep`, sorted.
fn files_where(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| {
            f.is_file() && keep(&f.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default())
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The run to open when `dir` is a profile directory: `dir/plugins/profile/<run>`,
/// `dir/<run>` when `dir` is `plugins/profile`, or `dir` itself when it holds
/// `.xplane.pb` files. Runs are named by the time they were taken
/// (`2026_12_07_04_15_26`), so the newest is the last by name.
fn newest_profile_run(dir: &Path) -> Option<PathBuf> {
    let runs_in = |d: &Path| -> Option<PathBuf> {
        let rd = std::fs::read_dir(d).ok()?;
        let mut runs: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir() && holds_a_host(p)).collect();
        runs.sort();
        runs.pop()
    };
    let nested = dir.join("plugins").join("profile");
    if nested.is_dir() {
        return runs_in(&nested);
    }
    let is_profile_dir = dir.file_name().is_some_and(|n| n == "profile")
        && dir.parent().and_then(|p| p.file_name()).is_some_and(|n| n == "plugins");
    if is_profile_dir {
        return runs_in(dir);
    }
    let has_xplane = files_where(dir, is_xplane).is_ok_and(|f| !f.is_empty());
    has_xplane.then(|| dir.to_path_buf())
}

/// Whether a run directory holds a host's profile.
fn holds_a_host(run: &Path) -> bool {
    let host = |n: &str| is_xplane(n) || n.ends_with(".trace.json.gz") || n == "perfetto_trace.json.gz";
    files_where(run, host).is_ok_and(|f| !f.is_empty())
}

/// A run's hosts: their XSpace files, else their Chrome JSON (not `perfetto_trace.json.gz`,
/// JAX's copy of a host's trace, unless it is all there is).
fn run_files(run: &Path) -> Result<Vec<PathBuf>, String> {
    let xplanes = files_where(run, is_xplane)?;
    if !xplanes.is_empty() {
        return Ok(xplanes);
    }
    let json = files_where(run, |n| n.ends_with(".trace.json.gz"))?;
    if !json.is_empty() {
        return Ok(json);
    }
    let copy = files_where(run, |n| n == "perfetto_trace.json.gz")?;
    if copy.is_empty() {
        return Err(format!("{}: a profile run with no .xplane.pb or .trace.json.gz in it", run.display()));
    }
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_directory_gives_its_newest_runs_hosts() {
        let t = tempfile::tempdir().unwrap();
        let profile = t.path().join("plugins").join("profile");
        let old = profile.join("2026_12_07_04_15_26");
        let new = profile.join("2026_12_07_05_00_01");
        for (d, files) in [
            (&old, &["a.xplane.pb", "a.trace.json.gz"][..]),
            (&new, &["b.xplane.pb", "a.xplane.pb", "a.trace.json.gz", "perfetto_trace.json.gz"][..]),
        ] {
            std::fs::create_dir_all(d).unwrap();
            for f in files {
                std::fs::write(d.join(f), b"x").unwrap();
            }
        }
        let want = vec![new.join("a.xplane.pb"), new.join("b.xplane.pb")];
        assert_eq!(trace_files_in(t.path()).unwrap(), want, "the log dir");
        assert_eq!(trace_files_in(&profile).unwrap(), want, "plugins/profile");
        assert_eq!(trace_files_in(&new).unwrap(), want, "the run itself");
        // a run of Chrome JSON only: the hosts' traces, not JAX's perfetto copy
        for f in ["a.xplane.pb", "b.xplane.pb"] {
            std::fs::remove_file(new.join(f)).unwrap();
        }
        assert_eq!(trace_files_in(t.path()).unwrap(), vec![new.join("a.trace.json.gz")]);
        std::fs::remove_file(new.join("a.trace.json.gz")).unwrap();
        assert_eq!(trace_files_in(t.path()).unwrap(), vec![new.join("perfetto_trace.json.gz")]);
    }

    #[test]
    fn a_plain_directory_gives_its_perfetto_traces_and_trace_protobufs() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
        let t = tempfile::tempdir().unwrap();
        let copy = |from: &str, to: &str| std::fs::copy(samples.join(from), t.path().join(to)).unwrap();
        copy("pftrace_torch_train.pftrace", "rank0.pftrace");
        copy("pftrace_rocprof_style.pftrace", "rank1.perfetto-trace");
        copy("perfetto_gpu_render_stages_flow.pftrace", "renamed.pb");
        copy("jax_rocm_conv_8gpu.xplane.pb", "host.pb");
        copy("perfetto_flow_events_json_v1.json", "other.json");
        // a protobuf that is neither a Perfetto trace nor an XSpace, and a file of no trace suffix
        std::fs::write(t.path().join("model.pb"), b"\x08\x96\x01").unwrap();
        std::fs::write(t.path().join("notes.txt"), b"x").unwrap();
        let got: Vec<String> = trace_files_in(t.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["host.pb", "other.json", "rank0.pftrace", "rank1.perfetto-trace", "renamed.pb"]);
    }
}
