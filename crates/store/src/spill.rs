//! Ingest staging spills: accepted rows written to a scratch file when a batch is
//! full and read back once at the commit. A compact binary encoding of the typed
//! fields (numbers as bits, timestamps as nanoseconds, ids length-prefixed, the text
//! fields that repeat as codes into a dictionary each section builds as it goes): a
//! Parquet spill converted every row to text columns and parsed it back, about a third
//! of a 1M-row ingest. The format is private to one run and never outlives it.

use crate::error::{Result, StoreError};
use crate::schema::StoredObservation;
use chrono::{DateTime, Datelike, NaiveDate};
use rayon::prelude::*;
use rentix_core::{GpuHours, Observation, UsdPerGpuHour};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

struct Out<W: Write>(W);

impl<W: Write> Out<W> {
    /// An unsigned LEB128 varint: a length, a code or a row number in one to three
    /// bytes instead of eight.
    fn varint(&mut self, mut x: u64) -> std::io::Result<()> {
        let mut buf = [0u8; 10];
        let mut n = 0;
        loop {
            let low = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                buf[n] = low;
                n += 1;
                break;
            }
            buf[n] = low | 0x80;
            n += 1;
        }
        self.0.write_all(&buf[..n])
    }
    fn str(&mut self, s: &str) -> std::io::Result<()> {
        self.varint(s.len() as u64)?;
        self.0.write_all(s.as_bytes())
    }
    fn u64(&mut self, x: u64) -> std::io::Result<()> {
        self.0.write_all(&x.to_le_bytes())
    }
    fn opt_u64(&mut self, x: Option<u64>) -> std::io::Result<()> {
        match x {
            Some(x) => {
                self.0.write_all(&[1])?;
                self.u64(x)
            }
            None => self.0.write_all(&[0]),
        }
    }
    /// A small integer (a count of GPUs), `None` as 0.
    fn opt_small(&mut self, x: Option<u32>) -> std::io::Result<()> {
        self.varint(x.map_or(0, |x| u64::from(x) + 1))
    }
    /// An id: 0 and its 16 bytes when it is 32 hexadecimal digits (every
    /// generated id and dedupe key), else 1 and its text. Written as text, the
    /// two ids of a row were formatted, then allocated and parsed back, a third of
    /// a spill's round trip.
    fn id(&mut self, id: &rentix_core::Id) -> std::io::Result<()> {
        match id.as_u128() {
            Some(n) => {
                self.0.write_all(&[0])?;
                self.0.write_all(&n.to_be_bytes())
            }
            None => {
                self.0.write_all(&[1])?;
                self.str(&id.text())
            }
        }
    }
}

/// Tokens of a dictionary-coded text field: absent, a value not seen before in the
/// section (its text follows), or `CODED + code` of one seen before.
const ABSENT: u64 = 0;
const NEW: u64 = 1;
const CODED: u64 = 2;

/// The writer's side of a section's dictionary: the text fields that repeat (source,
/// grade, GPU spelling, units, currency, input file: a few hundred distinct values
/// in a batch) are written once a section, then as a one- or two-byte code. A row
/// took about 370 bytes with every text written out, about 145 with the codes.
#[derive(Default)]
struct Encoder {
    /// Codes by text, hashed with foldhash: with rows of shuffled sources and
    /// grades nearly every field was looked up, and SipHash was a tenth of a
    /// spill (the codes are given in order of first appearance, whatever the hash).
    codes: std::collections::HashMap<String, u64, foldhash::fast::FixedState>,
    values: Vec<String>,
    /// Each field's last code: most rows repeat the previous row's file, currency,
    /// unit..., checked with one comparison before a hash lookup.
    last: [Option<u64>; FIELDS],
    /// The last grade written and its code: a section's rows run in long stretches
    /// of one grade, so its key is formatted and looked up once per stretch.
    grade: Option<(rentix_core::Grade, u64)>,
}

/// Dictionary-coded fields of a row, each with its slot in [`Encoder::last`].
const FIELDS: usize = 9;
const KIND: usize = 0;
const SOURCE: usize = 1;
const GRADE: usize = 2;
const GPU_RAW: usize = 3;
const UNIT: usize = 4;
const CURRENCY: usize = 5;
const INTERCONNECT: usize = 6;
const TIER: usize = 7;
const FILE: usize = 8;

