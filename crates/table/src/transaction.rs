//! Several files of one directory replaced as one transaction.
//!
//! Each file is first written whole to a unique temporary name beside its target
//! (`.<name>.XXXXXX.tmp`) and fsynced. The commit then writes a journal naming those
//! temporaries, each with its size and SHA-256 (`name<TAB>bytes<TAB>sha256`; the
//! journal itself written to a temporary, fsynced and renamed), renames each
//! temporary onto its target in the order staged, fsyncs the directory and removes
//! the journal. A process killed at any step leaves either no journal (nothing
//! visible changed; [`recover`] removes the orphaned temporaries) or a journal that
//! [`recover`] rolls forward (the renames still to do are done, each temporary
//! first checked against its size and SHA-256: one that differs is refused, never
//! put in place). The caller holds a
//! lock over the directory's files for the whole span, so no other writer runs
//! between the steps.
//!
//! `RENTIX_FAIL_AT` is a test hook, documented in docs/formats.md: when it names a
//! step ([`fail_point`]), the process aborts there as a kill would (no destructor
//! runs), or with a `:error` suffix that step fails with an I/O error (a full disk),
//! or with a `:signal` suffix the process sends itself SIGTERM there (a Ctrl-C), or
//! with a `:pause` suffix it waits two seconds there (for a test to act meanwhile).
//!
//! A file that only grows can be staged as an append ([`Transaction::stage_append`]):
//! its temporary holds the bytes to add, and the journal line names the target's
//! length before them (`+name<TAB>bytes<TAB>sha256<TAB>append=<length>`: the `+`
//! makes a release before appends refuse the journal rather than rename the
//! added bytes over the file). The commit (and a recovery, again) cuts the target
//! back to that length, which drops what an interrupted append wrote, appends the
//! temporary's bytes, fsyncs the target and removes the temporary: the history is
//! neither copied nor rewritten. Unlike a rename, an append is seen by a reader
//! that does not take the lock while it is written. A target is staged once in a
//! transaction.

use crate::{Result, TableError};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The test hook: aborts the process at the step `name` when `RENTIX_FAIL_AT` names
/// it, returns an injected I/O error when it names `name:error`, sends the
/// process SIGTERM there when it names `name:signal`, and waits two seconds there
/// when it names `name:pause`.
pub fn fail_point(name: &str) -> std::io::Result<()> {
    let Some(at) = std::env::var_os("RENTIX_FAIL_AT") else {
        return Ok(());
    };
    let at = at.to_string_lossy();
    if at == name {
        let _ = writeln!(
            std::io::stderr(),
            "rentix: RENTIX_FAIL_AT={name}: aborting here (test hook)"
        );
        std::process::abort();
    }
    if at.strip_suffix(":signal") == Some(name) {
        // As an operator's Ctrl-C would: SIGTERM to this process, then a pause long
        // enough for the handler to run before the step goes on.
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &std::process::id().to_string()])
            .status();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        return Ok(());
    }
    if at.strip_suffix(":pause") == Some(name) {
        std::thread::sleep(std::time::Duration::from_millis(2000));
        return Ok(());
    }
    if at.strip_suffix(":error") == Some(name) {
        return Err(std::io::Error::other(format!(
            "injected failure at {name} (RENTIX_FAIL_AT)"
        )));
    }
    Ok(())
}

/// The target a temporary name `.<target>.XXXXXX.tmp` stands for (six random
/// letters or digits, as tempfile makes them).
fn target_of(tmp_name: &str) -> Option<&str> {
    let inner = tmp_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (target, random) = inner.rsplit_once('.')?;
    (!target.is_empty() && random.len() == 6 && random.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some(target)
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn dir_of(path: &Path) -> &Path {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => Path::new("."),
    }
}

/// A writer that counts and hashes what goes through it.
struct Hashing<W: Write> {
    inner: W,
    bytes: u64,
    sha: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        self.sha.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The size and SHA-256 of the file at `path`.
fn size_and_sha(path: &Path) -> std::io::Result<(u64, String)> {
    let mut h = Hashing {
        inner: std::io::sink(),
        bytes: 0,
        sha: Sha256::new(),
    };
    std::io::copy(&mut File::open(path)?, &mut h)?;
    Ok((h.bytes, hex(&h.sha.finalize())))
}

/// Whether `target` holds what a journal line staged for it: `bytes` bytes with
/// SHA-256 `sha` (after its first `append_to` bytes, for an append). A target that
/// cannot be read holds nothing.
fn holds_staged(target: &Path, bytes: &str, sha: &str, append_to: Option<u64>) -> bool {
    let Ok(mut f) = File::open(target) else {
        return false;
    };
    let skip = append_to.unwrap_or(0);
    if std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(skip)).is_err() {
        return false;
    }
    let mut h = Hashing {
        inner: std::io::sink(),
        bytes: 0,
        sha: Sha256::new(),
    };
    std::io::copy(&mut f, &mut h).is_ok()
        && h.bytes.to_string() == bytes
        && hex(&h.sha.finalize()) == sha
}

/// A staged file: its temporary, its target, and the size and SHA-256 written.
#[derive(Debug)]
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    bytes: u64,
    sha256: String,
    /// For an append: the target's length before it.
    append_to: Option<u64>,
}

