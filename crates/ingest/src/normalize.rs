//! The validator: a [`RawObservation`] becomes an [`Observation`] in USD per GPU-hour,
//! or a [`Rejection`] that names the field and the reason.

use crate::raw::RawObservation;
use crate::reason::{Reason, Rejection};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use rentix_core::{
    ContractTerm, FixingClock, FxMiss, FxTable, GpuCatalog, GpuHours, Grade, Id, Interner,
    Observation, ObservationKind, OperatorTier, PriceUnit, RatingTable, ServiceScope,
    UsdPerGpuHour,
};
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// Everything validation needs: the GPU catalog (with mapping aliases), the FX table,
/// the fixing clock that assigns fixing dates, and the plausibility bounds.
#[derive(Debug, Clone)]
pub(crate) struct Normalizer {
    /// GPU ids and aliases, the bundled table plus the mapping's `[aliases]`.
    pub catalog: GpuCatalog,
    /// USD per unit of each currency by date; a price converts at the latest rate on
    /// or before its fixing date.
    pub fx: FxTable,
    /// The ingest's cut-off: it gives each row its `fixing_date` (and partition).
    pub clock: FixingClock,
    /// The plausibility bounds.
    pub bounds: Bounds,
    /// Operator ratings attached to rows that carry no tier of their own.
    pub ratings: RatingTable,
}

/// Plausibility bounds: values outside them are quarantined with an `implausible_*`
/// reason instead of reaching the store (a date of -2025 or 9999, a price of 1e308).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Earliest accepted observation (and term start) date.
    pub earliest: NaiveDate,
    /// Latest accepted timestamp: the run's start plus the future tolerance.
    pub latest: DateTime<Utc>,
    /// Smallest accepted price, USD per GPU-hour after normalization.
    pub min_usd_per_gpu_hour: f64,
    /// Largest accepted price, USD per GPU-hour after normalization.
    pub max_usd_per_gpu_hour: f64,
    /// Largest accepted quantity of one observation, GPU-hours.
    pub max_quantity_gpu_hours: f64,
}

/// No GPU rental market before 2010 (the first cloud GPU instances).
pub(crate) const EARLIEST_DATE: (i32, u32, u32) = (2010, 1, 1);
/// Defaults: 2 days of clock skew, 0.01 to 1,000 USD per GPU-hour (the cheapest
/// public spot rates of small GPUs are tens of cents; a price of a cent is a typo, a
/// unit or currency mistake, or 1e-300), 100 million GPU-hours.
pub const DEFAULT_FUTURE_DAYS: u32 = 2;
/// Default `--min-price`, USD per GPU-hour (see [`DEFAULT_FUTURE_DAYS`]).
pub const DEFAULT_MIN_USD_PER_GPU_HOUR: f64 = 0.01;
/// Default `--max-price`, USD per GPU-hour.
pub const DEFAULT_MAX_USD_PER_GPU_HOUR: f64 = 1000.0;
/// Default `--max-quantity`, GPU-hours of one observation.
pub const DEFAULT_MAX_QUANTITY_GPU_HOURS: f64 = 1.0e8;

impl Bounds {
    /// Bounds for a run starting `now`; prices in USD per GPU-hour.
    pub fn at(
        now: DateTime<Utc>,
        future_days: u32,
        (min_price, max_price): (f64, f64),
        max_quantity: f64,
    ) -> Self {
        let (y, m, d) = EARLIEST_DATE;
        Self {
            earliest: NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default(),
            latest: now + chrono::Duration::days(i64::from(future_days)),
            min_usd_per_gpu_hour: min_price,
            max_usd_per_gpu_hour: max_price,
            max_quantity_gpu_hours: max_quantity,
        }
    }

    /// Default bounds as of now.
    pub fn default_now() -> Self {
        Self::at(
            Utc::now(),
            DEFAULT_FUTURE_DAYS,
            (DEFAULT_MIN_USD_PER_GPU_HOUR, DEFAULT_MAX_USD_PER_GPU_HOUR),
            DEFAULT_MAX_QUANTITY_GPU_HOURS,
        )
    }

    fn date(&self, t: DateTime<Utc>, field: &str, text: &str) -> Checked<()> {
        if t.date_naive() < self.earliest || t > self.latest {
            return Err(Rejection::new(
                Reason::ImplausibleDate,
                field,
                format!(
                    "{text:?} is outside {} .. {} (before the market, or in the future beyond the tolerance)",
                    self.earliest,
                    self.latest.format("%Y-%m-%dT%H:%MZ")
                ),
            ));
        }
        Ok(())
    }
}

type Checked<T> = std::result::Result<T, Rejection>;

fn required<'a>(v: &'a Option<Cow<'_, str>>, field: &str) -> Checked<&'a str> {
    v.as_deref()
        .ok_or_else(|| Rejection::new(Reason::MissingField, field, "empty"))
}

