//! Continuing an intraday CSV publication by appending a run's stamps to its
//! bytes (`crate::intraday_publish`'s module doc): what the file must be for that,
//! and the state that lets a day's publication cost the day.
//!
//! Beside a CSV publication, `<stem>_intraday_state.json` records what the next
//! publication needs: the stamps and valued stamps held, the last stamp and grade,
//! the methodology version and, for the file and its receipts, their length and
//! their SHA-256 saved mid-way ([`rentix_table::SavedSha256`]). A publication
//! continues from it when it agrees with everything it can check without reading
//! the history: the digest sidecar (the saved hashes finish to the digests it
//! records), each file's length, the bytes past each file's last whole 64-byte
//! block, and the file's last row (its stamp, grade and methodology version).
//! The new rows are appended in place ([`rentix_table::Transaction::stage_append`])
//! and the digests continued from the saved state: neither the history's bytes
//! nor its rows are read. An edit inside the history that keeps the file's length
//! is not seen by the publication, and is never blessed by it either: the digests
//! it writes continue the hash of the bytes as they were published, so `rentix
//! verify` and `sha256sum -c` still name the file.
//!
//! Without the state, or when it disagrees, the file is read once as bytes (never
//! parsed as values): its hash must be its digest, its rows in stamp order under
//! the methodology's version; then the rows are appended the same way. Otherwise
//! `None`: the publication reads the file whole and writes it again.

use crate::error::IndexError;
use crate::intraday::{intraday_table, receipts_table, IntradayMethodology, IntradayResult};
use crate::intraday_publish::{recorded_for, stage_digest, IntradayPublication};
use chrono::{DateTime, Utc};
use rentix_table::{ResumableSha256, SavedSha256, Table, Transaction};
use std::io::{BufRead, Read, Seek};
use std::path::{Path, PathBuf};

/// The state file's layout version.
const FORMAT: u32 = 1;

/// At most this many bytes of a state file are read.
const MAX_STATE_BYTES: u64 = 64 * 1024;

/// `<stem>_intraday_state.json` (see the module).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct AppendState {
    format: u32,
    methodology_version: String,
    stamps: usize,
    valued: usize,
    /// The last row's stamp (RFC 3339) and grade.
    last_stamp: DateTime<Utc>,
    last_grade: String,
    fixings: SavedSha256,
    receipts: Option<SavedSha256>,
    /// The store's last ingest run when this publication read it (absent in
    /// states written before it was recorded, and for a file not published from
    /// a store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    store_through: Option<String>,
    /// [`rentix_store::runs_sha256`] of the store's runs through that run (absent
    /// in states written before it was recorded: the run is then known by its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    store_runs_sha256: Option<String>,
}

/// The store's last ingest run when the CSV intraday publication `out` was last
/// published, as its state records it, and the digest of the runs through it
/// when recorded: `None` without a state, with a state its digest sidecar does
/// not record, or one written before the run was recorded.
pub fn recorded_store_run(out: &Path) -> Option<(String, Option<String>)> {
    let path = state_path(out);
    let text = rentix_core::read_text(&path, MAX_STATE_BYTES).ok()?;
    let mut h = ResumableSha256::new();
    h.update(text.as_bytes());
    if recorded_for(&rentix_fixings::digest_path(out), &path)? != h.hex() {
        return None;
    }
    let state = serde_json::from_str::<AppendState>(&text).ok()?;
    Some((state.store_through?, state.store_runs_sha256))
}

/// The state file beside the intraday CSV publication `out`.
pub(crate) fn state_path(out: &Path) -> PathBuf {
    rentix_fixings::Companions::of(out).intraday_state()
}

/// What a published file is, as the append needs it.
struct Prior {
    stamps: usize,
    valued: usize,
    last: DateTime<Utc>,
    fixings: ResumableSha256,
    receipts: Option<ResumableSha256>,
}

/// Stages a CSV table whole (header and rows) and returns the hash of its bytes.
pub(crate) fn stage_csv(
    tx: &mut Transaction,
    path: &Path,
    t: &Table,
) -> Result<ResumableSha256, IndexError> {
    let mut bytes = t.csv_header()?;
    bytes.extend_from_slice(&t.csv_rows()?);
    let mut h = ResumableSha256::new();
    h.update(&bytes);
    tx.stage(path, |w| write_all(w, path, &bytes))?;
    Ok(h)
}

