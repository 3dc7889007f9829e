//! The files a publication writes beside its fixings file, named in one place.
//!
//! For fixings `<dir>/<stem>.<ext>` (`ext` `csv` or `parquet`):
//! `<stem>_forward.<ext>` (forward curves), `<stem>_tier_spreads.<ext>`,
//! `<stem>_tier_differentials.<ext>`, `<stem>_receipts.<ext>` (intraday votes),
//! `<stem>_quarantine.csv` (a one-shot run's refused rows), the restatement log and
//! the incremental state (`<stem>_intraday_state.json` beside an intraday CSV
//! publication), `<stem>.v<k>.<ext>` (a restated file's earlier versions)
//! and `<file>.sha256` (the digest of any of them, the restatement log's too).
//!
//! The restatement log and the state belong to one file, not to its stem: those of
//! CSV fixings keep the names they always had (`<stem>_restatements.csv`,
//! `<stem>_state.json`), those of another format carry it
//! (`<stem>.parquet_restatements.csv`, `<stem>.parquet_state.json`), so that
//! `a.csv` and `a.parquet` published side by side never share them. A Parquet
//! publication made before keeps reading and writing the stem's names while no
//! `<stem>.csv` stands beside it.

use std::path::{Path, PathBuf};

/// The companion files of one fixings file (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Companions {
    fixings: PathBuf,
    stem: String,
    ext: String,
}

impl Companions {
    /// The companions of `fixings` (a file without extension counts as CSV).
    pub fn of(fixings: &Path) -> Self {
        let text = |s: Option<&std::ffi::OsStr>| s.map(|s| s.to_string_lossy().to_string());
        Self {
            fixings: fixings.to_path_buf(),
            stem: text(fixings.file_stem()).unwrap_or_default(),
            ext: text(fixings.extension()).unwrap_or_else(|| "csv".into()),
        }
    }

    /// `<stem><suffix>.<ext>`, the fixings' own format.
    pub fn beside(&self, suffix: &str) -> PathBuf {
        self.named(suffix, &self.ext)
    }

    /// `<stem><suffix>.<ext>` in a format of its own.
    pub fn named(&self, suffix: &str, ext: &str) -> PathBuf {
        self.fixings
            .with_file_name(format!("{}{suffix}.{ext}", self.stem))
    }

    /// `<stem>_forward.<ext>`: the forward curves.
    pub fn forward(&self) -> PathBuf {
        self.beside("_forward")
    }

    /// `<stem>_tier_spreads.<ext>`.
    pub fn tier_spreads(&self) -> PathBuf {
        self.beside("_tier_spreads")
    }

    /// `<stem>_tier_differentials.<ext>`: the hedonic composites' tier differentials.
    pub fn tier_differentials(&self) -> PathBuf {
        self.beside("_tier_differentials")
    }

    /// `<stem>_receipts.<ext>`: an intraday run's votes per contributor.
    pub fn receipts(&self) -> PathBuf {
        self.beside("_receipts")
    }

    /// `<stem>_quarantine.csv`: a one-shot run's refused rows.
    pub fn quarantine(&self) -> PathBuf {
        self.named("_quarantine", "csv")
    }

    /// The restatement log: `<stem>_restatements.csv` beside CSV fixings,
    /// `<stem>.<ext>_restatements.csv` beside another format (see the module).
    pub fn restatements(&self) -> PathBuf {
        self.own("_restatements", "csv")
    }

    /// The state an incremental run continues from: `<stem>_state.json` beside CSV
    /// fixings, `<stem>.<ext>_state.json` beside another format (see the module).
    pub fn state(&self) -> PathBuf {
        self.own("_state", "json")
    }

    /// What an intraday CSV publication's next day continues from:
    /// `<stem>_intraday_state.json` (per format, as [`Companions::state`]).
    pub fn intraday_state(&self) -> PathBuf {
        self.own("_intraday_state", "json")
    }

    /// A file that belongs to these fixings alone: `<stem><suffix>.<ext>` for CSV
    /// fixings, `<stem>.<fixings ext><suffix>.<ext>` for another format, or the
    /// stem's name still, for a publication made before per-format names, when it
    /// exists, the per-format one does not and no `<stem>.csv` claims it.
    fn own(&self, suffix: &str, ext: &str) -> PathBuf {
        let stems = self.named(suffix, ext);
        if self.ext == "csv" {
            return stems;
        }
        let own = self
            .fixings
            .with_file_name(format!("{}.{}{suffix}.{ext}", self.stem, self.ext));
        if !own.exists() && stems.exists() && !self.named("", "csv").exists() {
            return stems;
        }
        own
    }

