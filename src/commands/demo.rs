//! `rentix demo`: the whole pipeline on a simulated market, ending in one report.
//!
//! Layout of the output directory:
//! - `report.html`: the report (self-contained);
//! - `fixings.parquet`, `fixings_forward.parquet`, `methodology.toml`,
//!   `ingest_summary.json`, `charts/`;
//! - `backtest_<user>/`: summary.json, periods.csv, daily.csv, charts;
//! - `track_<user>.csv`: every grade ranked for that user;
//! - `work/`: the simulated market and the store (large; not committed).

use crate::cli::DemoArgs;
use crate::commands::backtest::{cost_decomposition, execute as backtest, BacktestPlan};
use crate::commands::contract::{execute as lab_execute, LabPlan};
use crate::commands::cost;
use crate::commands::index::{execute as index, IndexConfig};
use crate::progress;
use anyhow::Context;
use rentix_backtest::{
    read_events, track, track_table, BacktestConfig, ContractSpec, PeriodEnd, RentSeries, Strategy,
    TrackOptions, TrackRow,
};
use rentix_core::ConfigKind;
use rentix_index::{read_fixings, Fixing, IndexRequest, Methodology};
use rentix_ingest::{ingest, IngestOptions};
use rentix_publish::intraday::{publish as publish_intraday, IntradayPublished};
use rentix_sim::{simulate, SimParams};
use rentix_store::IngestSummary;
use std::path::Path;

/// The users the demo backtests, with the grade each hedges on.
pub(super) const DEMO_USERS: [(&str, &str); 4] = [
    (
        "producer_h100_spot_rate",
        "h100-sxm-80gb/bare-metal/on-demand",
    ),
    (
        "producer_h100_invoice",
        "h100-sxm-80gb/bare-metal/on-demand",
    ),
    ("producer_premium", "h100-sxm-80gb/bare-metal/on-demand"),
    ("neocloud_h200", "h200-sxm-141gb/bare-metal/on-demand"),
];

