//! `rentix store check`, `rentix store compact` and `rentix store migrate`.

use crate::cli::{StoreArgs, StoreCommand};
use rentix_store::{check_store, check_store_quick, compact, Compaction, Store};

pub(super) fn run(a: StoreArgs) -> anyhow::Result<()> {
    match a.command {
        StoreCommand::Check {
            store,
            deep: _,
            quick,
        } => {
            let s = Store::open(&store)?;
            // `--deep` is the default check's old name.
            let r = if quick {
                check_store_quick(&s)
            } else {
                check_store(&s)
            };
            outln!("{}", serde_json::to_string_pretty(&r)?);
            if !r.is_sound() {
                return Err(crate::commands::Finding(format!(
                    "{}: {} problem(s); the first: {}",
                    store.display(),
                    r.problems.len(),
                    r.problems[0]
                ))
                .into());
            }
            Ok(())
        }
        StoreCommand::Compact {
            store,
            min_files,
            batch_rows,
        } => {
            let s = compact(&store, Compaction::MinFiles(min_files as usize), batch_rows)?;
            outln!("{}", serde_json::to_string_pretty(&s)?);
            Ok(())
        }
        StoreCommand::Migrate { store, batch_rows } => {
            let s = compact(&store, Compaction::Migrate, batch_rows)?;
            outln!("{}", serde_json::to_string_pretty(&s)?);
            Ok(())
        }
    }
}
