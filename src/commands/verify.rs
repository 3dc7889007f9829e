//! `rentix verify`: the check is `rentix_publish::verify` (fix the publication
//! again from the store, compare every cell); this prints its answer. Exit codes: 0
//! identical, 1 different ([`Differs`]), 2 or 3 could not check ([`Unchecked`]: an
//! unreadable file, a bad methodology, a store error).

use crate::cli::VerifyArgs;
use anyhow::Context;
use rentix_publish::verify::{check, write_differences, Differs, Unchecked, VerifyRequest};

/// How many differences the error message lists (all of them go to `--out`).
const SHOWN: usize = 10;

pub(super) fn run(mut a: VerifyArgs) -> anyhow::Result<()> {
    a.fixings = crate::commands::through_link("--fixings", &a.fixings);
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
    // A publication killed part way leaves its journal beside the file: the
    // differences are its half, and the next publication finishes it (a hostile
    // round found 81 differences listed without a word of it).
    let pending = interrupted(&a.fixings)
        .map(|j| format!("\nnote: a publication of {} was interrupted and is pending ({} is its journal): the next `rentix index --out {}` finishes it, or removes what it had staged; verify after it", a.fixings.display(), j.display(), a.fixings.display()))
        .unwrap_or_default();
    if !diffs.is_empty() {
        let shown: Vec<String> = diffs.iter().take(SHOWN).map(|d| format!("  {d}")).collect();
        return Err(Differs(format!(
            "{} difference(s) between {} and its recomputation from {}; the first:\n{}{pending}",
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
        "verified {} published fixings of {}{also}: every one recomputes, cell by cell, from {} under {}{pending}",
        outcome.rows,
        a.fixings.display(),
        a.store.display(),
        outcome.version,
    );
    Ok(())
}

/// The journal a publication of `fixings` killed part way left beside it
/// (`<file>.publishing`), when there is one.
fn interrupted(fixings: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut name = fixings.file_name()?.to_os_string();
    name.push(".publishing");
    let journal = fixings.with_file_name(name);
    journal.exists().then_some(journal)
}
