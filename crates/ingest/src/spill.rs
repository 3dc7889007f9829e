//! Ingest staging spills: accepted rows written to a scratch file when a batch is
//! full and read back once at the commit. A compact binary encoding of the typed
//! fields (numbers as bits, timestamps as nanoseconds, text length-prefixed): a
//! Parquet spill converted every row to text columns and parsed it back, about a third
//! of a 1M-row ingest. The format is private to one run and never outlives it.

use crate::error::{IngestError, Result};
use crate::schema::StoredObservation;
use chrono::{DateTime, Datelike, NaiveDate};
use rayon::prelude::*;
use rentix_core::{GpuHours, Observation, UsdPerGpuHour};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

struct Out<W: Write>(W);

impl<W: Write> Out<W> {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.0.write_all(&(b.len() as u32).to_le_bytes())?;
        self.0.write_all(b)
    }
    fn str(&mut self, s: &str) -> std::io::Result<()> {
        self.bytes(s.as_bytes())
    }
    fn opt_str(&mut self, s: Option<&str>) -> std::io::Result<()> {
        match s {
            Some(s) => {
                self.0.write_all(&[1])?;
                self.str(s)
            }
            None => self.0.write_all(&[0]),
        }
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
}

struct In<R: Read>(R);

impl<R: Read> In<R> {
    fn u8(&mut self) -> std::io::Result<u8> {
        let mut b = [0u8; 1];
        self.0.read_exact(&mut b)?;
        Ok(b[0])
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        self.0.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn string(&mut self) -> std::io::Result<String> {
        let mut b = [0u8; 4];
        self.0.read_exact(&mut b)?;
        let mut v = vec![0u8; u32::from_le_bytes(b) as usize];
        self.0.read_exact(&mut v)?;
        String::from_utf8(v).map_err(std::io::Error::other)
    }
    /// A string read into `buf` (reused across rows: no allocation for values that
    /// are parsed, not kept).
    fn text<'b>(&mut self, buf: &'b mut Vec<u8>) -> std::io::Result<&'b str> {
        let mut b = [0u8; 4];
        self.0.read_exact(&mut b)?;
        buf.resize(u32::from_le_bytes(b) as usize, 0);
        self.0.read_exact(buf)?;
        std::str::from_utf8(buf).map_err(std::io::Error::other)
    }
    fn opt_string(&mut self) -> std::io::Result<Option<String>> {
        Ok(if self.u8()? == 1 {
            Some(self.string()?)
        } else {
            None
        })
    }
    fn opt_u64(&mut self) -> std::io::Result<Option<u64>> {
        Ok(if self.u8()? == 1 {
            Some(self.u64()?)
        } else {
            None
        })
    }
}

fn day_number(d: NaiveDate) -> u64 {
    Datelike::num_days_from_ce(&d) as u32 as u64
}

/// The text of the last grade written: rows of a section run in long stretches of
/// one grade, so its key is formatted once per stretch, not once per row.
#[derive(Default)]
struct GradeKey(Option<(rentix_core::Grade, String)>);

impl GradeKey {
    fn of(&mut self, g: &rentix_core::Grade) -> &str {
        if self.0.as_ref().is_none_or(|(last, _)| last != g) {
            self.0 = Some((g.clone(), g.key()));
        }
        self.0.as_ref().map_or("", |(_, k)| k.as_str())
    }
}

fn put(
    o: &mut Out<impl Write>,
    r: &StoredObservation,
    grade: &mut GradeKey,
) -> std::io::Result<()> {
    let b = &r.obs;
    o.str(&b.obs_id)?;
    o.str(&r.dedupe_key)?;
    o.str(b.kind.as_str())?;
    o.u64(b.observed_at.timestamp_nanos_opt().unwrap_or(0) as u64)?;
    o.u64(day_number(b.fixing_date))?;
    o.str(&b.source)?;
    o.str(grade.of(&b.grade))?;
    o.str(&b.gpu_raw)?;
    o.u64(b.usd_per_gpu_hour.get().to_bits())?;
    o.opt_u64(b.quantity_gpu_hours.map(|q| q.get().to_bits()))?;
    o.u64(b.price_raw.to_bits())?;
    o.str(b.price_unit.as_str())?;
    o.str(&b.currency)?;
    o.opt_u64(b.gpus_per_unit.map(u64::from))?;
    o.opt_str(b.interconnect.as_deref())?;
    o.opt_u64(b.cluster_gpus.map(u64::from))?;
    o.opt_str(b.operator_tier.map(|t| t.as_str()))?;
    o.opt_u64(b.upfront.map(f64::to_bits))?;
    o.opt_u64(b.term_start.map(day_number))?;
    o.str(&b.input_file)?;
    o.u64(b.input_row)
}