/// Parses RFC 3339 with an offset, `YYYY-MM-DD HH:MM:SS` with an offset, or a bare
/// date (taken as 00:00 UTC). A timestamp without an offset is refused: guessing a
/// time zone would move fixing dates silently. A leap second (`23:59:60Z`) is kept
/// on the UTC day it ends ([`within_its_day`]). The date is four, two and two
/// digits (chrono alone also took `+2025-03-03` and `2025-3-3`), and a second 60
/// only ends a UTC day (chrono took `12:00:60Z`).
pub(crate) fn parse_timestamp(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let dated = digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(b.get(10), None | Some(b'T' | b't' | b' '));
    if !dated {
        return None;
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return within_its_day(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%:z") {
        return within_its_day(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(NaiveDateTime::from(d).and_utc());
    }
    None
}

/// A leap second (`23:59:60.x`, which chrono holds as 23:59:59 with a nanosecond
/// count of a second or more) as the last microsecond of its UTC day: stored as
/// microseconds since the epoch it would otherwise read back as 00:00:00 of the next
/// day and be fixed there. `None` for a second 60 that does not end a UTC day.
fn within_its_day(t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    use chrono::Timelike;
    if t.nanosecond() < 1_000_000_000 {
        return Some(t);
    }
    if (t.hour(), t.minute(), t.second()) != (23, 59, 59) {
        return None;
    }
    Some(t.with_nanosecond(999_999_000).unwrap_or(t))
}

fn parse_f64(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok()
}

fn parse_count(v: &Option<Cow<'_, str>>, field: &str) -> Checked<Option<u32>> {
    match v.as_deref() {
        None => Ok(None),
        Some(s) => {
            let x = parse_f64(s)
                .filter(|x| x.is_finite() && *x >= 1.0 && x.fract() == 0.0 && *x <= 1.0e6);
            match x {
                Some(x) => Ok(Some(x as u32)),
                None => Err(Rejection::new(
                    Reason::InvalidNumber,
                    field,
                    format!("{s:?} is not a whole number >= 1"),
                )),
            }
        }
    }
}

/// A quote's parts that its price in USD per GPU-hour is worked out from.
struct Quote {
    price: f64,
    unit: PriceUnit,
    gpus_per_unit: Option<u32>,
    term: ContractTerm,
    /// The month a monthly price is spread over (the term's start, else the
    /// fixing date).
    month: NaiveDate,
    upfront: Option<f64>,
    /// USD per unit of the quote's currency.
    fx: f64,
}

/// The quoted price: a finite number above zero.
fn price(raw: &RawObservation) -> Checked<f64> {
    let price_s = required(&raw.price, "price")?;
    let price_raw = parse_f64(price_s).ok_or_else(|| {
        Rejection::new(
            Reason::UnparseablePrice,
            "price",
            format!("{price_s:?} is not a number"),
        )
    })?;
    if !price_raw.is_finite() {
        return Err(Rejection::new(
            Reason::NonFinitePrice,
            "price",
            format!("{price_s:?}"),
        ));
    }
    if price_raw <= 0.0 {
        // The cell as written: "2.1e-400" read as 0 was reported as "0".
        let detail = if price_raw == 0.0 && price_s.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            format!("{price_s:?} is too small to be a number (it reads as 0)")
        } else {
            format!("{price_s:?} is not above 0")
        };
        return Err(Rejection::new(Reason::NonPositivePrice, "price", detail));
    }
    Ok(price_raw)
}

/// The upfront amount, when given: a finite amount of at least zero.
fn upfront(raw: &RawObservation) -> Checked<Option<f64>> {
    Ok(match raw.upfront.as_deref() {
        None => None,
        Some(s) => Some(
            parse_f64(s)
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    Rejection::new(
                        Reason::InvalidNumber,
                        "upfront",
                        format!("{s:?} is not an amount >= 0"),
                    )
                })?,
        ),
    })
}

impl Normalizer {
    /// USD per unit of `currency` on the fixing date.
    fn usd_per_unit(&self, currency: &str, fixing_date: NaiveDate) -> Checked<f64> {
        self.fx
            .usd_per_unit(currency, fixing_date)
            .map_err(|miss| match miss {
                FxMiss::UnknownCurrency => {
                    Rejection::new(Reason::UnknownCurrency, "currency", format!("{currency:?}"))
                }
                FxMiss::NoRateBefore => Rejection::new(
                    Reason::NoFxRate,
                    "currency",
                    format!("no {currency} rate on or before {fixing_date}"),
                ),
                FxMiss::Stale { rate_date } => Rejection::new(
                    Reason::NoFxRate,
                    "currency",
                    format!(
                        "the latest {currency} rate is of {rate_date}, {} days before {fixing_date}: a rate more than {} days old converts nothing; add a rate to the FX table (--fx)",
                        (fixing_date - rate_date).num_days(),
                        rentix_core::MAX_RATE_AGE_DAYS
                    ),
                ),
            })
    }

    /// The volume in GPU-hours: plausible when given (0, or from one GPU-second to
    /// the bound), and given (above zero) for a trade.
    fn quantity(&self, raw: &RawObservation, kind: ObservationKind) -> Checked<Option<GpuHours>> {
        let quantity_gpu_hours = match raw.quantity_gpu_hours.as_deref() {
            None => None,
            Some(s) => {
                let q = parse_f64(s)
                    .and_then(|x| GpuHours::new(x).ok())
                    .ok_or_else(|| {
                        Rejection::new(
                            Reason::InvalidQuantity,
                            "quantity_gpu_hours",
                            format!("{s:?}"),
                        )
                    })?;
                if q.get() > 0.0 && q.get() < MIN_QUANTITY_GPU_HOURS {
                    return Err(Rejection::new(
                        Reason::ImplausibleQuantity,
                        "quantity_gpu_hours",
                        format!("{s:?} GPU-hours is less than one GPU-second (1/3600 of a GPU-hour): no rental is that short"),
                    ));
                }
                if q.get() > self.bounds.max_quantity_gpu_hours {
                    return Err(Rejection::new(
                        Reason::ImplausibleQuantity,
                        "quantity_gpu_hours",
                        format!(
                            "{s:?} GPU-hours is above the plausible maximum {}",
                            self.bounds.max_quantity_gpu_hours
                        ),
                    ));
                }
                Some(q)
            }
        };
        if kind == ObservationKind::Trade {
            match quantity_gpu_hours {
                None => {
                    return Err(Rejection::new(
                        Reason::MissingQuantity,
                        "quantity_gpu_hours",
                        "a trade must carry its volume in GPU-hours",
                    ))
                }
                Some(q) if q.get() == 0.0 => {
                    return Err(Rejection::new(
                        Reason::InvalidQuantity,
                        "quantity_gpu_hours",
                        "a trade of zero GPU-hours",
                    ))
                }
                _ => {}
            }
        }
        Ok(quantity_gpu_hours)
    }

    /// The operator tier: the row's own, else the rating in force on the
    /// observation's date for its operator and scope.
    fn operator_tier(
        &self,
        raw: &RawObservation,
        source: &str,
        scope: ServiceScope,
        observed_at: DateTime<Utc>,
        recent: &mut Last<OperatorTier>,
    ) -> Checked<Option<OperatorTier>> {
        let own = match raw.operator_tier.as_deref() {
            None => None,
            Some(s) => Some(recent.or_work(s, |s| {
                s.parse::<OperatorTier>().map_err(|_| {
                    Rejection::new(
                        Reason::UnknownOperatorTier,
                        "operator_tier",
                        format!("{s:?}"),
                    )
                })
            })?),
        };
        Ok(own.or_else(|| {
            self.ratings
                .tier_on(source, scope, observed_at.date_naive())
        }))
    }

