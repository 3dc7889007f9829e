//! One module per command; each validates its arguments, then does the work.

mod backtest;
mod contract;
mod cost;
mod demo;
mod index;
mod ingest;
mod report;
mod simulate;
mod store;
mod track;
mod verify;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Ingest(a) => ingest::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Index(a) => index::run(a),
        Command::Backtest(a) => backtest::run(a),
        Command::Track(a) => track::run(a),
        Command::Report(a) => report::run(a),
        Command::Store(a) => store::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Cost(a) => cost::run(a),
        Command::Contract(a) => contract::run(a),
    }
}

/// The exit code of a failed command, by the class of its error: 2 when `verify`
/// could not make its check ([`verify::Unchecked`]), 1 otherwise (a `verify` that
/// found differences, [`verify::Differs`], and every other command's errors).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<verify::Differs>().is_some() {
        1
    } else if err.downcast_ref::<verify::Unchecked>().is_some() {
        2
    } else {
        1
    }
}
