//! Several traces at once from the command line: `strobe report A B …` / `strobe report DIR`
//! (one trace per rank) and `strobe diff A B`. Each file loads into its own store, all in
//! parallel; the first failure is reported naming its file.

use std::path::{Path, PathBuf};
use strobe_analysis::figures::TraceFigures;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{RankOptions, RankParts};
use strobe_store::Store;

/// Files as given, with each directory replaced by its `*.json`, `*.json.gz` and `*.sqlite`
/// files, sorted by name.
pub fn expand_inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let found = strobe_import::trace_files_in(p).map_err(|e| anyhow::anyhow!(e))?;
        out.extend(found);
    }
    Ok(out)
}

/// `load(item)` for every item on a thread of its own, in order; a panicking load is an
/// error naming `path_of(item)`. The first error is returned.
fn load_each<'a, I: Sync, T: Send>(
    items: &'a [I],
    path_of: impl Fn(&'a I) -> &'a Path,
    load: impl Fn(&I) -> Result<T, strobe_import::ImportError> + Sync,
) -> anyhow::Result<Vec<T>> {
    let results: Vec<Result<T, strobe_import::ImportError>> = std::thread::scope(|s| {
        let handles: Vec<_> = items.iter().map(|i| s.spawn(|| load(i))).collect();
        handles
            .into_iter()
            .zip(items)
            .map(|(h, i)| {
                h.join().unwrap_or_else(|_| Err(strobe_import::ImportError::bad(path_of(i), "loader thread panicked")))
            })
            .collect()
    });
    Ok(results.into_iter().collect::<Result<_, _>>()?)
}

/// `defer_write`: stores built now are cached after the answer (`write_pending`).
fn load_options(cache_dir: Option<&Path>, defer_write: bool) -> strobe_import::LoadOptions {
    strobe_import::LoadOptions {
        cache_dir: cache_dir.map(Path::to_path_buf),
        no_cache: false,
        progress: None,
        defer_write,
        write_behind: false,
    }
}

/// Loads every file on its own thread, each into its own store. No progress bar: several
/// bars on one terminal would fight.
pub fn load_all(files: &[PathBuf], cache_dir: Option<&Path>) -> anyhow::Result<Vec<Store>> {
    let opts = load_options(cache_dir, false);
    let stores = load_each(files, |f| f.as_path(), |f| strobe_import::load(f, &opts))?;
    for (s, f) in stores.iter().zip(files) {
        crate::load::warn_if_truncated(f, s);
    }
    Ok(stores)
}

/// How a several-rank report is printed, and the options its memo is keyed by.
pub struct Output {
    pub json: bool,
    pub top: usize,
    pub how: Alignment,
    pub memo_options: String,
}

