//! End-to-end tests of the `rentix` binary, one test binary for link time.

mod ingest_cli;
mod util;
