//! `strobe`: the GUI by default, and the command-line tools (`report`, `diff`, `export`, `bench`).

mod bench;
mod bench_app;
mod bench_cluster;
mod bench_peers;
mod bench_ranks;
mod bench_report;
mod bench_scanners;
mod bench_shapes;
mod cli;
mod export;
mod flight_recorder;
mod gate;
mod load;
mod memory_diff;
mod ncu_beside;
mod printing;
mod ranks;
mod report_memo;
mod scale;
mod summaries;

use clap::Parser;

// glibc's malloc returns freed pages to the kernel and faults them back in zeroed: on a 2 GB
// snapshot that was 12 % of the open in clear_page alone. mimalloc keeps and reuses them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Prints a result as JSON (`--json`) or as the text `to_text` makes of it.
pub fn emit<T: serde::Serialize>(json: bool, r: &T, to_text: impl Fn(&T) -> String) -> anyhow::Result<()> {
    printing::print_rendered(json, r, to_text).map(drop)
}

/// `strobe report … | head` must stop quietly when `head` has read enough, as `cat` does.
/// Rust ignores SIGPIPE, so a closed pipe turns every `print!` into a panic instead; the
/// command-line tools take the default action back. The GUI keeps Rust's setting: a lost
/// socket there is an error to handle, not a reason to die.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition before any thread starts; SIG_DFL needs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `--json` is indented for a person at a terminal and compact for a pipe or a file: a
/// report of every step is large (6,600 steps on two ranks: 370 MB indented, half that
/// compact), and printing the indented form took longer than the analyses behind it.
pub fn json_indented() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
}

fn main() {
    let cli = cli::Cli::parse();
    if cli.command.is_some() {
        quiet_on_closed_pipe();
    }
    let code = match cli.run() {
        // 4: a `--fail-if` regression gate was crossed
        Ok(()) if gate::was_crossed() => 4,
        // 3: the output is complete for what was read, but an input was cut short
        Ok(()) if load::TRUNCATED_INPUT.load(std::sync::atomic::Ordering::Relaxed) => 3,
        Ok(()) => 0,
        Err(e) => {
            eprintln!("strobe: {e:#}");
            2
        }
    };
    std::process::exit(code);
}
