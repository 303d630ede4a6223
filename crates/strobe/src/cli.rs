use crate::emit;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use strobe_import::Source;

/// Strobe: a fast desktop viewer for GPU training profiles.
#[derive(Parser, Debug)]
#[command(name = "strobe", version)]
pub struct Cli {
    /// Where built stores are cached (default: $STROBE_CACHE_DIR, else the platform cache dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Trace files to open in the viewer (none: the bundled sample trace).
    pub files: Vec<PathBuf>,

    /// Open the files, wait until loaded and laid out, write a PNG of the window to PATH and exit.
    #[arg(long, value_name = "PATH")]
    pub screenshot: Option<PathBuf>,

    /// With --screenshot: show this window, in ms from the start of the trace(s), e.g. `40..41.5`.
    #[arg(long, value_name = "START..END", value_parser = parse_ms_range)]
    pub view: Option<(f64, f64)>,

    /// With --screenshot: select the kernel whose name contains TEXT (highlights it, shows its longest).
    #[arg(long, value_name = "TEXT")]
    pub select: Option<String>,
}

fn parse_ms_range(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s.split_once("..").ok_or("expected START..END in ms, e.g. 40..41.5")?;
    let a: f64 = a.trim().parse().map_err(|e| format!("{a}: {e}"))?;
    let b: f64 = b.trim().parse().map_err(|e| format!("{b}: {e}"))?;
    if b <= a {
        return Err("END must be after START".into());
    }
    Ok((a, b))
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a trace: GPU busy/idle, compute/comm/memory, overlap, top kernels, streams, steps.
    /// With several traces (or a directory of them): one per rank, side by side — the rank–step
    /// table, collective skew, stragglers with evidence, HTA-parity tables. A trace and an
    /// Nsight Compute report (or CSV export): the report's kernels and which faster kernel would
    /// pay most per step of the trace.
    Report {
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many kernels to list.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// With several ranks: how to line up their clocks (falls back to recorded, saying why).
        #[arg(long, value_enum, default_value = "collective")]
        align: AlignArg,
        /// Steps are the CPU/NVTX ranges whose whole name matches REGEX (instead of
        /// ProfilerStep#N, iteration-like NVTX names, or the inferred period): docs/ranks.md.
        #[arg(long, value_name = "REGEX")]
        steps: Option<String>,
        /// With several ranks: microbatch work is the CPU/NVTX ranges whose whole name matches
        /// REGEX, with named groups `phase` (forward/backward/weight…) and `mb` (its number),
        /// instead of the built-in names (`Forward 3`, `PP:0F3`, …): docs/pipeline.md.
        #[arg(long, value_name = "REGEX")]
        microbatches: Option<String>,
        /// Compute ceiling for the efficiency figures, in TFLOP/s (every unit), instead of the
        /// device's published peaks.
        #[arg(long, value_name = "TFLOPS")]
        peak_tflops: Option<f64>,
        /// Memory bandwidth ceiling for the efficiency figures, in GB/s.
        #[arg(long, value_name = "GBPS")]
        peak_gbps: Option<f64>,
        /// With several ranks: the links' one-way speed in GB/s, the expected bus bandwidth of
        /// every group's collectives (instead of the speed the GPU's name implies).
        #[arg(long, value_name = "GBPS")]
        link_gbps: Option<f64>,
    },
    /// Reduce each trace (one per rank) to a small Parquet summary in DIR, for `strobe report DIR`
    /// to merge: the cluster workflow of docs/cluster.md (run it per rank on Ray or Slurm).
    Summarize {
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Folder the summaries are written to (created if missing).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
        /// Steps are the CPU/NVTX ranges whose whole name matches REGEX (as for `report`).
        #[arg(long, value_name = "REGEX")]
        steps: Option<String>,
    },
    /// Compare two traces per kernel and CPU-op name: counts, total time, delta, ratio. Two memory
    /// snapshots: the allocated peaks per category and per source line, segments added and
    /// removed, the allocator's figures side by side.
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many names of each table the text lists.
        #[arg(long, default_value_t = 30)]
        top: usize,
        /// A regression gate on the median step's breakdown: `PART>+5%`, `PART>+2ms` or
        /// `PART>+3pp` (share of the step); PART is `step`, a part (`model_ops_inefficiency`,
        /// `comm_wait`, `idle_host`…) or an op class (`gemm`). Repeatable; exit code 4 when one
        /// is crossed.
        #[arg(long = "fail-if", value_name = "PART>+X")]
        fail_if: Vec<String>,
    },
    /// Export spans, flows, counters, the kernel, op or efficiency table as CSV or JSON Lines (docs/export.md).
    Export {
        /// Trace file (Chrome/Kineto JSON, Nsight Systems SQLite).
        file: PathBuf,
        /// What to export.
        #[arg(long, value_enum)]
        what: ExportWhat,
        /// Output format.
        #[arg(long, value_enum, default_value = "csv")]
        format: ExportFormat,
        /// Output file (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: Option<PathBuf>,
        /// Compute ceiling for the efficiency figures, in TFLOP/s (every unit), instead of the
        /// device's published peaks.
        #[arg(long, value_name = "TFLOPS")]
        peak_tflops: Option<f64>,
        /// Memory bandwidth ceiling for the efficiency figures, in GB/s.
        #[arg(long, value_name = "GBPS")]
        peak_gbps: Option<f64>,
    },
    /// Benchmarks: generate scaled traces and measure ingest, reopen and queries.
    Bench(crate::bench::BenchArgs),
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum AlignArg {
    Recorded,
    Step,
    Collective,
}

