//! `rentix`: GPU rental price indices and hedge backtests from the command line.

/// `println!` that returns an error instead of panicking when stdout is closed
/// (`rentix track ... | head`), so that `main` can exit quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod cli;
mod commands;
mod progress;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
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
            let _ = writeln!(stderr, "rentix: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
