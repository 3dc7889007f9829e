//! Cutting a CSV stream's records into parts that parse on their own, so that a
//! file is parsed in parallel and gives what one reader from its start gives: the
//! same records, row numbers and line numbers.
//!
//! A cut goes after the line break of a line that holds a record, where one CSV
//! reader from the start would be between records: no line before it leaves a
//! quoted field open (the reader refuses a field with a line break, so such a file
//! is read by one reader, which finds it) and the stream holds no lone `\r` (a
//! record terminator that is not a line break). Whatever cannot be cut so is read
//! by one reader from the start of the chunk that held it ([`Step::Serial`]).
//!
//! One reader numbers a record with the line after the record before it (blank
//! lines between them count for the record after), so a part starts right after a
//! record's line break, never after a blank line: its own reader then numbers its
//! records as one reader from the start does.

use std::io::Read;

/// Bytes read ahead into one chunk, about (a chunk ends at a record's line break).
/// Measured on the one-shot of 1M rows at two cores: chunks of 1 MiB peaked about
/// 20 MiB higher (the parsed records of chunks in flight), 256 KiB was slower.
pub(crate) const CHUNK_BYTES: usize = 512 << 10;
/// Bytes of one part, about: the records one task parses (32 parts a chunk).
pub(crate) const PART_BYTES: usize = 16 << 10;
/// Bytes read for one chunk before a stream with no record's line break in them
/// (blank lines only) is left to one reader.
const GIVE_UP_BYTES: usize = 8 << 20;
/// Bytes asked of the stream per read.
const READ_BYTES: usize = 64 << 10;

/// The records of a chunk that one task parses: bytes `start..end`, the line the
/// first record starts on as one reader numbers it, and the data rows before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) line: u64,
    pub(crate) rows_before: u64,
}

/// Whole records read from the stream, cut into parts.
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    pub(crate) bytes: Vec<u8>,
    pub(crate) parts: Vec<Part>,
}

/// What the splitter read next.
#[derive(Debug)]
pub(crate) enum Step {
    Chunk(Chunk),
    /// Records that cannot be cut into parts: the rest of the stream is for one
    /// reader, from these bytes on (then the stream's), whose first record starts
    /// on `line` after `rows` data rows.
    Serial {
        rest: Vec<u8>,
        line: u64,
        rows: u64,
    },
    End,
}

/// Reads a stream into chunks of whole records, cut into parts.
#[derive(Debug)]
pub(crate) struct Splitter {
    /// Bytes read and not yet handed on; they start where a record may start.
    buf: Vec<u8>,
    line: u64,
    rows: u64,
    eof: bool,
    chunk: usize,
    part: usize,
}

impl Splitter {
    /// A splitter whose stream starts with `head` (bytes already read) at a record
    /// boundary that one reader numbers `line`.
    pub(crate) fn new(head: Vec<u8>, line: u64) -> Self {
        Self::with_sizes(head, line, CHUNK_BYTES, PART_BYTES)
    }

    /// [`Splitter::new`] with other chunk and part sizes (tests cut small inputs).
    pub(crate) fn with_sizes(head: Vec<u8>, line: u64, chunk: usize, part: usize) -> Self {
        Self {
            buf: head,
            line,
            rows: 0,
            eof: false,
            chunk: chunk.max(1),
            part: part.max(1),
        }
    }

    /// Data rows in the chunks handed on so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The line (as one reader numbers it) the next chunk's first record starts on.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Everything for one reader from here: the bytes held, the line and the rows
    /// before them.
    pub(crate) fn rest(self) -> (Vec<u8>, u64, u64) {
        (self.buf, self.line, self.rows)
    }

