//! One candidate's underlying grade as the index engine sees it, and its settlement
//! recomputed with observations added or withheld: the harness every manipulation
//! search runs on. Settlements always come from the real engine ([`fix_grade`]) and
//! the real settlement rule ([`ContractSpec::settle`]), never from a formula.

use chrono::{Datelike, Days, Months, NaiveDate};
use rentix_backtest::{month_start, underlyings, ContractSpec, NoSettlement, Underlying};
use rentix_core::DayRule;
use rentix_index::{fix_grade, sort_obs, EngineObs, Fixing, Methodology, SourceId, WindowUnit};

/// A change to the month's observations.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// The month as observed.
    None,
    /// Observations added (a manipulator's fake trades or listings).
    Add(&'a [EngineObs]),
    /// Every observation of this contributor on these days removed (withholding).
    Withhold(SourceId, &'a [NaiveDate]),
}

/// A month's settlement and the fixing dates it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The settlement, USD per GPU-hour, on the tick.
    pub value: f64,
    /// The dates of the fixings the settlement rule used.
    pub used: Vec<NaiveDate>,
}

/// A grade's observations with the methodology and contract that fix and settle it.
pub struct GradeMarket<'a> {
    /// The grade key.
    pub grade: String,
    /// Sorted as the engine expects ([`sort_obs`]).
    pub obs: Vec<EngineObs>,
    /// How the grade is fixed.
    pub methodology: &'a Methodology,
    /// What settles on it.
    pub contract: &'a ContractSpec,
    rule: DayRule,
    margin_days: u64,
    /// The store's last fixing date, past which `rentix index` publishes nothing:
    /// no fixing of the lab's runs past it.
    data_end: Option<NaiveDate>,
}

impl<'a> GradeMarket<'a> {
    /// The market of `grade` from its observations; an error when the methodology's day
    /// rule cannot be built.
    /// `data_end` is the store's last fixing date (`None`: the grade's own last
    /// observation's, carried as the methodology carries).
    pub fn new(
        grade: &str,
        mut obs: Vec<EngineObs>,
        methodology: &'a Methodology,
        contract: &'a ContractSpec,
        data_end: Option<NaiveDate>,
    ) -> Self {
        sort_obs(&mut obs);
        Self {
            grade: grade.to_string(),
            obs,
            methodology,
            contract,
            rule: methodology.day_rule().clone(),
            margin_days: margin_days(methodology),
            data_end,
        }
    }

    /// The last fixing date of a run through `to`: `to`, or the store's last
    /// fixing date when it is earlier. A month the data ends in was settled on
    /// days carried past the end (a store ending on October 26th settled October
    /// at 2.856 with five made-up days, where the published 26 give 2.852: a
    /// hostile round).
    fn through(&self, to: NaiveDate) -> NaiveDate {
        self.data_end.map_or(to, |e| e.min(to))
    }

    /// The grade's fixings over its whole history.
    pub fn history(&self) -> Vec<Fixing> {
        let (Some(first), Some(last)) = (self.obs.first(), self.obs.last()) else {
            return Vec::new();
        };
        let end = self.through(
            self.methodology.lagged(last.day, Some(&self.rule))
                + Days::new(u64::from(self.methodology.fallback.carry_forward_days)),
        );
        fix_grade(
            &self.grade,
            &self.obs,
            &self.dates(first.day, end),
            self.methodology,
            &self.rule,
        )
    }

    /// The underlying as a backtest sees it, from fixings of this grade.
    pub fn underlying(&self, fixings: &[Fixing]) -> Option<Underlying> {
        underlyings(fixings).remove(&self.grade)
    }

    /// Fixing dates the methodology publishes in `[from, to]`.
    fn dates(&self, from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
        from.iter_days()
            .take_while(|d| *d <= to)
            .filter(|d| self.rule.counts(*d))
            .collect()
    }