    /// The day a term starts, when given: ahead of the quote, but not decades away.
    fn term_start(&self, raw: &RawObservation) -> Checked<Option<NaiveDate>> {
        let Some(s) = raw.term_start.as_deref() else {
            return Ok(None);
        };
        let t = parse_timestamp(s).ok_or_else(|| {
            Rejection::new(Reason::UnparseableDate, "term_start", format!("{s:?}"))
        })?;
        let far = Bounds {
            latest: self.bounds.latest + chrono::Duration::days(3660),
            ..self.bounds
        };
        far.date(t, "term_start", s)?;
        Ok(Some(t.date_naive()))
    }

    /// The price per GPU-hour in the quoted currency plus the upfront amortized over
    /// the term, in USD, within the plausible bounds.
    fn usd_per_gpu_hour(&self, q: &Quote) -> Checked<UsdPerGpuHour> {
        let per_gpu = q
            .unit
            .to_per_gpu_hour(q.price, q.gpus_per_unit, q.month)
            .map_err(|e| {
                Rejection::new(Reason::MissingGpusPerUnit, "gpus_per_unit", e.to_string())
            })?;
        let amortized = match q.upfront {
            Some(u) if u > 0.0 => {
                let hours = q.term.hours().ok_or_else(|| {
                    Rejection::new(
                        Reason::UpfrontWithoutTerm,
                        "upfront",
                        format!("{} has no fixed length to amortize over", q.term),
                    )
                })?;
                let gpus = if q.unit.needs_gpus_per_unit() {
                    f64::from(q.gpus_per_unit.unwrap_or(1))
                } else {
                    1.0
                };
                u / hours / gpus
            }
            _ => 0.0,
        };
        let usd = (per_gpu + amortized) * q.fx;
        let usd_per_gpu_hour = UsdPerGpuHour::positive(usd)
            .map_err(|e| Rejection::new(Reason::NonFinitePrice, "price", e.to_string()))?;
        if usd > self.bounds.max_usd_per_gpu_hour {
            return Err(Rejection::new(
                Reason::ImplausiblePrice,
                "price",
                format!(
                    "{} USD per GPU-hour after normalization is above the plausible maximum {}",
                    rentix_core::stats::shown(usd),
                    self.bounds.max_usd_per_gpu_hour
                ),
            ));
        }
        if usd < self.bounds.min_usd_per_gpu_hour {
            return Err(Rejection::new(
                Reason::ImplausiblePrice,
                "price",
                format!(
                    "{} USD per GPU-hour after normalization is below the plausible minimum {}",
                    rentix_core::stats::shown(usd),
                    self.bounds.min_usd_per_gpu_hour
                ),
            ));
        }
        Ok(usd_per_gpu_hour)
    }

    /// [`Normalizer::normalize_shared`] with text interned for this row alone.
    #[cfg(test)]
    pub(crate) fn normalize(
        &self,
        raw: &RawObservation,
        file: &std::sync::Arc<str>,
        row: u64,
    ) -> Checked<Observation> {
        self.normalize_shared(raw, file, row, &mut Recent::default())
    }

    /// A row's GPU (by its canonical id), scope and term, checked in that order.
    fn grade_parts(
        &self,
        raw: &RawObservation,
        gpu_raw: &str,
        recent: &mut Recent,
    ) -> Checked<(rentix_core::GpuModel, ServiceScope, ContractTerm)> {
        let gpu = recent.gpu.or_work(gpu_raw, |g| {
            self.catalog.resolve(g).map(|spec| spec.id.clone()).map_err(|_| {
                Rejection::new(
                    Reason::UnknownGpu,
                    "gpu",
                    format!("{g:?} is not in the alias table (data/gpus.toml; a mapping file can add an alias)"),
                )
                .with_value(g)
            })
        })?;

        let scope_s = required(&raw.scope, "scope")?;
        let scope: ServiceScope = recent.scope.or_work(scope_s, |s| {
            s.parse()
                .map_err(|_| Rejection::new(Reason::UnknownScope, "scope", format!("{s:?}")))
        })?;
        let term_s = required(&raw.term, "term")?;
        let term: ContractTerm = recent.term.or_work(term_s, |t| {
            t.parse()
                .map_err(|_| Rejection::new(Reason::UnknownTerm, "term", format!("{t:?}")))
        })?;
        Ok((gpu, scope, term))
    }

    /// Validates and normalizes one candidate. `file` and `row` are provenance;
    /// the row's repeated text (source, raw GPU name, currency, region,
    /// interconnect) comes from `recent`, one copy shared by the rows of a batch,
    /// and a field equal to the previous row's is taken as that row's was worked
    /// out ([`Recent`]).
    pub(crate) fn normalize_shared(
        &self,
        raw: &RawObservation,
        file: &std::sync::Arc<str>,
        row: u64,
        recent: &mut Recent,
    ) -> Checked<Observation> {
        let kind_s = required(&raw.kind, "kind")?;
        let kind: ObservationKind = recent.kind.or_work(kind_s, |k| {
            k.parse()
                .map_err(|_| Rejection::new(Reason::UnknownKind, "kind", format!("{k:?}")))
        })?;

        let at_s = required(&raw.observed_at, "observed_at")?;
        let observed_at = parse_timestamp(at_s).ok_or_else(|| {
            Rejection::new(
                Reason::UnparseableDate,
                "observed_at",
                format!("{at_s:?} is not RFC 3339 with an offset, nor a date"),
            )
        })?;
        self.bounds.date(observed_at, "observed_at", at_s)?;
        let fixing_date = self.clock.fixing_date(observed_at);

        let source = required(&raw.source, "source")?;

        let gpu_raw = required(&raw.gpu, "gpu")?;
        let (gpu, scope, term) = self.grade_parts(raw, gpu_raw, recent)?;

        let price_raw = price(raw)?;

        let unit_s = required(&raw.price_unit, "price_unit")?;
        let price_unit: PriceUnit = recent.unit.or_work(unit_s, |u| {
            u.parse()
                .map_err(|_| Rejection::new(Reason::UnknownUnit, "price_unit", format!("{u:?}")))
        })?;
        let gpus_per_unit = parse_count(&raw.gpus_per_unit, "gpus_per_unit")?;
        if price_unit.needs_gpus_per_unit() && gpus_per_unit.is_none() {
            return Err(Rejection::new(
                Reason::MissingGpusPerUnit,
                "gpus_per_unit",
                format!("a {price_unit} price needs the number of GPUs per unit"),
            ));
        }

        let texts = &mut recent.texts;
        let currency = recent
            .currency
            .or_work(required(&raw.currency, "currency")?, |c| {
                Ok::<_, Rejection>(in_case(texts, c, Case::Upper))
            })?;
        let fx = self.usd_per_unit(&currency, fixing_date)?;

        let quantity_gpu_hours = self.quantity(raw, kind)?;

        let cluster_gpus = parse_count(&raw.cluster_gpus, "cluster_gpus")?;
        let operator_tier =
            self.operator_tier(raw, source, scope, observed_at, &mut recent.tier)?;
        let term_start = self.term_start(raw)?;
        let upfront = upfront(raw)?;

        let usd_per_gpu_hour = self.usd_per_gpu_hour(&Quote {
            price: price_raw,
            unit: price_unit,
            gpus_per_unit,
            term,
            month: term_start.unwrap_or(fixing_date),
            upfront,
            fx,
        })?;

        let region = raw
            .region
            .as_deref()
            .map(|r| recent.region.shared(r, |r| in_case(texts, r, Case::Lower)));
        let grade = Grade::new(gpu, scope, term).with_region(region);

        let mut obs = Observation {
            obs_id: Id::default(),
            kind,
            observed_at,
            fixing_date,
            source: recent.source.shared(source, |t| texts.get(t)),
            grade,
            gpu_raw: recent.gpu_raw.shared(gpu_raw, |t| texts.get(t)),
            usd_per_gpu_hour,
            quantity_gpu_hours,
            price_raw,
            price_unit,
            currency,
            gpus_per_unit,
            interconnect: raw
                .interconnect
                .as_deref()
                .map(|t| recent.interconnect.shared(t, |t| texts.get(t))),
            cluster_gpus,
            operator_tier,
            upfront,
            term_start,
            input_file: recent.file_name(file),
            input_row: row,
        };
        obs.obs_id = match &raw.obs_id {
            Some(id) => Id::new(id),
            None => generated_id(&obs),
        };
        Ok(obs)
    }
}

