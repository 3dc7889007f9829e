//! One way to read a CSV file a user hands over: the file's size checked before a
//! byte is parsed, columns found by header name (trimmed, a name given twice
//! refused), and every row with the line of the file it starts on, so that an
//! error names what a person would open in an editor.

use crate::TableError;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// An open CSV file whose header has been read.
pub struct CsvFile {
    path: PathBuf,
    names: Vec<String>,
    index: HashMap<String, usize>,
    reader: csv::Reader<AtMost>,
}

/// A file read to at most `left` more bytes: a file that grows past its limit
/// after the size check is an error, never read on nor cut short in silence. It
/// notes where each line break is, so that a row's line is counted from the bytes
/// themselves: the CSV parser's own count is one short on every row of a file
/// with `\r\n` line ends, as a spreadsheet's "CSV UTF-8" export writes them.
struct AtMost {
    inner: File,
    left: u64,
    /// Bytes read so far.
    offset: u64,
    /// Offsets of every `\n` read so far.
    newlines: Vec<u64>,
    /// Offsets of every `\r` read so far.
    returns: Vec<u64>,
}

impl AtMost {
    fn new(inner: File, left: u64) -> Self {
        Self {
            inner,
            left,
            offset: 0,
            newlines: Vec::new(),
            returns: Vec::new(),
        }
    }

    /// The line (from 1) of the first byte at or after `start` that is not a line
    /// break: where a record the parser says starts at `start` is in the file.
    fn line_of(&self, start: u64) -> u64 {
        let mut s = start;
        while self.newlines.binary_search(&s).is_ok() || self.returns.binary_search(&s).is_ok() {
            s += 1;
        }
        1 + self.newlines.partition_point(|p| *p < s) as u64
    }
}