    /// The next chunk of `src`, read into `spare` (a chunk's buffer handed back)
    /// when there is one; or the rest for one reader; or the end.
    pub(crate) fn next(
        &mut self,
        src: &mut impl Read,
        spare: Option<Vec<u8>>,
    ) -> std::io::Result<Step> {
        let mut want = self.chunk;
        let end = loop {
            if self.buf.len() < want && !self.eof {
                // Zeroed once, then read into until full or at the end.
                let mut filled = self.buf.len();
                self.buf.resize(want.max(filled + READ_BYTES), 0);
                while filled < want && !self.eof {
                    match src.read(&mut self.buf[filled..]) {
                        Ok(0) => self.eof = true,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            self.buf.truncate(filled);
                            return Err(e);
                        }
                    }
                }
                self.buf.truncate(filled);
            }
            if self.eof {
                break self.buf.len();
            }
            if let Some(end) = last_cut(&self.buf) {
                break end;
            }
            if self.buf.len() >= GIVE_UP_BYTES.max(4 * self.chunk) {
                return Ok(self.serial());
            }
            want = self.buf.len() + self.chunk;
        };
        if end == 0 {
            return Ok(Step::End);
        }
        let bytes = &self.buf[..end];
        if memchr::memchr(b'\r', bytes).is_some() {
            return Ok(self.serial());
        }
        let quoted = memchr::memchr(b'"', bytes).is_some();
        let (mut line, mut rows) = (self.line, self.rows);
        let mut parts = Vec::with_capacity(end / self.part + 1);
        let mut start = 0;
        while start < end {
            let stop = next_cut(bytes, start.saturating_add(self.part), end);
            let Some((breaks, records)) = count(&bytes[start..stop], quoted) else {
                return Ok(self.serial());
            };
            parts.push(Part {
                start,
                end: stop,
                line,
                rows_before: rows,
            });
            line += breaks;
            rows += records;
            start = stop;
        }
        (self.line, self.rows) = (line, rows);
        let mut rest = spare.unwrap_or_default();
        rest.clear();
        rest.extend_from_slice(&self.buf[end..]);
        self.buf.truncate(end);
        let bytes = std::mem::replace(&mut self.buf, rest);
        Ok(Step::Chunk(Chunk { bytes, parts }))
    }

    /// The rest, from the start of what is held, for one reader; the splitter is
    /// then done.
    fn serial(&mut self) -> Step {
        self.eof = true;
        Step::Serial {
            rest: std::mem::take(&mut self.buf),
            line: self.line,
            rows: self.rows,
        }
    }
}

/// A record every reader started mid-file reads first and drops: a CSV reader
/// removes a byte-order mark from the start of what it reads first, as the one
/// reader of a file does only before its header (a data row that starts with one
/// keeps it, and is refused for it). One line, so a record read after it is
/// numbered one line on ([`ReadAfterPrimer`]).
pub(crate) const PRIMER: &[u8] = b"-\n";

/// How a reader started on [`PRIMER`] numbers lines: one more than the stream's.
pub(crate) trait ReadAfterPrimer {
    /// Reads and drops the primer record.
    fn skip_primer(&mut self) -> csv::Result<()>;
}

impl<R: Read> ReadAfterPrimer for csv::Reader<R> {
    fn skip_primer(&mut self) -> csv::Result<()> {
        let mut primer = csv::ByteRecord::new();
        self.read_byte_record(&mut primer)?;
        debug_assert_eq!(primer.as_slice(), &PRIMER[..1]);
        Ok(())
    }
}

/// A part's bytes, after the [`PRIMER`], as a CSV reader reads them: a reader
/// built once (one per thread) is started again on each part ([`Feed::start`]).
/// It holds its chunk shared, and lets it go when released ([`Feed::release`]),
/// so that the chunk's buffer is filled again once every part is parsed.
#[derive(Debug, Default)]
pub(crate) struct Feed {
    bytes: Option<std::sync::Arc<Vec<u8>>>,
    start: usize,
    end: usize,
    at: usize,
}

impl Feed {
    /// Starts `rdr` on bytes `range` of `chunk`: its next record is their first,
    /// numbered from line 2 (the primer is line 1).
    pub(crate) fn start(
        rdr: &mut csv::Reader<Feed>,
        chunk: &std::sync::Arc<Vec<u8>>,
        range: std::ops::Range<usize>,
    ) -> csv::Result<()> {
        *rdr.get_mut() = Feed {
            bytes: Some(std::sync::Arc::clone(chunk)),
            start: range.start.min(chunk.len()),
            end: range.end.min(chunk.len()),
            at: 0,
        };
        rdr.seek_raw(std::io::SeekFrom::Start(0), csv::Position::new())?;
        rdr.skip_primer()
    }

    /// Lets `rdr`'s chunk go.
    pub(crate) fn release(rdr: &mut csv::Reader<Feed>) {
        *rdr.get_mut() = Feed::default();
    }

    fn part(&self) -> &[u8] {
        self.bytes
            .as_ref()
            .map_or(&[][..], |b| &b[self.start..self.end.max(self.start)])
    }
}

impl Read for Feed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at < PRIMER.len() {
            let rest = &PRIMER[self.at..];
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.at += n;
            return Ok(n);
        }
        let rest = &self.part()[self.at - PRIMER.len()..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

impl std::io::Seek for Feed {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        let len = PRIMER.len() + self.part().len();
        let to = match pos {
            std::io::SeekFrom::Start(n) => usize::try_from(n).ok(),
            std::io::SeekFrom::Current(d) => self.at.checked_add_signed(d as isize),
            std::io::SeekFrom::End(d) => len.checked_add_signed(d as isize),
        };
        match to {
            Some(at) if at <= len => {
                self.at = at;
                Ok(at as u64)
            }
            _ => Err(std::io::Error::other("a seek outside the part")),
        }
    }
}

