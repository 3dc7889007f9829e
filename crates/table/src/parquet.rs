//! Parquet through polars' own Parquet and Arrow crates (`polars-parquet`,
//! `polars-arrow`; the `parquet` feature): encoding and decoding a [`Table`], the
//! batched writer of the store's partitions, and the footer read. Without the
//! feature, `no_parquet.rs` stands in with the same functions, each refusing with
//! [`TableError::NoParquet`].
//!
//! The files are those polars' `ParquetWriter` wrote for rentix before (a data frame
//! was only ever the way to these crates): the same Arrow types (text as views, UTC
//! microsecond timestamps, dates), the same options (Snappy, statistics, format
//! version 1, 1 MiB pages, the Arrow schema in the footer), the same row groups. So a
//! published file's bytes, and with them every digest already published, do not
//! depend on which of the two wrote it; the demo's committed files check it.

use crate::{Coded, Col, Result, Table, TableError, ROW_GROUP_ROWS};
use polars_arrow::array::{
    Array, BooleanArray, DictionaryArray, DictionaryKey, MutableBinaryViewArray,
    MutableBooleanArray, MutablePrimitiveArray, PrimitiveArray, Utf8ViewArray,
};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, ArrowSchema, Field, IntegerType, TimeUnit};
use polars_buffer::Buffer;
use polars_compute::cast::{cast, CastOptionsImpl};
use polars_error::{PolarsError, PolarsResult};
use polars_parquet::read::{
    column_iter_to_arrays, infer_schema, read_metadata, BasicDecompressor, ColumnChunkMetadata,
    FileMetadata, Filter, PageReader, ParquetError,
};
use polars_parquet::write::{
    array_to_columns, get_dtype_encoding, CompressedPage, CompressionOptions, Compressor, DynIter,
    DynStreamingIterator, Encoding, FallibleStreamingIterator, FileWriter, ParquetType,
    StatisticsOptions, Version, WriteOptions,
};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::Path;

/// The options every rentix Parquet file is written with (those polars'
/// `ParquetWriter` applied with Snappy chosen): statistics for every column, format
/// version 1, data pages of at most 1 MiB.
fn write_options() -> WriteOptions {
    WriteOptions {
        statistics: StatisticsOptions::default(),
        compression: CompressionOptions::Snappy,
        version: Version::V1,
        data_page_size: None,
    }
}

/// The zone of every timestamp rentix writes.
const UTC: &str = "UTC";

impl Col {
    /// The Arrow type this column is written as.
    fn arrow_type(&self) -> ArrowDataType {
        match self {
            Col::Str(_) | Col::Coded(_) => ArrowDataType::Utf8View,
            Col::F64(_) => ArrowDataType::Float64,
            Col::I64(_) => ArrowDataType::Int64,
            Col::Bool(_) => ArrowDataType::Boolean,
            Col::Timestamp(_) => ArrowDataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            Col::Date(_) => ArrowDataType::Date32,
        }
    }

    /// The column as one Arrow array of [`Col::arrow_type`].
    fn to_array(&self) -> PolarsResult<Box<dyn Array>> {
        Ok(match self {
            Col::Str(v) => Utf8ViewArray::from_slice(v).boxed(),
            Col::Coded(c) => c.to_array()?.boxed(),
            Col::F64(v) => {
                PrimitiveArray::from(MutablePrimitiveArray::from_iter(v.iter().copied())).boxed()
            }
            Col::I64(v) => {
                PrimitiveArray::from(MutablePrimitiveArray::from_iter(v.iter().copied())).boxed()
            }
            Col::Bool(v) => {
                BooleanArray::from(MutableBooleanArray::from_iter(v.iter().copied())).boxed()
            }
            Col::Timestamp(v) => {
                PrimitiveArray::from(MutablePrimitiveArray::from_iter(v.iter().copied()))
                    .to(self.arrow_type())
                    .boxed()
            }
            Col::Date(v) => {
                PrimitiveArray::from(MutablePrimitiveArray::from_iter(v.iter().copied()))
                    .to(ArrowDataType::Date32)
                    .boxed()
            }
        })
    }
}

impl Coded {
    /// A text array over the distinct values: each value is copied once, and a cell
    /// is a view of it (no string per cell).
    fn to_array(&self) -> PolarsResult<Utf8ViewArray> {
        self.range_array(0, self.codes.len())
    }

    /// [`Coded::to_array`] of rows `start .. start + len`.
    fn range_array(&self, start: usize, len: usize) -> PolarsResult<Utf8ViewArray> {
        let codes = self.codes.get(start..start + len).ok_or_else(|| {
            polars_error::polars_err!(OutOfBounds: "rows {start}.. of a coded column of {}", self.codes.len())
        })?;
        let distinct =
            MutableBinaryViewArray::<str>::from_values_iter(self.values.iter().map(String::as_str))
                .freeze();
        let views = distinct.views();
        let empty = polars_arrow::array::View::default();
        let cells: Vec<_> = codes
            .iter()
            .map(|c| match c {
                None => Ok(empty),
                Some(c) => views.get(*c as usize).copied().ok_or_else(|| {
                    polars_error::polars_err!(
                        OutOfBounds: "a coded cell points at value {c} of {}", views.len()
                    )
                }),
            })
            .collect::<PolarsResult<_>>()?;
        let validity = codes
            .iter()
            .any(Option::is_none)
            .then(|| Bitmap::from_iter(codes.iter().map(Option::is_some)));
        Utf8ViewArray::try_new(
            ArrowDataType::Utf8View,
            cells.into(),
            distinct.data_buffers().clone(),
            validity,
        )
    }
}

impl Table {
    /// The Arrow schema of this table's columns (every field nullable).
    fn arrow_schema(&self) -> ArrowSchema {
        self.names
            .iter()
            .zip(&self.cols)
            .map(|(n, c)| {
                let name = n.as_str().into();
                (name, Field::new(n.as_str().into(), c.arrow_type(), true))
            })
            .collect()
    }