impl Normalizer {
    /// Every field of a refused row that is wrong on its own, each checked without
    /// the others (a field that needs another, such as a trade's quantity or a
    /// currency's rate on the row's date, is checked when that one is sound): a
    /// spreadsheet user fixes the row once instead of once per run. `first` is the
    /// rejection [`Normalizer::normalize`] gave; the result leaves its field out.
    pub(crate) fn other_problems(&self, raw: &RawObservation, first: &Rejection) -> Vec<Rejection> {
        let kind = required(&raw.kind, "kind").and_then(|k| {
            k.parse::<ObservationKind>()
                .map_err(|_| Rejection::new(Reason::UnknownKind, "kind", format!("{k:?}")))
        });
        let at = required(&raw.observed_at, "observed_at").and_then(|s| {
            let t = parse_timestamp(s).ok_or_else(|| {
                Rejection::new(Reason::UnparseableDate, "observed_at", format!("{s:?}"))
            })?;
            self.bounds.date(t, "observed_at", s).map(|()| t)
        });
        let fixing_date = at.as_ref().ok().map(|t| self.clock.fixing_date(*t));
        let enum_field = |v: &Option<Cow<'_, str>>, field: &str, reason: Reason, ok: bool| {
            required(v, field).and_then(|s| {
                if ok {
                    Ok(())
                } else {
                    Err(Rejection::new(reason, field, format!("{s:?}")))
                }
            })
        };
        let parses = |v: &Option<Cow<'_, str>>, f: fn(&str) -> bool| v.as_deref().is_some_and(f);
        let mut out: Vec<Rejection> = vec![
            kind.as_ref().err().cloned(),
            at.err(),
            required(&raw.source, "source").err(),
            required(&raw.gpu, "gpu")
                .and_then(|g| {
                    self.catalog.resolve(g).map(|_| ()).map_err(|_| {
                        Rejection::new(
                            Reason::UnknownGpu,
                            "gpu",
                            format!("{g:?} is not in the alias table"),
                        )
                    })
                })
                .err(),
            enum_field(
                &raw.scope,
                "scope",
                Reason::UnknownScope,
                parses(&raw.scope, |s| s.parse::<ServiceScope>().is_ok()),
            )
            .err(),
            enum_field(
                &raw.term,
                "term",
                Reason::UnknownTerm,
                parses(&raw.term, |s| s.parse::<ContractTerm>().is_ok()),
            )
            .err(),
            price(raw).err(),
            enum_field(
                &raw.price_unit,
                "price_unit",
                Reason::UnknownUnit,
                parses(&raw.price_unit, |s| s.parse::<PriceUnit>().is_ok()),
            )
            .err(),
            parse_count(&raw.gpus_per_unit, "gpus_per_unit").err(),
            required(&raw.currency, "currency")
                .and_then(|c| match fixing_date {
                    Some(d) => self.usd_per_unit(&c.to_ascii_uppercase(), d).map(|_| ()),
                    None => Ok(()),
                })
                .err(),
            kind.ok().and_then(|k| self.quantity(raw, k).err()),
            parse_count(&raw.cluster_gpus, "cluster_gpus").err(),
            raw.operator_tier.as_deref().and_then(|s| {
                s.parse::<OperatorTier>().is_err().then(|| {
                    Rejection::new(
                        Reason::UnknownOperatorTier,
                        "operator_tier",
                        format!("{s:?}"),
                    )
                })
            }),
            self.term_start(raw).err(),
            upfront(raw).err(),
        ]
        .into_iter()
        .flatten()
        .collect();
        out.retain(|r| r.field != first.field);
        out
    }
}

/// `detail` of a refused row, followed by the row's other problems
/// ([`Normalizer::other_problems`]): `...; also: term "zz" (unknown_term), ...`.
pub(crate) fn with_others(detail: String, others: &[Rejection]) -> String {
    if others.is_empty() {
        return detail;
    }
    let also: Vec<String> = others
        .iter()
        .map(|o| format!("{} {} ({})", o.field, o.detail, o.reason))
        .collect();
    format!("{detail}; also: {}", also.join("; "))
}

/// The key two observations share exactly when one is a duplicate of the other:
/// the same source id from the same source, or (without a source id) the same
/// normalized content. A listing's content leaves out its time of day, so the same
/// listing re-seen within a fixing day at the same price is a duplicate.
pub(crate) fn dedupe_key(obs: &Observation, had_source_id: bool) -> Id {
    if had_source_id {
        digest128(&["id", &obs.source, &obs.obs_id.text()])
    } else {
        obs.obs_id.clone()
    }
}