impl Encoder {
    fn text(
        &mut self,
        o: &mut Out<impl Write>,
        field: usize,
        s: Option<&str>,
    ) -> std::io::Result<()> {
        let Some(s) = s else {
            return o.varint(ABSENT);
        };
        let code = match self.last[field] {
            Some(c) if self.values[c as usize] == s => c,
            _ => match self.codes.get(s) {
                Some(&c) => c,
                None => {
                    let c = self.values.len() as u64;
                    self.codes.insert(s.to_string(), c);
                    self.values.push(s.to_string());
                    self.last[field] = Some(c);
                    o.varint(NEW)?;
                    return o.str(s);
                }
            },
        };
        self.last[field] = Some(code);
        o.varint(CODED + code)
    }

    fn grade(&mut self, o: &mut Out<impl Write>, g: &rentix_core::Grade) -> std::io::Result<()> {
        if let Some((last, code)) = &self.grade {
            if last == g {
                return o.varint(CODED + code);
            }
        }
        self.text(o, GRADE, Some(&g.key()))?;
        let code = self.last[GRADE].unwrap_or_default();
        self.grade = Some((g.clone(), code));
        Ok(())
    }
}

/// Texts up to this length are read into a buffer sized at once.
const SHORT_TEXT: usize = 4096;

struct In<R: Read>(R);