    /// The columns as Arrow arrays, once the table is checked to be one
    /// ([`Table::check_shape`]).
    fn arrays(&self) -> PolarsResult<Vec<Box<dyn Array>>> {
        self.check_shape()?;
        self.cols.iter().map(Col::to_array).collect()
    }

    /// Every column as long as the first, a name for each and no name twice: a
    /// file of another table would be unreadable, or hold other columns.
    fn check_shape(&self) -> PolarsResult<()> {
        let height = self.height();
        for (name, col) in self.names.iter().zip(&self.cols) {
            if col.len() != height {
                polars_error::polars_bail!(
                    ShapeMismatch: "column {name} has {} rows, the first column {height}", col.len()
                );
            }
        }
        for (i, name) in self.names.iter().enumerate() {
            if self.names[..i].contains(name) {
                polars_error::polars_bail!(Duplicate: "column {name} appears twice");
            }
        }
        if self.names.len() != self.cols.len() {
            polars_error::polars_bail!(
                ShapeMismatch: "{} column names for {} columns", self.names.len(), self.cols.len()
            );
        }
        Ok(())
    }

    pub(crate) fn write_parquet(&self, w: &mut dyn Write, path: &Path) -> Result<()> {
        let noted = IoNoted::default();
        let perr = |e: PolarsError| noted.error(path, &e);
        let height = self.height();
        let arrays = self.arrays().map_err(perr)?;
        let w = noted.wrap(w);
        let mut encoder = Encoder::new(w, self, height >= PARALLEL_WRITE_ROWS).map_err(perr)?;
        // One row group up to twice ROW_GROUP_ROWS; a taller table in equal groups,
        // the last taking the remainder (the row groups polars made of one chunk).
        let groups = (height / ROW_GROUP_ROWS).max(1);
        let size = height / groups;
        for g in 0..groups {
            let start = g * size;
            let len = if g + 1 == groups {
                height - start
            } else {
                size
            };
            encoder.write(&arrays, start, len).map_err(perr)?;
        }
        encoder.finish().map_err(perr)?;
        Ok(())
    }

    /// Reads a Parquet file written by [`Table::write`], or any Parquet file whose
    /// columns are strings, floats, integers, booleans, timestamps or dates.
    pub fn read_parquet(path: &Path) -> Result<Self> {
        Self::read_parquet_columns(path, None)
    }

    /// The number of rows of a Parquet file, from its footer (nothing else is read).
    pub fn parquet_rows(path: &Path) -> Result<usize> {
        let mut f = File::open(path).map_err(|source| TableError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        guarded(path, || {
            Ok(read_metadata(&mut f)
                .map_err(|e| parquet_error(path, &e))?
                .num_rows)
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
        let bytes = Buffer::from(bytes.to_vec());
        guarded(path, || {
            Self::read_parquet_from(bytes, path, columns, coded, rows)
        })
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
        let bytes = std::fs::read(path).map_err(|source| TableError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let bytes = Buffer::from(bytes);
        guarded(path, || {
            Self::read_parquet_from(bytes, path, columns, coded, rows)
        })
    }

    /// Decodes `bytes` (callers run it [`guarded`]).
    fn read_parquet_from(
        bytes: Buffer<u8>,
        path: &Path,
        columns: Option<&[&str]>,
        coded: &[&str],
        rows: Option<(usize, usize)>,
    ) -> Result<Self> {
        let perr = |e: PolarsError| parquet_error(path, &e);
        let metadata = read_metadata(&mut Cursor::new(bytes.as_ref())).map_err(perr)?;
        let schema = infer_schema(&metadata).map_err(perr)?;
        let fields: Vec<&Field> = schema
            .iter_values()
            .filter(|f| columns.is_none_or(|want| want.contains(&f.name.as_str())))
            .collect();
        let (offset, len) = rows.unwrap_or((0, usize::MAX));
        let end = offset.saturating_add(len);
        let read = |field: &&Field| -> Result<Col> {
            // On a pool thread too, a decoder's panic is the caller's to report.
            let _quiet = crate::quiet::Quiet::on();
            let arrays = read_field(&bytes, &metadata, field, offset, end).map_err(perr)?;
            to_col(field, &arrays, coded.contains(&field.name.as_str())).map_err(|detail| {
                TableError::Parquet {
                    path: path.to_path_buf(),
                    detail,
                }
            })
        };
        // A small file is read on the calling thread: the pool cost more than it
        // saved (a store of 731 small partitions is read several files at once by
        // the caller already).
        let cols: Vec<Col> = if metadata.num_rows < PARALLEL_READ_ROWS {
            fields.iter().map(read).collect::<Result<_>>()?
        } else {
            fields.par_iter().map(read).collect::<Result<_>>()?
        };
        let mut t = Table::new();
        for (field, col) in fields.iter().zip(cols) {
            t.push(field.name.as_str(), col);
        }
        Ok(t)
    }
}

/// Runs a decoding of the file at `path`. The decoder trusts a damaged file's own
/// lengths and offsets and may panic on them: that is caught and is the file's
/// error like any other, never a crash of the command (and kept off stderr under
/// [`crate::quiet_caught_panics`]).
fn guarded<T>(path: &Path, decode: impl FnOnce() -> Result<T>) -> Result<T> {
    let _quiet = crate::quiet::Quiet::on();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(TableError::Parquet {
            path: path.to_path_buf(),
            detail: format!("the file is damaged: it does not decode ({why})"),
        })
    })
}

/// The first I/O error a Parquet file's writer met. The Parquet writer turns an I/O
/// error into text ("File out of specification: underlying IO error: ..."): a full
/// disk would be reported as a file that cannot be used (exit 3) instead of a
/// write that failed (exit 4).
#[derive(Default, Clone)]
struct IoNoted(std::sync::Arc<std::sync::Mutex<Option<(std::io::ErrorKind, String)>>>);

impl IoNoted {
    /// `w`, noting its first error here.
    fn wrap<W: Write>(&self, w: W) -> NotingWriter<W> {
        NotingWriter {
            inner: w,
            noted: self.clone(),
        }
    }

    /// The writer's error `e` for the file `path`: the I/O error met, when one was.
    fn error(&self, path: &Path, e: &PolarsError) -> TableError {
        let first = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match first {
            Some((kind, message)) => TableError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::new(kind, message),
            },
            None => parquet_error(path, e),
        }
    }
}

/// A writer that notes its first I/O error in an [`IoNoted`].
struct NotingWriter<W> {
    inner: W,
    noted: IoNoted,
}

impl<W> NotingWriter<W> {
    fn note<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            let mut first = self
                .noted
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            first.get_or_insert_with(|| (e.kind(), e.to_string()));
        }
        r
    }
}

