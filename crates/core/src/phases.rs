//! Where a run's time goes: with `RENTIX_PHASES` set in the environment, each
//! [`mark`] prints to standard error the seconds since the process started
//! ([`start`]) and the phase just finished. Unset, a mark costs one atomic load.
//! For profiling (docs/benchmarks.md); never part of a command's output.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock (the first call, or the first [`mark`], wins).
pub fn start() {
    START.get_or_init(|| std::env::var_os("RENTIX_PHASES").map(|_| Instant::now()));
}

/// Marks the end of the phase `what`, when `RENTIX_PHASES` is set.
pub fn mark(what: &str) {
    start();
    if let Some(Some(t0)) = START.get() {
        eprintln!("rentix: phase {what}: {:.3} s", t0.elapsed().as_secs_f64());
    }
}
