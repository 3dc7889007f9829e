//! One simulated market, ingested and indexed once, shared by the tests that need it.

use crate::util::{p, rentix_ok};
use std::path::PathBuf;
use std::sync::OnceLock;

pub(crate) struct Market {
    pub dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Market {
    pub(crate) fn sim(&self, f: &str) -> PathBuf {
        self.dir.join("sim").join(f)
    }
    pub(crate) fn fixings(&self) -> PathBuf {
        self.dir.join("fixings.csv")
    }
    pub(crate) fn store(&self) -> PathBuf {
        self.dir.join("store")
    }
}

static MARKET: OnceLock<Market> = OnceLock::new();

/// The default simulated market (two years), its store and its default fixings.
pub(crate) fn market() -> &'static Market {
    MARKET.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        rentix_ok(&["simulate", "--out", p(&dir.join("sim")), "--seed", "11"]);
        rentix_ok(&[
            "ingest",
            "--json",
            "--store",
            p(&dir.join("store")),
            p(&dir.join("sim/observations.csv")),
        ]);
        rentix_ok(&[
            "index",
            "--store",
            p(&dir.join("store")),
            "--out",
            p(&dir.join("fixings.csv")),
        ]);
        Market { dir, _tmp: tmp }
    })
}
