//! Bounds on every size an input file can choose, so that no file can make an
//! ingest hold or write more than a known amount per record: the header's width,
//! a record's length in bytes (and so its number of fields), the length of each
//! mapped text field, what a quarantine row keeps of a value, and the number of
//! `[[emit]]` blocks of a mapping (observations made per record). Documented in
//! docs/formats.md ("Size bounds").

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::{Arc, Mutex};

/// Columns a header may have.
pub(crate) const MAX_HEADER_COLUMNS: usize = 1_000;
/// Bytes a record (one line) may have; a longer one is quarantined as
/// `record_too_long` from its first `MAX_RECORD_BYTES` bytes.
pub(crate) const MAX_RECORD_BYTES: usize = 1 << 20;
/// Bytes a mapped text field (GPU name, source, region, ...) may have; a longer one
/// is quarantined as `field_too_long`.
pub(crate) const MAX_FIELD_BYTES: usize = 1 << 10;
/// Bytes of a value a quarantine row keeps; the rest is replaced by its length.
pub(crate) const QUARANTINE_VALUE_BYTES: usize = 256;
/// Fields beyond the header's a quarantine row keeps of a record that has more.
pub(crate) const QUARANTINE_EXTRA_FIELDS: usize = 16;
/// `[[emit]]` blocks a mapping may have (observations made from one record).
pub(crate) const MAX_EMIT_BLOCKS: usize = 64;

/// `value` cut to at most [`QUARANTINE_VALUE_BYTES`] at a character boundary, with
/// its length in bytes when it was cut.
pub(crate) fn prefix(value: String) -> String {
    if value.len() <= QUARANTINE_VALUE_BYTES {
        return value;
    }
    let mut end = QUARANTINE_VALUE_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &value[..end], value.len())
}

/// Lines (1-based) that [`LineBound`] cut.
pub(crate) type CutLines = Arc<Mutex<BTreeSet<u64>>>;

/// A reader that passes each line through up to `limit` bytes and drops the rest of
/// a longer one (closing a quote the cut left open, so that the cut line still
/// parses as one record), noting its number in `cut`. Records never span lines
/// (the reader refuses a field with a line break), so this bounds every record.
/// A line ending `\r\n` (a spreadsheet's export) passes as `\n`: the CSV reader
/// then numbers lines as this reader and a text editor do (it numbered each record
/// of such a file one line too low, and so could take a cut line for the one before).
/// A lone `\r` (a classic Mac OS export) ends a line too and passes as `\n`: the
/// CSV reader ends a record there either way, but this reader took a file of them
/// for one line, cut it after its first MiB and dropped every record after that
/// unseen, and the reader numbered all its records line 1.
pub(crate) struct LineBound<R> {
    inner: R,
    limit: usize,
    /// The last read ended on a `\r` (passed as a line's end): a `\n` that opens
    /// the next read is the rest of that line end, and dropped.
    after_cr: bool,
    line: u64,
    in_line: usize,
    quote_open: bool,
    skipping: bool,
    cut: CutLines,
    buf: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    eof: bool,
}

impl<R: Read> LineBound<R> {
    pub(crate) fn new(inner: R, limit: usize) -> (Self, CutLines) {
        let cut = CutLines::default();
        let me = Self {
            inner,
            limit,
            after_cr: false,
            line: 1,
            in_line: 0,
            quote_open: false,
            skipping: false,
            cut: cut.clone(),
            buf: vec![0; 1 << 16],
            out: Vec::with_capacity(1 << 16),
            at: 0,
            eof: false,
        };
        (me, cut)
    }

    /// The reader this one wraps, once reading is done.
    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    fn end_cut(&mut self) {
        if self.skipping && self.quote_open {
            self.out.push(b'"');
        }
        self.skipping = false;
    }

