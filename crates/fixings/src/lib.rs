//! rentix-fixings: the fixings as published, for everyone who reads them.
//!
//! The row of a fixings file ([`Fixing`]), the tier that fixed it ([`FixingLevel`]),
//! its flags ([`Flag`]), its identity and unit ([`IndexId`], [`IndexUnit`]); the fixings file's columns, writer
//! and reader; the restatement log and the fixings as first published; intraday
//! rows; and the names of the files a publication writes beside its fixings. The
//! index engine (`rentix-index`) writes these; the backtest, the lab and the report
//! read them. CSV needs nothing more; Parquet files are the `parquet` feature, so a
//! crate that settles on CSV fixings builds without polars.

mod companions;
mod error;
mod file;
mod fixing;
mod flag;
mod index_id;
pub mod intraday;
mod vintage;

pub use companions::Companions;
pub use error::FixingsError;
pub use file::{
    canonical_sha256, canonical_sha256_text, check_published, digest_line, digest_path,
    file_sha256, fixings_table, names_another_file, read_cells, read_digest, read_fixings,
    read_fixings_part, records, sufficient_cell, ColumnIndex, Records, FIXING_COLUMNS,
    PLAUSIBLE_VALUES,
};
pub use fixing::{Fixing, FixingLevel, IndexUnit};
pub use flag::Flag;
pub use index_id::{IndexId, COMPOSITE_METHODS};
pub use vintage::{
    check_log, first_published, read_restatements, restatements_path, Restatement,
    RESTATEMENT_COLUMNS,
};
