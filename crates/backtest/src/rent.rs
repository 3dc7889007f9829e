//! The user's rent series and operational events, read and checked row by row.

use crate::error::{BacktestError, RowAt};
use chrono::{Datelike, Days, NaiveDate};
use rentix_core::{GpuHours, UsdPerGpuHour};
use std::collections::BTreeMap;
use std::path::Path;

/// Whether the user pays rent (a producer) or earns it (a neocloud).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Side {
    /// Pays rent (a producer): a higher rent is a loss, and the hedge buys futures.
    Pay,
    /// Earns rent (a neocloud): a higher rent is a gain, and the hedge sells futures.
    Earn,
}

impl Side {
    /// +1 for an earner (a higher rent is a gain), -1 for a payer.
    pub fn sign(self) -> f64 {
        match self {
            Side::Pay => -1.0,
            Side::Earn => 1.0,
        }
    }

    /// The name a rent file's `side` column uses: `pay` or `earn`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How a rent file's `period_end` is read, and so how `periods.csv` writes it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::EnumString, strum::VariantArray)]
#[strum(
    serialize_all = "lowercase",
    parse_err_ty = String,
    parse_err_fn = not_a_period_end
)]
pub enum PeriodEnd {
    /// `period_end` is the first day not covered (`2025-01-01,2025-02-01` is January).
    #[default]
    Exclusive,
    /// `period_end` is the last day covered, as invoices write it
    /// (`2025-01-01,2025-01-31` is January).
    Inclusive,
}

/// `--period-end`'s message for a word that is neither (parsing is exact).
fn not_a_period_end(s: &str) -> String {
    format!("{s:?}: expected exclusive or inclusive")
}

/// One period of rent: `[start, end)` at a price for some GPU-hours.
#[derive(Debug, Clone, PartialEq)]
pub struct RentPeriod {
    /// First day covered.
    pub start: NaiveDate,
    /// First day not covered (exclusive, whichever convention the file used).
    pub end: NaiveDate,
    /// The rent, USD per GPU-hour.
    pub price: UsdPerGpuHour,
    /// GPU-hours of the period, spread evenly over its days.
    pub gpu_hours: GpuHours,
}

/// A rent series: one side, periods that do not overlap.
#[derive(Debug, Clone, PartialEq)]
pub struct RentSeries {
    /// Whether the rent is paid or earned: one side per series.
    pub side: Side,
    /// The rent periods, sorted by start.
    pub periods: Vec<RentPeriod>,
    /// What the rent is for, where the file says it (optional `gpu` and `scope`
    /// columns, one value for the whole file): `backtest` takes its underlying from
    /// it when none is given, `track` prefers the rent's own GPU and scope among
    /// candidates it cannot tell apart and labels the others cross-hedges.
    pub names: RentNames,
}

/// The GPU and scope a rent file names (each `None` where it has no such column or
/// leaves it empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RentNames {
    /// The catalog id of the `gpu` column's value (`H200` reads as `h200-sxm-141gb`).
    pub gpu: Option<String>,
    /// The `scope` column's value (`bare-metal`, `vm`, `container`,
    /// `managed-cluster`).
    pub scope: Option<rentix_core::ServiceScope>,
}

impl RentNames {
    /// Whether `grade` (a grade key, `gpu/scope/term[...]`) is of the named GPU, and
    /// of the named scope where one is named; `None` when the rent names no GPU.
    pub fn owns(&self, grade: &str) -> Option<(bool, bool)> {
        let gpu = self.gpu.as_deref()?;
        let mut parts = grade.split('/');
        let same_gpu = parts.next() == Some(gpu);
        let same_scope = self.scope.is_some_and(|s| parts.next() == Some(s.as_str()));
        Some((same_gpu, same_gpu && same_scope))
    }
}

/// The one value of an optional column across the rows (`None` when absent or empty
/// everywhere); a file that names two is refused.
fn one_value(
    path: &Path,
    recs: &[(RowAt, Cells)],
    column: &str,
) -> Result<Option<String>, BacktestError> {
    let mut seen: Option<(&str, RowAt)> = None;
    for (at, rec) in recs {
        let v = rec.get(column).map(String::as_str).unwrap_or("");
        match seen {
            _ if v.is_empty() => {}
            None => seen = Some((v, *at)),
            Some((first, _)) if first.eq_ignore_ascii_case(v) => {}
            Some((first, at0)) => {
                return Err(BacktestError::Row {
                    path: path.to_path_buf(),
                    at: *at,
                    field: column.into(),
                    detail: format!(
                        "{v:?} differs from {first:?} on line {}: a rent file is the rent of one {column}; split it into one file per {column}",
                        at0.line
                    ),
                })
            }
        }
    }
    Ok(seen.map(|(v, _)| v.to_string()))
}

