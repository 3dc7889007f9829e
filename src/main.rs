//! `rentix`: GPU rental price indices and hedge backtests from the command line.

/// `println!` that returns an error instead of panicking when stdout is closed
/// (`rentix track ... | head`), so that `main` can exit quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// Ingest and index allocate many small strings; mimalloc halves what the system
/// allocator costs there (docs/benchmarks.md). It is built with `no_thp`: mimalloc
/// otherwise asks for transparent huge pages and, purging and touching them again,
/// had the kernel zero 2 MiB pages over and over (a third of a one-shot `index
/// --input`'s time was `clear_page_erms`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod commands;
mod progress;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// Stack of each thread of the pool. A pool thread waiting for a nested parallel
/// job (a large Parquet file's columns, decoded on the pool) takes other tasks of
/// the pool meanwhile, so one stack can hold several dates' Parquet reads nested
/// (with polars' data frame, which ran on a pool of its own): `store compact` of a two-year store
/// overflowed the default 2 MiB two runs in three. Reserved, not used: pages are
/// touched only as deep as the stack grows.
const POOL_STACK_BYTES: usize = 64 << 20;

fn main() -> ExitCode {
    rentix_core::phases::start();
    let args = cli::Cli::parse();
    rentix_table::quiet_caught_panics();
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(POOL_STACK_BYTES)
        .build_global();
    // Ctrl-C or SIGTERM: release any store lock before exiting. A run publishing its
    // partitions is let finish first, so a run is in the store whole or not at all;
    // the next run sweeps what this one staged.
    let _ = ctrlc::set_handler(|| {
        let _ = match rentix_store::release_all_locks() {
            Some(what) => writeln!(std::io::stderr(), "rentix: interrupted after {what}"),
            None => writeln!(
                std::io::stderr(),
                "rentix: interrupted; nothing was committed by this run (the store and any earlier publication are as they were)"
            ),
        };
        std::process::exit(130);
    });
    match commands::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`rentix ... | head`) is not an error worth a message.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "rentix: error: {}", commands::error_text(&err));
            ExitCode::from(commands::exit_code(&err))
        }
    }
}