    /// The first day whose observations can affect the month's fixings.
    pub fn slice_start(&self, month: NaiveDate) -> NaiveDate {
        month_start(month) - Days::new(self.margin_days)
    }

    /// Last day of the calendar month containing `month`.
    pub fn month_end(month: NaiveDate) -> NaiveDate {
        month_start(month) + Months::new(1) - Days::new(1)
    }

    /// The observations of the days feeding the fixings of `month` (its days and
    /// the history its windows, spreads and carried values reach back to).
    pub fn slice(&self, month: NaiveDate) -> &[EngineObs] {
        let (from, to) = (self.slice_start(month), Self::month_end(month));
        let a = self.obs.partition_point(|o| o.day < from);
        let b = self.obs.partition_point(|o| o.day <= to);
        &self.obs[a..b]
    }

    /// The observation days in the windows of the given fixing dates.
    pub fn window_days(&self, fixing_dates: &[NaiveDate]) -> Vec<NaiveDate> {
        let mut days: Vec<NaiveDate> = fixing_dates
            .iter()
            .flat_map(|d| {
                let (s, e) = self.methodology.window_of(*d, Some(&self.rule));
                s.iter_days().take_while(move |x| *x <= e)
            })
            .collect();
        days.sort_unstable();
        days.dedup();
        days
    }

    /// The month's settlement with `change` applied, computed by the engine over the
    /// month's slice of history.
    pub fn settle(&self, month: NaiveDate, change: Change<'_>) -> Result<Settled, NoSettlement> {
        let base = self.slice(month);
        let mut obs: Vec<EngineObs> = match change {
            Change::None => base.to_vec(),
            Change::Add(extra) => base.iter().chain(extra).cloned().collect(),
            Change::Withhold(source, days) => base
                .iter()
                .filter(|o| !(o.source == source && days.binary_search(&o.day).is_ok()))
                .cloned()
                .collect(),
        };
        sort_obs(&mut obs);
        let from = self.slice_start(month);
        let to = self.through(Self::month_end(month));
        let fixings = fix_grade(
            &self.grade,
            &obs,
            &self.dates(from, to),
            self.methodology,
            &self.rule,
        );
        let u = self.underlying(&fixings).ok_or_else(|| {
            NoSettlement(format!(
                "no fixing of {} in {}",
                self.grade,
                month.format("%Y-%m")
            ))
        })?;
        let value = self.contract.settle(&u, month)?;
        let used = self
            .contract
            .settlement_fixings(&u, month)
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        Ok(Settled { value, used })
    }

    /// Calendar months from the first observation to the last.
    pub fn months(&self) -> Vec<NaiveDate> {
        let (Some(first), Some(last)) = (self.obs.first(), self.obs.last()) else {
            return Vec::new();
        };
        let mut m = month_start(first.day);
        let mut out = Vec::new();
        while m <= last.day {
            out.push(m);
            m = m + Months::new(1);
        }
        out
    }

    /// Days in the month containing `month`.
    pub fn days_in_month(month: NaiveDate) -> u32 {
        Self::month_end(month).day()
    }
}

/// Calendar days before a month whose observations can change its fixings: a
/// window (and its lag) for the first fixing, another for the listing spread's and
/// carried values' own fixings, the spread look-back, the carry-forward limit and the
/// contributors' carry-in, with a week to spare. Publication-day windows are counted
/// at two calendar days per publication day (weekends and holidays).
pub(crate) fn margin_days(m: &Methodology) -> u64 {
    let p = &m.pooling;
    let per = match p.window_unit {
        WindowUnit::CalendarDays => 1,
        WindowUnit::PublicationDays => 2,
    };
    let window = u64::from(p.window_days + p.lag_days) * per;
    2 * window
        + u64::from(m.fallback.spread_lookback_days)
        + u64::from(m.fallback.carry_forward_days)
        + u64::from(m.contributors.carry_missing_days)
        + 7
}