/// The `gpu` and `scope` a rent file names, resolved through the bundled GPU catalog.
fn rent_names(path: &Path, recs: &[(RowAt, Cells)]) -> Result<RentNames, BacktestError> {
    let bad = |field: &str, detail: String| BacktestError::File {
        path: path.to_path_buf(),
        detail: format!("column {field:?}: {detail}"),
    };
    let gpu = match one_value(path, recs, "gpu")? {
        None => None,
        Some(raw) => Some(
            rentix_core::GpuCatalog::bundled()
                .resolve(&raw)
                .map_err(|e| bad("gpu", e.to_string()))?
                .id
                .as_str()
                .to_string(),
        ),
    };
    let scope = match one_value(path, recs, "scope")? {
        None => None,
        Some(raw) => Some(
            raw.parse::<rentix_core::ServiceScope>()
                .map_err(|e| bad("scope", e.to_string()))?,
        ),
    };
    Ok(RentNames { gpu, scope })
}

/// What a rent series covers of a window of days ([`RentSeries::over`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Days of the window with rent.
    pub days: u32,
    /// GPU-hours of the window, to a millionth of a GPU-hour.
    pub gpu_hours: f64,
    /// GPU-hour-weighted price, USD per GPU-hour (NaN when no day is covered).
    pub rent: f64,
}

/// An operational event: its loss is reported beside the hedge, never netted into
/// basis. `[start, end)` like a rent period; an event whose `end` equals its `start`
/// is one day long (a single day's outage written with one date).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// First day of the event.
    pub start: NaiveDate,
    /// First day after it (exclusive); an `end` equal to `start` also means one day.
    pub end: NaiveDate,
    /// One of `EVENT_KINDS`.
    pub kind: String,
    /// GPU-hours the event made undeliverable (or unpaid).
    pub gpu_hours_lost: f64,
    /// What the event cost, USD: reported beside the hedge, never netted into it.
    pub usd_loss: f64,
    /// Free text from the file (empty without a `note` column).
    pub note: String,
}

/// The kinds an event file's `kind` column may hold.
pub(crate) const EVENT_KINDS: [&str; 4] =
    ["outage", "failed_deployment", "customer_default", "other"];

/// A row's cells by column name.
pub(crate) type Cells = BTreeMap<String, String>;

/// The rows of a rent, events or premiums file, each with where it is, cells
/// trimmed. The file is refused whole when it is over the size limit, names a
/// column twice, is `;`-separated, lacks one of `required`, or has a row that does
/// not parse or has another number of cells than the header.
pub(crate) fn records(
    path: &Path,
    required: &[&str],
) -> Result<Vec<(RowAt, Cells)>, BacktestError> {
    let file = |detail: String| BacktestError::File {
        path: path.to_path_buf(),
        detail,
    };
    let csv =
        rentix_table::CsvFile::open(path, rentix_core::MAX_TABLE_BYTES).map_err(|e| match e {
            rentix_table::TableError::Csv { detail, .. } => file(detail),
            e => BacktestError::Table(e),
        })?;
    let header = csv.names().to_vec();
    if header.len() == 1 && header[0].contains(';') {
        return Err(file(format!(
            "the header {:?} is one column holding ';': the file is ;-separated (as a European spreadsheet exports it); export it with commas as the separator and '.' as the decimal point",
            header[0].chars().take(80).collect::<String>()
        )));
    }
    for r in required {
        if csv.column(r).is_none() {
            return Err(file(format!("the header has no column {r:?}")));
        }
    }
    let mut out = Vec::new();
    for (i, rec) in csv.rows().enumerate() {
        let rec = rec.map_err(|e| match e {
            rentix_table::TableError::Csv { detail, .. } => file(detail),
            e => BacktestError::Table(e),
        })?;
        let at = RowAt {
            row: i + 1,
            line: rec.line,
        };
        if rec.record.len() != header.len() {
            return Err(BacktestError::Row {
                path: path.to_path_buf(),
                at,
                field: String::new(),
                detail: format!(
                    "{} cells, the header has {}",
                    rec.record.len(),
                    header.len()
                ),
            });
        }
        let cells = header
            .iter()
            .cloned()
            .zip(rec.record.iter().map(|v| v.trim().to_string()))
            .collect();
        out.push((at, cells));
    }
    Ok(out)
}