impl From<AlignArg> for strobe_analysis::ranks::align::Alignment {
    fn from(a: AlignArg) -> Self {
        use strobe_analysis::ranks::align::Alignment;
        match a {
            AlignArg::Recorded => Alignment::Recorded,
            AlignArg::Step => Alignment::StepStart,
            AlignArg::Collective => Alignment::CollectiveEnd,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ExportWhat {
    Spans,
    Flows,
    Counters,
    Kernels,
    /// The op table (torch.profiler's key_averages per name and input shapes): calls, CPU and
    /// device time, total and self.
    Ops,
    /// Per-op efficiency: FLOPs, bytes, GPU time, TFLOP/s, bound, efficiency, time lost.
    Efficiency,
    /// Idle gaps ≥ 10 µs, longest first: start, length, cause, the op that held the host.
    Gaps,
}

impl From<ExportWhat> for strobe_analysis::export::What {
    fn from(w: ExportWhat) -> Self {
        use strobe_analysis::export::What;
        match w {
            ExportWhat::Spans => What::Spans,
            ExportWhat::Flows => What::Flows,
            ExportWhat::Counters => What::Counters,
            ExportWhat::Kernels => What::Kernels,
            ExportWhat::Ops => What::Ops,
            ExportWhat::Efficiency => What::OpEfficiency,
            ExportWhat::Gaps => What::Gaps,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ExportFormat {
    Csv,
    Jsonl,
}

impl From<ExportFormat> for strobe_analysis::export::Format {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Csv => strobe_analysis::export::Format::Csv,
            ExportFormat::Jsonl => strobe_analysis::export::Format::Jsonl,
        }
    }
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Some(Command::Report {
                files,
                json,
                top,
                align,
                steps,
                microbatches,
                peak_tflops,
                peak_gbps,
                link_gbps,
            }) => {
                let rule = match &steps {
                    Some(p) => strobe_analysis::steps::StepRule::from_pattern(p).map_err(anyhow::Error::msg)?,
                    None => Default::default(),
                };
                let rank_opts = strobe_analysis::ranks::report::RankOptions {
                    steps: rule.clone(),
                    microbatches: match &microbatches {
                        Some(p) => strobe_analysis::pipeline::microbatch::MicrobatchRule::from_pattern(p)
                            .map_err(anyhow::Error::msg)?,
                        None => Default::default(),
                    },
                    link_gbps,
                    ..Default::default()
                };
                let peaks = strobe_analysis::efficiency::PeakOverride { tflops: peak_tflops, gbps: peak_gbps };
                if let [dir] = files.as_slice() {
                    if strobe_cluster::summary::is_summary_dir(dir) {
                        return crate::summaries::report(dir, json, align.into(), &rank_opts);
                    }
                }
                if let Some(dumps) = crate::flight_recorder::dumps_given(&files)? {
                    return crate::flight_recorder::report(&dumps, json);
                }
                if let Some((trace, ncu)) = crate::ncu_beside::given(&files) {
                    return crate::ncu_beside::report(&trace, &ncu, self.cache_dir.as_deref(), json);
                }
                let expanded = crate::ranks::expand_inputs(&files)?;
                let indented = json && crate::json_indented();
                // every option the several-rank report's output depends on
                let rank_memo =
                    format!("ranks {json} {indented} {top} {align:?} {steps:?} {microbatches:?} {link_gbps:?}");
                let ranks_out = crate::ranks::Output { json, top, how: align.into(), memo_options: rank_memo };
                if expanded.len() > 1 {
                    return crate::ranks::report(&expanded, self.cache_dir.as_deref(), &ranks_out, &rank_opts);
                }
                let file = expanded.into_iter().next().unwrap_or_default();
                use strobe_analysis::{memory, report, roofline};
                // every option the single-trace report's output depends on
                let options = format!("{json} {indented} {top} {steps:?} {peak_tflops:?} {peak_gbps:?}");
                let inputs = crate::report_memo::inputs(self.cache_dir.as_deref(), std::slice::from_ref(&file));
                let memo = inputs.as_ref().map(|i| i.memo(&options));
                // asked again: answered before even asking an nsys export how many processes it
                // holds (a scan of its kernel table)
                let ranks_memo = inputs.as_ref().map(|i| i.memo(&ranks_out.memo_options));
                if [&memo, &ranks_memo].iter().any(|m| m.as_ref().is_some_and(|m| m.replay())) {
                    return Ok(());
                }
                if let Some(procs) = crate::ranks::nsys_processes(&file, self.cache_dir.as_deref()) {
                    return crate::ranks::report_nsys_processes(
                        &file,
                        &procs,
                        self.cache_dir.as_deref(),
                        &ranks_out,
                        &rank_opts,
                        ranks_memo.as_ref(),
                    );
                }
                match crate::load::open_with_progress(&file, self.cache_dir.as_deref())? {
                    Source::Trace(store) => {
                        // `strobe bench report`'s baseline: never remembered as the report
                        let baseline = crate::bench_report::attribution_off();
                        let r = match baseline {
                            true => report::report_without_attribution(&store, top, &rule, peaks),
                            false => report::report_with(&store, top, &rule, peaks),
                        };
                        let out = crate::printing::print_rendered(json, &r, report::to_text)?;
                        let names = [file.display().to_string()];
                        crate::load::after_answer(std::slice::from_ref(&*store), &names, || {
                            if let Some(m) = memo.as_ref().filter(|_| !baseline) {
                                let warnings = crate::report_memo::warnings_of(&names, [&*store]);
                                m.write(&crate::report_memo::Printed { warnings, out });
                            }
                        });
                        Ok(())
                    }
                    Source::MemorySnapshot(snap) => emit(json, &memory::analyse_with_breakdown(&snap), memory::to_text),
                    Source::MemoryStats(stats) => emit(json, &memory::stats_report(&stats), memory::stats_text),
                    Source::Ncu(ncu) => emit(json, &roofline::analyse(&ncu), roofline::to_text),
                    Source::FlightRecorder(_) => crate::flight_recorder::report(&[file], json),
                }
            }
            Some(Command::Summarize { files, output, steps }) => {
                let rule = match &steps {
                    Some(p) => strobe_analysis::steps::StepRule::from_pattern(p).map_err(anyhow::Error::msg)?,
                    None => Default::default(),
                };
                let expanded = crate::ranks::expand_inputs(&files)?;
                crate::summaries::summarize(&expanded, &output, self.cache_dir.as_deref(), &rule)
            }
            Some(Command::Diff { a, b, json, top, fail_if }) => {
                if crate::memory_diff::is_snapshot(&a) || crate::memory_diff::is_snapshot(&b) {
                    if !fail_if.is_empty() {
                        anyhow::bail!("--fail-if gates a trace diff's step breakdown; memory snapshots have none");
                    }
                    return crate::memory_diff::diff(&a, &b, self.cache_dir.as_deref(), json, top);
                }
                crate::ranks::diff(&a, &b, self.cache_dir.as_deref(), json, top, &fail_if)
            }
            Some(Command::Export { file, what, format, output, peak_tflops, peak_gbps }) => {
                let store = crate::load::load_with_progress(&file, self.cache_dir.as_deref())?;
                let peaks = strobe_analysis::efficiency::PeakOverride { tflops: peak_tflops, gbps: peak_gbps };
                crate::export::run(&store, what.into(), format.into(), output.as_deref(), peaks)
            }
            Some(Command::Bench(args)) => crate::bench::run(args, self.cache_dir.as_deref()),
            None => strobe_ui::run(strobe_ui::RunOptions {
                files: self.files,
                cache_dir: self.cache_dir,
                screenshot: self.screenshot,
                view_ms: self.view,
                select: self.select,
                size: None,
            }),
        }
    }
}