    /// The published fixings file whose companion `path` is named as (its forward
    /// curves, tier files, receipts, quarantine, restatement log or an earlier
    /// version), when that file is there with its digest beside it: a publication
    /// into `path` would be written over by that file's next one, and would write
    /// over what it keeps.
    pub fn owner(path: &Path) -> Option<PathBuf> {
        let stem = path.file_stem()?.to_string_lossy().to_string();
        let ext = path
            .extension()
            .map_or("csv".into(), |e| e.to_string_lossy().to_string());
        let mut owners: Vec<String> = Vec::new();
        // Written in the fixings' own format.
        for suffix in [
            "_forward",
            "_tier_spreads",
            "_tier_differentials",
            "_receipts",
        ] {
            owners.extend(stem.strip_suffix(suffix).map(|b| format!("{b}.{ext}")));
        }
        // Always CSV: a one-shot's quarantine, and the restatement log (a CSV's
        // `<stem>_restatements.csv`, another format's `<stem>.<ext>_restatements.csv`,
        // or the stem's own for a Parquet file published before per-format names).
        if ext == "csv" {
            if let Some(b) = stem.strip_suffix("_quarantine") {
                owners.extend([format!("{b}.csv"), format!("{b}.parquet")]);
            }
            if let Some(b) = stem.strip_suffix("_restatements") {
                if Path::new(b).extension().is_some() {
                    owners.push(b.to_string());
                } else {
                    owners.extend([format!("{b}.csv"), format!("{b}.parquet")]);
                }
            }
        }
        // `<stem>.v<k>.<ext>`: an earlier version of `<stem>.<ext>`.
        if let Some((base, k)) = stem.rsplit_once(".v") {
            if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                owners.push(format!("{base}.{ext}"));
            }
        }
        owners
            .into_iter()
            .filter(|o| !o.starts_with('.'))
            .map(|name| path.with_file_name(name))
            .find(|f| f != path && f.is_file() && crate::digest_path(f).is_file())
    }

    /// Version `k` of a restated file, kept beside it.
    pub fn version(&self, k: u32) -> PathBuf {
        self.beside(&format!(".v{k}"))
    }

    /// Whether the file name `name` is one of [`Companions::version`]'s.
    pub fn is_version(&self, name: &str) -> bool {
        name.strip_prefix(&format!("{}.v", self.stem))
            .and_then(|r| r.strip_suffix(&format!(".{}", self.ext)))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
}

#[cfg(test)]
mod tests {
    use super::Companions;
    use std::path::Path;

    /// A name is a published file's companion only in the format that file writes
    /// it in: `F_forward.parquet` is nobody's when only `F.csv` is published.
    #[test]
    fn an_owner_writes_its_companions_in_its_own_format() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["f.csv", "f.csv.sha256", "p.parquet", "p.parquet.sha256"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        let owner = |name: &str| {
            Companions::owner(&d.join(name))
                .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        };
        assert_eq!(owner("f_forward.csv").as_deref(), Some("f.csv"));
        assert_eq!(owner("f_forward.parquet"), None);
        assert_eq!(owner("f_restatements.csv").as_deref(), Some("f.csv"));
        assert_eq!(owner("f.v2.csv").as_deref(), Some("f.csv"));
        assert_eq!(owner("f_quarantine.csv").as_deref(), Some("f.csv"));
        assert_eq!(
            owner("p_tier_spreads.parquet").as_deref(),
            Some("p.parquet")
        );
        assert_eq!(owner("p_tier_spreads.csv"), None);
        assert_eq!(
            owner("p.parquet_restatements.csv").as_deref(),
            Some("p.parquet")
        );
        assert_eq!(owner("p_restatements.csv").as_deref(), Some("p.parquet"));
        assert_eq!(owner("my_forward.csv"), None);
        assert_eq!(owner("f.csv"), None);
    }

    #[test]
    fn names_beside_the_fixings() {
        let c = Companions::of(Path::new("out/fix.parquet"));
        assert_eq!(c.forward(), Path::new("out/fix_forward.parquet"));
        assert_eq!(c.tier_spreads(), Path::new("out/fix_tier_spreads.parquet"));
        assert_eq!(
            c.tier_differentials(),
            Path::new("out/fix_tier_differentials.parquet")
        );
        assert_eq!(c.receipts(), Path::new("out/fix_receipts.parquet"));
        assert_eq!(c.quarantine(), Path::new("out/fix_quarantine.csv"));
        assert_eq!(
            c.restatements(),
            Path::new("out/fix.parquet_restatements.csv")
        );
        assert_eq!(c.state(), Path::new("out/fix.parquet_state.json"));
        let csv = Companions::of(Path::new("out/fix.csv"));
        assert_eq!(csv.restatements(), Path::new("out/fix_restatements.csv"));
        assert_eq!(csv.state(), Path::new("out/fix_state.json"));
        assert_eq!(c.version(2), Path::new("out/fix.v2.parquet"));
        assert!(c.is_version("fix.v2.parquet") && c.is_version("fix.v13.parquet"));
        assert!(!c.is_version("fix.v.parquet") && !c.is_version("fix.v2.csv"));
        assert!(!c.is_version("fix_forward.parquet"));
        assert_eq!(
            Companions::of(Path::new("f")).forward(),
            Path::new("f_forward.csv")
        );
    }

    /// A Parquet publication made before per-format names keeps its stem's log and
    /// state while no CSV file of the stem stands beside it.
    #[test]
    fn a_parquet_publication_made_before_keeps_its_names() {
        let dir = tempfile::tempdir().unwrap();
        let c = Companions::of(&dir.path().join("a.parquet"));
        std::fs::write(dir.path().join("a_state.json"), "{}").unwrap();
        assert_eq!(c.state(), dir.path().join("a_state.json"));
        assert_eq!(
            c.restatements(),
            dir.path().join("a.parquet_restatements.csv")
        );
        std::fs::write(dir.path().join("a.csv"), "").unwrap();
        assert_eq!(c.state(), dir.path().join("a.parquet_state.json"));
    }
}
