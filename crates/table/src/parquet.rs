//! Parquet through polars (the `parquet` feature): encoding and decoding a
//! [`Table`], the batched writer of the store's partitions, and the footer read.
//! Without the feature, `no_parquet.rs` stands in with the same functions, each
//! refusing with [`TableError::NoParquet`].

use crate::{Coded, Col, Result, Table, TableError, ROW_GROUP_ROWS};
use polars::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

impl Coded {
    /// A polars string column gathered from the distinct values: each value is
    /// copied once, and a cell is a view of it (no string per cell).
    fn to_series(&self, name: PlSmallStr) -> PolarsResult<Series> {
        let null = self.values.len() as IdxSize;
        let distinct = StringChunked::from_iter_options(
            name,
            self.values.iter().map(|v| Some(v.as_str())).chain([None]),
        );
        let codes = IdxCa::from_vec(
            PlSmallStr::EMPTY,
            self.codes
                .iter()
                .map(|c| c.map_or(null, |c| c as IdxSize))
                .collect(),
        );
        Ok(distinct.take(&codes)?.into_series())
    }
}

impl Col {
    /// A column of the same type and no rows.
    fn empty_like(&self) -> Col {
        match self {
            Col::Str(_) => Col::Str(Vec::new()),
            Col::F64(_) => Col::F64(Vec::new()),
            Col::I64(_) => Col::I64(Vec::new()),
            Col::Bool(_) => Col::Bool(Vec::new()),
            Col::Timestamp(_) => Col::Timestamp(Vec::new()),
            Col::Date(_) => Col::Date(Vec::new()),
            Col::Coded(_) => Col::Coded(Coded::default()),
        }
    }
}

impl Table {
    /// A table of the same columns and no rows.
    fn empty_like(&self) -> Table {
        Table {
            names: self.names.clone(),
            cols: self.cols.iter().map(Col::empty_like).collect(),
        }
    }

