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