    fn fill(&mut self) -> std::io::Result<()> {
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() && !self.eof {
            let n = self.inner.read(&mut self.buf)?;
            if n == 0 {
                self.eof = true;
                self.end_cut();
                break;
            }
            let buf = std::mem::take(&mut self.buf);
            let mut chunk = &buf[..n];
            if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            while !chunk.is_empty() {
                // A line ends at `\n`, `\r\n` or a lone `\r`.
                let end = memchr::memchr2(b'\n', b'\r', chunk);
                let seg = &chunk[..end.unwrap_or(chunk.len())];
                if !self.skipping {
                    let room = self.limit - self.in_line;
                    let take = seg.len().min(room);
                    let kept = &seg[..take];
                    if memchr::memchr_iter(b'"', kept).count() % 2 == 1 {
                        self.quote_open = !self.quote_open;
                    }
                    self.out.extend_from_slice(kept);
                    self.in_line += take;
                    if take < seg.len() {
                        self.skipping = true;
                        if let Ok(mut c) = self.cut.lock() {
                            c.insert(self.line);
                        }
                    }
                }
                match end {
                    Some(i) => {
                        let mut next = i + 1;
                        if chunk[i] == b'\r' {
                            match chunk.get(next) {
                                Some(b'\n') => next += 1,
                                Some(_) => {}
                                // The `\n` of a `\r\n` may open the next read.
                                None => self.after_cr = true,
                            }
                        }
                        self.end_cut();
                        self.out.push(b'\n');
                        self.line += 1;
                        self.in_line = 0;
                        self.quote_open = false;
                        chunk = &chunk[next..];
                    }
                    None => chunk = &[],
                }
            }
            self.buf = buf;
        }
        Ok(())
    }
}

impl<R: Read> Read for LineBound<R> {
    fn read(&mut self, dst: &mut [u8]) -> std::io::Result<usize> {
        if self.at >= self.out.len() {
            self.fill()?;
        }
        let n = dst.len().min(self.out.len() - self.at);
        dst[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(text: &str, limit: usize) -> (String, Vec<u64>) {
        let (mut r, cut) = LineBound::new(text.as_bytes(), limit);
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        let lines = cut.lock().unwrap().iter().copied().collect();
        (s, lines)
    }

    #[test]
    fn long_lines_are_cut_and_an_open_quote_closed() {
        assert_eq!(through("ab\ncd\n", 4), ("ab\ncd\n".into(), vec![]));
        assert_eq!(
            through("ab\ncdefgh\nij", 4),
            ("ab\ncdef\nij".into(), vec![2])
        );
        assert_eq!(
            through("a,\"bcdefg\"\nx", 4),
            ("a,\"b\"\nx".into(), vec![1])
        );
        assert_eq!(through("abcdef", 4), ("abcd".into(), vec![1]));
    }

    /// A reader that gives one byte per read: every `\r\n` falls across two reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    /// `\r\n` passes as `\n` (whole or split across reads), and so does a lone
    /// `\r`, at the end of the input too; a cut line is numbered as an editor
    /// does, and a long line of a file of lone `\r` is cut alone.
    #[test]
    fn crlf_and_lone_carriage_returns_pass_as_lf() {
        assert_eq!(through("a\r\nb\r\n", 9), ("a\nb\n".into(), vec![]));
        assert_eq!(through("a\rb\r", 9), ("a\nb\n".into(), vec![]));
        assert_eq!(through("a\r\rb\n\rc", 9), ("a\n\nb\n\nc".into(), vec![]));
        assert_eq!(
            through("h\r\nok\r\ntoolong\r\nx\r\n", 4),
            ("h\nok\ntool\nx\n".into(), vec![3])
        );
        assert_eq!(
            through("h\rok\rtoolong\rx\ry", 4),
            ("h\nok\ntool\nx\ny".into(), vec![3])
        );
        for text in ["a\r\nb\r\n", "a\rb\r\n\r", "\r\r\n\n", "ab\r", "\r\n\r\n\r"] {
            let (mut r, _) = LineBound::new(Trickle(text.as_bytes()), 9);
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            assert_eq!(s, through(text, 9).0, "{text:?}");
        }
    }

    #[test]
    fn prefixes_keep_a_char_boundary_and_say_the_length() {
        assert_eq!(prefix("short".into()), "short");
        let long = "é".repeat(300);
        let p = prefix(long);
        assert!(p.ends_with("…(600 bytes)"), "{p}");
        assert!(p.len() < 300);
    }
}
