//! End-to-end tests of the `rentix` binary, one test binary for link time.

mod backtest_cli;
mod build_graph;
mod compact;
mod confidentiality;
mod contract_lab;
mod cost_cli;
mod csvutil;
mod daily_cycle;
mod demo_cli;
mod fixture;
mod fuzz;
mod hedge_invariants;
mod hostile;
mod index_cli;
mod ingest_cli;
mod ingest_real;
mod methodology_vectors;
mod outside_readers;
mod point_in_time;
mod report_cli;
mod sim_calibration;
mod simulate_cli;
mod store_props;
mod tier_grades;
mod tiny_prints;
mod util;
