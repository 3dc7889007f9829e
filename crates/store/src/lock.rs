//! The store's write lock: a file `.lock` created exclusively, holding who took it
//! (process id, host, start time, command) so that a lock left by a killed run can
//! be told from a live one. A lock whose process is gone on this host is stale: it is
//! replaced, and the replacement is reported. The lock is released on drop, and by
//! [`release_all`] from a signal handler (Ctrl-C, SIGTERM).

use crate::error::{Result, StoreError};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LockOwner {
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name: a process id is checked only on the same host.
    pub host: String,
    /// RFC 3339, UTC.
    pub started: String,
    /// What the holder runs (`ingest`, `index --out fixings.csv`...), for a person.
    pub command: String,
}

impl LockOwner {
    fn me(command: &str) -> Self {
        Self {
            pid: std::process::id(),
            host: host_name(),
            started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            command: command.to_string(),
        }
    }

    /// Whether the owner is certainly gone: same host and no such process.
    fn is_dead(&self) -> bool {
        self.host == host_name()
            && Path::new("/proc/self").exists()
            && !Path::new(&format!("/proc/{}", self.pid)).exists()
    }

    fn describe(&self) -> String {
        format!(
            "process {} on host {} since {} ({})",
            self.pid, self.host, self.started, self.command
        )
    }
}

fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Locks held by this process, for [`release_all`].
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while a run publishes (moves its partitions into place and writes its run
/// record); true once a run of this process has published.
static PUBLISHING: Mutex<Option<&'static str>> = Mutex::new(None);

/// Directories of this process's own that an interrupt removes, for
/// [`release_all`].
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A directory this process made for itself alone (the one-shot's temporary
/// store): an interrupt removes it with the locks, where the signal's exit would
/// leave it behind (its owner's destructor never runs). Dropping the guard takes
/// it off the list; removing the directory is still its owner's.
#[derive(Debug)]
pub struct Scratch(PathBuf);

/// Registers `dir` as [`Scratch`].
pub fn scratch(dir: &Path) -> Scratch {
    SCRATCH
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(dir.to_path_buf());
    Scratch(dir.to_path_buf())
}

impl Drop for Scratch {
    fn drop(&mut self) {
        SCRATCH
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| *d != self.0);
    }
}

/// Forgets what this process committed so far: for a run whose commit was into a
/// store of its own ([`Scratch`]), which nobody else sees, so that an interrupt
/// after it does not say something was committed.
pub fn forget_committed() {
    *committing() = None;
}

/// The right to commit, for the commit's whole span: an ingest publishing its run,
/// or `index` renaming a publication into place. Set it to what was committed once
/// it is (a signal handler then says so).
pub fn committing() -> MutexGuard<'static, Option<&'static str>> {
    PUBLISHING.lock().unwrap_or_else(|e| e.into_inner())
}

/// For a signal handler before exiting: waits for a commit in progress to finish (a
/// run or a publication is committed whole or not at all), keeps any other from
/// starting, and removes every lock this process holds. Returns what this process
/// committed, if anything.
pub fn release_all() -> Option<&'static str> {
    let publishing = committing();
    let published = *publishing;
    // Never released: the process is about to exit.
    std::mem::forget(publishing);
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    for p in held.drain(..) {
        let _ = fs::remove_file(p);
    }
    let mut scratch = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    for d in scratch.drain(..) {
        let _ = fs::remove_dir_all(d);
    }
    published
}

/// Exclusive right to write a store, released on drop.
#[derive(Debug)]
pub struct StoreLock {
    path: PathBuf,
    owner: LockOwner,
    /// Set when a stale lock was replaced: whose it was.
    pub replaced_stale: Option<String>,
}

