//! Tests of [`super`] (crate `rentix-index`, module `methodology`).
//!
//! The shipped files load; each field a methodology can get wrong is refused when
//! it loads, with a message that names the field or the bad value; what loads is
//! parsed once into typed values.

use super::*;
use rentix_core::{Grade, HolidayCalendar};

fn shipped_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/methodologies")
}

fn shipped(name: &str) -> Methodology {
    Methodology::from_file(&shipped_dir().join(name)).unwrap()
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

/// The bundled default with the first `from` replaced by `to`, loaded.
fn load_edited(from: &str, to: &str) -> Result<Methodology, IndexError> {
    assert!(DEFAULT.contains(from), "the default has no {from:?}");
    Methodology::from_toml(&DEFAULT.replacen(from, to, 1), Path::new("edited.toml"))
}

/// The message of the refusal of the default with `from` replaced by `to`, which
/// must be a methodology error naming the file.
fn refusal(from: &str, to: &str) -> String {
    match load_edited(from, to) {
        Err(IndexError::Methodology { path, detail }) => {
            assert_eq!(path, Path::new("edited.toml"));
            detail
        }
        other => panic!("{to:?}: expected a methodology error, got {other:?}"),
    }
}

/// A methodology that sets only what has no default.
const MINIMAL: &str = r#"
version = "minimal-1"
name = "minimal"
[calendar]
cutoff = "24:00"
timezone = "UTC"
days = "all"
[grades]
patterns = ["*/*/*"]
[inputs]
hierarchy = ["trade"]
min_obs = { trade = 1 }
[aggregation]
method = "vw-median"
[outliers]
filter = "none"
apply = "per-day"
[pooling]
window_days = 1
min_obs_per_day = 1
min_valid_days = 1
[fallback]
listing_spread = false
spread_lookback_days = 30
spread_min_days = 5
carry_forward_days = 0
[contributors]
max_share = 1.0
min_contributors = 1
[rounding]
decimals = 4
[[composite]]
name = "blend"
method = "jevons-chained"
weights = { "h100-sxm-80gb/vm/on-demand" = 1.0 }
"#;

/// Every daily file in `data/methodologies/` loads, each with its own version,
/// and writes back as TOML that loads as the same methodology; the intraday file
/// has another shape and is refused by the daily reader.
#[test]
fn every_shipped_methodology_parses_validates_and_round_trips() {
    let mut versions = std::collections::BTreeSet::new();
    let mut n = 0;
    for entry in std::fs::read_dir(shipped_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let m = Methodology::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(m.validate().is_ok(), "{}", path.display());
        assert!(versions.insert(m.version.clone()), "{} twice", m.version);
        let text = toml::to_string(&m).unwrap();
        let back = Methodology::from_toml(&text, &path).unwrap();
        assert_eq!(back, m, "{}", path.display());
        n += 1;
    }
    // docs/methodology.md lists 17 daily files (default.toml once): none skipped.
    assert!(n >= 17, "{n} files");
    let intraday = shipped_dir().join("intraday/intraday_lowest_listing_15m.toml");
    assert!(Methodology::from_file(&intraday).is_err());
    // The bundled default is the shipped default.toml.
    assert_eq!(Methodology::default_methodology(), shipped("default.toml"));
}

/// The settlement file's calendar, cut-off and patterns come back typed: business
/// days of the US exchange calendar (Good Friday 2025-04-18 and weekends do not
/// count); 16:00 New York is 21:00Z in winter (EST) and 20:00Z in summer (EDT), an
/// observation after it belonging to the next day.
#[test]
fn accessors_return_the_values_parsed_once() {
    let m = shipped("settlement_business_days.toml");
    let rule = m.day_rule();
    assert_eq!(
        *rule,
        DayRule::Business(HolidayCalendar::named("us-exchange").unwrap())
    );
    assert!(rule.counts(day("2025-04-17")));
    assert!(!rule.counts(day("2025-04-18")), "Good Friday");
    assert!(!rule.counts(day("2025-04-19")) && !rule.counts(day("2025-04-20")));
    let clock = m.cutoff_clock();
    assert_eq!(
        clock.fixing_date(at("2025-03-03T20:59:00Z")),
        day("2025-03-03")
    );
    assert_eq!(
        clock.fixing_date(at("2025-03-03T21:01:00Z")),
        day("2025-03-04")
    );
    assert_eq!(
        clock.fixing_date(at("2025-07-01T19:59:00Z")),
        day("2025-07-01")
    );
    assert_eq!(
        clock.fixing_date(at("2025-07-01T20:01:00Z")),
        day("2025-07-02")
    );
    assert_eq!(
        m.patterns()
            .iter()
            .map(GradePattern::as_str)
            .collect::<Vec<_>>(),
        ["*/bare-metal/*", "*/vm/*"]
    );
    let g = |s: &str| s.parse::<Grade>().unwrap();
    assert!(m.patterns()[0].matches(&g("h100-sxm-80gb/bare-metal/1m")));
    assert!(!m
        .patterns()
        .iter()
        .any(|p| p.matches(&g("h100-sxm-80gb/container/on-demand"))));
    assert_eq!(m.method_label(), "winsorized-vw-mean");
    assert_eq!(
        m.cutoff(),
        Cutoff {
            time: "16:00".into(),
            timezone: "America/New_York".into()
        }
    );
    let f = m.filter_params();
    assert_eq!((f.k, f.trim, f.weighted), (4.0, 0.1, false));
    assert_eq!(m.agg_params().trim, 0.1);
    // The default: every day, UTC calendar dates.
    let d = Methodology::default_methodology();
    assert_eq!(*d.day_rule(), DayRule::AllDays);
    assert_eq!(
        d.cutoff_clock().fixing_date(at("2025-03-03T23:59:59Z")),
        day("2025-03-03")
    );
}

/// Fields left out take the defaults their doc comments and docs/methodology.md
/// give.
#[test]
fn omitted_fields_take_their_documented_defaults() {
    let m = Methodology::from_toml(MINIMAL, Path::new("minimal.toml")).unwrap();
    assert_eq!(m.description, "");
    assert!(m.forward_curve);
    assert_eq!(m.calendar.holidays, "none");
    assert_eq!(m.calendar.roll, Roll::None);
    assert_eq!((m.grades.regional, m.grades.tier_floors.len()), (false, 0));
    assert_eq!(m.inputs.min_trade_gpu_hours, 0.0);
    assert!(m.inputs.min_volume_gpu_hours.is_empty());
    let a = &m.aggregation;
    assert_eq!(
        (a.tie_rule, a.trim, a.trim_count, a.per_contributor),
        (TieRule::Lower, 0.1, TrimCount::Floor, PerContributor::None)
    );
    let o = &m.outliers;
    assert_eq!((o.trim, o.k, o.low, o.high), (0.1, 3.0, 0.05, 0.95));
    assert_eq!(
        (o.scale, o.trim_count, o.weighted),
        (SigmaScale::SampleSd, TrimCount::Floor, false)
    );
    let p = &m.pooling;
    assert_eq!(p.lag_days, 0);
    assert_eq!(
        (p.window_unit, p.thin_days, p.short_window),
        (
            WindowUnit::CalendarDays,
            ThinDays::Keep,
            WhenShort::Suppress
        )
    );
    let c = &m.contributors;
    assert_eq!(c.below_minimum, WhenShort::PublishFlagged);
    assert_eq!((c.max_concentration, c.min_share), (1.0, 0.0));
    assert_eq!((c.min_for_percentiles, c.carry_missing_days), (0, 0));
    assert_eq!(c.too_few_for_cap, TooFewForCap::EqualShares);
    assert!(c.aliases.is_empty());
    assert_eq!(m.composite[0].base, 100.0);
}

/// (text in the default, its replacement, what the refusal must say).
const INVALID: &[(&str, &str, &str)] = &[
    (
        "window_days = 1",
        "window_days = 0",
        "pooling.window_days must be >= 1",
    ),
    ("window_days = 1", "window_days = -1", "window_days = -1"),
    (
        "window_days = 1",
        "window_days = 3661",
        "pooling.window_days = 3661 is more than 3660",
    ),
    ("lag_days = 0", "lag_days = 367", "pooling.lag_days = 367"),
    (
        "min_valid_days = 1",
        "min_valid_days = 2",
        "min_valid_days cannot exceed window_days",
    ),
    (
        "min_obs_per_day = 1",
        "min_obs_per_day = 0",
        "pooling.min_obs_per_day",
    ),
    (
        "min_contributors = 3",
        "min_contributors = 0",
        "contributors.min_contributors must be at least 1",
    ),
    (
        "max_share = 0.35",
        "max_share = 0.0",
        "contributors.max_share",
    ),
    (
        "max_share = 0.35",
        "max_share = 1.5",
        "contributors.max_share",
    ),
    (
        "max_share = 0.35",
        "max_share = nan",
        "contributors.max_share",
    ),
    (
        "min_share = 0.025",
        "min_share = 0.5",
        "contributors.min_share",
    ),
    (
        "min_share = 0.025",
        "min_share = 0.025\nmax_concentration = 0.0",
        "contributors.max_concentration",
    ),
    (
        "min_share = 0.025",
        "min_share = 0.025\ncarry_missing_days = 32",
        "contributors.carry_missing_days",
    ),
    (
        "min_share = 0.025",
        "min_share = 0.025\naliases = { \"Acme\" = [\"Kestrel\"], \"Zeta\" = [\"Kestrel\"] }",
        "contributors.aliases",
    ),
    (
        "carry_forward_days = 5",
        "carry_forward_days = 367",
        "fallback.carry_forward_days = 367",
    ),
    (
        "spread_lookback_days = 30",
        "spread_lookback_days = 400",
        "fallback.spread_lookback_days",
    ),
    ("decimals = 4", "decimals = 11", "rounding.decimals"),
    ("k = 3.0", "k = 0.0", "outliers.k"),
    ("k = 3.0", "k = inf", "outliers.k"),
    (
        "weighted = true",
        "weighted = true\nlow = 0.9\nhigh = 0.1",
        "outliers.low",
    ),
    (
        "tie_rule = \"lower\"\ntrim = 0.1",
        "tie_rule = \"lower\"\ntrim = 0.5",
        "trim must be in [0, 0.5)",
    ),
    (
        "tie_rule = \"lower\"",
        "tie_rule = \"upper\"",
        "unknown variant `upper`",
    ),
    (
        "method = \"vw-median\"",
        "method = \"mode\"",
        "unknown variant `mode`",
    ),
    (
        "filter = \"sigma-around-trimmed-mean\"",
        "filter = \"zscore\"",
        "unknown variant `zscore`",
    ),
    (
        "min_obs = { trade = 3,",
        "min_obs = { trade = 0,",
        "inputs.min_obs must be at least 1",
    ),
    (
        ", listing = 3 }",
        " }",
        "inputs.min_obs has no entry for listing",
    ),
    (
        "hierarchy = [\"trade\", \"firm\", \"listing\"]",
        "hierarchy = []",
        "inputs.hierarchy needs at least one kind",
    ),
    (
        "\"firm\", \"listing\"]",
        "\"firm\", \"trade\"]",
        "inputs.hierarchy lists trade twice",
    ),
    (
        "min_trade_gpu_hours = 1.0",
        "min_trade_gpu_hours = -1.0",
        "inputs.min_trade_gpu_hours",
    ),
    (
        "version = \"rentix-default-2.0\"",
        "version = \" \"",
        "version must not be empty",
    ),
    (
        "version = \"rentix-default-2.0\"",
        "version = \"a\\tb\"",
        "version must be at most 64",
    ),
    (
        "[calendar]",
        "[calendar]\ncadence = \"15m\"",
        "calendar.cadence = \"15m\"",
    ),
    (
        "forward_curve = true",
        "forward_curve = true\nfoo = 1",
        "unknown field `foo`",
    ),
    (
        "min_contributors = 3",
        "min_contributors = 3\nmin_contibutors = 3",
        "unknown field `min_contibutors`",
    ),
    (
        "[calendar]",
        "[calendar]\nroll = \"previous\"",
        "unknown variant `previous`",
    ),
];

/// Each out-of-range field is refused when the methodology loads, the message
/// naming the field (or, for a TOML shape error, the key and its line).
#[test]
fn each_invalid_field_is_refused_naming_it() {
    for (from, to, needle) in INVALID {
        let shown = refusal(from, to);
        assert!(shown.contains(needle), "{to:?}: {shown}");
    }
    // The long version, the other half of the label rule.
    let long = format!("version = \"{}\"", "v".repeat(65));
    assert!(refusal("version = \"rentix-default-2.0\"", &long).contains("at most 64"));
}

/// The calendar, cut-off and pattern fields are refused with the bad value quoted.
#[test]
fn a_bad_calendar_cutoff_time_zone_or_pattern_is_refused_with_its_value() {
    let cases: &[(&str, &str, &str)] = &[
        ("days = \"all\"", "days = \"weekdays\"", "\"weekdays\""),
        (
            "days = \"all\"\nholidays = \"none\"",
            "days = \"business\"\nholidays = \"mars\"",
            "\"mars\"",
        ),
        ("cutoff = \"24:00\"", "cutoff = \"25:00\"", "\"25:00\""),
        ("cutoff = \"24:00\"", "cutoff = \"4pm\"", "\"4pm\""),
        ("cutoff = \"24:00\"", "cutoff = \"\"", "expected HH:MM"),
        (
            "timezone = \"UTC\"",
            "timezone = \"Mars/Olympus\"",
            "\"Mars/Olympus\"",
        ),
        (
            "patterns = [\"*/*/*\"]",
            "patterns = [\"h100/vm\"]",
            "\"h100/vm\"",
        ),
        (
            "patterns = [\"*/*/*\"]",
            "patterns = [\"*/*/*/*/*\"]",
            "\"*/*/*/*/*\"",
        ),
        (
            "patterns = [\"*/*/*\"]",
            "patterns = [\"*/*/*@\"]",
            "\"*/*/*@\"",
        ),
        (
            "patterns = [\"*/*/*\"]",
            "patterns = [\"*//*\"]",
            "\"*//*\"",
        ),
    ];
    for (from, to, needle) in cases {
        let shown = refusal(from, to);
        assert!(shown.contains(needle), "{to:?}: {shown}");
    }
}

/// The same refusals should also name the field, as every range check does
/// (`pooling.window_days ...`) and as STYLE.md asks of errors (the bad value, the
/// file and the field): today they name a kind of value ("day rule", "invalid
/// time") but not `calendar.days`, `calendar.timezone` or `grades.patterns`, and a
/// bad time zone read `invalid time "Mars/Olympus"` (now `invalid "Mars/Olympus": not
/// an IANA time zone name`).
#[test]
fn a_bad_calendar_cutoff_time_zone_or_pattern_names_its_field() {
    let cases: &[(&str, &str, &str)] = &[
        ("days = \"all\"", "days = \"weekdays\"", "calendar.days"),
        (
            "days = \"all\"\nholidays = \"none\"",
            "days = \"business\"\nholidays = \"mars\"",
            "calendar.holidays",
        ),
        (
            "cutoff = \"24:00\"",
            "cutoff = \"25:00\"",
            "calendar.cutoff",
        ),
        (
            "timezone = \"UTC\"",
            "timezone = \"Mars/Olympus\"",
            "calendar.timezone",
        ),
        (
            "patterns = [\"*/*/*\"]",
            "patterns = [\"h100/vm\"]",
            "grades.patterns",
        ),
    ];
    for (from, to, needle) in cases {
        let shown = refusal(from, to);
        assert!(shown.contains(needle), "{to:?}: {shown}");
    }
}

/// Composites: weights that do not add to 1, a name shaped like a grade, a name
/// given twice, a hedonic composite without patterns or with a bad one, a weight
/// on a key that is not a grade.
#[test]
fn an_invalid_composite_is_refused_naming_it() {
    let blend = "weights = { \"h100-sxm-80gb/bare-metal/on-demand\" = 0.5,";
    let cases: &[(&str, &str, &str)] = &[
        (
            blend,
            "weights = { \"h100-sxm-80gb/bare-metal/on-demand\" = 0.6,",
            "weights add up to",
        ),
        (
            "name = \"h100-sxm-80gb/on-demand-blend\"",
            "name = \"h100-sxm-80gb/vm/on-demand\"",
            "named like a grade",
        ),
        (
            "name = \"h100-sxm-80gb/on-demand-blend\"",
            "name = \"gpu-hour/quality-adjusted/on-demand\"",
            "defined twice",
        ),
        ("patterns = [\"*/*/on-demand\"]", "", "needs patterns"),
        (
            "patterns = [\"*/*/on-demand\"]",
            "patterns = [\"on-demand\"]",
            "\"on-demand\"",
        ),
        (
            blend,
            "weights = { \"h100-sxm-80gb/bare-metal\" = 0.5,",
            "h100-sxm-80gb/on-demand-blend",
        ),
        (
            "method = \"jevons-chained\"",
            "method = \"jevons-chained\"\nbase = 0.0",
            "base must be positive",
        ),
    ];
    for (from, to, needle) in cases {
        let shown = refusal(from, to);
        assert!(shown.contains(needle), "{to:?}: {shown}");
    }
}

/// A chained composite's weights are looked up by the grade key its components'
/// fixings carry (`composite.rs`, `chained`), so a key must be written as that key:
/// `h100-sxm-80gb/Bare Metal/on-demand` parses as the grade
/// `h100-sxm-80gb/bare-metal/on-demand` and is accepted, but no fixing has that
/// text, and the component would be missing on every date. It should be refused
/// (or kept as the canonical key).
#[test]
fn a_composite_weight_key_must_be_the_grades_key() {
    let from = "\"h100-sxm-80gb/bare-metal/on-demand\" = 0.5";
    let to = "\"h100-sxm-80gb/Bare Metal/on-demand\" = 0.5";
    match load_edited(from, to) {
        Err(e) => assert!(e.to_string().contains("Bare Metal"), "{e}"),
        Ok(m) => {
            let keys: Vec<&String> = m.composite[0].weights.keys().collect();
            assert!(
                keys.iter()
                    .any(|k| *k == "h100-sxm-80gb/bare-metal/on-demand"),
                "accepted, and kept as {keys:?}"
            );
        }
    }
}

/// A validated methodology is changed only through its shape and validated again:
/// `edited` refuses what `from_toml` refuses, and `into_spec` then `new` gives the
/// same methodology back.
#[test]
fn an_edit_is_validated_again() {
    let m = Methodology::default_methodology();
    let e = m
        .clone()
        .edited(Path::new("e.toml"), |s| s.pooling.window_days = 0)
        .unwrap_err();
    assert!(e.to_string().contains("pooling.window_days"), "{e}");
    let e = m
        .clone()
        .edited(Path::new("e.toml"), |s| {
            s.calendar.timezone = "Nowhere".into()
        })
        .unwrap_err();
    assert!(
        e.to_string().contains("e.toml") && e.to_string().contains("Nowhere"),
        "{e}"
    );
    let edited = m
        .clone()
        .edited(Path::new("e.toml"), |s| {
            s.calendar.days = "business".into();
            s.calendar.holidays = "us-exchange".into();
        })
        .unwrap();
    assert!(
        !edited.day_rule().counts(day("2025-04-18")),
        "the rule is parsed again"
    );
    let again = Methodology::new(m.clone().into_spec(), Path::new("again.toml")).unwrap();
    assert_eq!(again, m);
}

/// A file that cannot be read is an input error naming it; a file that is not
/// TOML a methodology error.
#[test]
fn an_unreadable_or_malformed_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    match Methodology::from_file(&missing) {
        Err(IndexError::Input { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "version = \n").unwrap();
    match Methodology::from_file(&bad) {
        Err(IndexError::Methodology { path, .. }) => assert_eq!(path, bad),
        other => panic!("{other:?}"),
    }
}

/// Windows by hand. Calendar days, 3 days lagged 1 before Monday 2025-03-10: 03-07
/// .. 03-09. Publication days on the US exchange calendar: lag 1 before Monday
/// 03-10 ends on Friday 03-07 and three days start on Wednesday 03-05; two days
/// ending Monday 04-21 start on Thursday 04-17 (Good Friday and the weekend skipped).
#[test]
fn window_of_counts_calendar_or_publication_days() {
    let window = |unit: WindowUnit, days: u32, lag: u32, d: &str| {
        let m = Methodology::default_methodology()
            .edited(Path::new("w.toml"), |s| {
                s.calendar.days = "business".into();
                s.calendar.holidays = "us-exchange".into();
                s.pooling.window_unit = unit;
                s.pooling.window_days = days;
                s.pooling.min_valid_days = 1;
                s.pooling.lag_days = lag;
            })
            .unwrap();
        m.window_of(day(d), Some(m.day_rule()))
    };
    let cal = WindowUnit::CalendarDays;
    let pub_ = WindowUnit::PublicationDays;
    assert_eq!(
        window(cal, 3, 1, "2025-03-10"),
        (day("2025-03-07"), day("2025-03-09"))
    );
    assert_eq!(
        window(cal, 1, 0, "2025-03-10"),
        (day("2025-03-10"), day("2025-03-10"))
    );
    assert_eq!(
        window(pub_, 3, 1, "2025-03-10"),
        (day("2025-03-05"), day("2025-03-07"))
    );
    assert_eq!(
        window(pub_, 2, 0, "2025-04-21"),
        (day("2025-04-17"), day("2025-04-21"))
    );
    assert_eq!(
        window(pub_, 1, 1, "2025-04-21"),
        (day("2025-04-17"), day("2025-04-17"))
    );
}

/// A publication past the last year the holiday table lists is refused (a
/// business day there may be a holiday it does not know: the issue's 2028
/// Christmas was published without a word when the table ended in 2027); one
/// inside it, or under an every-day calendar, is not.
#[test]
fn a_publication_past_the_holiday_table_is_refused() {
    let m = shipped("settlement_business_days.toml");
    let err = crate::for_publication::publication_days(&m, None, Some(day("2036-01-02")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("past 2035-12-31"), "{err}");
    assert!(crate::for_publication::publication_days(&m, None, Some(day("2035-12-31"))).is_ok());
    let every_day = shipped("default.toml");
    assert!(
        crate::for_publication::publication_days(&every_day, None, Some(day("2099-01-02"))).is_ok()
    );
    let err = crate::for_publication::publication_days(
        &m,
        Some(day("2028-12-25")),
        Some(day("2028-12-25")),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("Christmas Day") && err.contains("2028-12-26"),
        "{err}"
    );
}
