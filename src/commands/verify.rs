//! `rentix verify`: the check is `rentix_publish::verify` (fix the publication
//! again from the store, compare every cell); this prints its answer. Exit codes: 0
//! identical, 1 different ([`Differs`]), 2 or 3 could not check ([`Unchecked`]: an
//! unreadable file, a bad methodology, a store error).

use crate::cli::VerifyArgs;
use anyhow::Context;
use rentix_publish::verify::{check, write_differences, Differs, Unchecked, VerifyRequest};

/// How many differences the error message lists (all of them go to `--out`).
const SHOWN: usize = 10;

pub(super) fn run(a: VerifyArgs) -> anyhow::Result<()> {
    let req = VerifyRequest {
        store: a.store.clone(),
        fixings: a.fixings.clone(),
        methodology: a.methodology.clone(),
    };
    let outcome = match check(&req) {
        Ok(o) => o,
        Err(e) => return Err(e.context(Unchecked)),
    };
    if let Some(out) = &a.out {
        write_differences(out, &outcome.differences).context(Unchecked)?;
    }
    let diffs = &outcome.differences;
    if !diffs.is_empty() {
        let shown: Vec<String> = diffs.iter().take(SHOWN).map(|d| format!("  {d}")).collect();
        return Err(Differs(format!(
            "{} difference(s) between {} and its recomputation from {}; the first:\n{}",
            diffs.len(),
            a.fixings.display(),
            a.store.display(),
            shown.join("\n")
        ))
        .into());
    }
    let also = if outcome.companions.is_empty() {
        String::new()
    } else {
        format!(" (and {})", outcome.companions.join(", "))
    };
    outln!(
        "verified {} published fixings of {}{also}: every one recomputes, cell by cell, from {} under {}",
        outcome.rows,
        a.fixings.display(),
        a.store.display(),
        outcome.version,
    );
    Ok(())
}