impl<R: Read> In<R> {
    fn u8(&mut self) -> std::io::Result<u8> {
        let mut b = [0u8; 1];
        self.0.read_exact(&mut b)?;
        Ok(b[0])
    }
    fn varint(&mut self) -> std::io::Result<u64> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            x |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(std::io::Error::other("varint longer than 64 bits"))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        self.0.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn string(&mut self) -> std::io::Result<String> {
        let len = self.varint()?;
        let v = match usize::try_from(len) {
            Ok(n) if n <= SHORT_TEXT => {
                let mut v = vec![0u8; n];
                self.0.read_exact(&mut v)?;
                v
            }
            // A length a damaged file could claim is not allocated up front: the
            // text grows as it is read, and a short file is an error.
            _ => {
                let mut v = Vec::new();
                (&mut self.0).take(len).read_to_end(&mut v)?;
                if v.len() as u64 != len {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                v
            }
        };
        String::from_utf8(v).map_err(std::io::Error::other)
    }
    /// What [`Out::id`] wrote.
    fn id(&mut self) -> std::io::Result<rentix_core::Id> {
        match self.u8()? {
            0 => {
                let mut b = [0u8; 16];
                self.0.read_exact(&mut b)?;
                Ok(rentix_core::Id::from_digest(b))
            }
            1 => Ok(self.string()?.into()),
            _ => Err(std::io::Error::other("bad id tag")),
        }
    }
    fn opt_u64(&mut self) -> std::io::Result<Option<u64>> {
        Ok(if self.u8()? == 1 {
            Some(self.u64()?)
        } else {
            None
        })
    }
    fn opt_small(&mut self) -> std::io::Result<Option<u32>> {
        match self.varint()? {
            0 => Ok(None),
            x => u32::try_from(x - 1)
                .map(Some)
                .map_err(std::io::Error::other),
        }
    }
}

fn day_number(d: NaiveDate) -> u64 {
    Datelike::num_days_from_ce(&d) as u32 as u64
}

fn put(o: &mut Out<impl Write>, r: &StoredObservation, enc: &mut Encoder) -> std::io::Result<()> {
    let b = &r.obs;
    o.id(&b.obs_id)?;
    o.id(&r.dedupe_key)?;
    enc.text(o, KIND, Some(b.kind.as_str()))?;
    o.u64(b.observed_at.timestamp_nanos_opt().unwrap_or(0) as u64)?;
    o.varint(day_number(b.fixing_date))?;
    enc.text(o, SOURCE, Some(&b.source))?;
    enc.grade(o, &b.grade)?;
    enc.text(o, GPU_RAW, Some(&b.gpu_raw))?;
    o.u64(b.usd_per_gpu_hour.get().to_bits())?;
    o.opt_u64(b.quantity_gpu_hours.map(|q| q.get().to_bits()))?;
    o.u64(b.price_raw.to_bits())?;
    enc.text(o, UNIT, Some(b.price_unit.as_str()))?;
    enc.text(o, CURRENCY, Some(&b.currency))?;
    o.opt_small(b.gpus_per_unit)?;
    enc.text(o, INTERCONNECT, b.interconnect.as_deref())?;
    o.opt_small(b.cluster_gpus)?;
    enc.text(o, TIER, b.operator_tier.map(|t| t.as_str()))?;
    o.opt_u64(b.upfront.map(f64::to_bits))?;
    o.opt_u64(b.term_start.map(day_number))?;
    enc.text(o, FILE, Some(&b.input_file))?;
    o.varint(b.input_row)
}

fn date(n: u64) -> std::io::Result<NaiveDate> {
    i32::try_from(n)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        .ok_or_else(|| std::io::Error::other("bad date"))
}

/// The reader's side of a section's dictionary: the texts in order of first
/// appearance, and the grades already parsed from them.
#[derive(Default)]
struct Decoder {
    values: Vec<String>,
    grades: Vec<Option<rentix_core::Grade>>,
    shared: Vec<Option<std::sync::Arc<str>>>,
}

impl Decoder {
    /// The code of the next dictionary-coded field (`None` when absent).
    fn code(&mut self, i: &mut In<impl Read>) -> std::io::Result<Option<usize>> {
        match i.varint()? {
            ABSENT => Ok(None),
            NEW => {
                self.values.push(i.string()?);
                self.grades.push(None);
                self.shared.push(None);
                Ok(Some(self.values.len() - 1))
            }
            t => {
                let code = usize::try_from(t - CODED).map_err(std::io::Error::other)?;
                if code >= self.values.len() {
                    return Err(std::io::Error::other("a text code not defined yet"));
                }
                Ok(Some(code))
            }
        }
    }
    fn opt_text(&mut self, i: &mut In<impl Read>) -> std::io::Result<Option<&str>> {
        Ok(self.code(i)?.map(|c| self.values[c].as_str()))
    }
    fn text(&mut self, i: &mut In<impl Read>) -> std::io::Result<&str> {
        self.opt_text(i)?
            .ok_or_else(|| std::io::Error::other("a required text is absent"))
    }
    /// A text shared by the rows that name it (a source, an input file), `None`
    /// when absent.
    fn opt_shared(
        &mut self,
        i: &mut In<impl Read>,
    ) -> std::io::Result<Option<std::sync::Arc<str>>> {
        Ok(self.code(i)?.map(|code| {
            std::sync::Arc::clone(
                self.shared[code].get_or_insert_with(|| self.values[code].as_str().into()),
            )
        }))
    }
    /// A required text shared by the rows that name it.
    fn shared(&mut self, i: &mut In<impl Read>) -> std::io::Result<std::sync::Arc<str>> {
        self.opt_shared(i)?
            .ok_or_else(|| std::io::Error::other("a required text is absent"))
    }
    fn grade(&mut self, i: &mut In<impl Read>) -> std::io::Result<rentix_core::Grade> {
        let code = self
            .code(i)?
            .ok_or_else(|| std::io::Error::other("the grade is absent"))?;
        if let Some(g) = &self.grades[code] {
            return Ok(g.clone());
        }
        let g: rentix_core::Grade = self.values[code]
            .parse()
            .map_err(|e| std::io::Error::other(format!("{e}")))?;
        self.grades[code] = Some(g.clone());
        Ok(g)
    }
}

fn get(i: &mut In<impl Read>, dec: &mut Decoder) -> std::io::Result<StoredObservation> {
    let bad = |e: String| std::io::Error::other(e);
    let obs_id = i.id()?;
    let dedupe_key = i.id()?;
    let kind = dec.text(i)?.parse().map_err(|e| bad(format!("{e}")))?;
    let observed_at = DateTime::from_timestamp_nanos(i.u64()? as i64);
    let fixing_date = date(i.varint()?)?;
    let source = dec.shared(i)?;
    let grade = dec.grade(i)?;
    let gpu_raw = dec.shared(i)?;
    let usd = UsdPerGpuHour::positive(f64::from_bits(i.u64()?)).map_err(|e| bad(e.to_string()))?;
    let quantity = i
        .opt_u64()?
        .map(|b| GpuHours::new(f64::from_bits(b)))
        .transpose()
        .map_err(|e| bad(e.to_string()))?;
    let price_raw = f64::from_bits(i.u64()?);
    let price_unit = dec.text(i)?.parse().map_err(|e| bad(format!("{e}")))?;
    let currency = dec.shared(i)?;
    let gpus_per_unit = i.opt_small()?;
    let interconnect = dec.opt_shared(i)?;
    let cluster_gpus = i.opt_small()?;
    let operator_tier = dec
        .opt_text(i)?
        .map(str::parse)
        .transpose()
        .map_err(|e| bad(format!("{e}")))?;
    let upfront = i.opt_u64()?.map(f64::from_bits);
    let term_start = i.opt_u64()?.map(date).transpose()?;
    let input_file = dec.shared(i)?;
    let input_row = i.varint()?;
    Ok(StoredObservation {
        obs: Observation {
            obs_id,
            kind,
            observed_at,
            fixing_date,
            source,
            grade,
            gpu_raw,
            usd_per_gpu_hour: usd,
            quantity_gpu_hours: quantity,
            price_raw,
            price_unit,
            currency,
            gpus_per_unit,
            interconnect,
            cluster_gpus,
            operator_tier,
            upfront,
            term_start,
            input_file,
            input_row,
        },
        dedupe_key,
    })
}

/// A section of a scratch file: the rows of one fixing date, starting at `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The scratch file.
    pub path: std::path::PathBuf,
    /// Where the section starts, in bytes.
    pub offset: u64,
    /// How many rows it holds (a reader reserves room for them at once).
    pub rows: usize,
}

