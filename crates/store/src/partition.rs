//! Which fixing dates a partition file holds, from its path.
//!
//! The store writes one file per run and **month** of fixing dates:
//! `observations/month=YYYY-MM/run-NNNNNN.parquet`, its rows sorted by fixing date
//! then grade. Stores written before (one file per run and fixing date,
//! `observations/date=YYYY-MM-DD/...`) are read as they are; `rentix store migrate`
//! rewrites them by month. A reader asks [`Partitions`] for the files that can hold
//! a range of dates and keeps the rows of that range ([`Span::within`] tells when a
//! whole file is inside it, so nothing is filtered).

use chrono::{Datelike, Days, Months, NaiveDate};
use std::collections::BTreeMap;

/// The fixing dates a partition file may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Span {
    /// A file of one date (the layout before month partitions).
    Date(NaiveDate),
    /// A file of one month (its first day).
    Month(NaiveDate),
}

impl Span {
    /// The month of `date`.
    pub fn month_of(date: NaiveDate) -> Self {
        Span::Month(first_of_month(date))
    }

    /// The span's first date.
    pub fn first(self) -> NaiveDate {
        match self {
            Span::Date(d) | Span::Month(d) => d,
        }
    }

    /// The span's last date (a month's last day).
    pub fn last(self) -> NaiveDate {
        match self {
            Span::Date(d) => d,
            Span::Month(m) => m
                .checked_add_months(Months::new(1))
                .and_then(|n| n.checked_sub_days(Days::new(1)))
                .unwrap_or(m),
        }
    }

    /// The month the span lies in (its first day).
    pub fn month(self) -> NaiveDate {
        first_of_month(self.first())
    }

    /// Whether `date` is one of the span's dates.
    pub fn contains(self, date: NaiveDate) -> bool {
        self.first() <= date && date <= self.last()
    }

    /// Whether any date of the span is in `from..=to` (an open end is no bound).
    pub fn overlaps(self, from: Option<NaiveDate>, to: Option<NaiveDate>) -> bool {
        !(from.is_some_and(|f| self.last() < f) || to.is_some_and(|t| self.first() > t))
    }

    /// Whether every date of the span is in `from..=to`: the file's rows need no
    /// filtering.
    pub fn within(self, from: Option<NaiveDate>, to: Option<NaiveDate>) -> bool {
        !(from.is_some_and(|f| self.first() < f) || to.is_some_and(|t| self.last() > t))
    }

    /// The directory segment that names the span (`date=...` or `month=...`).
    pub fn segment(self) -> String {
        match self {
            Span::Date(d) => format!("date={d}"),
            Span::Month(m) => format!("month={}", m.format("%Y-%m")),
        }
    }
}

fn first_of_month(d: NaiveDate) -> NaiveDate {
    d.with_day(1).unwrap_or(d)
}

/// `observations/month=2025-01/run-000001.parquet` -> January 2025;
/// `observations/date=2025-01-02/...` -> 2025-01-02; `None` for a path that names
/// neither (or an implausible year: the store holds 2000 to 2100).
pub(crate) fn partition_span(rel: &str) -> Option<Span> {
    let span = rel.split('/').find_map(|seg| {
        if let Some(d) = seg.strip_prefix("date=") {
            NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .ok()
                .map(Span::Date)
        } else if let Some(m) = seg.strip_prefix("month=") {
            // Exactly YYYY-MM: `2025-1` or `2025-01-05` name no month the store writes.
            (m.len() == 7)
                .then(|| NaiveDate::parse_from_str(&format!("{m}-01"), "%Y-%m-%d").ok())
                .flatten()
                .map(Span::Month)
        } else {
            None
        }
    })?;
    (2000..=2100).contains(&span.first().year()).then_some(span)
}

/// Relative path of a run's partition file for the month of `date`.
pub(crate) fn partition_path(date: NaiveDate, run_id: &str) -> String {
    format!(
        "observations/{}/{run_id}.parquet",
        Span::month_of(date).segment()
    )
}