fn date(n: u64) -> std::io::Result<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(n as i32).ok_or_else(|| std::io::Error::other("bad date"))
}

/// What reading a scratch file reuses from row to row: a buffer for values that are
/// parsed rather than kept, and the grades already parsed (a file holds a few
/// hundred distinct grades in up to a batch of rows).
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    grades: std::collections::HashMap<String, rentix_core::Grade>,
}

fn get(i: &mut In<impl Read>, sc: &mut Scratch) -> std::io::Result<StoredObservation> {
    let bad = |e: String| std::io::Error::other(e);
    let obs_id = i.string()?;
    let dedupe_key = i.string()?;
    let kind = i
        .text(&mut sc.buf)?
        .parse()
        .map_err(|e| bad(format!("{e}")))?;
    let observed_at = DateTime::from_timestamp_nanos(i.u64()? as i64);
    let fixing_date = date(i.u64()?)?;
    let source = i.string()?;
    let key = i.text(&mut sc.buf)?;
    let grade = match sc.grades.get(key) {
        Some(g) => g.clone(),
        None => {
            let g: rentix_core::Grade = key.parse().map_err(|e| bad(format!("{e}")))?;
            sc.grades.insert(key.to_string(), g.clone());
            g
        }
    };
    let gpu_raw = i.string()?;
    let usd = UsdPerGpuHour::positive(f64::from_bits(i.u64()?)).map_err(|e| bad(e.to_string()))?;
    let quantity = i
        .opt_u64()?
        .map(|b| GpuHours::new(f64::from_bits(b)))
        .transpose()
        .map_err(|e| bad(e.to_string()))?;
    let price_raw = f64::from_bits(i.u64()?);
    let price_unit = i
        .text(&mut sc.buf)?
        .parse()
        .map_err(|e| bad(format!("{e}")))?;
    let currency = i.string()?;
    let gpus_per_unit = i.opt_u64()?.map(|x| x as u32);
    let interconnect = i.opt_string()?;
    let cluster_gpus = i.opt_u64()?.map(|x| x as u32);
    let operator_tier = i
        .opt_string()?
        .map(|s| s.parse())
        .transpose()
        .map_err(|e| bad(format!("{e}")))?;
    let upfront = i.opt_u64()?.map(f64::from_bits);
    let term_start = i.opt_u64()?.map(date).transpose()?;
    let input_file = i.string()?;
    let input_row = i.u64()?;
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
    pub path: std::path::PathBuf,
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
    let werr = |source| IngestError::Write {
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
                let mut o = Out(Vec::with_capacity(rows.len() * 160 + 8));
                let mut grade = GradeKey::default();
                // Writes to memory cannot fail.
                let _ = o.u64(rows.len() as u64);
                for r in rows {
                    let _ = put(&mut o, r, &mut grade);
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
pub struct SectionWriter {
    out: Out<BufWriter<std::fs::File>>,
    section: Section,
    written: usize,
    grade: GradeKey,
}

impl SectionWriter {
    pub fn create(path: &Path, rows: usize) -> Result<Self> {
        let werr = |source| IngestError::Write {
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
            grade: GradeKey::default(),
        })
    }

    pub fn write(&mut self, r: &StoredObservation) -> Result<()> {
        let werr = |source| IngestError::Write {
            path: self.section.path.clone(),
            source,
        };
        if self.written == self.section.rows {
            return Err(werr(std::io::Error::other(
                "more rows than the section declares",
            )));
        }
        self.written += 1;
        put(&mut self.out, r, &mut self.grade).map_err(werr)
    }

    pub fn finish(mut self) -> Result<Section> {
        let werr = |source| IngestError::Write {
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
pub struct SectionReader {
    path: std::path::PathBuf,
    input: In<BufReader<std::fs::File>>,
    left: usize,
    scratch: Scratch,
}

impl SectionReader {
    pub fn open(section: &Section) -> Result<Self> {
        Self::open_buffered(section, 1 << 20)
    }

    /// With a read buffer of `capacity` bytes (a merge opens many sections at once).
    pub fn open_buffered(section: &Section, capacity: usize) -> Result<Self> {
        let path = section.path.clone();
        let rerr = |source| IngestError::Read {
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
            scratch: Scratch::default(),
        })
    }

    /// Rows not read yet.
    pub fn remaining(&self) -> usize {
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
            get(&mut self.input, &mut self.scratch).map_err(|source| IngestError::Read {
                path: self.path.clone(),
                source,
            }),
        )
    }
}

/// Reads one section written by [`write_sections`], appending its rows to `into`.
pub fn read_section(section: &Section, into: &mut Vec<StoredObservation>) -> Result<()> {
    let rows = SectionReader::open(section)?;
    into.reserve(rows.remaining());
    for r in rows {
        into.push(r?);
    }
    Ok(())
}