/// Dates of a spill encoded together in parallel.
const ENCODE_GROUP_DATES: usize = 32;

/// Writes the rows of every date of a batch into the one scratch file `path`, a
/// section per date (rows in the order given), and returns where each date's
/// section starts. One file per spill, not one per date: a two-year batch spilled
/// 731 files, and creating them (inode allocation) was a third of an ingest's
/// kernel time. The sections are encoded in parallel (the spill is on the path
/// every batch of the input waits on) and written in the order given.
pub fn write_sections(
    path: &Path,
    batches: &[(NaiveDate, Vec<&StoredObservation>)],
) -> Result<Vec<(NaiveDate, Section)>> {
    let werr = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut f = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).map_err(werr)?);
    let mut out = Vec::with_capacity(batches.len());
    let mut offset = 0u64;
    // A group of dates at a time: the encoded bytes of a whole batch held at once
    // were a quarter of the ingest's peak memory.
    for group in batches.chunks(ENCODE_GROUP_DATES) {
        let encoded: Vec<Vec<u8>> = group
            .par_iter()
            .map(|(_, rows)| {
                let mut o = Out(Vec::with_capacity(rows.len() * 128 + 8));
                let mut enc = Encoder::default();
                // Writes to memory cannot fail.
                let _ = o.u64(rows.len() as u64);
                for r in rows {
                    let _ = put(&mut o, r, &mut enc);
                }
                o.0
            })
            .collect();
        for ((date, rows), bytes) in group.iter().zip(&encoded) {
            out.push((
                *date,
                Section {
                    path: path.to_path_buf(),
                    offset,
                    rows: rows.len(),
                },
            ));
            f.write_all(bytes).map_err(werr)?;
            offset += bytes.len() as u64;
        }
    }
    f.flush().map_err(werr)?;
    Ok(out)
}

/// One section alone in a new scratch file, written a row at a time; how many rows
/// it holds is declared first (the section starts with its count).
pub(crate) struct SectionWriter {
    out: Out<BufWriter<std::fs::File>>,
    section: Section,
    written: usize,
    enc: Encoder,
}

impl SectionWriter {
    pub(crate) fn create(path: &Path, rows: usize) -> Result<Self> {
        let werr = |source| StoreError::Write {
            path: path.to_path_buf(),
            source,
        };
        let f = std::fs::File::create(path).map_err(werr)?;
        let mut out = Out(BufWriter::with_capacity(1 << 20, f));
        out.u64(rows as u64).map_err(werr)?;
        Ok(Self {
            out,
            section: Section {
                path: path.to_path_buf(),
                offset: 0,
                rows,
            },
            written: 0,
            enc: Encoder::default(),
        })
    }

    pub(crate) fn write(&mut self, r: &StoredObservation) -> Result<()> {
        let werr = |source| StoreError::Write {
            path: self.section.path.clone(),
            source,
        };
        if self.written == self.section.rows {
            return Err(werr(std::io::Error::other(
                "more rows than the section declares",
            )));
        }
        self.written += 1;
        put(&mut self.out, r, &mut self.enc).map_err(werr)
    }

    pub(crate) fn finish(mut self) -> Result<Section> {
        let werr = |source| StoreError::Write {
            path: self.section.path.clone(),
            source,
        };
        if self.written != self.section.rows {
            return Err(werr(std::io::Error::other(
                "fewer rows than the section declares",
            )));
        }
        self.out.0.flush().map_err(werr)?;
        Ok(self.section)
    }
}

/// The rows of one section, read one at a time.
pub(crate) struct SectionReader {
    path: std::path::PathBuf,
    input: In<BufReader<std::fs::File>>,
    left: usize,
    decoder: Decoder,
}