fn generated_id(o: &Observation) -> Id {
    // The parts are written straight into the hash, each as its text would be
    // (`Display`, or `Debug` for floats), joined by the unit separator: the same
    // bytes `digest128` hashes, without a string per part per row.
    let mut h = Parts::default();
    h.text(o.kind.as_str());
    h.date(o.fixing_date);
    match o.kind {
        ObservationKind::Listing => h.text(""),
        _ => match instant_digits(o.observed_at) {
            Some(digits) => h.bytes(&digits),
            None => h.part(format_args!(
                "{}",
                o.observed_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            )),
        },
    }
    h.text(&o.source);
    h.part(format_args!("{}", o.grade));
    h.part(format_args!("{:?}", o.usd_per_gpu_hour.get()));
    h.opt_float(o.quantity_gpu_hours.map(|q| q.get()));
    h.opt_count(o.gpus_per_unit);
    h.opt_count(o.cluster_gpus);
    h.text(o.interconnect.as_deref().unwrap_or(""));
    h.text(o.operator_tier.map_or("", |t| t.as_str()));
    h.opt_float(o.upfront);
    match o.term_start {
        Some(d) => h.date(d),
        None => h.text(""),
    }
    first_128_bits(&h.hash.finalize())
}

/// What one worker remembers of the rows it normalized: their repeated text,
/// one shared copy of each ([`Interner`]), and each parsed field's last text with
/// what it was worked out to. Rows come grouped as providers publish them (in the
/// simulated feed the source is the previous row's 98% of the time, the GPU 95%,
/// the unit 97%), so such a field costs one comparison of its bytes; a field that
/// differs, or was refused, is worked out as it would be alone. Only text that
/// was worked out in full is remembered, so a refusal is always the first one.
#[derive(Default)]
pub(crate) struct Recent {
    texts: Interner,
    /// This worker's own copy of the file's name (see [`Recent::file_name`]).
    file: Option<std::sync::Arc<str>>,
    kind: Last<ObservationKind>,
    gpu: Last<rentix_core::GpuModel>,
    scope: Last<ServiceScope>,
    term: Last<ContractTerm>,
    unit: Last<PriceUnit>,
    currency: Last<std::sync::Arc<str>>,
    tier: Last<OperatorTier>,
    source: Last<std::sync::Arc<str>>,
    gpu_raw: Last<std::sync::Arc<str>>,
    region: Last<std::sync::Arc<str>>,
    interconnect: Last<std::sync::Arc<str>>,
}

impl Recent {
    /// Distinct texts it shares.
    pub(crate) fn texts(&self) -> usize {
        self.texts.len()
    }

    /// The file's name for a row, from this worker's own copy: every row holds a
    /// reference, and one shared copy counted from every thread at once made its
    /// count a cache line the cores took from each other row by row (issue 48).
    fn file_name(&mut self, file: &std::sync::Arc<str>) -> std::sync::Arc<str> {
        match &self.file {
            Some(mine) if **mine == **file => std::sync::Arc::clone(mine),
            _ => {
                let mine: std::sync::Arc<str> = file.as_ref().into();
                self.file = Some(std::sync::Arc::clone(&mine));
                mine
            }
        }
    }

    /// Shares `text` as a field's would be.
    #[cfg(test)]
    pub(crate) fn share(&mut self, text: &str) -> std::sync::Arc<str> {
        self.texts.get(text)
    }
}

/// A field's last text and what it was worked out to ([`Recent`]).
pub(crate) struct Last<T> {
    text: String,
    value: Option<T>,
}

impl<T> Default for Last<T> {
    fn default() -> Self {
        Last {
            text: String::new(),
            value: None,
        }
    }
}

impl<T: Clone> Last<T> {
    /// What `text` works out to: the last value when the text is the last one,
    /// else `work`'s, remembered when it is not an error.
    fn or_work<E>(&mut self, text: &str, work: impl FnOnce(&str) -> Result<T, E>) -> Result<T, E> {
        if let Some(v) = &self.value {
            if self.text == text {
                return Ok(v.clone());
            }
        }
        let v = work(text)?;
        self.text.clear();
        self.text.push_str(text);
        self.value = Some(v.clone());
        Ok(v)
    }

    /// [`Last::or_work`] for work that cannot fail.
    fn shared(&mut self, text: &str, work: impl FnOnce(&str) -> T) -> T {
        match self.or_work(text, |t| Ok::<T, std::convert::Infallible>(work(t))) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }
}

/// A letter case text is folded to.
#[derive(Clone, Copy)]
enum Case {
    Upper,
    Lower,
}

/// `text` in ASCII `case`, shared: folded (and allocated) only when some letter
/// is in the other case.
fn in_case(texts: &mut Interner, text: &str, case: Case) -> std::sync::Arc<str> {
    let other = |b: &u8| match case {
        Case::Upper => b.is_ascii_lowercase(),
        Case::Lower => b.is_ascii_uppercase(),
    };
    if !text.bytes().any(|b| other(&b)) {
        return texts.get(text);
    }
    match case {
        Case::Upper => texts.get(&text.to_ascii_uppercase()),
        Case::Lower => texts.get(&text.to_ascii_lowercase()),
    }
}

