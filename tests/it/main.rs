//! End-to-end tests of the `rentix` binary, one test binary for link time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

mod backtest_cli;
mod build_graph;
mod checksums;
mod compact;
mod confidentiality;
mod contract_lab;
mod cost_cli;
mod csvutil;
mod daily_cycle;
mod decision_surfaces;
mod demo_cli;
mod exit_codes;
mod fixture;
mod fuzz;
mod health;
mod hedge_invariants;
mod help_examples;
mod hostile;
mod incremental;
mod index_cli;
mod ingest_cli;
mod ingest_real;
mod integrity;
mod intraday;
mod intraday_publication;
mod messages;
mod methodology_vectors;
mod migrate;
mod outside_readers;
mod point_in_time;
mod publication;
mod readme_commands;
mod report_cli;
mod revision;
mod run_ids;
mod settle_cli;
mod sim_calibration;
mod simulate_cli;
mod store_props;
mod tier_grades;
mod tiny_prints;
mod util;
mod verify_cli;
