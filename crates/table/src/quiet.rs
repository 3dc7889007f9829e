//! Panics that rentix catches and reports as an error of its own, kept off stderr:
//! polars' Parquet decoder trusts a damaged file's lengths and may panic on them;
//! the reader catches that and says the file is damaged, so the panic's own line
//! and backtrace would only alarm.

use std::cell::Cell;

thread_local! {
    /// Nesting depth of [`Quiet`] guards alive on this thread.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}

/// While alive, a panic on this thread is left out by the hook
/// [`quiet_caught_panics`] installs: the caller catches it and reports it. Only
/// the Parquet reader catches panics.
#[cfg(feature = "parquet")]
pub(crate) struct Quiet;

#[cfg(feature = "parquet")]
impl Quiet {
    pub(crate) fn on() -> Quiet {
        QUIET.with(|q| q.set(q.get() + 1));
        Quiet
    }
}

#[cfg(feature = "parquet")]
impl Drop for Quiet {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(q.get().saturating_sub(1)));
    }
}

/// Installs a panic hook that leaves out the panics rentix catches and reports as
/// errors (a damaged Parquet file's decoding) and hands every other panic to the
/// hook that was there. Call once, at the start of a program.
pub fn quiet_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if QUIET.with(Cell::get) == 0 {
            previous(info);
        }
    }));
}