/// `YYYY-MM-DD`, as chrono writes a date of the years 0 to 9999 (`None` for
/// others: chrono adds a sign).
fn date_digits(d: NaiveDate) -> Option<[u8; 10]> {
    use chrono::Datelike;
    let year = u32::try_from(d.year()).ok().filter(|y| *y <= 9999)?;
    let mut out = *b"0000-00-00";
    put_digits(&mut out[0..4], year);
    put_digits(&mut out[5..7], d.month());
    put_digits(&mut out[8..10], d.day());
    Some(out)
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, as chrono's `to_rfc3339_opts(Micros, true)`
/// writes an instant of the years 0 to 9999 that is not in a leap second (`None`
/// for the others, which chrono writes its own way). Written here: chrono's
/// string was an allocation and a formatting pass per trade and offer read.
fn instant_digits(t: DateTime<Utc>) -> Option<[u8; 27]> {
    use chrono::Timelike;
    let nanos = t.nanosecond();
    if nanos >= 1_000_000_000 {
        return None;
    }
    let mut out = *b"0000-00-00T00:00:00.000000Z";
    out[..10].copy_from_slice(&date_digits(t.date_naive())?);
    put_digits(&mut out[11..13], t.hour());
    put_digits(&mut out[14..16], t.minute());
    put_digits(&mut out[17..19], t.second());
    put_digits(&mut out[20..26], nanos / 1000);
    Some(out)
}

/// `n` in decimal, zero-padded to fill `out` (its low digits when longer).
fn put_digits(out: &mut [u8], mut n: u32) {
    for b in out.iter_mut().rev() {
        // A decimal digit: always below 10.
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The smallest volume above zero an observation may carry: one GPU-second. A
/// hostile run's trade of 1e-9 GPU-hours was accepted.
const MIN_QUANTITY_GPU_HOURS: f64 = 1.0 / 3600.0;

/// SHA-256 fed with text parts joined by the unit separator (0x1f).
#[derive(Default)]
struct Parts {
    hash: Sha256,
    started: bool,
}

impl std::fmt::Write for Parts {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.hash.update(s.as_bytes());
        Ok(())
    }
}

impl Parts {
    fn part(&mut self, text: std::fmt::Arguments<'_>) {
        self.next();
        // Writing into a hash cannot fail.
        let _ = std::fmt::Write::write_fmt(self, text);
    }

    /// The separator before every part but the first.
    fn next(&mut self) {
        if self.started {
            self.hash.update([0x1f]);
        }
        self.started = true;
    }

    /// A part that is `bytes` (text written out already).
    fn bytes(&mut self, bytes: &[u8]) {
        self.next();
        self.hash.update(bytes);
    }

    /// A part that is `text` as it stands (what `{}` writes of it).
    fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    /// A date as `{}` writes it: its ten digits and dashes written here for the
    /// years 0 to 9999.
    fn date(&mut self, d: NaiveDate) {
        match date_digits(d) {
            Some(digits) => self.bytes(&digits),
            None => self.part(format_args!("{d}")),
        }
    }
    fn opt_float(&mut self, v: Option<f64>) {
        match v {
            Some(x) => self.part(format_args!("{x:?}")),
            None => self.part(format_args!("")),
        }
    }
    fn opt_count(&mut self, v: Option<u32>) {
        match v {
            Some(x) => self.part(format_args!("{x}")),
            None => self.part(format_args!("")),
        }
    }
}

/// First 128 bits of SHA-256 over the parts joined by the unit separator, as hex.
fn digest128(parts: &[&str]) -> Id {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0x1f]);
        }
        h.update(p.as_bytes());
    }
    first_128_bits(&h.finalize())
}