/// One committed partition file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PartFile {
    /// The dates it may hold (first: files are listed in date order).
    pub span: Span,
    /// Its path relative to the store.
    pub rel: String,
    /// Its rows, as its run record committed them (`None`: a record written
    /// before checksums).
    pub rows: Option<u64>,
    /// The run whose record names it.
    pub run_id: String,
    /// Its SHA-256 and size in bytes as committed (`None`: a record written before
    /// checksums): every read of the file is checked against them.
    pub committed: Option<(String, u64)>,
}

impl PartFile {
    /// What its run record committed, for [`crate::checked::read_checked`].
    pub(crate) fn committed(&self) -> Option<crate::checked::Committed<'_>> {
        self.committed
            .as_ref()
            .map(|(sha256, bytes)| crate::checked::Committed {
                run_id: &self.run_id,
                sha256,
                bytes: *bytes,
            })
    }
}

/// The committed partition files of a store, in the order of their spans (then
/// their names): the files of a date before those of the next, a month's files
/// after every file of the dates before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partitions {
    files: Vec<PartFile>,
    /// Files a committed compaction replaced (removed after its commit).
    replaced: std::collections::BTreeSet<String>,
}

impl Partitions {
    pub(crate) fn new(mut files: Vec<PartFile>) -> Self {
        files.sort();
        Self {
            files,
            replaced: Default::default(),
        }
    }

    /// With the files a committed compaction replaced.
    pub(crate) fn with_replaced(mut self, replaced: std::collections::BTreeSet<String>) -> Self {
        self.replaced = replaced;
        self
    }

    /// Whether `rel` is a file a committed compaction replaced.
    pub(crate) fn was_replaced(&self, rel: &str) -> bool {
        self.replaced.contains(rel)
    }

    /// Committed partition files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the store holds no partition.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every file, in span order.
    pub fn iter(&self) -> impl Iterator<Item = &PartFile> {
        self.files.iter()
    }

    /// The files that may hold a date of `from..=to`, in order.
    pub fn overlapping(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
    ) -> impl Iterator<Item = &PartFile> {
        self.files.iter().filter(move |p| p.span.overlaps(from, to))
    }

    /// The files that may hold `date`.
    pub fn on(&self, date: NaiveDate) -> impl Iterator<Item = &PartFile> {
        self.files.iter().filter(move |p| p.span.contains(date))
    }

    /// The files by the month they lie in.
    pub fn by_month(&self) -> BTreeMap<NaiveDate, Vec<&PartFile>> {
        let mut out: BTreeMap<NaiveDate, Vec<&PartFile>> = BTreeMap::new();
        for p in &self.files {
            out.entry(p.span.month()).or_default().push(p);
        }
        out
    }

    /// Every file's path relative to the store, in order.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|p| p.rel.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn both_layouts_name_their_dates() {
        let m = partition_span("observations/month=2024-02/run-000001.parquet").unwrap();
        assert_eq!((m.first(), m.last()), (d("2024-02-01"), d("2024-02-29")));
        let day = partition_span("observations/date=2025-01-02/run-000001.parquet").unwrap();
        assert_eq!(
            (day.first(), day.last()),
            (d("2025-01-02"), d("2025-01-02"))
        );
        assert_eq!(day.month(), d("2025-01-01"));
        for bad in [
            "observations/month=2024-2/run-000001.parquet",
            "observations/month=2024-02-01/run-000001.parquet",
            "observations/month=1999-12/run-000001.parquet",
            "observations/date=2025-13-01/run-000001.parquet",
            "observations/run-000001.parquet",
        ] {
            assert_eq!(partition_span(bad), None, "{bad}");
        }
        assert_eq!(
            partition_path(d("2025-12-31"), "run-000007"),
            "observations/month=2025-12/run-000007.parquet"
        );
    }

    #[test]
    fn a_range_overlaps_or_holds_a_span() {
        let m = Span::month_of(d("2025-03-17"));
        assert!(m.overlaps(Some(d("2025-03-31")), None));
        assert!(!m.overlaps(Some(d("2025-04-01")), None));
        assert!(!m.overlaps(None, Some(d("2025-02-28"))));
        assert!(m.within(Some(d("2025-03-01")), Some(d("2025-03-31"))));
        assert!(!m.within(Some(d("2025-03-02")), None));
        assert!(m.within(None, None));
    }
}