    fn to_frame(&self) -> PolarsResult<DataFrame> {
        let columns: Vec<Column> = self
            .names
            .iter()
            .zip(&self.cols)
            .map(|(n, c)| {
                let name: PlSmallStr = n.as_str().into();
                Ok(match c {
                    Col::Str(v) => Column::new(name, v),
                    Col::Coded(c) => Column::from(c.to_series(name)?),
                    Col::F64(v) => Column::new(name, v),
                    Col::I64(v) => Column::new(name, v),
                    Col::Bool(v) => Column::new(name, v),
                    // Built, not cast: a cast drops the zone unless polars' time
                    // zone database is compiled in, and UTC needs none.
                    Col::Timestamp(v) => Column::from(
                        Int64Chunked::from_iter_options(name, v.iter().copied())
                            .into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC))
                            .into_series(),
                    ),
                    Col::Date(v) => Column::new(name, v).cast(&DataType::Date)?,
                })
            })
            .collect::<PolarsResult<_>>()?;
        DataFrame::new(self.height(), columns)
    }

    pub(crate) fn write_parquet(&self, w: &mut dyn Write, path: &Path) -> Result<()> {
        let perr = |e: PolarsError| TableError::Parquet {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let mut df = self.to_frame().map_err(perr)?;
        ParquetWriter::new(w)
            .with_compression(ParquetCompression::Snappy)
            // Small partitions are written in parallel with each other already; a
            // large one (a day of a busy feed) uses the pool for its columns.
            .set_parallel(df.height() >= PARALLEL_WRITE_ROWS)
            .finish(&mut df)
            .map_err(perr)?;
        Ok(())
    }

    /// Reads a Parquet file written by [`Table::write`], or any Parquet file whose
    /// columns are strings, floats, integers or booleans.
    pub fn read_parquet(path: &Path) -> Result<Self> {
        Self::read_parquet_columns(path, None)
    }

    /// The number of rows of a Parquet file, from its footer (nothing else is read).
    pub fn parquet_rows(path: &Path) -> Result<usize> {
        let f = File::open(path).map_err(|source| TableError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        ParquetReader::new(f)
            .num_rows()
            .map_err(|e| TableError::Parquet {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })
    }

    /// `Table::read_parquet_part` of a Parquet file already in memory (`bytes`,
    /// read from `path`, which errors name): a reader that checked the bytes it read
    /// decodes those very bytes, not the file again.
    pub fn read_parquet_bytes(
        bytes: &[u8],
        path: &Path,
        columns: Option<&[&str]>,
        coded: &[&str],
        rows: Option<(usize, usize)>,
    ) -> Result<Self> {
        Self::read_parquet_from(std::io::Cursor::new(bytes), path, columns, coded, rows)
    }

    /// Reads only `columns` of a Parquet file (all when `None`); a named column the
    /// file lacks is simply absent from the table.
    pub fn read_parquet_columns(path: &Path, columns: Option<&[&str]>) -> Result<Self> {
        Self::read_parquet_coded(path, columns, &[])
    }

    /// [`Table::read_parquet_columns`], the text columns named in `coded` read as
    /// [`Col::Coded`]: a string per distinct value, not per cell.
    pub fn read_parquet_coded(
        path: &Path,
        columns: Option<&[&str]>,
        coded: &[&str],
    ) -> Result<Self> {
        Self::read_parquet_part(path, columns, coded, None)
    }

    /// Rows `offset .. offset + len` of a Parquet file (fewer at its end), every
    /// column: a large file read a slice at a time (a slice within a row group reads
    /// that row group only).
    pub fn read_parquet_rows(path: &Path, offset: usize, len: usize) -> Result<Self> {
        Self::read_parquet_part(path, None, &[], Some((offset, len)))
    }

    /// Reads `columns` (all when `None`) of rows `rows` (`(offset, len)`, all when
    /// `None`) of a Parquet file, the text columns named in `coded` as
    /// [`Col::Coded`].
    fn read_parquet_part(
        path: &Path,
        columns: Option<&[&str]>,
        coded: &[&str],
        rows: Option<(usize, usize)>,
    ) -> Result<Self> {
        let f = File::open(path).map_err(|source| TableError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::read_parquet_from(f, path, columns, coded, rows)
    }

    fn read_parquet_from<R: polars::io::mmap::MmapBytesReader>(
        source: R,
        path: &Path,
        columns: Option<&[&str]>,
        coded: &[&str],
        rows: Option<(usize, usize)>,
    ) -> Result<Self> {
        let perr = |e: PolarsError| TableError::Parquet {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let mut reader = ParquetReader::new(source);
        if let Some(want) = columns {
            let mut present = reader
                .schema()
                .map_err(perr)?
                .iter_names()
                .map(|n| n.to_string())
                .collect::<Vec<_>>();
            present.retain(|n| want.contains(&n.as_str()));
            reader = reader.with_columns(Some(present));
        }
        // A small file is read on the calling thread: handing its few columns to
        // polars' pool cost more than it saved (a store of 731 small partitions is
        // read several files at once by the caller already).
        let strategy = if reader.num_rows().map_err(perr)? < PARALLEL_READ_ROWS {
            ParallelStrategy::None
        } else {
            ParallelStrategy::Auto
        };
        let df = reader
            .read_parallel(strategy)
            .with_slice(rows)
            .finish()
            .map_err(perr)?;
        let mut t = Table::new();
        for c in df.columns() {
            let col = match c.dtype() {
                DataType::String if coded.contains(&c.name().as_str()) => {
                    Col::Coded(code(c.str().map_err(perr)?.iter()))
                }
                DataType::String => Col::Str(
                    c.str()
                        .map_err(perr)?
                        .iter()
                        .map(|v| v.map(str::to_string))
                        .collect(),
                ),
                DataType::Float64 => Col::F64(c.f64().map_err(perr)?.iter().collect()),
                DataType::Int64 => Col::I64(c.i64().map_err(perr)?.iter().collect()),
                DataType::Boolean => Col::Bool(c.bool().map_err(perr)?.iter().collect()),
                DataType::Datetime(unit, _) => {
                    let per_micro = match unit {
                        TimeUnit::Nanoseconds => Some(1_000),
                        TimeUnit::Microseconds => None,
                        TimeUnit::Milliseconds => Some(-1_000),
                    };
                    Col::Timestamp(
                        c.datetime()
                            .map_err(perr)?
                            .physical()
                            .iter()
                            .map(|v| match per_micro {
                                None => v,
                                Some(k) if k > 0 => v.map(|x| x.div_euclid(k)),
                                Some(k) => v.and_then(|x| x.checked_mul(-k)),
                            })
                            .collect(),
                    )
                }
                DataType::Date => Col::Date(c.date().map_err(perr)?.physical().iter().collect()),
                other => {
                    return Err(TableError::Parquet {
                        path: path.to_path_buf(),
                        detail: format!("column {} has unsupported type {other}", c.name()),
                    })
                }
            };
            t.push(c.name().as_str(), col);
        }
        Ok(t)
    }
}

/// Codes text cells by their distinct values, in order of first appearance.
fn code<'a>(cells: impl Iterator<Item = Option<&'a str>>) -> Coded {
    let mut index: std::collections::HashMap<&'a str, u32> = std::collections::HashMap::new();
    let mut out = Coded::default();
    for cell in cells {
        let c = cell.map(|text| {
            *index.entry(text).or_insert_with(|| {
                out.values.push(text.to_string());
                (out.values.len() - 1) as u32
            })
        });
        out.codes.push(c);
    }
    out
}

/// Rows from which one Parquet file is encoded with polars' thread pool.
const PARALLEL_WRITE_ROWS: usize = 100_000;

/// Rows from which a Parquet file is read with polars' pool.
const PARALLEL_READ_ROWS: usize = 100_000;

/// Writes one Parquet file from tables with the same columns, in order, each a row
/// group (split if longer than [`ROW_GROUP_ROWS`]): a caller converts its rows one
/// batch at a time and never holds the file's whole table. Nobody reads the file
/// until it is published, so it gets no fsync of its own: the caller makes a batch
/// of files durable at once ([`crate::sync_files`]) before publishing any. No table at all
/// writes nothing.
pub fn write_unsynced_parquet_batches(
    path: &Path,
    batches: impl Iterator<Item = Table>,
) -> Result<()> {
    let werr = |source| TableError::Write {
        path: path.to_path_buf(),
        source,
    };
    let perr = |e: PolarsError| TableError::Parquet {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let mut batches = batches.peekable();
    let Some(first) = batches.peek() else {
        return Ok(());
    };
    // The schema of the first batch's columns, from a frame of none of its rows.
    let schema = first
        .empty_like()
        .to_frame()
        .map_err(perr)?
        .schema()
        .as_ref()
        .clone();
    let parallel = first.height() >= PARALLEL_WRITE_ROWS;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    let mut file = BufWriter::new(File::create(path).map_err(werr)?);
    let mut writer = ParquetWriter::new(&mut file)
        .with_compression(ParquetCompression::Snappy)
        .set_parallel(parallel)
        .batched(&schema)
        .map_err(perr)?;
    for t in batches {
        let df = t.to_frame().map_err(perr)?;
        if df.schema().as_ref() != &schema {
            return Err(TableError::Parquet {
                path: path.to_path_buf(),
                detail: "a batch's columns differ from the first batch's".into(),
            });
        }
        for start in (0..df.height()).step_by(ROW_GROUP_ROWS) {
            writer
                .write_batch(&df.slice(start as i64, ROW_GROUP_ROWS))
                .map_err(perr)?;
        }
    }
    writer.finish().map_err(perr)?;
    drop(writer);
    file.flush().map_err(werr)
}