/// A reader that keeps a copy of the bytes it reads: a CSV reader reads a header
/// from it, and the bytes it read past the header are where the records start.
pub(crate) struct Recording<R> {
    inner: R,
    log: Vec<u8>,
}

impl<R> Recording<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            log: Vec::new(),
        }
    }

    /// The bytes read from `offset` on (the end when it is beyond), and the reader.
    pub(crate) fn after(self, offset: u64) -> (Vec<u8>, R) {
        let from = usize::try_from(offset).map_or(self.log.len(), |o| o.min(self.log.len()));
        (self.log[from..].to_vec(), self.inner)
    }
}

impl<R: Read> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.log.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Whether a record's bytes end just before `at`: a line break ends a line with
/// something on it (a blank line is no record).
fn ends_record(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'\n' && at > 0 && bytes[at - 1] != b'\n'
}

/// The end of the last record's line break in `bytes`, if one is there.
fn last_cut(bytes: &[u8]) -> Option<usize> {
    let mut hay = bytes;
    while let Some(at) = memchr::memrchr(b'\n', hay) {
        if ends_record(bytes, at) {
            return Some(at + 1);
        }
        hay = &bytes[..at];
    }
    None
}

/// The first cut at or after `from` (after a record's line break), or `end`.
fn next_cut(bytes: &[u8], from: usize, end: usize) -> usize {
    let mut at = from;
    while at < end {
        match memchr::memchr(b'\n', &bytes[at..end]) {
            Some(k) if ends_record(bytes, at + k) => return at + k + 1,
            Some(k) => at += k + 1,
            None => break,
        }
    }
    end
}

/// The line breaks and the records in `part` (lines with something on them), or
/// `None` when a line leaves a quoted field open (`quoted`: the chunk holds a
/// quote at all).
fn count(part: &[u8], quoted: bool) -> Option<(u64, u64)> {
    if !quoted && part.first() != Some(&b'\n') && memchr::memmem::find(part, b"\n\n").is_none() {
        // No blank line: every line break ends a record, and so may the end.
        let breaks = memchr::memchr_iter(b'\n', part).count() as u64;
        let tail = u64::from(part.last().is_some_and(|&b| b != b'\n'));
        return Some((breaks, breaks + tail));
    }
    let (mut breaks, mut records) = (0u64, 0u64);
    let mut from = 0;
    let mut line = |l: &[u8]| {
        if l.is_empty() {
            return true;
        }
        records += 1;
        !(quoted && ends_in_quote(l))
    };
    for at in memchr::memchr_iter(b'\n', part) {
        if !line(&part[from..at]) {
            return None;
        }
        breaks += 1;
        from = at + 1;
    }
    line(&part[from..]).then_some((breaks, records))
}