/// Removes what an earlier demo wrote into `out`: the demo rebuilds its store, so a
/// publication left from another run (a fresh clone's committed `reports/demo`) is
/// from another store, and its state, digest and log would refuse the new one.
fn clean(out: &Path) -> anyhow::Result<()> {
    for f in [
        "fixings.parquet",
        "fixings.parquet.sha256",
        "fixings.parquet_state.json",
        "fixings.parquet_restatements.csv",
        "fixings.parquet_restatements.csv.sha256",
        "fixings_state.json",
        "fixings_restatements.csv",
        "fixings_tier_differentials.parquet",
        "fixings_tier_spreads.parquet",
        "fixings_forward.parquet",
        "report.html",
        "ingest_summary.json",
        "methodology.toml",
        "track_neocloud_h200.csv",
    ] {
        let p = out.join(f);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    for d in ["work", "charts", "cost", "contract_lab", "intraday"] {
        let p = out.join(d);
        if p.exists() {
            std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    Ok(())
}

/// The default methodology, plus gold+ grades: the operator matters.
/// The intraday index of the demo: the last two days of the market read every 15
/// minutes (`simulate --cadence 15m`), fixed by the shipped intraday methodology on
/// the H100 grades into `intraday/fixings.parquet` (its receipts and digest beside).
fn intraday_demo(out: &Path, daily: &SimParams) -> anyhow::Result<IntradayPublished> {
    let work = out.join("work");
    let mut p = daily.clone();
    p.cadence_minutes = Some(15);
    p.start = daily.start + chrono::Days::new(u64::from(daily.days.saturating_sub(2)));
    p.days = 2;
    p.rows = 0;
    let sim = work.join("sim15");
    simulate(&sim, &p, &|_| {}).context("simulate --cadence 15m")?;
    ingest(
        &work.join("store15"),
        &[sim.join("observations.csv")],
        &IngestOptions::default(),
        &mut |_| {},
    )
    .context("ingest of the 15-minute market")?;
    let mut m = rentix_index::intraday::IntradayMethodology::from_file(Path::new(
        "intraday_lowest_listing_15m",
    ))?;
    m.grades.patterns = vec!["h100-sxm-80gb/*/on-demand".into()];
    let dir = out.join("intraday");
    std::fs::create_dir_all(&dir)?;
    publish_intraday(
        &work.join("store15"),
        &m,
        None,
        None,
        &dir.join("fixings.parquet"),
    )
}

fn methodology_text() -> anyhow::Result<String> {
    Ok(shipped(ConfigKind::Methodology, "default")?.replace(
        "regional = false",
        "regional = false\n# The demo also fixes every grade from gold-or-better operators only.\ntier_floors = [\"gold\"]",
    ))
}

/// A configuration file rentix ships, by kind and name (`rentix_core::bundled`).
fn shipped(kind: ConfigKind, name: &str) -> anyhow::Result<&'static str> {
    rentix_core::bundled(kind, name)
        .with_context(|| format!("no shipped {} named {name}", kind.as_str()))
}

/// The contract lab on five H100 designs: trades-first against listings-only, a
/// monthly average against a final fixing, on-demand against a one-month
/// reservation, and every operator against gold-or-better ones.
fn contract_lab(
    out: &Path,
    sim_dir: &Path,
    methodology: &str,
) -> anyhow::Result<rentix_lab::Comparison> {
    let demo = Methodology::from_toml(methodology, Path::new("methodology.toml"))?;
    let listings = Methodology::from_toml(
        shipped(ConfigKind::Methodology, "listings_only_naive")?,
        Path::new("data/methodologies/listings_only_naive.toml"),
    )?;
    let contract = |text: &str, file: &str| {
        ContractSpec::from_toml(text, Path::new(file)).map_err(anyhow::Error::from)
    };
    let on_demand = (
        shipped(ConfigKind::Contract, "h100-sxm-80gb-bare-metal-on-demand")?,
        "data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml",
    );
    let designs = [
        (
            "H100 on-demand, trades first",
            &demo,
            "methodology.toml",
            on_demand,
        ),
        (
            "H100 on-demand, listings only",
            &listings,
            "data/methodologies/listings_only_naive.toml",
            on_demand,
        ),
        (
            "H100 on-demand, final fixing",
            &demo,
            "methodology.toml",
            (
                shipped(
                    ConfigKind::Contract,
                    "h100-sxm-80gb-bare-metal-on-demand-final",
                )?,
                "data/contracts/h100-sxm-80gb-bare-metal-on-demand-final.toml",
            ),
        ),
        (
            "H100 1-month reserved",
            &demo,
            "methodology.toml",
            (
                shipped(ConfigKind::Contract, "h100-sxm-80gb-bare-metal-1m")?,
                "data/contracts/h100-sxm-80gb-bare-metal-1m.toml",
            ),
        ),
        (
            "H100 on-demand, gold+ operators",
            &demo,
            "methodology.toml",
            (
                shipped(
                    ConfigKind::Contract,
                    "h100-sxm-80gb-bare-metal-on-demand-gold",
                )?,
                "data/contracts/h100-sxm-80gb-bare-metal-on-demand-gold.toml",
            ),
        ),
    ];
    let candidates = designs
        .iter()
        .map(|(name, m, mpath, (ctext, cpath))| {
            Ok(rentix_lab::Candidate {
                name: name.to_string(),
                methodology_path: mpath.into(),
                contract_path: cpath.into(),
                methodology: (*m).clone(),
                contract: contract(ctext, cpath)?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let plan = LabPlan {
        store: out.join("work").join("store"),
        candidates,
        rent_dir: Some(sim_dir.to_path_buf()),
        truth: Some(sim_dir.join("truth.csv")),
        options: rentix_lab::LabOptions::default(),
        out: out.join("contract_lab"),
        relative_to: Some(out.to_path_buf()),
    };
    Ok(lab_execute(&plan)?.0)
}

pub(super) fn run(a: DemoArgs) -> anyhow::Result<()> {
    let out = &a.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    clean(out)?;
    let work = out.join("work");
    let bar = progress::steps("demo", 9);

    bar.set_message("simulating a market with known truth");
    let mut params = SimParams::default_params();
    params.seed = a.seed;
    let sim_dir = work.join("sim");
    let manifest = simulate(&sim_dir, &params, &|_| {}).context("simulate")?;
    bar.inc(1);

    bar.set_message("ingesting observations");
    let summary = ingest(
        &work.join("store"),
        &[sim_dir.join("observations.csv")],
        &IngestOptions {
            ratings: rentix_core::RatingTable::from_file(&sim_dir.join("ratings.csv"))?,
            ..IngestOptions::default()
        },
        &mut |_| {},
    )
    .context("ingest")?;
    write_ingest_summary(out, &summary)?;
    bar.inc(1);

    bar.set_message("fixing every grade");
    let text = methodology_text()?;
    let methodology = Methodology::from_toml(&text, Path::new("methodology.toml"))?;
    std::fs::write(out.join("methodology.toml"), &text)?;
    let index_cfg = IndexConfig {
        store: work.join("store"),
        inputs: Vec::new(),
        mapping: None,
        ratings: Vec::new(),
        in_memory_bytes: 0,
        valued_only: false,
        out: out.join("fixings.parquet"),
        request: IndexRequest {
            methodology,
            grade_filters: Vec::new(),
            from: None,
            to: None,
        },
    };
    index(&index_cfg).context("index")?;
    bar.inc(1);

    bar.set_message("backtesting hedges");
    let users = backtest_users(out, &sim_dir, a.seed)?;
    bar.inc(1);

    bar.set_message("ranking grades for the H200 neocloud");
    let (fixings, ranked) = rank_for_h200(out, &sim_dir, a.seed)?;
    bar.inc(1);

    bar.set_message("the cost of useful output");
    let (curve, _) = cost::execute(&crate::cli::CostArgs {
        throughput: sim_dir.join("throughput.csv"),
        fixings: Some(out.join("fixings.parquet")),
        store: None,
        date: None,
        out: out.join("cost"),
    })?;
    bar.inc(1);

    bar.set_message("comparing contract designs");
    let lab = contract_lab(out, &sim_dir, &methodology_text()?)?;
    bar.inc(1);

    bar.set_message("fixing a 15-minute index");
    let intraday = intraday_demo(out, &params)?;
    bar.inc(1);

    bar.set_message("writing the report");
    let report = out.join("report.html");
    rentix_report::render_report(out, &report)?;
    bar.finish_and_clear();

    print_summary(&Outcome {
        report: &report,
        observations: manifest.observations,
        ingest: &summary,
        fixings: &fixings,
        intraday: &intraday,
        users: &users,
        ranked: &ranked,
        lab: &lab,
        curve: &curve,
    })
}

/// `ingest_summary.json` with paths relative to the output directory, so that the
/// committed demo output does not depend on where it was generated. Without the
/// partition checksums: each partition's rows name their input file by its path,
/// so its bytes (and hash) depend on the directory; the store's run record
/// (`store/runs/run-000001.json`) holds them.
fn write_ingest_summary(out: &Path, summary: &IngestSummary) -> anyhow::Result<()> {
    let mut shown = summary.clone();
    shown.partition_checksums.clear();
    let rel = |p: &str| {
        Path::new(p)
            .strip_prefix(out)
            .map(|r| r.to_string_lossy().to_string())
            .unwrap_or_else(|_| p.to_string())
    };
    shown.input_sha256 = shown
        .input_sha256
        .iter()
        .map(|(k, v)| (rel(k), v.clone()))
        .collect();
    for f in &mut shown.files {
        f.path = rel(&f.path);
    }
    for c in &mut shown.conflict_examples {
        c.file = rel(&c.file);
    }
    std::fs::write(
        out.join("ingest_summary.json"),
        serde_json::to_string_pretty(&shown)?
            + "
",
    )?;
    Ok(())
}

/// What the summary lines say of one simulated user's backtest.
struct UserResult {
    user: &'static str,
    /// The recommendation's effectiveness, decision and strategy.
    answer: Option<(f64, rentix_backtest::Decision, &'static str)>,
    /// The walk-forward strategy's mean basis.
    basis_mean: Option<f64>,
    /// Operational losses, inside and outside the periods.
    operational_loss: f64,
}

/// Backtests every demo user on the fixings (the spot-rate producer also on the
/// shipped perp), with its charts, and the H200 neocloud's cost decomposition.
fn backtest_users(out: &Path, sim_dir: &Path, seed: u64) -> anyhow::Result<Vec<UserResult>> {
    let mut results = Vec::new();
    for (user, grade) in DEMO_USERS {
        // The forward entry reads the one-month reservation of the user's grade.
        let contract = ContractSpec::default_contract().on_underlying(grade);
        let plan = BacktestPlan {
            index: out.join("fixings.parquet"),
            rent: sim_dir.join(format!("rent_{user}.csv")),
            period_end: PeriodEnd::Exclusive,
            side: None,
            events: Some(sim_dir.join(format!("events_{user}.csv"))),
            as_restated: false,
            underlying_given: true,
            config: BacktestConfig {
                contract,
                strategies: Strategy::ALL.to_vec(),
                bootstrap_resamples: 1000,
                seed,
                rolling_window: 12,
                // The spot-rate producer also sees the shipped H100 perp beside
                // the futures.
                perp: (user == "producer_h100_spot_rate")
                    .then(|| {
                        rentix_backtest::PerpSpec::from_file(Path::new(
                            "h100-sxm-80gb-bare-metal-perp",
                        ))
                    })
                    .transpose()?,
            },
            out: out.join(format!("backtest_{user}")),
        };
        let r = backtest(&plan).with_context(|| format!("backtest of {user}"))?;
        rentix_report::backtest_charts(&plan.out, &r)?;
        if user == "neocloud_h200" {
            cost_decomposition(&r, &sim_dir.join("throughput.csv"), user, &plan.out)?;
        }
        if let Some(wf) = r
            .strategies
            .iter()
            .find(|s| s.strategy == Strategy::WalkForward)
        {
            results.push(UserResult {
                user,
                // The figure of the strategy the recommendation rests on, as the
                // report's first screen gives it.
                answer: r.recommendation.effectiveness.map(|e| {
                    (
                        e,
                        r.recommendation.decision,
                        r.recommendation.strategy.map_or("", |s| s.as_str()),
                    )
                }),
                basis_mean: wf.basis.map(|b| b.mean),
                operational_loss: wf.operational_loss.total_usd
                    + wf.operational_loss.outside_periods_usd,
            });
        }
    }
    Ok(results)
}

/// The demo's fixings, and every grade ranked for the H200 neocloud's rent
/// (`track_neocloud_h200.csv`).
fn rank_for_h200(
    out: &Path,
    sim_dir: &Path,
    seed: u64,
) -> anyhow::Result<(Vec<Fixing>, Vec<TrackRow>)> {
    let fixings = read_fixings(&out.join("fixings.parquet"))?;
    let rent = RentSeries::from_csv(
        &sim_dir.join("rent_neocloud_h200.csv"),
        PeriodEnd::Exclusive,
    )?;
    let events = read_events(
        &sim_dir.join("events_neocloud_h200.csv"),
        PeriodEnd::Exclusive,
    )?;
    let ranked = track(
        &rent,
        &events,
        &fixings,
        &ContractSpec::default_contract(),
        &TrackOptions {
            resamples: 1000,
            seed,
            ..TrackOptions::default()
        },
    )?;
    track_table(&ranked).write(&out.join("track_neocloud_h200.csv"))?;
    Ok((fixings, ranked))
}

/// What the demo's console summary is made of.
struct Outcome<'a> {
    report: &'a Path,
    observations: u64,
    ingest: &'a IngestSummary,
    fixings: &'a [Fixing],
    intraday: &'a IntradayPublished,
    users: &'a [UserResult],
    ranked: &'a [TrackRow],
    lab: &'a rentix_lab::Comparison,
    curve: &'a [rentix_backtest::CostPoint],
}

/// The report's path, then the lines a person reads first.
fn print_summary(o: &Outcome<'_>) -> anyhow::Result<()> {
    let (report, summary, fixings, intraday, results, ranked, lab, curve) = (
        o.report, o.ingest, o.fixings, o.intraday, o.users, o.ranked, o.lab, o.curve,
    );
    let best = ranked.iter().find(|r| r.rank.is_some());
    let eff = |u: &str| {
        results
            .iter()
            .find(|r| r.user == u)
            .and_then(|r| r.answer)
            .map_or("n/a".to_string(), |(e, d, s)| {
                format!(
                    "{} ({}, {s})",
                    rentix_core::stats::percent(e),
                    d.as_str().replace('_', " ")
                )
            })
    };
    let premium = results
        .iter()
        .find(|r| r.user == "producer_premium")
        .and_then(|r| r.basis_mean)
        .unwrap_or(0.0);
    let op_loss: f64 = results.iter().map(|r| r.operational_loss).sum();
    outln!("report: {}", report.display());
    outln!(
        "market:   {} observations simulated; {} accepted, {} quarantined with a reason, {} duplicates",
        o.observations, summary.accepted, summary.quarantined, summary.duplicates
    );
    outln!(
        "index:    {} fixings of {} grades and composites, {:.0}% sufficient; every row says which tier fixed it",
        fixings.len(),
        fixings.iter().map(|f| f.grade.as_str()).collect::<std::collections::BTreeSet<_>>().len(),
        100.0 * fixings.iter().filter(|f| f.sufficient).count() as f64 / fixings.len().max(1) as f64
    );
    outln!(
        "intraday: {} fixings of {} H100 grades, {} a day at 15 minutes over two days, {} with a panel of five providers; each with its band and receipts",
        intraday.fixings, intraday.grades, intraday.per_day, intraday.valued
    );
    outln!(
        "producer: H100 futures remove {} of the rent's monthly variance out of sample; billed monthly by invoice, {}; paying {premium:+.2}/GPU-h over the index still hedges {}",
        eff("producer_h100_spot_rate"),
        eff("producer_h100_invoice"),
        eff("producer_premium")
    );
    let tied = ranked.iter().filter(|r| r.in_best_set).count();
    let tracked = match best {
        Some(b) if tied > 1 => format!(
            "track ranks {} first of {tied} grades it cannot tell apart ({})",
            b.grade,
            track_summary(b)
        ),
        Some(b) => format!("track ranks {} first ({})", b.grade, track_summary(b)),
        None => format!(
            "track, choosing among {} grades by their out-of-sample hedges, can tell none from no hedge on these months",
            ranked.iter().filter(|r| r.in_family).count()
        ),
    };
    outln!(
        "neocloud: H200 on-demand futures remove {} (its rent reprices quarterly on 30%); {tracked}",
        eff("neocloud_h200"),
    );
    let weakest = lab
        .candidates
        .iter()
        .filter(|c| c.withholding_move_pct.is_some())
        .max_by(|a, b| {
            a.withholding_move_pct
                .partial_cmp(&b.withholding_move_pct)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    if let (Some(verdict), Some(weakest)) = (&lab.utility_verdict, weakest) {
        // The lab's own verdict, as the report's first screen gives it.
        outln!(
            "contracts: {}; {} moves most when its largest contributor withholds ({:.2}%)",
            verdict.sentence,
            weakest.candidate,
            weakest.withholding_move_pct.unwrap_or(0.0)
        );
    }
    outln!(
        "never hedged: {} of operational losses across the {} users, reported apart from the hedge",
        rentix_report::money(op_loss),
        DEMO_USERS.len()
    );
    if let (Some(lo), Some(hi)) = (curve.first(), curve.last()) {
        outln!(
            "operators: rent per million useful tokens of the same model from ${:.2} ({}) to ${:.2} ({}), throughput and failures counted",
            lo.usd_per_m_useful_tokens, lo.operator, hi.usd_per_m_useful_tokens, hi.operator
        );
    }
    Ok(())
}

/// A ranked `track` row as the summary states it: the out-of-sample effectiveness
/// with its interval and the months behind it, so that a best grade whose interval
/// includes zero does not read as a sure thing.
fn track_summary(r: &rentix_backtest::TrackRow) -> String {
    use rentix_core::stats::percent;
    let eff = r.oos_effectiveness.map_or("n/a".to_string(), percent);
    match (r.oos_effectiveness_ci_low, r.oos_effectiveness_ci_high) {
        (Some(lo), Some(hi)) => format!(
            "{eff}, 95% interval {} to {}, {} months",
            percent(lo),
            percent(hi),
            r.periods
        ),
        _ => format!("{eff}, {} months", r.periods),
    }
}