impl SectionReader {
    pub(crate) fn open(section: &Section) -> Result<Self> {
        Self::open_buffered(section, 1 << 20)
    }

    /// With a read buffer of `capacity` bytes (a merge opens many sections at once).
    pub(crate) fn open_buffered(section: &Section, capacity: usize) -> Result<Self> {
        let path = section.path.clone();
        let rerr = |source| StoreError::Read {
            path: path.clone(),
            source,
        };
        let mut f = std::fs::File::open(&path).map_err(rerr)?;
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(section.offset)).map_err(rerr)?;
        let mut input = In(BufReader::with_capacity(capacity, f));
        let left = input.u64().map_err(rerr)? as usize;
        Ok(Self {
            path,
            input,
            left,
            decoder: Decoder::default(),
        })
    }

    /// Rows not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.left
    }
}

impl Iterator for SectionReader {
    type Item = Result<StoredObservation>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(
            get(&mut self.input, &mut self.decoder).map_err(|source| StoreError::Read {
                path: self.path.clone(),
                source,
            }),
        )
    }
}

/// Reads one section written by [`write_sections`], appending its rows to `into`.
pub(crate) fn read_section(section: &Section, into: &mut Vec<StoredObservation>) -> Result<()> {
    let rows = SectionReader::open(section)?;
    into.reserve(rows.remaining());
    for r in rows {
        into.push(r?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::rows;

    fn read(section: &Section) -> Vec<StoredObservation> {
        let mut out = Vec::new();
        read_section(section, &mut out).unwrap();
        out
    }

    #[test]
    fn sections_read_back_the_rows_written() {
        let dir = tempfile::tempdir().unwrap();
        let (d1, d2) = (
            NaiveDate::from_ymd_opt(2025, 3, 1).unwrap(),
            NaiveDate::from_ymd_opt(1970, 1, 1).unwrap(),
        );
        let (a, b) = (rows(d1, 400), rows(d2, 3));
        let batches = vec![(d1, a.iter().collect()), (d2, b.iter().collect())];
        let path = dir.path().join("1.spill");
        let sections = write_sections(&path, &batches).unwrap();
        assert_eq!(sections.len(), 2);
        // Each section has its own dictionary: read alone, in any order.
        assert_eq!(read(&sections[1].1), b);
        assert_eq!(read(&sections[0].1), a);

        let mut w = SectionWriter::create(&dir.path().join("2.spill"), a.len()).unwrap();
        for r in &a {
            w.write(r).unwrap();
        }
        assert_eq!(read(&w.finish().unwrap()), a);
    }

    #[test]
    fn repeated_text_is_written_once_a_section() {
        let dir = tempfile::tempdir().unwrap();
        let d = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        let mut rows = rows(d, 1000);
        for r in &mut rows {
            r.obs.input_file = "/a/long/path/to/an/input/file/of/the/run.csv".into();
        }
        let path = dir.path().join("1.spill");
        write_sections(&path, &[(d, rows.iter().collect())]).unwrap();
        let per_row = std::fs::metadata(&path).unwrap().len() / 1000;
        assert!(per_row < 110, "{per_row} bytes a row");
    }

    #[test]
    fn a_truncated_or_corrupt_section_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let d = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        let rows = rows(d, 50);
        let path = dir.path().join("1.spill");
        let sections = write_sections(&path, &[(d, rows.iter().collect())]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read_section(&sections[0].1, &mut Vec::new()).is_err());
        // The first row's id is text (empty): its tag at byte 8, its length at 9.
        assert_eq!(rows[0].obs.obs_id.len(), 0);
        assert_eq!(bytes[8..10], [1, 0]);
        // A length no file holds: an error, not an allocation of it.
        let mut forged = bytes.clone();
        forged.splice(
            9..10,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
        );
        std::fs::write(&path, &forged).unwrap();
        assert!(read_section(&sections[0].1, &mut Vec::new()).is_err());
        // A code before its value: the first text token claims a value not yet seen.
        let mut forged = bytes.clone();
        // After the text id (tag, length) the dedupe key of 32 hex digits: a tag
        // and its 16 bytes.
        let first_kind = 8 + 2 + 1 + 16;
        forged[first_kind] = 9;
        std::fs::write(&path, &forged).unwrap();
        assert!(read_section(&sections[0].1, &mut Vec::new()).is_err());
        // An id tag that is neither.
        let mut forged = bytes.clone();
        forged[10] = 7;
        std::fs::write(&path, &forged).unwrap();
        assert!(read_section(&sections[0].1, &mut Vec::new()).is_err());
    }
}