/// Dates a rent or event may carry: the years a GPU rental market can have.
const FIRST_YEAR: i32 = 2000;
const LAST_YEAR: i32 = 2100;
/// Longest rent period or event, days: a period is spread over its days.
const MAX_PERIOD_DAYS: i64 = 3660;
/// Largest plausible rent (USD per GPU-hour) and GPU-hours of one row.
const MAX_RENT: f64 = 10_000.0;
const MAX_GPU_HOURS: f64 = 1.0e12;

pub(crate) fn date(
    path: &Path,
    row: RowAt,
    rec: &BTreeMap<String, String>,
    field: &str,
) -> Result<NaiveDate, BacktestError> {
    let v = rec.get(field).map(String::as_str).unwrap_or("");
    let head = v.get(..10).unwrap_or(v);
    let bad = |detail: String| BacktestError::Row {
        path: path.to_path_buf(),
        at: row,
        field: field.into(),
        detail,
    };
    let d = NaiveDate::parse_from_str(head, "%Y-%m-%d")
        .map_err(|_| bad(format!("{v:?} is not a date (YYYY-MM-DD)")))?;
    if !(FIRST_YEAR..=LAST_YEAR).contains(&d.year()) {
        return Err(bad(format!("{v:?} is outside {FIRST_YEAR}..{LAST_YEAR}")));
    }
    Ok(d)
}

fn span(
    path: &Path,
    row: RowAt,
    field: &str,
    start: NaiveDate,
    end: NaiveDate,
) -> Result<(), BacktestError> {
    if (end - start).num_days() > MAX_PERIOD_DAYS {
        return Err(BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: field.into(),
            detail: format!("{start}..{end} is longer than {MAX_PERIOD_DAYS} days"),
        });
    }
    Ok(())
}

fn at_most(path: &Path, row: RowAt, field: &str, x: f64, max: f64) -> Result<f64, BacktestError> {
    if x > max {
        return Err(BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: field.into(),
            detail: format!(
                "{} is above the plausible maximum {max}",
                rentix_core::stats::shown(x)
            ),
        });
    }
    Ok(x)
}

fn number(
    path: &Path,
    row: RowAt,
    rec: &BTreeMap<String, String>,
    field: &str,
) -> Result<f64, BacktestError> {
    let v = rec.get(field).map(String::as_str).unwrap_or("");
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: field.into(),
            detail: format!("{v:?} is not a finite number >= 0{}", number_hint(v)),
        }),
    }
}

/// What a number as people type it in a spreadsheet needs to be read.
fn number_hint(v: &str) -> &'static str {
    const SIGNS: [char; 3] = ['$', '€', '£'];
    if v.starts_with(SIGNS) || v.ends_with(SIGNS) {
        "; write the number without a currency sign (2.50, in the file's currency)"
    } else if v.contains(',') {
        "; write it without thousands separators and with '.' as the decimal point (1234.5)"
    } else {
        ""
    }
}

impl RentSeries {
    /// Reads `period_start, period_end, usd_per_gpu_hour, gpu_hours, side`, with
    /// `period_end` read as `end` says.
    pub fn from_csv(path: &Path, end_rule: PeriodEnd) -> Result<Self, BacktestError> {
        Self::from_csv_with(path, end_rule, None)
    }

    /// [`RentSeries::from_csv`] with the side given for a file without a `side`
    /// column (`--side`); a row whose `side` disagrees with it is refused. Every row
    /// is checked and the problems are reported together (the first
    /// `crate::error::MAX_PROBLEMS`), not one per run.
    pub fn from_csv_with(
        path: &Path,
        end_rule: PeriodEnd,
        given_side: Option<Side>,
    ) -> Result<Self, BacktestError> {
        let required: &[&str] = if given_side.is_some() {
            &[
                "period_start",
                "period_end",
                "usd_per_gpu_hour",
                "gpu_hours",
            ]
        } else {
            &[
                "period_start",
                "period_end",
                "usd_per_gpu_hour",
                "gpu_hours",
                "side",
            ]
        };
        let recs = records(path, required).map_err(|e| match e {
            BacktestError::File { path, detail } if detail.contains("no column \"side\"") => {
                BacktestError::File {
                    path,
                    detail: format!(
                        "{detail}: add it (pay or earn on every row), or pass --side pay|earn"
                    ),
                }
            }
            e => e,
        })?;
        let mut side: Option<Side> = given_side;
        let mut periods = Vec::new();
        let mut problems = Vec::new();
        let mut more = 0;
        for (at, rec) in &recs {
            match rent_row(path, *at, rec, end_rule, given_side, &mut side) {
                Ok(p) => periods.push(p),
                Err(e) if problems.len() < crate::error::MAX_PROBLEMS => problems.push(e),
                Err(_) => more += 1,
            }
        }
        if problems.len() == 1 && more == 0 {
            return Err(problems.remove(0));
        }
        if !problems.is_empty() {
            return Err(BacktestError::Rows {
                path: path.to_path_buf(),
                problems,
                more,
            });
        }
        periods.sort_by_key(|p| p.start);
        for (i, w) in periods.windows(2).enumerate() {
            if w[1].start < w[0].end {
                return Err(BacktestError::Data(format!(
                    "{}: rent periods overlap: {}..{} and {}..{} (sorted rows {} and {})",
                    path.display(),
                    w[0].start,
                    w[0].end,
                    w[1].start,
                    w[1].end,
                    i + 1,
                    i + 2
                )));
            }
        }
        if end_rule == PeriodEnd::Exclusive {
            one_day_gaps(path, &periods)?;
        }
        far_from_neighbours(path, &periods)?;
        let side = side.ok_or_else(|| BacktestError::File {
            path: path.to_path_buf(),
            detail: "no rent rows".into(),
        })?;
        let names = rent_names(path, &recs)?;
        Ok(Self {
            side,
            periods,
            names,
        })
    }