impl std::io::Read for AtMost {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other("the file grew past the size limit while it was read")
        })?;
        for (i, b) in buf[..n].iter().enumerate() {
            match b {
                b'\n' => self.newlines.push(self.offset + i as u64),
                b'\r' => self.returns.push(self.offset + i as u64),
                _ => {}
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
}

/// One row of a [`CsvFile`].
#[derive(Debug, Clone)]
pub struct CsvRow {
    /// The line of the file the row starts on (the header is line 1).
    pub line: u64,
    /// The row's cells.
    pub record: csv::StringRecord,
}

impl CsvRow {
    /// The cell at `column` (a position from [`CsvFile::require`]), trimmed; `""`
    /// when the row is shorter.
    pub fn get(&self, column: usize) -> &str {
        self.record.get(column).unwrap_or("").trim()
    }
}

impl CsvFile {
    /// Opens `path` if it is at most `limit` bytes and reads its header; a header
    /// naming a column twice is refused (which of the two would be read?).
    pub fn open(path: &Path, limit: u64) -> Result<Self, TableError> {
        let bad = |detail: String| TableError::Csv {
            path: path.to_path_buf(),
            detail,
        };
        let read = |source| TableError::Read {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(bad(
                "is not a regular file (a device, directory or pipe cannot be read)".into(),
            ));
        }
        let len = meta.len();
        if len > limit {
            return Err(bad(format!(
                "is {len} bytes, over the {limit}-byte limit for this kind of file"
            )));
        }
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(AtMost::new(File::open(path).map_err(read)?, limit));
        let names: Vec<String> = reader
            .headers()
            .map_err(|e| bad(format!("line 1: {e}")))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let mut index = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            if let Some(j) = index.insert(n.clone(), i) {
                return Err(bad(format!(
                    "line 1: the header names column {n:?} twice (columns {} and {}): which one holds the value is ambiguous",
                    j + 1,
                    i + 1
                )));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            names,
            index,
            reader,
        })
    }

    /// The file's path, as opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header's column names, trimmed, in file order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Where column `name` is, if the header has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Where each of `names` is; the first one the header lacks is an error
    /// naming it and the columns the file has.
    pub fn require<const N: usize>(&self, names: [&str; N]) -> Result<[usize; N], TableError> {
        let mut out = [0; N];
        for (slot, name) in out.iter_mut().zip(names) {
            *slot = self.column(name).ok_or_else(|| TableError::Csv {
                path: self.path.clone(),
                detail: format!(
                    "line 1: the header has no column {name:?} (it has {})",
                    self.names.join(", ")
                ),
            })?;
        }
        Ok(out)
    }

    /// The rows, each with its line; a row the CSV parser cannot read is an error
    /// naming its line.
    pub fn rows(self) -> impl Iterator<Item = Result<CsvRow, TableError>> {
        let (path, mut reader) = (self.path, self.reader);
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let mut record = csv::StringRecord::new();
            match reader.read_record(&mut record) {
                Ok(false) => None,
                Ok(true) => {
                    let line = record
                        .position()
                        .map_or(0, |p| reader.get_ref().line_of(p.byte()));
                    Some(Ok(CsvRow { line, record }))
                }
                Err(e) => {
                    done = true;
                    let line = e.position().map(|p| reader.get_ref().line_of(p.byte()));
                    Some(Err(TableError::Csv {
                        path: path.clone(),
                        detail: match line {
                            Some(l) => format!("line {l}: {e}"),
                            None => e.to_string(),
                        },
                    }))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn rows_carry_the_line_they_start_on() {
        // The second row's quoted cell spans lines 3 and 4: the third row is line 5.
        let (_d, p) = file("a, b\n1,x\n2,\"two\nlines\"\n3,z\n");
        let f = CsvFile::open(&p, 1000).unwrap();
        let [a, b] = f.require(["a", "b"]).unwrap();
        let rows: Vec<CsvRow> = f.rows().map(Result::unwrap).collect();
        let lines: Vec<u64> = rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 3, 5]);
        assert_eq!((rows[2].get(a), rows[2].get(b)), ("3", "z"));
    }

    #[test]
    fn lines_are_right_whatever_the_line_ends_and_a_byte_order_mark() {
        // A spreadsheet's "CSV UTF-8" export: a byte order mark and \r\n line ends
        // (every line was one too low); LF, CRLF, old Mac CR and a quoted cell over
        // two lines, with and without the mark: rows on lines 2, 3 and 5.
        for bom in ["", "\u{feff}"] {
            for nl in ["\n", "\r\n"] {
                let text = format!("{bom}a,b{nl}1,x{nl}2,\"two{nl}lines\"{nl}3,z{nl}");
                let (_d, p) = file(&text);
                let rows: Vec<CsvRow> = CsvFile::open(&p, 1000)
                    .unwrap()
                    .rows()
                    .map(Result::unwrap)
                    .collect();
                let lines: Vec<u64> = rows.iter().map(|r| r.line).collect();
                assert_eq!(lines, [2, 3, 5], "{text:?}");
            }
        }
    }

    #[test]
    fn a_repeated_or_missing_column_and_a_large_file_are_refused() {
        let (_d, p) = file("a,b,a\n1,2,3\n");
        let e = CsvFile::open(&p, 1000).err().unwrap().to_string();
        assert!(
            e.contains("names column \"a\" twice (columns 1 and 3)"),
            "{e}"
        );
        let (_d, p) = file("a,b\n1,2\n");
        let e = CsvFile::open(&p, 1000)
            .unwrap()
            .require(["c"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no column \"c\" (it has a, b)"), "{e}");
        // 8 bytes against a limit of 7.
        let e = CsvFile::open(&p, 7).err().unwrap().to_string();
        assert!(e.contains("is 8 bytes, over the 7-byte limit"), "{e}");
    }

    /// A device reports a length of 0 and never ends: refused before a byte is read
    /// (a `backtest --rent /dev/zero` ran until the kernel killed it).
    #[test]
    fn a_device_or_a_directory_is_not_read() {
        for p in ["/dev/zero", "/tmp"] {
            let e = CsvFile::open(Path::new(p), 1000).err().unwrap().to_string();
            assert!(e.contains("not a regular file"), "{p}: {e}");
        }
    }

    #[test]
    fn a_file_read_past_its_limit_is_an_error() {
        let (_d, p) = file("a\n1\n2\n3\n");
        let mut r = AtMost::new(File::open(&p).unwrap(), 4);
        let mut buf = Vec::new();
        assert!(std::io::Read::read_to_end(&mut r, &mut buf).is_err());
    }
}