/// Appends the bytes of `tmp` to `target` cut back to `len` bytes (an interrupted
/// append's bytes past it dropped), fsyncs the target and removes `tmp`. The target
/// must be at least `len` bytes long, and exactly that outside a recovery.
fn append_into(tmp: &Path, target: &Path, len: u64, recovering: bool) -> Result<()> {
    let werr = |source| TableError::Write {
        path: target.to_path_buf(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(werr)?;
    let now = f.metadata().map_err(werr)?.len();
    if now < len || (now != len && !recovering) {
        return Err(TableError::Journal {
            path: target.to_path_buf(),
            detail: format!(
                "was staged to grow from {len} bytes and is now {now}: it was changed meanwhile; nothing more is appended"
            ),
        });
    }
    f.set_len(len).map_err(werr)?;
    std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).map_err(werr)?;
    std::io::copy(&mut File::open(tmp).map_err(werr)?, &mut f).map_err(werr)?;
    f.sync_all().map_err(werr)?;
    std::fs::remove_file(tmp).map_err(werr)
}

/// A set of files being replaced together in one directory.
#[derive(Debug)]
pub struct Transaction {
    journal: PathBuf,
    /// In the order staged.
    staged: Vec<Staged>,
}

impl Transaction {
    /// A transaction whose journal is `journal` (every target must be in its
    /// directory).
    pub fn new(journal: &Path) -> Self {
        Self {
            journal: journal.to_path_buf(),
            staged: Vec::new(),
        }
    }

    /// Writes `target`'s new content to a unique temporary beside it and fsyncs it;
    /// the target itself is untouched until [`Transaction::commit`].
    pub fn stage(
        &mut self,
        target: &Path,
        fill: impl FnOnce(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        let werr = |source| TableError::Write {
            path: target.to_path_buf(),
            source,
        };
        if self.staged.iter().any(|s| s.target == target) {
            return Err(werr(std::io::Error::other(
                "staged twice in one transaction",
            )));
        }
        let dir = dir_of(target);
        if dir != dir_of(&self.journal) {
            return Err(werr(std::io::Error::other(
                "a transaction's files must share one directory",
            )));
        }
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        if name.contains('\n') {
            return Err(werr(std::io::Error::other(
                "a file name with a line break cannot be journaled",
            )));
        }
        let tmp = crate::temp_file(target, dir).map_err(werr)?;
        let mut w = Hashing {
            inner: BufWriter::new(tmp),
            bytes: 0,
            sha: Sha256::new(),
        };
        fill(&mut w)?;
        let (bytes, sha256) = (w.bytes, hex(&w.sha.finalize()));
        let tmp = w.inner.into_inner().map_err(|e| werr(e.into_error()))?;
        tmp.as_file().sync_all().map_err(werr)?;
        // Kept: a commit renames it, a failure before the commit removes it (drop of
        // the transaction) and a kill leaves it for `recover`.
        let (_, path) = tmp.keep().map_err(|e| werr(e.error))?;
        self.staged.push(Staged {
            tmp: path,
            target: target.to_path_buf(),
            bytes,
            sha256,
            append_to: None,
        });
        Ok(())
    }

    /// Stages bytes to add at the end of `target`, which is `len` bytes long now
    /// (see the module): `fill` writes only the new bytes; the target is untouched
    /// until [`Transaction::commit`].
    pub fn stage_append(
        &mut self,
        target: &Path,
        len: u64,
        fill: impl FnOnce(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        self.stage(target, fill)?;
        if let Some(s) = self.staged.last_mut() {
            s.append_to = Some(len);
        }
        Ok(())
    }

    /// The SHA-256 (hex) of the bytes staged for `target`, once staged.
    pub fn staged_sha256(&self, target: &Path) -> Option<&str> {
        self.staged
            .iter()
            .rev()
            .find(|s| s.target == target)
            .map(|s| s.sha256.as_str())
    }

    /// Writes the journal: each temporary's name, size and SHA-256, in order.
    fn write_journal(&self) -> Result<()> {
        let jerr = |source| TableError::Write {
            path: self.journal.clone(),
            source,
        };
        let mut text = String::new();
        for s in &self.staged {
            text.push_str(&format!(
                "{}{}\t{}\t{}{}\n",
                if s.append_to.is_some() { "+" } else { "" },
                s.tmp.file_name().unwrap_or_default().to_string_lossy(),
                s.bytes,
                s.sha256,
                s.append_to
                    .map_or(String::new(), |n| format!("\tappend={n}"))
            ));
        }
        crate::write_atomic(&self.journal, |w| {
            w.write_all(text.as_bytes()).map_err(jerr)
        })?;
        sync_dir(dir_of(&self.journal)).map_err(jerr)
    }

    /// Makes every staged file its target's content, the last staged last.
    pub fn commit(mut self) -> Result<()> {
        let jerr = |source| TableError::Write {
            path: self.journal.clone(),
            source,
        };
        // An append's target must still be as long as when it was staged: checked
        // before the journal, so that a refusal leaves nothing to roll forward.
        for st in &self.staged {
            if let Some(len) = st.append_to {
                let now = std::fs::metadata(&st.target).map_err(|source| TableError::Read {
                    path: st.target.clone(),
                    source,
                })?;
                if now.len() != len {
                    return Err(TableError::Journal {
                        path: st.target.clone(),
                        detail: format!(
                            "was staged to grow from {len} bytes and is now {}: it was changed meanwhile; nothing was published",
                            now.len()
                        ),
                    });
                }
            }
        }
        self.write_journal()?;
        if let Err(e) = fail_point("publish:journal") {
            // Nothing put in place yet: the journal goes with the temporaries
            // (dropped with the transaction), and the targets are as they were.
            self.abandon(&[]);
            return Err(jerr(e));
        }
        let staged = std::mem::take(&mut self.staged);
        for (i, st) in staged.iter().enumerate() {
            let done = match st.append_to {
                Some(len) => append_into(&st.tmp, &st.target, len, false),
                None => std::fs::rename(&st.tmp, &st.target).map_err(|source| TableError::Write {
                    path: st.target.clone(),
                    source,
                }),
            };
            let name = st.target.file_name().unwrap_or_default().to_string_lossy();
            let failed = match done {
                Err(e) => Some((e, false)),
                Ok(()) => fail_point(&format!("publish:renamed:{name}"))
                    .err()
                    .map(|e| (jerr(e), st.append_to.is_none())),
            };
            if let Some((e, renamed)) = failed {
                // A failure (a full disk) while only appends were made is undone:
                // each appended target is cut back to its length before the
                // commit, and the transaction dropped whole. Once a file was
                // renamed into place the journal stays, and the next run rolls
                // the commit forward.
                if !renamed && staged[..i].iter().all(|s| s.append_to.is_some()) {
                    self.staged = staged;
                    self.abandon(&self.staged[..=i]);
                }
                return Err(e);
            }
        }
        sync_dir(dir_of(&self.journal)).map_err(jerr)?;
        std::fs::remove_file(&self.journal).map_err(jerr)?;
        Ok(())
    }

    /// Undoes a commit that put nothing in place but the appends of `appended`
    /// (whole or in part): each target is cut back to its length before them and
    /// the journal removed; the temporaries go when the transaction is dropped.
    fn abandon(&self, appended: &[Staged]) {
        for st in appended {
            let Some(len) = st.append_to else { continue };
            if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&st.target) {
                if f.metadata().is_ok_and(|m| m.len() > len) && f.set_len(len).is_ok() {
                    let _ = f.sync_all();
                }
            }
        }
        let _ = std::fs::remove_file(&self.journal);
        let _ = sync_dir(dir_of(&self.journal));
    }
}

impl Drop for Transaction {
    /// A transaction dropped uncommitted (an error while staging) removes its
    /// temporaries; the targets were never touched.
    fn drop(&mut self) {
        for s in &self.staged {
            let _ = std::fs::remove_file(&s.tmp);
        }
    }
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Targets that an interrupted commit had not yet renamed into place, now done.
    pub completed: Vec<PathBuf>,
    /// Orphaned temporaries of an uncommitted transaction, removed.
    pub removed: Vec<PathBuf>,
}

/// What the journal line `line` (of `journal`, in `dir`) leaves to do: its
/// temporary, target name and append point when the temporary is still there and
/// is what was staged; `None` when it is gone and its target holds what was staged
/// (renamed before the kill). Refused: a line that is not one, a temporary changed
/// since it was staged, and a gone one whose target is not what was staged.
fn to_finish(
    line: &str,
    journal: &Path,
    dir: &Path,
) -> Result<Option<(PathBuf, String, Option<u64>)>> {
    // `name`, or (journals since size and checksum) `name\tbytes\tsha256`;
    // an append `+name\tbytes\tsha256\tappend=<length>`.
    let mut parts = line.split('\t');
    let first = parts.next().unwrap_or_default();
    let (tmp_name, append) = match first.strip_prefix('+') {
        Some(n) => (n, true),
        None => (first, false),
    };
    let recorded = parts.next().zip(parts.next());
    let append_to = match parts.next().filter(|_| append) {
        None if append => {
            return Err(TableError::Journal {
                path: journal.to_path_buf(),
                detail: format!("the append of {tmp_name:?} names no length"),
            })
        }
        None => None,
        Some(a) => Some(
            a.strip_prefix("append=")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| TableError::Journal {
                    path: journal.to_path_buf(),
                    detail: format!("{a:?} is not an append's length"),
                })?,
        ),
    };
    let Some(target) = target_of(tmp_name) else {
        return Err(TableError::Write {
            path: journal.to_path_buf(),
            source: std::io::Error::other(format!(
                "the journal names {tmp_name:?}, not a temporary file"
            )),
        });
    };
    let tmp = dir.join(tmp_name);
    if !tmp.exists() {
        // Renamed into place before the kill, or removed since: the
        // target must then be what was staged.
        if let Some((bytes, sha)) = recorded {
            let target = dir.join(target);
            if !holds_staged(&target, bytes, sha, append_to) {
                return Err(TableError::Journal {
                    path: target.clone(),
                    detail: format!(
                        "an interrupted publication staged {tmp_name} to replace this file; the staged file is gone and this file is not what was staged ({bytes} bytes, SHA-256 {sha}): the publication cannot be finished, and nothing is put in place (the journal {} is left for a person to look at: restore the files from their earlier versions, or remove it and publish again)",
                        journal.display()
                    ),
                });
            }
        }
        return Ok(None);
    }
    if let Some((bytes, sha)) = recorded {
        let (n, actual) = size_and_sha(&tmp).map_err(|source| TableError::Read {
            path: tmp.clone(),
            source,
        })?;
        if n.to_string() != bytes || actual != sha {
            return Err(TableError::Journal {
                path: tmp.clone(),
                detail: format!(
                    "an interrupted publication staged this file as {bytes} bytes with SHA-256 {sha}; it is now {n} bytes with SHA-256 {actual}: it was changed since, and nothing is put in place (the journal {} and the temporaries are left for a person to look at)",
                    journal.display()
                ),
            });
        }
    }
    Ok(Some((tmp, target.to_string(), append_to)))
}

/// Finishes or undoes what a killed transaction left, under the caller's lock:
/// with a journal, renames each temporary it names that is still there onto its
/// target and removes the journal; then removes every temporary
/// `.<target>.XXXXXX.tmp` of a target for which `owned(target name)` holds.
pub fn recover(journal: &Path, owned: impl Fn(&str) -> bool) -> Result<Recovery> {
    let dir = dir_of(journal);
    let jerr = |source| TableError::Write {
        path: journal.to_path_buf(),
        source,
    };
    let mut done = Recovery::default();
    match std::fs::read_to_string(journal) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
            // Every temporary still there is checked before any is renamed: a
            // transaction is put in place whole or not at all.
            let mut todo = Vec::new();
            for line in lines {
                todo.extend(to_finish(line, journal, dir)?);
            }
            for (tmp, target, append_to) in todo {
                let target = dir.join(target);
                match append_to {
                    Some(len) => append_into(&tmp, &target, len, true)?,
                    None => std::fs::rename(&tmp, &target).map_err(|source| TableError::Write {
                        path: target.clone(),
                        source,
                    })?,
                }
                done.completed.push(target);
            }
            sync_dir(dir).map_err(jerr)?;
            std::fs::remove_file(journal).map_err(jerr)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(TableError::Read {
                path: journal.to_path_buf(),
                source,
            })
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|source| TableError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if target_of(&name).is_some_and(&owned) {
            let p = e.path();
            std::fs::remove_file(&p).map_err(|source| TableError::Write {
                path: p.clone(),
                source,
            })?;
            done.removed.push(p);
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(w: &mut dyn Write, bytes: &[u8]) -> Result<()> {
        w.write_all(bytes).map_err(|source| TableError::Write {
            path: PathBuf::from("test"),
            source,
        })
    }

    #[test]
    fn temporary_names_map_back_to_their_target() {
        assert_eq!(target_of(".f.v1.csv.Ab12xZ.tmp"), Some("f.v1.csv"));
        assert_eq!(target_of(".f.csv.tmp"), None);
        assert_eq!(target_of("f.csv.Ab12xZ.tmp"), None);
    }

    /// The digest a publication writes is the one staging worked out: the
    /// SHA-256 of the bytes staged, however they were written. FIPS 180-2's
    /// example: SHA-256("abc") = ba7816bf...20015ad.
    #[test]
    fn the_staged_digest_is_the_sha256_of_the_bytes_staged() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let mut tx = Transaction::new(&dir.path().join("a.csv.publishing"));
        assert_eq!(tx.staged_sha256(&a), None);
        tx.stage(&a, |w| {
            put(w, b"a")?;
            put(w, b"")?;
            put(w, b"bc")
        })
        .unwrap();
        assert_eq!(
            tx.staged_sha256(&a),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        tx.commit().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"abc");
    }

    #[test]
    fn a_commit_replaces_every_file_and_a_dropped_one_none() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        std::fs::write(&a, "old a").unwrap();
        let journal = dir.path().join("a.csv.publishing");
        let mut tx = Transaction::new(&journal);
        tx.stage(&a, |w| put(w, b"new a")).unwrap();
        drop(tx);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut tx = Transaction::new(&journal);
        tx.stage(&b, |w| put(w, b"new b")).unwrap();
        tx.stage(&a, |w| put(w, b"new a")).unwrap();
        tx.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// An append commits as the target's bytes followed by the new ones; a commit
    /// killed mid-append (half the new bytes written, the journal there) is rolled
    /// forward by a recovery to the same bytes, once, however often it runs.
    #[test]
    fn an_append_commits_and_an_interrupted_one_is_finished_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let d = dir.path().join("a.csv.sha256");
        std::fs::write(&a, "h\n1\n").unwrap();
        let journal = dir.path().join("a.csv.publishing");
        let mut tx = Transaction::new(&journal);
        tx.stage_append(&a, 4, |w| put(w, b"2\n")).unwrap();
        tx.stage(&d, |w| put(w, b"digest")).unwrap();
        tx.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "h\n1\n2\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // Staged, journaled, then killed with half of "3\n" appended.
        let mut tx = Transaction::new(&journal);
        tx.stage_append(&a, 6, |w| put(w, b"3\n")).unwrap();
        tx.write_journal().unwrap();
        let staged = std::mem::take(&mut tx.staged);
        std::fs::write(&a, "h\n1\n2\n3").unwrap();
        drop(tx);
        let line = std::fs::read_to_string(&journal).unwrap();
        assert!(
            line.starts_with("+.a.csv.") && line.trim_end().ends_with("\tappend=6"),
            "{line}"
        );
        let done = recover(&journal, |_| true).unwrap();
        assert_eq!(done.completed, vec![a.clone()]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "h\n1\n2\n3\n");
        assert!(!staged[0].tmp.exists() && !journal.exists());
        assert_eq!(recover(&journal, |_| true).unwrap(), Recovery::default());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "h\n1\n2\n3\n");
        // A target that changed length between staging and commit: refused.
        let mut tx = Transaction::new(&journal);
        tx.stage_append(&a, 8, |w| put(w, b"4\n")).unwrap();
        std::fs::write(&a, "h\n").unwrap();
        assert!(matches!(tx.commit(), Err(TableError::Journal { .. })));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "h\n");
        assert!(!journal.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // A target staged twice: refused at the second staging.
        let mut tx = Transaction::new(&journal);
        tx.stage_append(&a, 2, |w| put(w, b"5\n")).unwrap();
        assert!(tx.stage_append(&a, 2, |w| put(w, b"6\n")).is_err());
        assert!(tx.stage(&a, |w| put(w, b"x")).is_err());
    }

    #[test]
    fn recovery_rolls_a_journaled_commit_forward_and_sweeps_orphans() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(dir.path().join(".a.csv.Q1w2E3.tmp"), "new a").unwrap();
        std::fs::write(dir.path().join(".a_log.csv.R4t5Y6.tmp"), "orphan").unwrap();
        std::fs::write(dir.path().join(".other.csv.R4t5Y6.tmp"), "not ours").unwrap();
        let journal = dir.path().join("a.csv.publishing");
        std::fs::write(&journal, ".a.csv.Q1w2E3.tmp\n.a_gone.csv.Z9x8C7.tmp\n").unwrap();
        let r = recover(&journal, |t| t.starts_with("a")).unwrap();
        assert_eq!(r.completed, vec![a.clone()]);
        assert_eq!(r.removed.len(), 1);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert!(!journal.exists());
        assert!(dir.path().join(".other.csv.R4t5Y6.tmp").exists());
    }

    /// A directory where `a.csv` and `f.csv` ("old a", "old f") are staged ("new a",
    /// "new f") under the journal `f.csv.publishing`, not yet written.
    fn two_staged() -> (tempfile::TempDir, PathBuf, [PathBuf; 2], Transaction) {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("f.csv.publishing");
        let (a, b) = (dir.path().join("a.csv"), dir.path().join("f.csv"));
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old f").unwrap();
        let mut tx = Transaction::new(&journal);
        tx.stage(&a, |w| put(w, b"new a")).unwrap();
        tx.stage(&b, |w| put(w, b"new f")).unwrap();
        (dir, journal, [a, b], tx)
    }

    /// A killed commit's journal names each temporary's size and SHA-256: an intact
    /// one is rolled forward; one changed since it was staged (a flipped byte) is
    /// refused, naming it, and nothing is put in place.
    #[test]
    fn a_temporary_changed_since_it_was_staged_is_not_put_in_place() {
        for corrupt in [false, true] {
            let (_dir, journal, [a, b], tx) = two_staged();
            // Killed after the journal, before any rename.
            tx.write_journal().unwrap();
            let text = std::fs::read_to_string(&journal).unwrap();
            assert!(text.lines().all(|l| l.split('\t').count() == 3), "{text}");
            if corrupt {
                let tmp = &tx.staged[1].tmp;
                std::fs::write(tmp, "new g").unwrap();
            }
            std::mem::forget(tx);
            let r = recover(&journal, |_| true);
            if corrupt {
                let err = r.unwrap_err().to_string();
                assert!(err.contains("staged this file as 5 bytes"), "{err}");
                assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
                assert_eq!(std::fs::read_to_string(&b).unwrap(), "old f");
                assert!(journal.exists());
            } else {
                assert_eq!(r.unwrap().completed, vec![a.clone(), b.clone()]);
                assert_eq!(std::fs::read_to_string(&b).unwrap(), "new f");
                assert!(!journal.exists());
            }
        }
    }

    /// A killed commit's temporaries that are gone were renamed into place, or
    /// were removed by hand: recovery finished the rest and said so, and the next
    /// publication restated again (every restatement logged twice). A target whose
    /// temporary is gone must be what was staged: if it is not, nothing is put in
    /// place and the journal is left; when it is (killed after the last rename),
    /// the journal is removed.
    #[test]
    fn a_gone_temporary_whose_target_is_not_what_was_staged_stops_the_recovery() {
        for removed_by_hand in [true, false] {
            let (_dir, journal, [a, b], tx) = two_staged();
            tx.write_journal().unwrap();
            // Killed after the first rename.
            std::fs::rename(&tx.staged[0].tmp, &a).unwrap();
            if removed_by_hand {
                std::fs::remove_file(&tx.staged[1].tmp).unwrap();
            } else {
                std::fs::rename(&tx.staged[1].tmp, &b).unwrap();
            }
            std::mem::forget(tx);
            let r = recover(&journal, |_| true);
            if removed_by_hand {
                let err = r.unwrap_err().to_string();
                assert!(err.contains("f.csv") && err.contains("is gone"), "{err}");
                assert_eq!(std::fs::read_to_string(&b).unwrap(), "old f");
                assert!(journal.exists());
            } else {
                assert_eq!(r.unwrap().completed, Vec::<PathBuf>::new());
                assert!(!journal.exists());
            }
        }
    }
}