    /// The rent as one row per calendar month it covers whole (its days' GPU-hours
    /// and their GPU-hour-weighted price, as [`RentSeries::over`] counts them);
    /// months it covers in part are left out. A rent of daily or weekly rows cannot
    /// be moved back a month row by row (March 30 and 31 both land on February's
    /// last day): its months can.
    pub fn whole_months(&self) -> Self {
        use chrono::Datelike;
        let mut periods = Vec::new();
        let (Some(first), Some(last)) = (self.periods.first(), self.periods.last()) else {
            return self.clone();
        };
        let mut m = first.start.with_day(1).unwrap_or(first.start);
        while m < last.end {
            let Some(next) = m.checked_add_months(chrono::Months::new(1)) else {
                break;
            };
            let c = self.over(m, next);
            if i64::from(c.days) == (next - m).num_days() {
                if let (Ok(price), Ok(gpu_hours)) =
                    (UsdPerGpuHour::new(c.rent), GpuHours::new(c.gpu_hours))
                {
                    periods.push(RentPeriod {
                        start: m,
                        end: next,
                        price,
                        gpu_hours,
                    });
                }
            }
            m = next;
        }
        Self {
            side: self.side,
            periods,
            names: self.names.clone(),
        }
    }

    /// The same rent with every period moved one calendar month earlier (a rent of
    /// whole months stays whole months): the rent of March set against February's
    /// contract, for a rent priced on the month before.
    pub fn shifted_back_one_month(&self) -> Self {
        let back = |d: NaiveDate| d.checked_sub_months(chrono::Months::new(1)).unwrap_or(d);
        Self {
            side: self.side,
            periods: self
                .periods
                .iter()
                .map(|p| RentPeriod {
                    start: back(p.start),
                    end: back(p.end),
                    ..p.clone()
                })
                .collect(),
            names: self.names.clone(),
        }
    }

    /// The rent over `[from, to)`: days covered, GPU-hours and the GPU-hour-weighted
    /// price, from the rows themselves rather than from per-day splits. A row that
    /// lies wholly inside the window counts with its GPU-hours as written, so a
    /// monthly invoice of 7,665 GPU-hours is 7,665 exactly (summing thirty-one
    /// splits of it gave 7,664.9999999999945, and 10 contracts instead of 11); a
    /// row that straddles the window counts `hours x overlap / length`; the total is
    /// taken to a millionth of a GPU-hour. With no GPU-hours at all, the price is the
    /// mean over the days covered.
    pub fn over(&self, from: NaiveDate, to: NaiveDate) -> Coverage {
        let (mut days, mut hours, mut paid, mut day_price) = (0i64, 0.0, 0.0, 0.0);
        for p in &self.periods {
            let (a, b) = (p.start.max(from), p.end.min(to));
            if a >= b {
                continue;
            }
            let (o, len) = ((b - a).num_days(), (p.end - p.start).num_days());
            let h = if o == len {
                p.gpu_hours.get()
            } else {
                p.gpu_hours.get() * o as f64 / len as f64
            };
            days += o;
            hours += h;
            paid += p.price.get() * h;
            day_price += p.price.get() * o as f64;
        }
        Coverage {
            days: days as u32,
            // To a millionth of a GPU-hour: daily rows of a round month (7,300 split
            // into thirty-one written decimals) add up to 7,300, not 7,299.999999999995.
            gpu_hours: (hours * 1e6).round() / 1e6,
            rent: if hours > 0.0 {
                paid / hours
            } else if days > 0 {
                day_price / days as f64
            } else {
                f64::NAN
            },
        }
    }