impl<W: Write> Write for NotingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

fn parquet_error(path: &Path, e: &dyn std::fmt::Display) -> TableError {
    TableError::Parquet {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// The arrays of `field` in the file's rows `offset .. end`, row group by row group
/// (only the row groups those rows touch are decoded). A row group without the
/// column gives nulls.
fn read_field(
    bytes: &Buffer<u8>,
    metadata: &FileMetadata,
    field: &Field,
    offset: usize,
    end: usize,
) -> PolarsResult<Vec<Box<dyn Array>>> {
    let mut out = Vec::new();
    let mut first = 0usize;
    for rg in &metadata.row_groups {
        let (lo, hi) = (first, first + rg.num_rows());
        first = hi;
        if hi <= offset || lo >= end {
            continue;
        }
        let (from, to) = (offset.max(lo) - lo, end.min(hi) - lo);
        let Some(chunks) = rg.columns_under_root_iter(&field.name) else {
            out.push(polars_arrow::array::new_null_array(
                field.dtype.clone(),
                to - from,
            ));
            continue;
        };
        let (decompressors, types): (Vec<_>, Vec<_>) = chunks
            .map(|meta: &ColumnChunkMetadata| {
                let range = meta.byte_range();
                let chunk = bytes
                    .clone()
                    .sliced(range.start as usize..range.end as usize);
                let pages = PageReader::new(Cursor::new(chunk), meta, vec![], usize::MAX);
                (
                    BasicDecompressor::new(pages, vec![]),
                    &meta.descriptor().descriptor.primitive_type,
                )
            })
            .unzip();
        let filter = (from > 0 || to < rg.num_rows()).then(|| Filter::new_ranged(from, to));
        let (arrays, _) = column_iter_to_arrays(decompressors, types, field.clone(), filter)?;
        out.extend(arrays);
    }
    Ok(out)
}

/// The type rentix reads a file's column as, from the column's Arrow type: text of
/// any kind (views, plain or large strings, a dictionary of strings: a categorical),
/// integers that fit 64 bits signed, floats, booleans, timestamps of any unit and
/// dates; `None` for anything else (an unsigned 64-bit integer could not keep every
/// value, a nested column is not a cell).
fn read_as(dtype: &ArrowDataType) -> Option<ArrowDataType> {
    use ArrowDataType as A;
    Some(match dtype {
        A::Utf8View | A::Utf8 | A::LargeUtf8 => A::Utf8View,
        A::Dictionary(_, values, _)
            if matches!(values.as_ref(), A::Utf8View | A::Utf8 | A::LargeUtf8) =>
        {
            A::Utf8View
        }
        A::Int8 | A::Int16 | A::Int32 | A::Int64 | A::UInt8 | A::UInt16 | A::UInt32 => A::Int64,
        A::Float32 | A::Float64 => A::Float64,
        A::Boolean => A::Boolean,
        A::Timestamp(..) | A::Date32 => dtype.clone(),
        _ => return None,
    })
}

/// A dictionary of strings (a categorical) as the plain text array it stands for.
fn undictionary(a: &dyn Array, key: IntegerType) -> std::result::Result<Box<dyn Array>, String> {
    fn texts<K: DictionaryKey>(a: &dyn Array) -> std::result::Result<Box<dyn Array>, String> {
        let d = a
            .as_any()
            .downcast_ref::<DictionaryArray<K>>()
            .ok_or("a dictionary column whose keys are not its declared type")?;
        let values = cast(
            d.values().as_ref(),
            &ArrowDataType::Utf8View,
            CastOptionsImpl::default(),
        )
        .map_err(|e| e.to_string())?;
        let values = values
            .as_any()
            .downcast_ref::<Utf8ViewArray>()
            .ok_or("a dictionary whose values are not text")?;
        let mut cells = Vec::with_capacity(d.len());
        for k in d.keys().iter() {
            cells.push(match k.map(|k| (*k).try_into().ok()) {
                None => None,
                Some(Some(i)) if i < values.len() => values.get(i),
                Some(_) => return Err("a dictionary key past the dictionary's end".into()),
            });
        }
        Ok(
            MutableBinaryViewArray::<str>::from_iterator(cells.into_iter())
                .freeze()
                .boxed(),
        )
    }
    match key {
        IntegerType::Int8 => texts::<i8>(a),
        IntegerType::Int16 => texts::<i16>(a),
        IntegerType::Int32 => texts::<i32>(a),
        IntegerType::Int64 => texts::<i64>(a),
        IntegerType::UInt8 => texts::<u8>(a),
        IntegerType::UInt16 => texts::<u16>(a),
        IntegerType::UInt32 => texts::<u32>(a),
        IntegerType::UInt64 => texts::<u64>(a),
        other => Err(format!("a dictionary keyed by {other:?}")),
    }
}

/// The column of `arrays` (one field's chunks), or why it is not one rentix reads.
fn to_col(
    field: &Field,
    arrays: &[Box<dyn Array>],
    coded: bool,
) -> std::result::Result<Col, String> {
    let target = read_as(&field.dtype).ok_or_else(|| {
        format!(
            "column {} has unsupported type {:?}",
            field.name, field.dtype
        )
    })?;
    // Each chunk as the target type (a widening cast, or the array itself).
    let arrays: Vec<Box<dyn Array>> = arrays
        .iter()
        .map(|a| {
            if a.dtype() == &target {
                Ok(a.clone())
            } else if let ArrowDataType::Dictionary(key, ..) = a.dtype() {
                undictionary(a.as_ref(), *key)
            } else {
                cast(a.as_ref(), &target, CastOptionsImpl::default()).map_err(|e| e.to_string())
            }
        })
        .collect::<std::result::Result<_, String>>()
        .map_err(|e| format!("column {}: {e}", field.name))?;
    fn all<A: 'static>(arrays: &[Box<dyn Array>]) -> impl Iterator<Item = &A> {
        arrays.iter().filter_map(|a| a.as_any().downcast_ref::<A>())
    }
    Ok(match &target {
        ArrowDataType::Utf8View => {
            let cells = all::<Utf8ViewArray>(&arrays).flat_map(|a| a.iter());
            if coded {
                Col::Coded(code(cells))
            } else {
                Col::Str(cells.map(|v| v.map(str::to_string)).collect())
            }
        }
        ArrowDataType::Float64 => Col::F64(
            all::<PrimitiveArray<f64>>(&arrays)
                .flat_map(|a| a.iter().map(|v| v.copied()))
                .collect(),
        ),
        ArrowDataType::Int64 => Col::I64(
            all::<PrimitiveArray<i64>>(&arrays)
                .flat_map(|a| a.iter().map(|v| v.copied()))
                .collect(),
        ),
        ArrowDataType::Boolean => Col::Bool(
            all::<BooleanArray>(&arrays)
                .flat_map(|a| a.iter())
                .collect(),
        ),
        ArrowDataType::Timestamp(unit, _) => {
            // To microseconds: finer units floor, coarser ones multiply; a value that
            // overflows is refused, never dropped.
            let to_micros = |x: i64| match unit {
                TimeUnit::Nanosecond => Some(x.div_euclid(1_000)),
                TimeUnit::Microsecond => Some(x),
                TimeUnit::Millisecond => x.checked_mul(1_000),
                TimeUnit::Second => x.checked_mul(1_000_000),
            };
            let mut out = Vec::new();
            for v in all::<PrimitiveArray<i64>>(&arrays).flat_map(|a| a.iter()) {
                out.push(match v {
                    None => None,
                    Some(&x) => Some(to_micros(x).ok_or_else(|| {
                        format!(
                            "column {}: the timestamp {x} ({unit:?}) is out of range",
                            field.name
                        )
                    })?),
                });
            }
            Col::Timestamp(out)
        }
        _ => Col::Date(
            all::<PrimitiveArray<i32>>(&arrays)
                .flat_map(|a| a.iter().map(|v| v.copied()))
                .collect(),
        ),
    })
}

/// Codes text cells by their distinct values, in order of first appearance. A
/// store's columns repeat their last cell more often than not (a partition is
/// sorted by date and grade): that cell's code is reused without a lookup.
fn code<'a>(cells: impl Iterator<Item = Option<&'a str>>) -> Coded {
    let mut index: std::collections::HashMap<&'a str, u32, foldhash::fast::RandomState> =
        std::collections::HashMap::default();
    let mut out = Coded::default();
    let mut last: Option<(&'a str, u32)> = None;
    for cell in cells {
        let c = cell.map(|text| match last {
            Some((l, c)) if l == text => c,
            _ => {
                let c = *index.entry(text).or_insert_with(|| {
                    out.values.push(text.to_string());
                    (out.values.len() - 1) as u32
                });
                last = Some((text, c));
                c
            }
        });
        out.codes.push(c);
    }
    out
}

/// Rows from which one Parquet file's columns are encoded on the pool.
const PARALLEL_WRITE_ROWS: usize = 100_000;

/// Rows from which a Parquet file's columns are decoded on the pool.
const PARALLEL_READ_ROWS: usize = 100_000;

/// A Parquet file being written: row groups of one schema, then the footer.
struct Encoder<W: Write> {
    writer: FileWriter<W>,
    fields: Vec<ParquetType>,
    encodings: Vec<Vec<Encoding>>,
    /// Encode a row group's columns on the pool.
    parallel: bool,
    /// Write surely-distinct columns plain without the encoder's estimate
    /// ([`mostly_distinct`]); off only in the test that checks the bytes agree.
    exact_distinct: bool,
}

/// One column of a row group: its compressed pages, one after another.
type ColumnPages = DynStreamingIterator<'static, CompressedPage, PolarsError>;

impl<W: Write> Encoder<W> {
    /// A file of `table`'s columns (none of its rows yet).
    fn new(w: W, table: &Table, parallel: bool) -> PolarsResult<Self> {
        let schema = table.arrow_schema();
        let writer = FileWriter::try_new(w, schema.clone(), write_options())?;
        let fields = writer.parquet_schema().fields().to_vec();
        let encodings = schema
            .iter_values()
            .map(|f| get_dtype_encoding(&f.dtype))
            .collect();
        Ok(Encoder {
            writer,
            fields,
            encodings,
            parallel,
            exact_distinct: true,
        })
    }

    /// Rows `start .. start + len` of `arrays` (the columns, in the schema's order)
    /// as one row group; no rows write nothing.
    fn write(&mut self, arrays: &[Box<dyn Array>], start: usize, len: usize) -> PolarsResult<()> {
        if len == 0 {
            return Ok(());
        }
        let options = self.writer.options();
        type Column<'c> = ((&'c Box<dyn Array>, &'c ParquetType), &'c Vec<Encoding>);
        let exact_distinct = self.exact_distinct;
        let encode = |((array, type_), encoding): Column| {
            let array = array.sliced(start, len);
            if exact_distinct && mostly_distinct(array.as_ref()) {
                column_pages(array, type_, &[Encoding::Plain], options)
            } else {
                column_pages(array, type_, encoding, options)
            }
        };
        let columns: Vec<Vec<PolarsResult<ColumnPages>>> = if self.parallel {
            arrays
                .par_iter()
                .zip(&self.fields)
                .zip(&self.encodings)
                .map(encode)
                .collect::<PolarsResult<_>>()?
        } else {
            arrays
                .iter()
                .zip(&self.fields)
                .zip(&self.encodings)
                .map(encode)
                .collect::<PolarsResult<_>>()?
        };
        let group = DynIter::new(columns.into_iter().flatten());
        self.writer.write(len as u64, group)
    }

    /// Writes the footer (with the Arrow schema) and hands the writer back.
    fn finish(mut self) -> PolarsResult<W> {
        self.writer.end(None)?;
        Ok(self.writer.into_inner())
    }
}

