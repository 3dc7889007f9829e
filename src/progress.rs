//! Progress display: a spinner on a terminal, nothing when stderr is piped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A spinner that counts rows, drawn only when stderr is a terminal.
pub(crate) fn spinner(message: &str) -> ProgressBar {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {human_pos} rows ({rate})")
            .map(|s| s.with_key("rate", rate))
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message.to_string());
    bar
}

/// Rows a second as a whole number with thousands separators (`73,922 rows/s`):
/// indicatif's own `{per_sec}` writes four decimals behind the separators
/// (`73,922.3999/s`).
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{} rows/s", grouped(state.per_sec()));
}

/// `x` rounded to a whole number, with `,` between thousands.
fn grouped(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A bar over a known number of steps, drawn only on a terminal.
pub(crate) fn steps(message: &str, len: u64) -> ProgressBar {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(message.to_string());
    bar
}

/// A spinner with the elapsed time, for long work without a count (fixing every
/// grade of a store), drawn only on a terminal.
pub(crate) fn working(message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_rate_is_a_whole_number_with_separators() {
        assert_eq!(super::grouped(73_922.399_9), "73,922");
        assert_eq!(super::grouped(999.5), "1,000");
        assert_eq!(super::grouped(0.2), "0");
    }
}
