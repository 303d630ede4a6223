use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Strobe: a fast desktop viewer for GPU training profiles.
#[derive(Parser, Debug)]
#[command(name = "strobe", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Where built stores are cached (default: $STROBE_CACHE_DIR, else the platform cache dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Trace files to open in the viewer.
    pub files: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a trace: GPU busy/idle, compute/comm/memory, overlap, top kernels, streams, steps.
    Report {
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many kernels to list.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
    /// Benchmarks: generate scaled traces and measure ingest, reopen and queries.
    Bench(crate::bench::BenchArgs),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Some(Command::Report { file, json, top }) => {
                let store = crate::load::load_with_progress(&file, self.cache_dir.as_deref())?;
                let r = strobe_analysis::report::report(&store, top);
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    print!("{}", strobe_analysis::report::to_text(&r));
                }
                Ok(())
            }
            Some(Command::Bench(args)) => crate::bench::run(args, self.cache_dir.as_deref()),
            None => anyhow::bail!("the viewer is not built yet; try `strobe report FILE`"),
        }
    }
}
