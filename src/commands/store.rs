//! `rentix store check`.

use crate::cli::{StoreArgs, StoreCommand};
use anyhow::bail;
use rentix_ingest::{check_store, Store};

pub fn run(a: StoreArgs) -> anyhow::Result<()> {
    match a.command {
        StoreCommand::Check { store } => {
            let s = Store::open(&store)?;
            let r = check_store(&s);
            outln!("{}", serde_json::to_string_pretty(&r)?);
            if !r.is_sound() {
                bail!(
                    "{}: {} problem(s); the first: {}",
                    store.display(),
                    r.problems.len(),
                    r.problems[0]
                );
            }
            Ok(())
        }
    }
}