impl StoreLock {
    /// Takes the lock at `path` for `command`.
    pub fn acquire(path: &Path, command: &str) -> Result<Self> {
        let owner = LockOwner::me(command);
        let mut replaced_stale = None;
        for _ in 0..2 {
            // Created and registered under the registry's lock: a signal handler
            // ([`release_all`]) waits for both, so it never finds the file there and
            // not yet registered (writing the owner and the fsync take milliseconds,
            // and a SIGTERM there used to leave the lock behind).
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            let created = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path);
            if created.is_ok() {
                held.push(path.to_path_buf());
            }
            drop(held);
            match created {
                Ok(mut f) => {
                    let json = serde_json::to_string(&owner).unwrap_or_default();
                    if let Err(source) = f.write_all(json.as_bytes()).and_then(|_| f.sync_all()) {
                        let _ = fs::remove_file(path);
                        if let Ok(mut held) = HELD.lock() {
                            held.retain(|p| p != path);
                        }
                        return Err(StoreError::Write {
                            path: path.to_path_buf(),
                            source,
                        });
                    }
                    return Ok(Self {
                        path: path.to_path_buf(),
                        owner,
                        replaced_stale,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder: Option<LockOwner> = fs::read_to_string(path)
                        .ok()
                        .and_then(|t| serde_json::from_str(&t).ok());
                    match holder {
                        Some(h) if h.is_dead() => {
                            replaced_stale = Some(format!(
                                "replaced a stale lock left by {} (that process is gone)",
                                h.describe()
                            ));
                            let _ = fs::remove_file(path);
                        }
                        Some(h) => {
                            return Err(StoreError::Locked {
                                path: path.to_path_buf(),
                                detail: format!(
                                    "locked by {}; wait for it to finish (if that process is gone, delete {})",
                                    h.describe(),
                                    path.display()
                                ),
                            })
                        }
                        None => {
                            return Err(StoreError::Locked {
                                path: path.to_path_buf(),
                                detail: format!(
                                    "locked by a run that recorded no owner (an older rentix, or a run killed while taking the lock); if no ingest is running, delete {}",
                                    path.display()
                                ),
                            })
                        }
                    }
                }
                Err(source) => {
                    return Err(StoreError::Write {
                        path: path.to_path_buf(),
                        source,
                    })
                }
            }
        }
        Err(StoreError::Store {
            path: path.to_path_buf(),
            detail: "another run took the lock while a stale one was being replaced".into(),
        })
    }

    /// Fails unless the lock file still names this run: a lock deleted (or replaced)
    /// while the run was live means another run may be writing, and nothing must be
    /// committed.
    pub fn verify(&self) -> Result<()> {
        let now: Option<LockOwner> = fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if now.as_ref() != Some(&self.owner) {
            return Err(StoreError::Store {
                path: self.path.clone(),
                detail: "the lock was removed or taken over while this run was live; nothing was committed (run again)".into(),
            });
        }
        Ok(())
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        // Only remove our own lock, not one another run took after ours was deleted.
        if self.verify().is_ok() {
            let _ = fs::remove_file(&self.path);
        }
        if let Ok(mut held) = HELD.lock() {
            held.retain(|p| p != &self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_lock_is_refused_with_its_owner_a_dead_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".lock");
        let a = StoreLock::acquire(&p, "ingest").unwrap();
        let err = StoreLock::acquire(&p, "ingest").unwrap_err().to_string();
        assert!(
            err.contains(&format!("process {}", std::process::id())),
            "{err}"
        );
        drop(a);
        assert!(!p.exists());
        // A lock whose process is gone (pid beyond pid_max) on this host.
        let dead = LockOwner {
            pid: 4_999_999,
            ..LockOwner::me("ingest")
        };
        std::fs::write(&p, serde_json::to_string(&dead).unwrap()).unwrap();
        let b = StoreLock::acquire(&p, "ingest").unwrap();
        assert!(b
            .replaced_stale
            .as_deref()
            .unwrap_or("")
            .contains("4999999"));
        // Deleting a live lock by hand: the run notices before committing.
        std::fs::remove_file(&p).unwrap();
        assert!(b.verify().is_err());
    }
}