/// Whether a column's rows (more than 128 of text, doubles or 64-bit integers
/// spanning more than 65,535) are surely too distinct for a dictionary: 90% or
/// more distinct, counted exactly, a null counted as the empty text or zero as the
/// encoder counts it. The encoder would estimate the same with HyperLogLog and
/// write them plain (it takes a dictionary below 75% estimated), but its estimate
/// costs a fixed 16,384 registers per column and row group, 4% of an ingest whose
/// dates are a row group each (issue 48). Written plain here, the bytes are the
/// ones the encoder writes after its estimate; below 90%, or for integers its
/// bitmask decides without an estimate, the encoder decides as before.
fn mostly_distinct(array: &dyn Array) -> bool {
    use std::collections::HashSet;
    const MIN_ROWS: usize = 129;
    /// The widest span of integers the encoder counts with a bitmask.
    const BITMASK_SPAN: i64 = u16::MAX as i64;
    fn distinct<T: std::hash::Hash + Eq>(values: impl Iterator<Item = T>, n: usize) -> bool {
        // Counting stops once more than a tenth of the rows repeat another.
        let allowed = n / 10;
        let mut seen: HashSet<T, foldhash::fast::FixedState> =
            HashSet::with_capacity_and_hasher(n, foldhash::fast::FixedState::default());
        let mut repeats = 0;
        for v in values {
            if !seen.insert(v) {
                repeats += 1;
                if repeats > allowed {
                    return false;
                }
            }
        }
        true
    }
    let n = array.len();
    if n < MIN_ROWS || array.null_count() == n {
        return false;
    }
    let any = array.as_any();
    if let Some(texts) = any.downcast_ref::<Utf8ViewArray>() {
        return distinct(texts.iter().map(Option::unwrap_or_default), n);
    }
    if let Some(doubles) = any.downcast_ref::<PrimitiveArray<f64>>() {
        return distinct(
            doubles
                .iter()
                .map(|v| v.copied().unwrap_or_default().to_bits()),
            n,
        );
    }
    if let Some(integers) = any.downcast_ref::<PrimitiveArray<i64>>() {
        let present = integers.non_null_values_iter();
        let (least, most) = present.fold((i64::MAX, i64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let wide = most
            .checked_sub(least)
            .is_none_or(|span| span > BITMASK_SPAN);
        return wide && distinct(integers.iter().map(|v| v.copied().unwrap_or_default()), n);
    }
    false
}

/// The compressed pages of one column's rows (one stream per Parquet leaf).
fn column_pages(
    array: Box<dyn Array>,
    type_: &ParquetType,
    encoding: &[Encoding],
    options: WriteOptions,
) -> PolarsResult<Vec<PolarsResult<ColumnPages>>> {
    let encoded = array_to_columns(array, type_.clone(), options, encoding)?;
    Ok(encoded
        .into_iter()
        .map(|pages| {
            let pages = pages.map(|page| {
                page.map_err(|e| ParquetError::FeatureNotSupported(format!("encoding: {e}")))
            });
            Ok(DynStreamingIterator::new(
                Compressor::new_from_vec(pages, options.compression, vec![])
                    .map_err(PolarsError::from),
            ))
        })
        .collect())
}

/// A table's rows as Parquet row groups, encoded and compressed, ready to be
/// written ([`write_unsynced_parquet_encoded`]): the encoding's work done where the
/// rows are (a store partition's dates, on the pool), and the file's writer left
/// only to put bytes in order. Encoded on its month's writer thread, a 1M-row
/// ingest's commit waited for that one thread a quarter of its time (issue 48).
/// The bytes are those [`write_unsynced_parquet_batches`] writes of the same tables.
pub struct EncodedGroups {
    schema: ArrowSchema,
    groups: Vec<(u64, Vec<Vec<CompressedPage>>)>,
}

impl std::fmt::Debug for EncodedGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedGroups")
            .field("rows", &self.rows())
            .field("groups", &self.groups.len())
            .finish()
    }
}