/// Whether a line (from a record's start, no line break in it) leaves a quoted
/// field open at its end, by the CSV reader's rules: a quote opens a quoted field
/// only as a field's first byte, two quotes inside one are a quote, and one quote
/// closes it (a quote anywhere else is a byte of the field).
pub(crate) fn ends_in_quote(line: &[u8]) -> bool {
    let mut open = false;
    let mut quotes = memchr::memchr_iter(b'"', line).peekable();
    while let Some(at) = quotes.next() {
        if open {
            if quotes.peek() == Some(&(at + 1)) {
                quotes.next();
            } else {
                open = false;
            }
        } else if at == 0 || line[at - 1] == b',' {
            open = true;
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One reader's records: (row, line, fields).
    type Records = Vec<(u64, u64, Vec<Vec<u8>>)>;

    fn reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
        csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(false)
            .from_reader(bytes)
    }

    /// Records as one reader reads them from `bytes` after a header (the primer:
    /// a byte-order mark at their start is data), numbered from `line`, after
    /// `rows` rows.
    fn one_reader(bytes: &[u8], line: u64, rows: u64, out: &mut Records) {
        let primed = [PRIMER, bytes].concat();
        let mut rdr = reader(&primed);
        rdr.skip_primer().unwrap();
        let mut record = csv::ByteRecord::new();
        let mut row = rows;
        while rdr.read_byte_record(&mut record).unwrap() {
            row += 1;
            let at = record.position().unwrap().line() + line - 2;
            out.push((row, at, record.iter().map(<[u8]>::to_vec).collect()));
        }
    }

    /// Records as the splitter's parts read them (one reader for what it leaves to
    /// one), and whether it left anything to one reader.
    fn by_parts(bytes: &[u8], chunk: usize, part: usize, read: usize) -> (Records, bool) {
        let mut src = Trickle(bytes, read);
        let mut split = Splitter::with_sizes(Vec::new(), 1, chunk, part);
        let mut out = Records::new();
        loop {
            match split.next(&mut src, None).unwrap() {
                Step::Chunk(c) => {
                    assert!(!c.parts.is_empty());
                    // One reader started again on each part, as the ingest reads them.
                    let mut rdr = csv::ReaderBuilder::new()
                        .flexible(true)
                        .has_headers(false)
                        .from_reader(Feed::default());
                    let bytes = std::sync::Arc::new(c.bytes);
                    for p in &c.parts {
                        Feed::start(&mut rdr, &bytes, p.start..p.end).unwrap();
                        let mut record = csv::ByteRecord::new();
                        let mut row = p.rows_before;
                        while rdr.read_byte_record(&mut record).unwrap() {
                            row += 1;
                            let at = record.position().unwrap().line() + p.line - 2;
                            out.push((row, at, record.iter().map(<[u8]>::to_vec).collect()));
                        }
                    }
                }
                Step::Serial {
                    mut rest,
                    line,
                    rows,
                } => {
                    rest.extend_from_slice(src.0);
                    one_reader(&rest, line, rows, &mut out);
                    return (out, true);
                }
                Step::End => return (out, false),
            }
        }
    }

    /// A reader that gives at most `.1` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn whole(bytes: &[u8]) -> Records {
        let mut out = Records::new();
        one_reader(bytes, 1, 0, &mut out);
        out
    }

    #[test]
    fn quotes_open_only_at_a_fields_start() {
        assert!(!ends_in_quote(b"a,b"));
        assert!(!ends_in_quote(b"\"a,b\",c"));
        assert!(ends_in_quote(b"a,\"b"));
        assert!(
            ends_in_quote(b"a,\"b\"\""),
            "two quotes are a quote: still open"
        );
        assert!(!ends_in_quote(b"a,\"b\"\"\""));
        assert!(
            !ends_in_quote(b"a,b\"c"),
            "a quote inside a field is a byte"
        );
        assert!(
            !ends_in_quote(b"\"a\"x\",y"),
            "after a closed field, a quote is a byte"
        );
        assert!(ends_in_quote(b"\"a\",\"b"));
        assert!(ends_in_quote(b"\""));
    }

    #[test]
    fn clean_records_are_cut_between_lines_and_numbered_as_one_reader_does() {
        let text = b"a,b\n\n\nc,d\ne,\"f,g\"\n\nh\n";
        for chunk in 1..12 {
            for part in 1..6 {
                let (records, serial) = by_parts(text, chunk, part, 3);
                assert!(!serial);
                assert_eq!(records, whole(text), "chunk {chunk} part {part}");
            }
        }
        // Blank lines number the record after the next one, not the next one.
        let lines: Vec<u64> = whole(text).iter().map(|r| r.1).collect();
        assert_eq!(lines, vec![1, 2, 5, 6]);
    }

    #[test]
    fn an_open_quote_or_a_lone_carriage_return_goes_to_one_reader() {
        for text in [&b"a\nb,\"c\nd\"\ne\n"[..], b"a\nb\rc\nd\n", b"a\n\"b"] {
            let (records, serial) = by_parts(text, 2, 1, 2);
            assert!(serial, "{:?}", String::from_utf8_lossy(text));
            assert_eq!(records, whole(text));
        }
    }

    #[test]
    fn blank_lines_only_go_to_one_reader_past_the_limit() {
        let mut text = b"a\n".to_vec();
        text.extend(std::iter::repeat_n(b'\n', 2 * GIVE_UP_BYTES));
        text.extend_from_slice(b"b\n");
        let (records, serial) = by_parts(&text, 1 << 10, 1 << 8, 1 << 16);
        assert!(serial);
        assert_eq!(records, whole(&text));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Whatever the bytes and the sizes, the parts read what one reader reads.
        #[test]
        fn parts_read_what_one_reader_reads(
            tokens in proptest::collection::vec(
                prop_oneof![
                    Just(&b"a"[..]), Just(&b","[..]), Just(&b"\""[..]), Just(&b"\n"[..]),
                    Just(&b"\r"[..]), Just(&b" "[..]), Just(&b"\xef\xbb\xbf"[..]),
                ],
                0..200,
            ),
            chunk in 1usize..40,
            part in 1usize..20,
            read in 1usize..50,
        ) {
            // A byte-order mark anywhere, at a part's start too, is data.
            let bytes = tokens.concat();
            let (records, _) = by_parts(&bytes, chunk, part, read);
            prop_assert_eq!(records, whole(&bytes));
        }

        /// Without quotes or carriage returns, nothing goes to one reader.
        #[test]
        fn plain_lines_are_always_cut(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'a'), Just(b','), Just(b'\n')],
                0..200,
            ),
            chunk in 1usize..40,
            part in 1usize..20,
        ) {
            let (records, serial) = by_parts(&bytes, chunk, part, 7);
            prop_assert!(!serial);
            prop_assert_eq!(records, whole(&bytes));
        }
    }
}