    /// Spreads each period evenly over its days: (date, price, GPU-hours that day).
    pub fn daily(&self) -> BTreeMap<NaiveDate, (f64, f64)> {
        let mut out = BTreeMap::new();
        for p in &self.periods {
            let days = (p.end - p.start).num_days().max(1);
            let per_day = p.gpu_hours.get() / days as f64;
            let mut d = p.start;
            while d < p.end {
                out.insert(d, (p.price.get(), per_day));
                d = d + Days::new(1);
            }
        }
        out
    }
}

/// A number for a sentence: at most four decimals, no trailing zeros.
fn shown_short(x: f64) -> String {
    let t = format!("{x:.4}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Neighbouring rows a row is compared with: up to seven on each side.
const NEIGHBOURS: usize = 7;
/// A price this many times its neighbours' median (or that fraction of it) is a typo.
const PRICE_JUMP: f64 = 10.0;
/// GPU-hours a day this many times the neighbours' median (or that fraction) are.
const HOURS_JUMP: f64 = 1000.0;

/// Refuses a row whose price is tenfold (or a tenth of, or zero against) the
/// median of its neighbouring rows, or whose GPU-hours a day are a thousandfold
/// (or a thousandth; zero is a period of idle GPUs): a rent does not move tenfold against the days around it, and one
/// such row moved every hedge ratio of the months around it (walk-forward up to
/// 61.8). Capacity can grow fast, so its bound is wider. Judged on at least four
/// neighbours; `periods` sorted by start.
fn far_from_neighbours(path: &Path, periods: &[RentPeriod]) -> Result<(), BacktestError> {
    let per_day = |p: &RentPeriod| p.gpu_hours.get() / (p.end - p.start).num_days().max(1) as f64;
    let median = |v: Vec<f64>| rentix_core::stats::median(&v).unwrap_or(0.0);
    for (i, p) in periods.iter().enumerate() {
        let around: Vec<&RentPeriod> = periods[i.saturating_sub(NEIGHBOURS)..i]
            .iter()
            .chain(periods.iter().skip(i + 1).take(NEIGHBOURS))
            .collect();
        if around.len() < 4 {
            continue;
        }
        let far = |x: f64, m: f64, k: f64| m > 0.0 && x > 0.0 && (x > m * k || x * k < m);
        let checks = [
            (
                p.price.get(),
                median(around.iter().map(|q| q.price.get()).collect()),
                PRICE_JUMP,
                "USD per GPU-hour",
            ),
            (
                per_day(p),
                median(around.iter().map(|q| per_day(q)).collect()),
                HOURS_JUMP,
                "GPU-hours a day",
            ),
        ];
        // No rent for hours used, among rows that have rent: a typo (a hostile
        // round's $0 month turned a hedge removing >99.99% into "do not hedge").
        // A period of idle GPUs is 0 GPU-hours, and is kept.
        let (price, around_price) = (checks[0].0, checks[0].1);
        if price == 0.0 && around_price > 0.0 && p.gpu_hours.get() > 0.0 {
            return Err(BacktestError::Data(format!(
                "{}: the row of {}..{}: 0 USD per GPU-hour for {} GPU-hours, where the median of its {} neighbouring rows is {}: a typo? Rent of nothing for hours used is refused; correct it (a period whose GPUs stood idle is written with 0 GPU-hours)",
                path.display(),
                p.start,
                p.end,
                shown_short(p.gpu_hours.get()),
                around.len(),
                shown_short(around_price),
            )));
        }
        for (x, m, k, what) in checks {
            if far(x, m, k) {
                let times = if x > m {
                    format!("{:.0}x", x / m)
                } else {
                    format!("1/{:.0}", m / x)
                };
                return Err(BacktestError::Data(format!(
                    "{}: the row of {}..{}: {} {what} is {times} the median of its {} neighbouring rows ({}): a typo? A rent row {}-fold from the rows around it is refused; correct it",
                    path.display(),
                    p.start,
                    p.end,
                    shown_short(x),
                    around.len(),
                    shown_short(m),
                    k
                )));
            }
        }
    }
    Ok(())
}

/// One rent row, checked field by field; `side` is the file's side so far.
fn rent_row(
    path: &Path,
    row: RowAt,
    rec: &BTreeMap<String, String>,
    end_rule: PeriodEnd,
    given_side: Option<Side>,
    side: &mut Option<Side>,
) -> Result<RentPeriod, BacktestError> {
    let start = date(path, row, rec, "period_start")?;
    let written_end = date(path, row, rec, "period_end")?;
    let end = match end_rule {
        PeriodEnd::Exclusive => written_end,
        PeriodEnd::Inclusive => written_end + Days::new(1),
    };
    if end <= start {
        let detail = match end_rule {
            PeriodEnd::Exclusive if written_end == start => format!(
                "{written_end} equals period_start: period_end is exclusive (the first day not covered); for a file whose period_end is the last day covered, pass --period-end inclusive"
            ),
            PeriodEnd::Exclusive => format!("{written_end} is not after period_start {start}"),
            PeriodEnd::Inclusive => format!("{written_end} is before period_start {start}"),
        };
        return Err(BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: "period_end".into(),
            detail,
        });
    }
    span(path, row, "period_end", start, end)?;
    let written = rec
        .get("side")
        .map(|v| v.to_ascii_lowercase())
        .unwrap_or_default();
    let s = match (written.as_str(), given_side) {
        ("", Some(g)) => g,
        ("pay", _) => Side::Pay,
        ("earn", _) => Side::Earn,
        (other, _) => {
            return Err(BacktestError::Row {
                path: path.to_path_buf(),
                at: row,
                field: "side".into(),
                detail: format!("{other:?} is neither pay (a producer) nor earn (a neocloud)"),
            })
        }
    };
    if side.is_some_and(|x| x != s) {
        return Err(BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: "side".into(),
            detail: match given_side {
                Some(g) => format!("{} disagrees with --side {}", s.as_str(), g.as_str()),
                None => "a rent file holds one side; split pay and earn into two files".into(),
            },
        });
    }
    *side = Some(s);
    let price = UsdPerGpuHour::new(at_most(
        path,
        row,
        "usd_per_gpu_hour",
        number(path, row, rec, "usd_per_gpu_hour")?,
        MAX_RENT,
    )?)
    .map_err(|e| BacktestError::Row {
        path: path.to_path_buf(),
        at: row,
        field: "usd_per_gpu_hour".into(),
        detail: e.to_string(),
    })?;
    let hours = GpuHours::new(at_most(
        path,
        row,
        "gpu_hours",
        number(path, row, rec, "gpu_hours")?,
        MAX_GPU_HOURS,
    )?)
    .map_err(|e| BacktestError::Row {
        path: path.to_path_buf(),
        at: row,
        field: "gpu_hours".into(),
        detail: e.to_string(),
    })?;
    Ok(RentPeriod {
        start,
        end,
        price,
        gpu_hours: hours,
    })
}