impl EncodedGroups {
    /// The rows encoded.
    pub fn rows(&self) -> u64 {
        self.groups.iter().map(|g| g.0).sum()
    }
}

impl Table {
    /// Encodes and compresses the table's rows as the row groups (of at most
    /// [`ROW_GROUP_ROWS`]) that [`write_unsynced_parquet_batches`] would write of it;
    /// `path` names the file they are for, in errors.
    pub fn encode_row_groups(&self, path: &Path) -> Result<EncodedGroups> {
        let perr = |e: PolarsError| parquet_error(path, &e);
        let schema = self.arrow_schema();
        let fields = polars_parquet::write::to_parquet_schema(&schema)
            .map_err(perr)?
            .fields()
            .to_vec();
        let encodings: Vec<Vec<Encoding>> = schema
            .iter_values()
            .map(|f| get_dtype_encoding(&f.dtype))
            .collect();
        self.check_shape().map_err(perr)?;
        // Coded columns are made arrays a row group at a time, where the encoder
        // is not handed their dictionary.
        let arrays: Vec<Option<Box<dyn Array>>> = self
            .cols
            .iter()
            .map(|c| match c {
                Col::Coded(_) => Ok(None),
                _ => c.to_array().map(Some),
            })
            .collect::<PolarsResult<_>>()
            .map_err(perr)?;
        let options = write_options();
        let mut groups = Vec::new();
        for start in (0..self.height()).step_by(ROW_GROUP_ROWS) {
            let len = ROW_GROUP_ROWS.min(self.height() - start);
            // One column's leaves, compressed.
            let encode = |(((array, col), type_), encoding): GroupColumn<'_>|
             -> Result<Vec<Vec<CompressedPage>>> {
                let array = match (array, col) {
                    (Some(array), _) => array.sliced(start, len),
                    (None, Col::Coded(c)) => {
                        let dictionary = (encoding == &[Encoding::RleDictionary])
                            .then(|| coded_dictionary(c, start, len))
                            .flatten();
                        match dictionary {
                            Some(d) => d,
                            None => c.range_array(start, len).map_err(perr)?.boxed(),
                        }
                    }
                    (None, other) => other.to_array().map_err(perr)?.sliced(start, len),
                };
                let encoding: &[Encoding] = if mostly_distinct(array.as_ref()) {
                    &[Encoding::Plain]
                } else {
                    encoding
                };
                array_to_columns(array, type_.clone(), options, encoding)
                    .map_err(perr)?
                    .into_iter()
                    .map(|leaf| {
                        let pages = leaf.map(|page| {
                            page.map_err(|e| {
                                ParquetError::FeatureNotSupported(format!("encoding: {e}"))
                            })
                        });
                        Compressor::new(pages, options.compression, vec![])
                            .collect::<std::result::Result<Vec<CompressedPage>, ParquetError>>()
                            .map_err(|e| perr(e.into()))
                    })
                    .collect()
            };
            // A large row group (a busy date's) is encoded a column a task, as the
            // batch writer encodes it; a small one on the calling task alone.
            let columns: Vec<Vec<Vec<CompressedPage>>> = if len >= PARALLEL_WRITE_ROWS {
                arrays
                    .par_iter()
                    .map(Option::as_deref)
                    .zip(&self.cols)
                    .zip(&fields)
                    .zip(&encodings)
                    .map(encode)
                    .collect::<Result<_>>()?
            } else {
                arrays
                    .iter()
                    .map(Option::as_deref)
                    .zip(&self.cols)
                    .zip(&fields)
                    .zip(&encodings)
                    .map(encode)
                    .collect::<Result<_>>()?
            };
            let columns: Vec<Vec<CompressedPage>> = columns.into_iter().flatten().collect();
            groups.push((len as u64, columns));
        }
        Ok(EncodedGroups { schema, groups })
    }
}

