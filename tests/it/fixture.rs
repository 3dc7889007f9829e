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

/// A simulated market of two years at about a quarter of the simulator's default
/// activity (300,000 rows: the default's 1.1 million made it and the tests over it
/// a third of the suite's time), its store and its default fixings. A test whose
/// answer depends on the default activity (the calibration's volatility) makes its
/// own market.
pub(crate) fn market() -> &'static Market {
    MARKET.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        rentix_ok(&[
            "simulate",
            "--out",
            p(&dir.join("sim")),
            "--seed",
            "11",
            "--rows",
            "300000",
        ]);
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