pub fn report(files: &[PathBuf], cache_dir: Option<&Path>, o: &Output, opts: &RankOptions) -> anyhow::Result<()> {
    // asked again: the printed report from the cache (`report_memo`), no store opened
    let memo = crate::report_memo::memo_for(cache_dir, files, &o.memo_options);
    if memo.as_ref().is_some_and(|m| m.replay()) {
        return Ok(());
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let load = load_options(cache_dir, true);
    let indexed: Vec<(usize, &PathBuf)> = files.iter().enumerate().collect();
    let loaded = load_each(
        &indexed,
        |i| i.1.as_path(),
        |&(i, f)| {
            let store = strobe_import::load(f, &load)?;
            let rank = strobe_analysis::ranks::identity::claimed_rank(&store, &names[i], i);
            Ok(with_parts(store, rank, &names[i], o, opts))
        },
    )?;
    for ((s, _), f) in loaded.iter().zip(files) {
        crate::load::warn_if_truncated(f, s);
    }
    emit_ranks(&names, loaded, o, opts, memo.as_ref())
}

/// A rank's store with its share of the several-rank report, made on the thread that loaded
/// it as soon as it is loaded: the analyses of the ranks loaded first run while the others
/// are still loading (`rank_parts`).
fn with_parts(store: Store, rank: i64, name: &str, o: &Output, opts: &RankOptions) -> (Store, RankParts) {
    let parts = strobe_analysis::ranks::report::rank_parts(rank, name, &store, o.top, opts);
    (store, parts)
}

fn emit_ranks(
    names: &[String],
    loaded: Vec<(Store, RankParts)>,
    o: &Output,
    opts: &RankOptions,
    memo: Option<&crate::report_memo::Memo>,
) -> anyhow::Result<()> {
    let t = strobe_store::timing::Phase::start("ranks: report");
    let (stores, parts): (Vec<Store>, Vec<RankParts>) = loaded.into_iter().unzip();
    let traces: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    let r = strobe_analysis::ranks::report::multi_rank_report_from_parts(&traces, parts, o.how, o.top, opts);
    drop(t);
    let t = strobe_store::timing::Phase::start("ranks: report as text or JSON, printed");
    let out = crate::printing::print_rendered(o.json, &r, strobe_analysis::ranks::report::to_text)?;
    drop(t);
    crate::load::after_answer(&stores, names, || {
        if let Some(m) = memo {
            m.write(&crate::report_memo::Printed { warnings: crate::report_memo::warnings_of(names, &stores), out });
        }
    });
    Ok(())
}

/// The processes of an Nsight Systems export in which two or more ran GPU work (one rank
/// each); None for any other file (`strobe_import::nsys_ranks`: listed once, then kept in
/// the cache).
pub fn nsys_processes(file: &Path, cache_dir: Option<&Path>) -> Option<Vec<strobe_import::nsys_sqlite::GpuProcess>> {
    strobe_import::nsys_ranks(file, &load_options(cache_dir, false))
}

/// `strobe report one.sqlite` where the report holds several GPU processes: each process is
/// loaded as its own rank (`load_nsys_process`), all at once, and the several-rank report
/// runs on them. `memo` is where the printed report is kept (the caller asked it first).
pub fn report_nsys_processes(
    file: &Path,
    procs: &[strobe_import::nsys_sqlite::GpuProcess],
    cache_dir: Option<&Path>,
    o: &Output,
    opts: &RankOptions,
    memo: Option<&crate::report_memo::Memo>,
) -> anyhow::Result<()> {
    let load = load_options(cache_dir, true);
    let names: Vec<String> = procs.iter().map(|p| format!("{} (pid {})", file.display(), p.pid)).collect();
    // every process from one pass over the export; then each rank's share of the report on
    // a thread of its own
    let stores = strobe_import::load_nsys_processes(file, procs, &load)?.into_iter().collect::<Result<Vec<_>, _>>()?;
    let indexed: Vec<(usize, Store)> = stores.into_iter().enumerate().collect();
    let loaded = std::thread::scope(|s| {
        let handles: Vec<_> = indexed
            .into_iter()
            .map(|(i, store)| {
                let (rank, name) = (procs[i].rank, &names[i]);
                s.spawn(move || with_parts(store, rank, name, o, opts))
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<Result<Vec<_>, _>>()
    })
    .map_err(|_| anyhow::anyhow!("{}: a rank's report thread panicked", file.display()))?;
    emit_ranks(&names, loaded, o, opts, memo)
}

pub fn diff(
    a: &Path,
    b: &Path,
    cache_dir: Option<&Path>,
    json: bool,
    top: usize,
    fail_if: &[String],
) -> anyhow::Result<()> {
    use strobe_analysis::attribution::compare;
    // thresholds first: a typo must not cost a load
    let gates = fail_if
        .iter()
        .map(|t| compare::parse_threshold(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let stores = load_all(&[a.to_path_buf(), b.to_path_buf()], cache_dir)?;
    let mut d = strobe_analysis::diff::diff(&stores[0], &stores[1]);
    let (fa, fb) = (TraceFigures::default(), TraceFigures::default());
    d.step_breakdown = compare::compare(fa.step_breakdown(&stores[0]), fb.step_breakdown(&stores[1]));
    crate::emit(json, &d, |d| strobe_analysis::diff::to_text(d, top))?;
    if gates.is_empty() {
        return Ok(());
    }
    let Some(sb) = &d.step_breakdown else {
        anyhow::bail!(
            "--fail-if: {} has no steps to compare",
            if compare::median_step(fa.step_breakdown(&stores[0])).is_none() { a.display() } else { b.display() }
        );
    };
    let crossed = compare::crossed(sb, &gates).map_err(anyhow::Error::msg)?;
    for c in &crossed {
        eprintln!(
            "strobe: regression: {} crossed: {} → {} ({:+.3} ms)",
            c.threshold,
            strobe_analysis::report::fmt_ns(c.a_ns),
            strobe_analysis::report::fmt_ns(c.b_ns),
            c.delta_ns as f64 / 1e6
        );
    }
    if !crossed.is_empty() {
        crate::gate::crossed();
    }
    Ok(())
}