/// One column of a row group to encode: its array (none for a coded column, made
/// a row group at a time), the table's column, its Parquet type and encodings.
type GroupColumn<'a> = (
    ((Option<&'a dyn Array>, &'a Col), &'a ParquetType),
    &'a Vec<Encoding>,
);

/// Rows `start .. start + len` of a coded text column as the dictionary array the
/// encoder would make of their text, when it surely would: the distinct values in
/// order of first appearance, each row's key into them, a null key for an empty
/// cell. The encoder, given text, estimates its distinct values (HyperLogLog, a
/// fixed 16,384 registers per column and row group) and takes a dictionary below
/// 75% estimated (always at 128 rows or fewer), then groups the text again to
/// build it: both were a tenth of an ingest's commit, for columns whose codes
/// already say which rows repeat. Handed the dictionary, it writes the same pages.
/// `None` (the encoder decides, as before) above half distinct, where an estimate
/// could fall on either side of 75%, and when two codes name the same text.
fn coded_dictionary(c: &Coded, start: usize, len: usize) -> Option<Box<dyn Array>> {
    let codes = c.codes.get(start..start + len)?;
    // Each code's key in this slice, in order of first appearance.
    let mut local = vec![u32::MAX; c.values.len()];
    let mut firsts: Vec<&str> = Vec::new();
    let mut keys: Vec<u32> = Vec::with_capacity(len);
    for code in codes {
        keys.push(match code {
            None => 0,
            Some(code) => {
                let k = local.get_mut(*code as usize)?;
                if *k == u32::MAX {
                    *k = u32::try_from(firsts.len()).ok()?;
                    firsts.push(c.values.get(*code as usize)?);
                }
                *k
            }
        });
    }
    if len > 128 && 2 * firsts.len() > len {
        return None;
    }
    // The encoder's dictionary would merge codes of equal text: leave those to it.
    let mut distinct: Vec<&str> = firsts.clone();
    distinct.sort_unstable();
    if distinct.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let validity = codes
        .iter()
        .any(Option::is_none)
        .then(|| Bitmap::from_iter(codes.iter().map(Option::is_some)));
    let keys = PrimitiveArray::<u32>::new(ArrowDataType::UInt32, keys.into(), validity);
    let values = MutableBinaryViewArray::<str>::from_values_iter(firsts.into_iter()).freeze();
    DictionaryArray::try_new(
        ArrowDataType::Dictionary(
            IntegerType::UInt32,
            Box::new(ArrowDataType::Utf8View),
            false,
        ),
        keys,
        values.boxed(),
    )
    .ok()
    .map(|d| d.boxed())
}

/// A column's compressed pages, handed to the file's writer one at a time.
struct OwnedPages {
    pages: std::vec::IntoIter<CompressedPage>,
    current: Option<CompressedPage>,
}

impl FallibleStreamingIterator for OwnedPages {
    type Item = CompressedPage;
    type Error = PolarsError;

    fn advance(&mut self) -> PolarsResult<()> {
        self.current = self.pages.next();
        Ok(())
    }

    fn get(&self) -> Option<&CompressedPage> {
        self.current.as_ref()
    }
}