/// Refuses a file whose consecutive periods are all separated by exactly one day:
/// the signature of inclusive ends read as exclusive, which would leave every month
/// a day short.
fn one_day_gaps(path: &Path, periods: &[RentPeriod]) -> Result<(), BacktestError> {
    let gaps: Vec<i64> = periods
        .windows(2)
        .map(|w| (w[1].start - w[0].end).num_days())
        .collect();
    if !gaps.is_empty() && gaps.iter().all(|g| *g == 1) {
        let w = &periods[..2];
        return Err(BacktestError::File {
            path: path.to_path_buf(),
            detail: format!(
                "every period ends one day before the next begins (e.g. {} to {}, then {}): period_end is read as exclusive (the first day not covered); if it is the last day billed, as on an invoice, pass --period-end inclusive",
                w[0].start,
                w[0].end,
                w[1].start
            ),
        });
    }
    Ok(())
}

/// Reads `start, end, kind, gpu_hours_lost, usd_loss, note`. `end` is read as the
/// rent file's `period_end` is (`end_rule`): exclusive by default, the last day of
/// the event with `--period-end inclusive`; with either rule an event whose `end`
/// equals its `start` lasts that one day.
pub fn read_events(path: &Path, end_rule: PeriodEnd) -> Result<Vec<Event>, BacktestError> {
    let recs = records(
        path,
        &["start", "end", "kind", "gpu_hours_lost", "usd_loss"],
    )?;
    let mut out = Vec::new();
    let mut seen = BTreeMap::new();
    for (row, rec) in &recs {
        let row = *row;
        let start = date(path, row, rec, "start")?;
        let written_end = date(path, row, rec, "end")?;
        let end = match end_rule {
            PeriodEnd::Inclusive if written_end >= start => written_end + Days::new(1),
            _ => written_end,
        };
        if end < start {
            return Err(BacktestError::Row {
                path: path.to_path_buf(),
                at: row,
                field: "end".into(),
                detail: format!("{end} is before start {start}"),
            });
        }
        span(path, row, "end", start, end)?;
        // As people write them in a spreadsheet: `Outage`, `Failed deployment`.
        let kind = rec
            .get("kind")
            .map(|k| k.trim().to_ascii_lowercase().replace([' ', '-'], "_"))
            .unwrap_or_default();
        if !EVENT_KINDS.contains(&kind.as_str()) {
            return Err(BacktestError::Row {
                path: path.to_path_buf(),
                at: row,
                field: "kind".into(),
                detail: format!("{kind:?} is not one of {}", EVENT_KINDS.join(", ")),
            });
        }
        out.push(Event {
            start,
            end,
            kind,
            gpu_hours_lost: at_most(
                path,
                row,
                "gpu_hours_lost",
                number(path, row, rec, "gpu_hours_lost")?,
                MAX_GPU_HOURS,
            )?,
            usd_loss: at_most(
                path,
                row,
                "usd_loss",
                number(path, row, rec, "usd_loss")?,
                1.0e15,
            )?,
            note: rec.get("note").cloned().unwrap_or_default(),
        });
        // The same event written twice (a row pasted again) is one event: summed,
        // its loss counted twice.
        let e = &out[out.len() - 1];
        let key = (
            e.start,
            e.end,
            e.kind.clone(),
            e.gpu_hours_lost.to_bits(),
            e.usd_loss.to_bits(),
            e.note.clone(),
        );
        if let Some(first) = seen.insert(key, row.row) {
            return Err(BacktestError::Row {
                path: path.to_path_buf(),
                at: row,
                field: "start".into(),
                detail: format!(
                    "repeats row {first} field for field: the same event written twice would count its loss twice (drop one, or tell them apart in note)"
                ),
            });
        }
    }
    Ok(out)
}

