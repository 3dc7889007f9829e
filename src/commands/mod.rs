//! One module per command; each validates its arguments, then does the work.

mod index;
mod ingest;
mod simulate;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Ingest(a) => ingest::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Index(a) => index::run(a),
    }
}