fn write_all(w: &mut dyn std::io::Write, path: &Path, bytes: &[u8]) -> rentix_table::Result<()> {
    w.write_all(bytes)
        .map_err(|source| rentix_table::TableError::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// What the state of a publication records (see the module).
pub(crate) struct Published<'a> {
    pub stamps: usize,
    pub valued: usize,
    /// The last row's stamp and grade; `None` for a file of no row (no state).
    pub last: Option<(DateTime<Utc>, &'a str)>,
    pub fixings: &'a ResumableSha256,
    pub receipts: Option<&'a ResumableSha256>,
    /// The store's last ingest run the publication read.
    pub store_through: Option<&'a crate::intraday::StoreMark>,
}

/// Stages the state file of `out` (none for a file of no row), then its digest
/// sidecar: the file's digest, its receipts' and its state's.
pub(crate) fn stage_state_and_digest(
    tx: &mut Transaction,
    out: &Path,
    m: &IntradayMethodology,
    p: &Published<'_>,
) -> Result<(), IndexError> {
    let state = stage_state(tx, out, m, p)?;
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    let receipts_digest = p.receipts.map(ResumableSha256::hex);
    stage_digest(
        tx,
        out,
        &p.fixings.hex(),
        receipts_digest
            .as_deref()
            .map(|h| (receipts_path.as_path(), h)),
        state.as_ref().map(|(p, h)| (p.as_path(), h.as_str())),
    )
}

/// Stages the state file of `out` and returns its path and the SHA-256 of its
/// bytes (the digest sidecar records it); a file of no row has none.
fn stage_state(
    tx: &mut Transaction,
    out: &Path,
    m: &IntradayMethodology,
    p: &Published<'_>,
) -> Result<Option<(PathBuf, String)>, IndexError> {
    let Some((last_stamp, last_grade)) = p.last else {
        return Ok(None);
    };
    let state = AppendState {
        format: FORMAT,
        methodology_version: m.version.clone(),
        stamps: p.stamps,
        valued: p.valued,
        last_stamp,
        last_grade: last_grade.to_string(),
        fixings: p.fixings.save(),
        receipts: p.receipts.map(ResumableSha256::save),
        store_through: p.store_through.map(|s| s.run.clone()),
        store_runs_sha256: p.store_through.map(|s| s.runs_sha256.clone()),
    };
    let path = state_path(out);
    let mut text = serde_json::to_string_pretty(&state)
        .map_err(|e| IndexError::Data(format!("{}: {e}", path.display())))?;
    text.push('\n');
    tx.stage(&path, |w| write_all(w, &path, text.as_bytes()))?;
    let mut h = ResumableSha256::new();
    h.update(text.as_bytes());
    Ok(Some((path, h.hex())))
}

/// The last `n` bytes of `path` (fewer in a shorter file).
fn tail(path: &Path, n: u64) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    f.seek(std::io::SeekFrom::Start(len.saturating_sub(n)))?;
    let mut v = Vec::with_capacity(n.min(len) as usize);
    f.take(n).read_to_end(&mut v)?;
    Ok(v)
}

/// Whether `path` is `saved.bytes` long and ends with its saved bytes past the
/// last whole block, read from its end only.
fn ends_as_saved(path: &Path, h: &ResumableSha256, saved: &SavedSha256) -> Option<Vec<u8>> {
    let len = std::fs::metadata(path).ok()?.len();
    if len != h.len() {
        return None;
    }
    let end = tail(path, 64 * 1024).ok()?;
    let buffered: String = end[end.len() - (len % 64) as usize..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (buffered == saved.buffered).then_some(end)
}

/// The cells of the last line of `end` (a file's last bytes), split at commas:
/// `None` when the line holds a quote or the file does not end a line.
fn last_row(end: &[u8]) -> Option<Vec<String>> {
    let body = end.strip_suffix(b"\n")?;
    let line = &body[body.iter().rposition(|b| *b == b'\n')? + 1..];
    if line.contains(&b'"') {
        return None;
    }
    Some(
        std::str::from_utf8(line)
            .ok()?
            .split(',')
            .map(str::to_string)
            .collect(),
    )
}

fn column(name: &str) -> usize {
    rentix_fixings::intraday::INTRADAY_COLUMNS
        .iter()
        .position(|c| *c == name)
        .unwrap_or(usize::MAX)
}

/// The published file as its state records it, when the state agrees with all
/// that can be checked without reading the history (see the module).
fn from_state(out: &Path, m: &IntradayMethodology, receipts_path: &Path) -> Option<Prior> {
    let path = state_path(out);
    let text = rentix_core::read_text(&path, MAX_STATE_BYTES).ok()?;
    let digest = rentix_fixings::digest_path(out);
    // The sidecar records the state's bytes too: an edited state is not used.
    let mut h = ResumableSha256::new();
    h.update(text.as_bytes());
    if recorded_for(&digest, &path)? != h.hex() {
        return None;
    }
    let st: AppendState = serde_json::from_str(&text).ok()?;
    if st.format != FORMAT || st.methodology_version != m.version || st.stamps == 0 {
        return None;
    }
    let fixings = ResumableSha256::resume(&st.fixings)?;
    if rentix_fixings::read_digest(&digest).ok()?? != fixings.hex() {
        return None;
    }
    let end = ends_as_saved(out, &fixings, &st.fixings)?;
    let row = last_row(&end)?;
    let cell = |name: &str| row.get(column(name)).map(String::as_str);
    let stamp = DateTime::parse_from_rfc3339(cell("fixed_at")?).ok()?;
    if row.len() != rentix_fixings::intraday::INTRADAY_COLUMNS.len()
        || stamp != st.last_stamp
        || cell("grade")? != st.last_grade
        || cell("methodology_version")? != m.version
    {
        return None;
    }
    let receipts = match (m.intraday.publish_receipts, &st.receipts) {
        (false, _) => None,
        (true, None) => return None,
        (true, Some(saved)) => {
            let h = ResumableSha256::resume(saved)?;
            if recorded_for(&digest, receipts_path)? != h.hex() {
                return None;
            }
            ends_as_saved(receipts_path, &h, saved)?;
            Some(h)
        }
    };
    Some(Prior {
        stamps: st.stamps,
        valued: st.valued,
        last: st.last_stamp,
        fixings,
        receipts,
    })
}

/// Whether `path` is a symbolic link or one of several names of its bytes.
fn linked(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if meta.file_type().is_symlink() {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() > 1
    }
    #[cfg(not(unix))]
    false
}

/// What [`scan`] learnt of a file.
struct Scanned {
    hash: ResumableSha256,
    rows: usize,
    valued: usize,
    last: Option<DateTime<Utc>>,
}

/// One pass over a CSV file's bytes: its hash, and of its rows (never parsed as
/// values) how many, how many with a value, and the last stamp; `None` when the
/// first line is not `header`, a row is not as this crate writes them (a quote,
/// another number of fields), or, with `fixings`, the rows are not in strictly
/// increasing (stamp, grade) order under the version given.
fn scan(path: &Path, header: &[u8], fixings: Option<&str>) -> Result<Option<Scanned>, IndexError> {
    let io = |source| {
        IndexError::from(rentix_table::TableError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut rd = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::with_capacity(512);
    let mut h = ResumableSha256::new();
    if rd.read_until(b'\n', &mut line).map_err(io)? == 0 || line != header {
        return Ok(None);
    }
    h.update(&line);
    let (stamp, grade, value, version) = (
        column("fixed_at"),
        column("grade"),
        column("value"),
        column("methodology_version"),
    );
    let (mut rows, mut valued) = (0usize, 0usize);
    let mut last: Vec<u8> = Vec::new();
    loop {
        line.clear();
        if rd.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        h.update(&line);
        rows += 1;
        let Some(wanted) = fixings else {
            continue;
        };
        if line.contains(&b'"') || !line.ends_with(b"\n") {
            return Ok(None);
        }
        let cells: Vec<&[u8]> = line[..line.len() - 1].split(|b| *b == b',').collect();
        if cells.len() != rentix_fixings::intraday::INTRADAY_COLUMNS.len() {
            return Ok(None);
        }
        if !cells[value].is_empty() {
            valued += 1;
        }
        // (stamp, grade) as bytes: stamps are written in one fixed-width layout.
        let key = [cells[stamp], b",", cells[grade]].concat();
        if key <= last || cells[version] != wanted.as_bytes() {
            return Ok(None);
        }
        last = key;
    }
    let last_stamp = std::str::from_utf8(&last)
        .ok()
        .and_then(|k| k.split(',').next())
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    Ok(Some(Scanned {
        hash: h,
        rows,
        valued,
        last: last_stamp,
    }))
}

/// The published file read once as bytes (see the module).
fn from_scan(
    out: &Path,
    m: &IntradayMethodology,
    receipts_path: &Path,
    headers: (&[u8], &[u8]),
) -> Result<Option<Prior>, IndexError> {
    let digest = rentix_fixings::digest_path(out);
    let Some(recorded) = rentix_fixings::read_digest(&digest)? else {
        return Ok(None);
    };
    let Some(Scanned {
        hash: fixings,
        rows: stamps,
        valued,
        last: Some(last),
    }) = scan(out, headers.0, Some(&m.version))?
    else {
        return Ok(None);
    };
    if fixings.hex() != recorded {
        return Ok(None);
    }
    let receipts = if m.intraday.publish_receipts {
        let Some(recorded) = recorded_for(&digest, receipts_path) else {
            return Ok(None);
        };
        if !receipts_path.is_file() {
            return Ok(None);
        }
        match scan(receipts_path, headers.1, None)? {
            Some(s) if s.hash.hex() == recorded => Some(s.hash),
            _ => return Ok(None),
        }
    } else {
        None
    };
    Ok(Some(Prior {
        stamps,
        valued,
        last,
        fixings,
        receipts,
    }))
}

/// Continues the CSV publication `out` with the run `r` (its receipts in
/// publication order) by appending its stamps, or `None` when the file cannot be
/// continued so (see the module).
pub(crate) fn append(
    out: &Path,
    m: &IntradayMethodology,
    r: &IntradayResult,
    journal: &Path,
) -> Result<Option<IntradayPublication>, IndexError> {
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    // An append writes into the file itself: a link (symbolic, or a second name
    // of the same bytes, as a snapshot keeps) is written again whole instead, as
    // before, so that what it points at or shares is not changed.
    if [out, receipts_path.as_path()].iter().any(|p| linked(p)) {
        return Ok(None);
    }
    let mut fresh = r.fixings.clone();
    fresh.sort_by(|a, b| (a.fixed_at, &a.grade).cmp(&(b.fixed_at, &b.grade)));
    let new = IntradayResult {
        fixings: fresh,
        receipts: r.receipts.clone(),
        unheard_books: Vec::new(),
        store_through: r.store_through.clone(),
    };
    let table = intraday_table(&new, m);
    let receipts = receipts_table(&new);
    let (read_back, prior) = match from_state(out, m, &receipts_path) {
        Some(p) => (false, p),
        None => {
            let headers = (&table.csv_header()?[..], &receipts.csv_header()?[..]);
            match from_scan(out, m, &receipts_path, headers)? {
                Some(p) => (true, p),
                None => return Ok(None),
            }
        }
    };
    if new
        .fixings
        .first()
        .is_some_and(|f| f.fixed_at <= prior.last)
    {
        return Ok(None);
    }
    let Some(last) = new.fixings.last() else {
        return Ok(None);
    };
    let mut tx = Transaction::new(journal);
    let mut fixings = prior.fixings;
    let rows = table.csv_rows()?;
    tx.stage_append(out, fixings.len(), |w| write_all(w, out, &rows))?;
    fixings.update(&rows);
    let mut receipts_hash = prior.receipts;
    if let Some(h) = receipts_hash.as_mut() {
        let rows = receipts.csv_rows()?;
        tx.stage_append(&receipts_path, h.len(), |w| {
            write_all(w, &receipts_path, &rows)
        })?;
        h.update(&rows);
    }
    let added = new.fixings.len();
    let stamps = prior.stamps + added;
    let valued = prior.valued + new.fixings.iter().filter(|f| f.value.is_some()).count();
    stage_state_and_digest(
        &mut tx,
        out,
        m,
        &Published {
            stamps,
            valued,
            last: Some((last.fixed_at, &last.grade)),
            fixings: &fixings,
            receipts: receipts_hash.as_ref(),
            store_through: r.store_through.as_ref(),
        },
    )?;
    crate::intraday_publish::commit_whole(tx)?;
    Ok(Some(IntradayPublication {
        stamps,
        valued,
        added,
        digest: rentix_fixings::digest_path(out),
        receipts: receipts_hash.map(|_| receipts_path),
        unheard_books: r.unheard_books.clone(),
        appended: Some(read_back),
        ..Default::default()
    }))
}

/// What is wrong with the state beside the intraday CSV publication `out`
/// (`<stem>_intraday_state.json`), read against the files as they stand: one
/// sentence each; none when there is no state or it describes them exactly. For
/// `rentix verify`, which reads every byte anyway: a publication only checks
/// what it can without reading the history (see the module).
pub fn state_problems(out: &Path) -> Result<Vec<String>, IndexError> {
    let path = state_path(out);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut problems = Vec::new();
    let text = match rentix_core::read_text(&path, MAX_STATE_BYTES) {
        Ok(t) => t,
        Err(e) => return Ok(vec![format!("cannot be read: {e}")]),
    };
    let mut h = ResumableSha256::new();
    h.update(text.as_bytes());
    match recorded_for(&rentix_fixings::digest_path(out), &path) {
        Some(r) if r == h.hex() => {}
        Some(r) => problems.push(format!(
            "hashes to {}, and the digest sidecar records {r}: it was edited since it was published",
            h.hex()
        )),
        None => problems.push("the digest sidecar records no SHA-256 for it".into()),
    }
    let st: AppendState = match serde_json::from_str(&text) {
        Ok(st) => st,
        Err(e) => {
            problems.push(format!("is not a state: {e}"));
            return Ok(problems);
        }
    };
    // Against what was published (the sidecar's digests): the saved hashes must
    // finish to them. Against the files: only where a file is still what was
    // published (an edited file is a difference of its own).
    let digest = rentix_fixings::digest_path(out);
    let receipts = rentix_fixings::Companions::of(out).receipts();
    let files = [
        (
            out.to_path_buf(),
            Some(&st.fixings),
            rentix_fixings::read_digest(&digest)?,
        ),
        (
            receipts.clone(),
            st.receipts.as_ref(),
            recorded_for(&digest, &receipts),
        ),
    ];
    for (file, saved, recorded) in files {
        let (Some(saved), Some(recorded)) = (saved, recorded) else {
            continue;
        };
        let Some(resumed) = ResumableSha256::resume(saved) else {
            problems.push(format!(
                "saves a hash of {} that is no hash",
                file.display()
            ));
            continue;
        };
        if resumed.hex() != recorded {
            problems.push(format!(
                "saves a hash of {} that finishes to {}, and the sidecar records {recorded}",
                file.display(),
                resumed.hex()
            ));
            continue;
        }
        if !file.exists() {
            continue;
        }
        let actual = hash_file(&file)?;
        if actual.hex() == recorded && actual.save() != *saved {
            problems.push(format!(
                "saves a hash of {} that is not that of its {} bytes",
                file.display(),
                actual.len()
            ));
        }
    }
    let published = rentix_fixings::read_digest(&digest)?;
    match scan(out, &first_line(out)?, Some(&st.methodology_version))? {
        Some(f) if Some(f.hash.hex()) != published => {}
        None if Some(hash_file(out)?.hex()) != published => {}
        None => problems.push(format!(
            "describes {} as appendable, and its rows are not all in stamp order under {}",
            out.display(),
            st.methodology_version
        )),
        Some(f) => {
            if (f.rows, f.valued, f.last) != (st.stamps, st.valued, Some(st.last_stamp)) {
                problems.push(format!(
                    "says {} stamps, {} with a value, the last at {}; the file holds {}, {}, the last at {}",
                    st.stamps,
                    st.valued,
                    st.last_stamp.to_rfc3339(),
                    f.rows,
                    f.valued,
                    f.last.map_or("(none)".into(), |t| t.to_rfc3339())
                ));
            }
        }
    }
    Ok(problems)
}

fn read_err(path: &Path, source: std::io::Error) -> IndexError {
    IndexError::from(rentix_table::TableError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The hash of every byte of `path`, read in 1 MiB pieces.
fn hash_file(path: &Path) -> Result<ResumableSha256, IndexError> {
    let mut f = std::fs::File::open(path).map_err(|e| read_err(path, e))?;
    let mut h = ResumableSha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| read_err(path, e))?;
        if n == 0 {
            return Ok(h);
        }
        h.update(&buf[..n]);
    }
}

/// The first line of `path`, its line break included.
fn first_line(path: &Path) -> Result<Vec<u8>, IndexError> {
    let mut first = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| read_err(path, e))?;
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(|e| read_err(path, e))?;
    Ok(first)
}