/// What events cost over `[from, to)`: GPU-hours lost, USD lost, and USD by kind.
/// An event wholly inside the window counts as written; one that straddles it
/// counts `x overlap / length` (an event whose `end` equals its `start` is one day).
pub(crate) fn events_over(
    events: &[Event],
    from: NaiveDate,
    to: NaiveDate,
) -> (f64, f64, BTreeMap<String, f64>) {
    let (mut lost, mut usd, mut by_kind) = (0.0, 0.0, BTreeMap::<String, f64>::new());
    for e in events {
        let end = e.end.max(e.start + Days::new(1));
        let (a, b) = (e.start.max(from), end.min(to));
        if a >= b {
            continue;
        }
        let (o, len) = ((b - a).num_days(), (end - e.start).num_days());
        let share = |x: f64| {
            if o == len {
                x
            } else {
                x * o as f64 / len as f64
            }
        };
        lost += share(e.gpu_hours_lost);
        usd += share(e.usd_loss);
        *by_kind.entry(e.kind.clone()).or_default() += share(e.usd_loss);
    }
    (lost, usd, by_kind)
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: rent files'
    /// `side` column holds it, so it must not change by a byte.
    const SIDE_TEXT: [(Side, &str); 2] = [(Side::Pay, "pay"), (Side::Earn, "earn")];
    /// `--period-end`'s and `periods.csv`'s text.
    const PERIOD_END_TEXT: [(PeriodEnd, &str); 2] = [
        (PeriodEnd::Exclusive, "exclusive"),
        (PeriodEnd::Inclusive, "inclusive"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <Side as strum::VariantArray>::VARIANTS.len(),
            SIDE_TEXT.len()
        );
        for (v, text) in SIDE_TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<Side>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(serde_json::from_value::<Side>(text.into()).unwrap(), v);
        }
        assert_eq!(
            <PeriodEnd as strum::VariantArray>::VARIANTS.len(),
            PERIOD_END_TEXT.len()
        );
        for (v, text) in PERIOD_END_TEXT {
            assert_eq!(text.parse::<PeriodEnd>().unwrap(), v);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(serde_json::from_value::<PeriodEnd>(text.into()).unwrap(), v);
        }
        assert_eq!(
            "Inclusive".parse::<PeriodEnd>().unwrap_err(),
            "\"Inclusive\": expected exclusive or inclusive"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    /// A hostile run: rent = index but for three days at 3000 USD per GPU-hour
    /// (under the 10,000 cap) flipped a perfect hedge to "would add risk", with
    /// walk-forward ratios up to 61.8 and no warning; one day's gpu_hours x10,000
    /// still read "hedge". A row tenfold its neighbours' price, or a thousandfold
    /// their GPU-hours a day, is refused naming its days.
    #[test]
    fn a_row_far_from_its_neighbours_is_refused() {
        let rent = |price: &dyn Fn(u32) -> f64, hours: &dyn Fn(u32) -> f64| {
            let mut t = String::from("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n");
            let d0 = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
            for i in 0..60u32 {
                let (a, b) = (
                    d0 + Days::new(u64::from(i)),
                    d0 + Days::new(u64::from(i) + 1),
                );
                t.push_str(&format!("{a},{b},{},{},pay\n", price(i), hours(i)));
            }
            t
        };
        // Day 30's neighbours are days 23-29 and 31-37, 2.923 to 2.937: median
        // (2.929 + 2.931) / 2 = 2.93, and 3000 / 2.93 = 1023.9.
        let read = |text: String| {
            let (_d, p) = write("rent.csv", &text);
            RentSeries::from_csv(&p, PeriodEnd::Exclusive)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let e = read(rent(
            &|i| {
                if i == 30 {
                    3000.0
                } else {
                    2.9 + 0.001 * f64::from(i)
                }
            },
            &|_| 24.0,
        ))
        .unwrap_err();
        assert!(
            e.contains("the row of 2025-01-31..2025-02-01: 3000 USD per GPU-hour is 1024x the median of its 14 neighbouring rows (2.93)"),
            "{e}"
        );
        let e = read(rent(&|_| 2.9, &|i| if i == 40 { 240_000.0 } else { 24.0 })).unwrap_err();
        assert!(
            e.contains("the row of 2025-02-10..2025-02-11: 240000 GPU-hours a day is 10000x"),
            "{e}"
        );
        // A row of no rent (or no GPU-hours) among rows that have it: a hostile
        // round's $0 month was let through (the check compared only positive
        // numbers) and turned a hedge removing >99.99% into "do not hedge".
        let e = read(rent(&|i| if i == 30 { 0.0 } else { 2.9 }, &|_| 24.0)).unwrap_err();
        assert!(
            e.contains("the row of 2025-01-31..2025-02-01: 0 USD per GPU-hour for 24 GPU-hours, where the median of its 14 neighbouring rows is 2.9: a typo?"),
            "{e}"
        );
        // A day the GPUs stood idle (0 GPU-hours, at any price) is a rent, kept:
        // refusing it left no way to write an idle month but to drop it.
        for price in [0.0, 2.9] {
            let idle = rent(&|i| if i == 40 { price } else { 2.9 }, &|i| {
                if i == 40 {
                    0.0
                } else {
                    24.0
                }
            });
            assert!(read(idle).is_ok(), "{price}");
        }
        // A rent that doubles in a day, and capacity that grows a hundredfold, are
        // rents, not typos.
        assert!(
            read(rent(&|i| if i < 30 { 2.0 } else { 4.0 }, &|i| if i < 30 {
                24.0
            } else {
                2400.0
            }))
            .is_ok()
        );
    }

    /// A hostile usd_loss of 1e308 was echoed as 309 digits.
    #[test]
    fn a_number_far_above_its_bound_is_echoed_short() {
        let (_d, p) = write(
            "events.csv",
            "start,end,kind,gpu_hours_lost,usd_loss,note\n2025-03-01,2025-03-02,outage,10,1e308,\n",
        );
        let e = read_events(&p, PeriodEnd::Exclusive)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("field usd_loss: 1e308 is above the plausible maximum"),
            "{e}"
        );
        assert!(e.len() < 200, "{e}");
    }

    /// A note quoted over two lines (as a spreadsheet writes a cell with a line
    /// break) moves the next row down a line: the error names the line an editor
    /// shows it on (row 2 starts on line 4), not row + 1.
    #[test]
    fn errors_name_the_line_a_row_starts_on() {
        let (_d, p) = write(
            "events.csv",
            "start,end,kind,gpu_hours_lost,usd_loss,note\n\
             2025-03-01,2025-03-02,outage,10,100,\"rack 4\nPDU\"\n\
             2025-03-05,2025-03-06,fire,10,100,\n",
        );
        let e = read_events(&p, PeriodEnd::Exclusive)
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2 (line 4), field kind"), "{e}");
    }

    #[test]
    fn a_row_of_another_width_is_refused_naming_it() {
        let (_d, p) = write(
            "rent.csv",
            "period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n\
             2025-01-01,2025-02-01,2.5,730,pay\n\
             2025-02-01,2025-03-01,2.5,730\n",
        );
        let e = RentSeries::from_csv(&p, PeriodEnd::Exclusive)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("row 2 (line 3)") && e.contains("4 cells, the header has 5"),
            "{e}"
        );
    }

    #[test]
    fn a_column_named_twice_names_both_positions() {
        let (_d, p) = write(
            "rent.csv",
            "period_start,period_end,usd_per_gpu_hour,gpu_hours,side,gpu_hours\n",
        );
        let e = RentSeries::from_csv(&p, PeriodEnd::Exclusive)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"gpu_hours\" twice (columns 4 and 6)"), "{e}");
    }
}