/// The id whose text is the first 128 bits of a SHA-256, as hexadecimal.
fn first_128_bits(digest: &[u8]) -> Id {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Id::from_digest(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalizer() -> Normalizer {
        Normalizer {
            catalog: GpuCatalog::bundled(),
            fx: FxTable::bundled(),
            clock: FixingClock::utc_midnight(),
            ratings: RatingTable::default(),
            bounds: Bounds::at(
                "2026-01-01T00:00:00Z".parse().unwrap(),
                DEFAULT_FUTURE_DAYS,
                (DEFAULT_MIN_USD_PER_GPU_HOUR, DEFAULT_MAX_USD_PER_GPU_HOUR),
                DEFAULT_MAX_QUANTITY_GPU_HOURS,
            ),
        }
    }

    fn base() -> RawObservation<'static> {
        let mut r = RawObservation::default();
        for (f, v) in [
            ("kind", "listing"),
            ("observed_at", "2025-03-10T12:00:00Z"),
            ("source", "acme"),
            ("gpu", "H100 SXM"),
            ("scope", "vm"),
            ("term", "on-demand"),
            ("price", "2.50"),
            ("price_unit", "gpu_hour"),
            ("currency", "USD"),
        ] {
            r.set(f, Some(Cow::Borrowed(v)));
        }
        r
    }

    /// A hostile run: `+2025-03-03`, `2025-3-3` and `12:00:60Z` were taken (chrono
    /// reads a sign, unpadded fields and a second 60 in any minute). A date is four,
    /// two and two digits; a second 60 ends a UTC day, whatever the offset.
    #[test]
    fn timestamps_are_of_the_documented_shapes_only() {
        for bad in [
            "+2025-03-03",
            "2025-3-3",
            "2025-03-3T00:00:00Z",
            "02025-03-03",
            "2025-03-03T12:00:60Z",
            "2025-03-03 12:00:60+00:00",
            "2025-03-03x",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
        for (good, utc) in [
            ("2025-03-03", "2025-03-03T00:00:00Z"),
            ("2025-03-03T12:00:00Z", "2025-03-03T12:00:00Z"),
            ("2025-03-03t12:00:00z", "2025-03-03T12:00:00Z"),
            ("2025-03-03 12:00:00+01:00", "2025-03-03T11:00:00Z"),
            ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
            ("2017-01-01T05:29:60+05:30", "2016-12-31T23:59:59.999999Z"),
        ] {
            let t = parse_timestamp(good).unwrap_or_else(|| panic!("{good}"));
            assert_eq!(
                t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
                utc,
                "{good}"
            );
        }
    }

    #[test]
    fn bad_fields_give_reason_codes() {
        let cases: [(&str, Option<&str>, Reason); 27] = [
            ("kind", Some("bid"), Reason::UnknownKind),
            ("observed_at", Some("10/03/2025"), Reason::UnparseableDate),
            ("observed_at", Some("-2025-01-11"), Reason::UnparseableDate),
            ("observed_at", Some("0001-01-01"), Reason::ImplausibleDate),
            ("observed_at", Some("9999-12-31"), Reason::ImplausibleDate),
            (
                "observed_at",
                Some("2026-01-04T00:00:00Z"),
                Reason::ImplausibleDate,
            ),
            ("price", Some("25000"), Reason::ImplausiblePrice),
            ("price", Some("1e308"), Reason::ImplausiblePrice),
            (
                "quantity_gpu_hours",
                Some("1e308"),
                Reason::ImplausibleQuantity,
            ),
            (
                "observed_at",
                Some("2025-03-10T12:00:00"),
                Reason::UnparseableDate,
            ),
            ("gpu", Some("H9000"), Reason::UnknownGpu),
            ("scope", Some("cloud"), Reason::UnknownScope),
            ("term", Some("5y"), Reason::UnknownTerm),
            ("price", Some("abc"), Reason::UnparseablePrice),
            ("price", Some("NaN"), Reason::NonFinitePrice),
            ("price", Some("inf"), Reason::NonFinitePrice),
            ("price", Some("-1"), Reason::NonPositivePrice),
            ("price", Some("0"), Reason::NonPositivePrice),
            ("price", None, Reason::MissingField),
            ("price_unit", Some("gpu_minute"), Reason::UnknownUnit),
            ("price_unit", Some("node_hour"), Reason::MissingGpusPerUnit),
            ("currency", Some("XYZ"), Reason::UnknownCurrency),
            ("kind", Some("trade"), Reason::MissingQuantity),
            ("upfront", Some("1000"), Reason::UpfrontWithoutTerm),
            (
                "operator_tier",
                Some("diamond"),
                Reason::UnknownOperatorTier,
            ),
            ("gpus_per_unit", Some("2.5"), Reason::InvalidNumber),
            ("quantity_gpu_hours", Some("-3"), Reason::InvalidQuantity),
        ];
        for (field, value, reason) in cases {
            let mut r = base();
            r.set(field, value.map(Cow::Borrowed));
            let rej = normalizer().normalize(&r, &"f.csv".into(), 7).unwrap_err();
            assert_eq!(rej.reason, reason, "{field}={value:?}: {rej:?}");
        }
        // The cell as written: "2.1e-400" was reported as a price of "0".
        let mut r = base();
        r.set("price", Some(Cow::Borrowed("2.1e-400")));
        let rej = normalizer().normalize(&r, &"f.csv".into(), 7).unwrap_err();
        assert_eq!(rej.reason, Reason::NonPositivePrice);
        assert!(
            rej.detail.starts_with("\"2.1e-400\" is too small"),
            "{rej:?}"
        );
    }

    /// The lower bound applies after unit and currency conversion: 1e-300 USD (which
    /// published a sufficient fixing of 0) is implausible, and so are 0.072 per
    /// 8-GPU node-hour = 0.009 and 5 per GPU-month of March = 5 / 744 = 0.00672;
    /// 0.16 per node-hour = 0.02 and EUR 0.01 x 1.08 = 0.0108 USD pass.
    #[test]
    fn prices_below_the_minimum_are_implausible() {
        let n = normalizer();
        let with = |fields: &[(&'static str, &'static str)]| {
            let mut r = base();
            for (f, v) in fields {
                r.set(f, Some(Cow::Borrowed(*v)));
            }
            n.normalize(&r, &"f.csv".into(), 3)
        };
        for fields in [
            &[("price", "1e-300")][..],
            &[("price", "0.009")],
            &[
                ("price", "0.072"),
                ("price_unit", "node_hour"),
                ("gpus_per_unit", "8"),
            ],
            &[("price", "5"), ("price_unit", "gpu_month")],
        ] {
            let rej = with(fields).unwrap_err();
            assert_eq!(rej.reason, Reason::ImplausiblePrice, "{fields:?}: {rej:?}");
            assert!(
                rej.detail.contains("below the plausible minimum 0.01"),
                "{rej:?}"
            );
            assert!(rej.detail.len() < 120, "{rej:?}");
        }
        // A hostile run's 1e308 was written out as 309 digits.
        let rej = with(&[("price", "1e308")]).unwrap_err();
        assert!(rej.detail.starts_with("1e308 USD per GPU-hour"), "{rej:?}");
        let rej = with(&[("price", "1e-300")]).unwrap_err();
        assert!(rej.detail.starts_with("1e-300 USD per GPU-hour"), "{rej:?}");
        let o = with(&[
            ("price", "0.16"),
            ("price_unit", "node_hour"),
            ("gpus_per_unit", "8"),
        ])
        .unwrap();
        assert_eq!(o.usd_per_gpu_hour.get(), 0.02);
        let o = with(&[("price", "0.01"), ("currency", "EUR")]).unwrap();
        assert!((o.usd_per_gpu_hour.get() - 0.0108).abs() < 1e-15);
        assert_eq!(DEFAULT_MIN_USD_PER_GPU_HOUR, 0.01);
    }

    #[test]
    fn eur_rates_before_the_table_begin_are_refused() {
        let mut r = base();
        r.set("currency", Some("EUR".into()));
        r.set("observed_at", Some("2019-01-01".into()));
        assert_eq!(
            normalizer()
                .normalize(&r, &"f".into(), 1)
                .unwrap_err()
                .reason,
            Reason::NoFxRate
        );
    }

    #[test]
    fn normalizes_units_currency_and_upfront() {
        let n = normalizer();
        let mut r = base();
        r.set("price", Some("20".into()));
        r.set("price_unit", Some("node_hour".into()));
        r.set("gpus_per_unit", Some("8".into()));
        let o = n.normalize(&r, &"f".into(), 1).unwrap();
        assert_eq!(o.usd_per_gpu_hour.get(), 2.5);
        assert_eq!(o.grade.key(), "h100-sxm-80gb/vm/on-demand");
        assert_eq!(&*o.gpu_raw, "H100 SXM");

        // 1,488 per GPU-month in March (744 h) = 2.00 per GPU-hour.
        let mut r = base();
        r.set("price", Some("1488".into()));
        r.set("price_unit", Some("gpu_month".into()));
        assert!(
            (n.normalize(&r, &"f".into(), 1)
                .unwrap()
                .usd_per_gpu_hour
                .get()
                - 2.0)
                .abs()
                < 1e-12
        );

        // EUR 2.00 in March 2025 at 1.08 USD/EUR.
        let mut r = base();
        r.set("price", Some("2".into()));
        r.set("currency", Some("eur".into()));
        assert!(
            (n.normalize(&r, &"f".into(), 1)
                .unwrap()
                .usd_per_gpu_hour
                .get()
                - 2.16)
                .abs()
                < 1e-12
        );

        // 1-year reservation: 1.50/h plus 8,760 upfront per GPU = 2.50/h.
        let mut r = base();
        r.set("term", Some("1y".into()));
        r.set("price", Some("1.5".into()));
        r.set("upfront", Some("8760".into()));
        assert!(
            (n.normalize(&r, &"f".into(), 1)
                .unwrap()
                .usd_per_gpu_hour
                .get()
                - 2.5)
                .abs()
                < 1e-12
        );
    }

    #[test]
    fn listing_ids_ignore_time_of_day_but_trade_ids_do_not() {
        let n = normalizer();
        let a = n.normalize(&base(), &"f".into(), 1).unwrap();
        let mut r = base();
        r.set("observed_at", Some("2025-03-10T18:30:00Z".into()));
        let b = n.normalize(&r, &"f".into(), 2).unwrap();
        assert_eq!(a.obs_id, b.obs_id);
        let mut t = base();
        t.set("kind", Some("trade".into()));
        t.set("quantity_gpu_hours", Some("100".into()));
        let t1 = n.normalize(&t, &"f".into(), 1).unwrap();
        t.set("observed_at", Some("2025-03-10T18:30:00Z".into()));
        let t2 = n.normalize(&t, &"f".into(), 1).unwrap();
        assert_ne!(t1.obs_id, t2.obs_id);
    }

    /// A generated id is the first 128 bits of SHA-256 over the row's normalized
    /// content, the parts joined by 0x1f: the store's identity of a row, which must
    /// not move between versions (a re-sent file is deduplicated against rows
    /// stored by an older rentix). Expected values computed outside rentix:
    /// `hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]`.
    #[test]
    fn generated_ids_are_the_documented_hash() {
        let n = normalizer();
        let listing = n.normalize(&base(), &"f".into(), 1).unwrap();
        // listing, 2025-03-10, (no time for a listing), acme, h100-sxm-80gb/vm/on-demand,
        // 2.5, and seven empty optional parts.
        assert_eq!(listing.obs_id, "689342f97c3c7df6a50d3c3210b480ec");
        let mut t = base();
        for (f, v) in [
            ("kind", "trade"),
            ("quantity_gpu_hours", "100"),
            ("price_unit", "node_hour"),
            ("price", "20"),
            ("gpus_per_unit", "8"),
            ("cluster_gpus", "64"),
            ("interconnect", "infiniband"),
            ("operator_tier", "gold"),
            ("term", "1y"),
            ("upfront", "8760"),
            ("term_start", "2025-04-01"),
        ] {
            t.set(f, Some(Cow::Borrowed(v)));
        }
        let trade = n.normalize(&t, &"f".into(), 2).unwrap();
        // trade, 2025-03-10, 2025-03-10T12:00:00.000000Z, acme, h100-sxm-80gb/vm/1y,
        // 2.625 (20/8 + 8760/8760/8), 100.0, 8, 64, infiniband, gold, 8760.0, 2025-04-01.
        assert_eq!(trade.obs_id, "6c5d25ff0f1b9511fe6f588db37127b8");
    }

    /// A row normalized after others (what a worker remembers of them, [`Recent`])
    /// is the row normalized alone, accepted or refused with the same first
    /// reason: rows drawn from fields that repeat, differ only in case, or are
    /// refused, in any order. It fails when a remembered value is taken for a text
    /// that is not the one it was worked out from.
    #[test]
    fn a_row_after_others_is_the_row_alone() {
        use proptest::prelude::*;
        const POOLS: [(&str, &[Option<&str>]); 12] = [
            (
                "kind",
                &[Some("listing"), Some("trade"), Some("Listing"), Some("bid")],
            ),
            ("source", &[Some("acme"), Some("Acme"), Some("beta"), None]),
            (
                "gpu",
                &[
                    Some("H100 SXM"),
                    Some("h100-sxm-80gb"),
                    Some("A100 SXM 80GB"),
                    Some("nope"),
                ],
            ),
            (
                "scope",
                &[Some("vm"), Some("VM"), Some("bare-metal"), Some("x")],
            ),
            ("term", &[Some("on-demand"), Some("1y"), Some("zz")]),
            (
                "price_unit",
                &[
                    Some("gpu_hour"),
                    Some("node_hour"),
                    Some("GPU_HOUR"),
                    Some("parsec"),
                ],
            ),
            (
                "currency",
                &[Some("USD"), Some("usd"), Some("EUR"), Some("XYZ")],
            ),
            (
                "operator_tier",
                &[None, Some("gold"), Some("Gold"), Some("tin")],
            ),
            ("region", &[None, Some("US"), Some("us"), Some("eu-West")]),
            ("interconnect", &[None, Some("infiniband"), Some("IB")]),
            ("gpus_per_unit", &[None, Some("8")]),
            ("quantity_gpu_hours", &[None, Some("100")]),
        ];
        let n = normalizer();
        let file: std::sync::Arc<str> = "f".into();
        let row = proptest::collection::vec(0usize..4, POOLS.len());
        proptest!(|(rows in proptest::collection::vec(row, 1..40))| {
            let mut recent = Recent::default();
            for (at, picks) in rows.iter().enumerate() {
                let mut raw = base();
                for ((field, pool), pick) in POOLS.iter().zip(picks) {
                    raw.set(field, pool[pick % pool.len()].map(Cow::Borrowed));
                }
                let row = at as u64 + 1;
                let after = n.normalize_shared(&raw, &file, row, &mut recent);
                prop_assert_eq!(after, n.normalize(&raw, &file, row), "row {}", at);
            }
        });
    }

    /// The digits written by hand are chrono's, for any instant: years before 0
    /// and after 9999 (left to chrono), leap seconds (left to chrono), every
    /// number of nanoseconds (cut to microseconds). It fails when a field is one
    /// digit short or the fraction is rounded rather than cut.
    #[test]
    fn hand_written_digits_are_chronos() {
        use proptest::prelude::*;
        let any_instant = (-400_000_000_000i64..400_000_000_000, 0u32..2_000_000_000);
        proptest!(|((secs, nanos) in any_instant)| {
            let Some(t) = DateTime::<Utc>::from_timestamp(secs, nanos) else {
                return Ok(());
            };
            let want = t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            if let Some(got) = instant_digits(t) {
                prop_assert_eq!(std::str::from_utf8(&got).unwrap(), want);
            } else {
                use chrono::{Datelike, Timelike};
                prop_assert!(!(0..=9999).contains(&t.year()) || t.nanosecond() >= 1_000_000_000);
            }
            let d = t.date_naive();
            match date_digits(d) {
                Some(got) => prop_assert_eq!(std::str::from_utf8(&got).unwrap(), d.to_string()),
                None => prop_assert!(!(0..=9999).contains(&chrono::Datelike::year(&d))),
            }
        });
    }
}