/// Writes one Parquet file of encoded row groups ([`Table::encode_row_groups`]), in
/// order; every part must have the first's columns, and the first error stops the
/// file. Unsynced, as [`write_unsynced_parquet_batches`]; no part at all writes
/// nothing.
pub fn write_unsynced_parquet_encoded(
    path: &Path,
    parts: impl Iterator<Item = Result<EncodedGroups>>,
) -> Result<()> {
    let werr = |source| TableError::Write {
        path: path.to_path_buf(),
        source,
    };
    let noted = IoNoted::default();
    let perr = |e: PolarsError| noted.error(path, &e);
    let mut parts = parts.peekable();
    // The first part is encoded (and a table that is not one refused) before the
    // file is created.
    let schema = match parts.peek() {
        None => return Ok(()),
        Some(Err(_)) => return parts.next().map_or(Ok(()), |p| p.map(|_| ())),
        Some(Ok(first)) => first.schema.clone(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    let file = noted.wrap(BufWriter::new(File::create(path).map_err(werr)?));
    let mut writer = FileWriter::try_new(file, schema.clone(), write_options()).map_err(perr)?;
    for part in parts {
        let part = part?;
        if part.schema != schema {
            return Err(TableError::Parquet {
                path: path.to_path_buf(),
                detail: "a batch's columns differ from the first batch's".into(),
            });
        }
        for (rows, columns) in part.groups {
            let group = DynIter::new(columns.into_iter().map(|pages| {
                Ok(DynStreamingIterator::new(OwnedPages {
                    pages: pages.into_iter(),
                    current: None,
                }))
            }));
            writer.write(rows, group).map_err(perr)?;
        }
    }
    writer.end(None).map_err(perr)?;
    let mut file = writer.into_inner();
    file.flush().map_err(werr)
}

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
    write_unsynced_parquet_encoded(path, batches.map(|t| t.encode_row_groups(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk that fills after `room` bytes.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "No space left on device",
                ));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A full disk is a write that failed (exit 4), with the system's reason, not
    /// a Parquet file that cannot be used (exit 3): the Parquet writer's own error
    /// is only its text.
    #[test]
    fn a_full_disk_is_a_write_error_not_a_damaged_file() {
        let t = table(0, 5_000);
        for room in [0, 10, 4_000] {
            let err = t
                .write_parquet(&mut Full { room }, Path::new("x.parquet"))
                .unwrap_err();
            assert!(
                matches!(&err, TableError::Write { source, .. } if source.kind() == std::io::ErrorKind::StorageFull),
                "{room}: {err:?}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full.parquet");
        let encoded = t.encode_row_groups(&path).unwrap();
        // The file's own writer is checked through a path on a real disk here;
        // its error mapping is the same `IoNoted`.
        write_unsynced_parquet_encoded(&path, std::iter::once(Ok(encoded))).unwrap();
        assert_eq!(Table::parquet_rows(&path).unwrap(), 5_000);
    }

    /// Rows `from .. from + n` of a table of every column type, nulls in each.
    fn table(from: usize, n: usize) -> Table {
        let mut t = Table::new();
        let rows = from..from + n;
        t.push(
            "id",
            Col::Str(
                rows.clone()
                    .map(|i| (i % 29 != 0).then(|| format!("id-{i:09}")))
                    .collect(),
            ),
        );
        t.push(
            "grade",
            Col::Coded(Coded::from_keys(
                rows.clone().map(|i| (i % 11 != 0).then_some(i % 4)),
                |k: &usize| {
                    [
                        "h100/vm/1m",
                        "a100/vm/spot",
                        "b200/bare-metal/1y",
                        "l40s/vm/1m",
                    ][*k]
                        .to_string()
                },
            )),
        );
        // Coded text the encoder takes a dictionary of from its codes: a third
        // distinct with no empty cell; or decides itself: three in five distinct,
        // two codes of one text; and a column of empty cells only.
        t.push(
            "provider",
            Col::Coded(Coded::from_keys(
                rows.clone().map(|i| Some((i * 7) % (n / 3 + 1))),
                |k: &usize| format!("provider with a name longer than a view {k}"),
            )),
        );
        t.push(
            "wide",
            Col::Coded(Coded::from_keys(
                rows.clone()
                    .map(|i| (i % 17 != 0).then_some(i % (3 * n / 5 + 1))),
                |k: &usize| format!("w{k}"),
            )),
        );
        t.push(
            "twin",
            Col::Coded(Coded::from_keys(
                rows.clone().map(|i| Some(i % 3)),
                |k: &usize| ["same", "other", "same"][*k].to_string(),
            )),
        );
        t.push(
            "blank",
            Col::Coded(Coded::from_keys(rows.clone().map(|_| None::<usize>), |k| {
                k.to_string()
            })),
        );
        t.push(
            "price",
            Col::F64(
                rows.clone()
                    .map(|i| (i % 13 != 0).then(|| 2.0 + (i as f64).sin()))
                    .collect(),
            ),
        );
        t.push(
            "count",
            Col::I64(rows.clone().map(|i| Some((i % 40) as i64)).collect()),
        );
        t.push(
            "firm",
            Col::Bool(
                rows.clone()
                    .map(|i| (i % 7 != 0).then_some(i % 3 == 0))
                    .collect(),
            ),
        );
        t.push(
            "observed_at",
            Col::Timestamp(
                rows.clone()
                    .map(|i| Some(1_735_689_600_000_000 + i as i64 * 61_000_123))
                    .collect(),
            ),
        );
        t.push(
            "fixing_date",
            Col::Date(rows.map(|i| Some(20_089 + (i / 1000) as i32)).collect()),
        );
        t
    }

    proptest::proptest! {
        /// A coded column's dictionary, for any rows of it (a row group that starts
        /// past the table's first row included), is the one the encoder's own cast
        /// makes of the rows' text: the same values in the same order, the same key
        /// on every row that has one, the same empty rows; and there is none where
        /// the encoder would decide for itself.
        #[test]
        fn a_coded_dictionary_is_the_encoders_cast(
            cells in proptest::collection::vec(proptest::option::weighted(0.9, 0usize..40), 1..400),
            from in 0usize..400,
            take in 0usize..400,
        ) {
            let c = Coded::from_keys(cells.iter().copied(), |k: &usize| format!("value {k}"));
            let start = from % cells.len();
            let len = take.min(cells.len() - start);
            let ours = coded_dictionary(&c, start, len);
            let text = c.range_array(start, len).unwrap();
            let distinct: std::collections::BTreeSet<_> = cells[start..start + len].iter().flatten().collect();
            if len > 128 && 2 * distinct.len() > len {
                proptest::prop_assert!(ours.is_none());
                return Ok(());
            }
            let ours = ours.unwrap();
            let theirs = cast(
                &text,
                &ArrowDataType::Dictionary(IntegerType::UInt32, Box::new(ArrowDataType::Utf8View), false),
                CastOptionsImpl::default(),
            )
            .unwrap();
            let as_dict = |a: &dyn Array| {
                let d = a.as_any().downcast_ref::<DictionaryArray<u32>>().unwrap();
                let values = d.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
                let keys: Vec<Option<u32>> = d.keys().iter().map(|k| k.copied()).collect();
                let values: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_string)).collect();
                (keys, values, d.keys().validity().is_some(), a.dtype().clone())
            };
            proptest::prop_assert_eq!(as_dict(ours.as_ref()), as_dict(theirs.as_ref()));
        }
    }

    /// Row groups encoded ahead ([`Table::encode_row_groups`]) and written by
    /// [`write_unsynced_parquet_encoded`] (the batch writer's path) are the bytes the
    /// whole-table writer writes of the same table: tables of 1 to 120,000 rows (one
    /// past the size encoded a column a task), text unique and coded, doubles,
    /// integers, booleans, instants and dates, nulls in each. (The batch writer's
    /// bytes against polars' own: `parquet_bytes_are_those_polars_wrote`.)
    #[test]
    fn encoded_row_groups_write_the_batch_writers_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let sizes = [3usize, 0, 2_741, 120_000, 129, 1];
        let mut at = 0;
        let batches: Vec<Table> = sizes
            .iter()
            .map(|&n| {
                at += n;
                table(at - n, n)
            })
            .collect();
        // Each table alone: the encoded row groups are the bytes of the whole-table
        // writer (the encoder writing a row group at a time).
        for t in batches.iter().filter(|t| t.height() > 0) {
            let whole = dir.path().join("whole.parquet");
            t.write(&whole).unwrap();
            let encoded = dir.path().join("one.parquet");
            let part = t.encode_row_groups(&encoded);
            write_unsynced_parquet_encoded(&encoded, std::iter::once(part)).unwrap();
            assert_eq!(
                std::fs::read(&encoded).unwrap(),
                std::fs::read(&whole).unwrap()
            );
        }
        let encoded = dir.path().join("encoded.parquet");
        let parts: Vec<EncodedGroups> = batches
            .iter()
            .map(|t| t.encode_row_groups(&encoded).unwrap())
            .collect();
        assert_eq!(
            parts.iter().map(EncodedGroups::rows).sum::<u64>(),
            at as u64
        );
        write_unsynced_parquet_encoded(&encoded, parts.into_iter().map(Ok)).unwrap();
        assert_eq!(Table::parquet_rows(&encoded).unwrap(), at);
        // Another table's columns are refused, nothing is written of them.
        let other = {
            let mut t = Table::new();
            t.push("x", Col::I64(vec![Some(1)]));
            t
        };
        let mixed = dir.path().join("mixed.parquet");
        let parts = [
            batches[0].encode_row_groups(&mixed).unwrap(),
            other.encode_row_groups(&mixed).unwrap(),
        ];
        assert!(write_unsynced_parquet_encoded(&mixed, parts.into_iter().map(Ok)).is_err());
    }

    /// Text and doubles without nulls, at several shares of distinct values
    /// (around the 90% of the shortcut and the encoder's 75%), in row groups of
    /// 64 to 5,000 rows: written with the exact count's shortcut and with the
    /// encoder's own estimate for every column, the files are the same bytes.
    #[test]
    fn plain_by_exact_count_writes_the_bytes_of_the_encoders_estimate() {
        for (rows, distinct_per_100) in [
            (64, 100),
            (129, 100),
            (200, 91),
            (1000, 90),
            (1000, 89),
            (3000, 80),
            (5000, 76),
            (5000, 74),
            (5000, 100),
        ] {
            let value = |i: usize| {
                // `distinct_per_100` of every 100 rows are new values, the rest
                // repeat the row before.
                if i % 100 < distinct_per_100 {
                    i
                } else {
                    i - 1
                }
            };
            let mut t = Table::new();
            t.push(
                "key",
                Col::Str(
                    (0..rows)
                        .map(|i| Some(format!("{:032x}", value(i) * 2_654_435_761)))
                        .collect(),
                ),
            );
            t.push(
                "price",
                Col::F64(
                    (0..rows)
                        .map(|i| Some(1.0 + value(i) as f64 / 7.0))
                        .collect(),
                ),
            );
            // Nulls, counted by the encoder as the empty text or zero.
            t.push(
                "note",
                Col::Str(
                    (0..rows)
                        .map(|i| (i % 9 != 0).then(|| format!("n{}", value(i))))
                        .collect(),
                ),
            );
            t.push(
                "quantity",
                Col::F64(
                    (0..rows)
                        .map(|i| (i % 4 != 0).then(|| value(i) as f64))
                        .collect(),
                ),
            );
            // Integers: spanning more than the encoder's bitmask, and within it.
            t.push(
                "stamp",
                Col::Timestamp(
                    (0..rows)
                        .map(|i| {
                            (i % 7 != 0)
                                .then(|| 1_700_000_000_000_000 + value(i) as i64 * 1_000_003)
                        })
                        .collect(),
                ),
            );
            t.push(
                "row",
                Col::I64((0..rows).map(|i| Some(value(i) as i64 * 13)).collect()),
            );
            let arrays = t.arrays().unwrap();
            let write = |exact: bool| {
                let mut e = Encoder::new(Vec::new(), &t, false).unwrap();
                e.exact_distinct = exact;
                for start in (0..rows).step_by(rows.div_ceil(3)) {
                    e.write(&arrays, start, (rows - start).min(rows.div_ceil(3)))
                        .unwrap();
                }
                e.finish().unwrap()
            };
            assert_eq!(
                write(true),
                write(false),
                "{rows} rows, {distinct_per_100}% distinct"
            );
        }
    }
}
