//! `rentix simulate`: writes the market's files, streaming, in parallel by day and
//! byte-identical for a given seed and parameters.

use crate::error::SimError;
use crate::market::{Market, TERMS};
use crate::observations::{Context, HEADER};
use crate::params::{SimParams, UserParams};
use crate::providers::{roster, Provider};
use crate::users::{billed, day_text, events, rent};
use rayon::prelude::*;
use rentix_core::{FxTable, GpuModel, Grade, ServiceScope};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// What a run wrote, recorded in `manifest.json` beside every parameter.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// `rentix-sim` and the crate version that wrote the files.
    pub generator: String,
    /// The seed used (also in `params`).
    pub seed: u64,
    /// Rows written to `observations.csv`, late ones, duplicates and bad rows
    /// included (the header not counted).
    pub observations: u64,
    /// Of those, the late trades appended at the end of the file.
    pub late_observations: u64,
    /// Rows of `truth.csv`: one per grade and day the GPU is on the market.
    pub truth_rows: u64,
    /// Multiplier applied to every arrival rate to meet `params.rows`; 1 when
    /// `rows` is 0.
    pub activity: f64,
    /// The users' names, in parameter order.
    pub users: Vec<String>,
    /// Files written in the output directory, `manifest.json` excepted.
    pub files: Vec<String>,
    /// Every parameter of the run.
    pub params: SimParams,
}

/// Days generated together; bounds memory at about `CHUNK` days of rows.
const CHUNK: u32 = 16;

fn werr(path: &Path) -> impl Fn(std::io::Error) -> SimError + '_ {
    move |source| SimError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn csv_writer(path: &Path) -> Result<csv::Writer<BufWriter<File>>, SimError> {
    let f = File::create(path).map_err(werr(path))?;
    Ok(csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(BufWriter::with_capacity(1 << 20, f)))
}

fn csv_err(path: &Path) -> impl Fn(csv::Error) -> SimError + '_ {
    move |e| SimError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Writes the whole market into `out`. `progress` receives days done.
pub fn simulate(
    out: &Path,
    params: &SimParams,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Manifest, SimError> {
    params.validate()?;
    std::fs::create_dir_all(out).map_err(werr(out))?;
    let market = Market::build(params);
    let providers = roster(params);
    let fx = FxTable::bundled();
    let mut ctx = Context {
        params,
        market: &market,
        providers: &providers,
        fx: &fx,
        activity: 1.0,
    };
    if params.rows > 0 {
        ctx.activity = calibrated_activity(&ctx)?;
    }
    let (n_obs, n_late) = write_observations(out, &ctx, progress)?;
    let truth_rows = write_truth(out, params, &market)?;
    let mut files = vec!["observations.csv".to_string(), "truth.csv".to_string()];
    let mut first_rent_day: BTreeMap<String, u32> = BTreeMap::new();
    for u in &params.user {
        if let Some(day) = write_user_files(out, params, &market, u)? {
            first_rent_day.insert(u.name.clone(), day);
        }
        files.push(format!("rent_{}.csv", u.name));
        files.push(format!("events_{}.csv", u.name));
    }
    write_operator_files(out, params, &providers, &first_rent_day)?;
    files.push("ratings.csv".to_string());
    files.push("throughput.csv".to_string());

    let manifest = Manifest {
        generator: format!("rentix-sim {}", env!("CARGO_PKG_VERSION")),
        seed: params.seed,
        observations: n_obs + n_late,
        late_observations: n_late,
        truth_rows,
        activity: ctx.activity,
        users: params.user.iter().map(|u| u.name.clone()).collect(),
        files,
        params: params.clone(),
    };
    write_manifest(out, &manifest)?;
    Ok(manifest)
}

/// The multiplier of every arrival rate that meets `params.rows`: count the natural
/// activity, then scale. Listing reads at every stamp of a cadence are a schedule,
/// not arrivals: they stay as they are and the arrivals make up the rest.
fn calibrated_activity(ctx: &Context<'_>) -> Result<f64, SimError> {
    let params = ctx.params;
    let (natural, scheduled) = (0..params.days)
        .into_par_iter()
        .map(|d| {
            let r = ctx.day(d);
            ((r.rows.len() + r.late.len()) as u64, r.scheduled as u64)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let arrivals = natural - scheduled;
    if scheduled > 0 && params.rows <= scheduled + arrivals / 100 {
        return Err(SimError::Params(format!(
            "rows = {}: listings read every {} minutes are {scheduled} rows on their own; ask for more rows, a longer cadence or fewer days",
            params.rows,
            params.cadence_minutes.unwrap_or_default()
        )));
    }
    Ok((params.rows - scheduled) as f64 / arrivals.max(1) as f64)
}

/// Writes `observations.csv`, `CHUNK` days at a time, the late-arriving batch at
/// the end: returns (in-order rows, late rows).
fn write_observations(
    out: &Path,
    ctx: &Context<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, u64), SimError> {
    let days = ctx.params.days;
    let obs_path = out.join("observations.csv");
    let mut w = csv_writer(&obs_path)?;
    w.write_record(HEADER).map_err(csv_err(&obs_path))?;
    let mut late_rows = Vec::new();
    let mut n_obs = 0u64;
    let mut day = 0;
    while day < days {
        let end = (day + CHUNK).min(days);
        let chunk: Vec<_> = (day..end).into_par_iter().map(|d| ctx.day(d)).collect();
        for r in chunk {
            for row in &r.rows {
                w.write_record(row).map_err(csv_err(&obs_path))?;
            }
            n_obs += r.rows.len() as u64;
            late_rows.extend(r.late);
        }
        progress(u64::from(end));
        day = end;
    }
    // The late-arriving batch: trades reported days after they happened.
    for row in &late_rows {
        w.write_record(row).map_err(csv_err(&obs_path))?;
    }
    w.flush().map_err(werr(&obs_path))?;
    Ok((n_obs, late_rows.len() as u64))
}

/// Writes `truth.csv`, the fair price of every grade on the market each day, grades
/// in key order: returns its rows.
fn write_truth(out: &Path, params: &SimParams, market: &Market) -> Result<u64, SimError> {
    let truth_path = out.join("truth.csv");
    let mut t = csv_writer(&truth_path)?;
    t.write_record(["date", "grade", "fair_usd_per_gpu_hour"])
        .map_err(csv_err(&truth_path))?;
    let mut truth_rows = 0u64;
    let mut grades: Vec<(String, usize, ServiceScope, rentix_core::ContractTerm)> = Vec::new();
    for (gi, g) in params.gpu.iter().enumerate() {
        let id = GpuModel::new(&g.id).map_err(|e| SimError::Params(e.to_string()))?;
        for scope in ServiceScope::ALL {
            for term in TERMS {
                grades.push((Grade::new(id.clone(), scope, term).key(), gi, scope, term));
            }
        }
    }
    grades.sort();
    for d in 0..params.days {
        let date = day_text(params, d);
        for (key, gi, scope, term) in &grades {
            if let Some(v) = market.fair(*gi, *scope, *term, d) {
                t.write_record([date.as_str(), key.as_str(), &format!("{v:.6}")])
                    .map_err(csv_err(&truth_path))?;
                truth_rows += 1;
            }
        }
    }
    t.flush().map_err(werr(&truth_path))?;
    Ok(truth_rows)
}

/// Part `i` of the grade key (`gpu/scope/term`) that every leg of `u` shares, or
/// empty.
fn common_part(u: &UserParams, i: usize) -> String {
    let mut parts = u
        .leg
        .iter()
        .map(|l| l.grade.split('/').nth(i).unwrap_or(""));
    let first = parts.next().unwrap_or("");
    if parts.all(|p| p == first) {
        first.to_string()
    } else {
        String::new()
    }
}

/// Writes a user's `rent_<name>.csv` and `events_<name>.csv`: returns the day of
/// its first rent, `None` when it has none.
fn write_user_files(
    out: &Path,
    params: &SimParams,
    market: &Market,
    u: &UserParams,
) -> Result<Option<u32>, SimError> {
    let rows = rent(params, market, u);
    let path = out.join(format!("rent_{}.csv", u.name));
    let mut w = csv_writer(&path)?;
    w.write_record([
        "period_start",
        "period_end",
        "usd_per_gpu_hour",
        "gpu_hours",
        "side",
        "gpu",
        "scope",
    ])
    .map_err(csv_err(&path))?;
    // What the rent is for, as a user's file says it: the GPU and scope every leg
    // shares (empty where the legs differ), so that `backtest` and `track` know
    // the rent's own grade.
    let (gpu, scope) = (common_part(u, 0), common_part(u, 1));
    for r in &billed(params, &rows, &u.billing) {
        w.write_record([
            day_text(params, r.start),
            day_text(params, r.end),
            format!("{:.6}", r.usd_per_gpu_hour),
            format!("{}", r.gpu_hours),
            u.side.clone(),
            gpu.clone(),
            scope.clone(),
        ])
        .map_err(csv_err(&path))?;
    }
    w.flush().map_err(werr(&path))?;
    let epath = out.join(format!("events_{}.csv", u.name));
    let mut w = csv_writer(&epath)?;
    w.write_record(["start", "end", "kind", "gpu_hours_lost", "usd_loss", "note"])
        .map_err(csv_err(&epath))?;
    for e in &events(params, u, &rows) {
        w.write_record([
            day_text(params, e.start),
            day_text(params, e.end),
            e.kind.to_string(),
            format!("{:.2}", e.gpu_hours_lost),
            format!("{:.2}", e.usd_loss),
            e.note.clone(),
        ])
        .map_err(csv_err(&epath))?;
    }
    w.flush().map_err(werr(&epath))?;
    Ok(rows.first().map(|r| r.day))
}

/// Writes the operators' `ratings.csv` and `throughput.csv`.
fn write_operator_files(
    out: &Path,
    params: &SimParams,
    providers: &[Provider],
    first_rent_day: &BTreeMap<String, u32>,
) -> Result<(), SimError> {
    let rpath = out.join("ratings.csv");
    let mut w = csv_writer(&rpath)?;
    w.write_record(["operator", "scope", "tier", "effective_from", "source"])
        .map_err(csv_err(&rpath))?;
    for r in crate::operators::ratings(params, providers) {
        w.write_record(&r).map_err(csv_err(&rpath))?;
    }
    w.flush().map_err(werr(&rpath))?;
    let tpath = out.join("throughput.csv");
    let mut w = csv_writer(&tpath)?;
    w.write_record(crate::operators::THROUGHPUT_HEADER)
        .map_err(csv_err(&tpath))?;
    for r in crate::operators::throughput(params, providers, first_rent_day) {
        w.write_record(&r).map_err(csv_err(&tpath))?;
    }
    w.flush().map_err(werr(&tpath))?;
    Ok(())
}

/// Writes `manifest.json`: the manifest as pretty JSON and a newline.
fn write_manifest(out: &Path, manifest: &Manifest) -> Result<(), SimError> {
    let mpath = out.join("manifest.json");
    let json =
        serde_json::to_string_pretty(manifest).map_err(|e| SimError::Params(e.to_string()))?;
    let mut f = File::create(&mpath).map_err(werr(&mpath))?;
    f.write_all(json.as_bytes()).map_err(werr(&mpath))?;
    f.write_all(b"\n").map_err(werr(&mpath))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{date, window};
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    /// The default market and users over 20 days from 2024-05-20: A100, H100 and
    /// MI300X on the market throughout, H200 from day 12 (2024-06-01), B200 never.
    fn small() -> SimParams {
        window(date(2024, 5, 20), 20)
    }

    fn run(p: &SimParams) -> (tempfile::TempDir, Manifest) {
        let dir = tempfile::tempdir().unwrap();
        let m = simulate(dir.path(), p, &|_| {}).unwrap();
        (dir, m)
    }

    /// Every file of a run, by name, manifest included.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().into_string().unwrap(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    }

    /// A CSV file's header and records.
    fn csv(dir: &Path, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
        let mut r = csv::ReaderBuilder::new()
            .flexible(false)
            .from_path(dir.join(name))
            .unwrap();
        let head = r.headers().unwrap().iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        (head, rows)
    }

    #[test]
    fn a_run_writes_the_documented_files_and_columns() {
        let p = small();
        let (dir, m) = run(&p);
        let d = dir.path();
        let mut expected: Vec<String> = vec!["observations.csv".into(), "truth.csv".into()];
        for u in &p.user {
            expected.push(format!("rent_{}.csv", u.name));
            expected.push(format!("events_{}.csv", u.name));
        }
        expected.extend(["ratings.csv".into(), "throughput.csv".into()]);
        assert_eq!(m.files, expected);
        let mut on_disk: Vec<String> = files(d).into_keys().collect();
        on_disk.retain(|f| f != "manifest.json");
        on_disk.sort();
        expected.sort();
        assert_eq!(on_disk, expected);

        let (head, obs) = csv(d, "observations.csv");
        assert_eq!(head, rentix_core::CANONICAL_COLUMNS);
        assert_eq!(obs.len() as u64, m.observations);
        let (head, truth) = csv(d, "truth.csv");
        assert_eq!(head, ["date", "grade", "fair_usd_per_gpu_hour"]);
        // 4 scopes x 7 terms = 28 grades per GPU-day: 3 GPUs x 20 days + H200 x 8.
        assert_eq!(truth.len(), 28 * (3 * 20 + 8));
        assert_eq!(m.truth_rows, truth.len() as u64);
        let (head, _) = csv(d, "rent_producer_h100.csv");
        assert_eq!(
            head,
            [
                "period_start",
                "period_end",
                "usd_per_gpu_hour",
                "gpu_hours",
                "side",
                "gpu",
                "scope"
            ]
        );
        let (head, _) = csv(d, "events_producer_h100.csv");
        assert_eq!(
            head,
            ["start", "end", "kind", "gpu_hours_lost", "usd_loss", "note"]
        );
        let (head, ratings) = csv(d, "ratings.csv");
        assert_eq!(
            head,
            ["operator", "scope", "tier", "effective_from", "source"]
        );
        assert!(!ratings.is_empty());
        let (head, tp) = csv(d, "throughput.csv");
        assert_eq!(head, rentix_core::THROUGHPUT_COLUMNS);
        assert!(!tp.is_empty());

        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(json["seed"], 20_240_101);
        assert_eq!(json["observations"], m.observations);
        assert_eq!(json["activity"], 1.0);
        assert_eq!(json["users"].as_array().unwrap().len(), p.user.len());
        let back: SimParams = serde_json::from_value(json["params"].clone()).unwrap();
        assert_eq!(back, p);
    }

    /// Truth: one row per grade and day the GPU is on the market, each (date, grade)
    /// once, every price finite and positive; no H200 row before 2024-06-01.
    #[test]
    fn truth_has_one_positive_price_per_grade_and_day() {
        let (dir, _) = run(&small());
        let (_, truth) = csv(dir.path(), "truth.csv");
        let mut seen = std::collections::BTreeSet::new();
        for r in &truth {
            assert!(seen.insert((r[0].clone(), r[1].clone())), "{r:?}");
            let v: f64 = r[2].parse().unwrap();
            assert!(v.is_finite() && v > 0.0, "{r:?}");
            r[1].parse::<Grade>().unwrap();
            if r[1].starts_with("h200") {
                assert!(r[0].as_str() >= "2024-06-01", "{r:?}");
            }
            assert!(!r[1].starts_with("b200"));
        }
    }

    /// Users' files, checked against truth.csv: producer_premium pays the H100
    /// bare-metal on-demand truth plus 0.45 (both at 6 decimals: within 1e-6);
    /// the invoice user is billed a row per calendar month, 2024-05-20 to 06-01
    /// (12 days x 64 GPUs x 24 h = 18 432 GPU-hours) and 06-01 to 06-09 (12 288);
    /// neocloud_h200 earns from the H200's launch.
    #[test]
    fn rent_files_follow_the_users_legs_and_billing() {
        let (dir, _) = run(&small());
        let d = dir.path();
        let (_, truth) = csv(d, "truth.csv");
        let od: BTreeMap<&str, f64> = truth
            .iter()
            .filter(|r| r[1] == "h100-sxm-80gb/bare-metal/on-demand")
            .map(|r| (r[0].as_str(), r[2].parse().unwrap()))
            .collect();
        let (_, premium) = csv(d, "rent_producer_premium.csv");
        assert_eq!(premium.len(), 20);
        for r in &premium {
            let rent: f64 = r[2].parse().unwrap();
            assert!(
                (rent - od[r[0].as_str()] - 0.45).abs() <= 1e-6 + 1e-12,
                "{r:?}"
            );
            assert_eq!(r[3], "3072"); // 128 GPUs x 24 h
            assert_eq!(r[4], "pay");
        }
        let (_, invoice) = csv(d, "rent_producer_h100_invoice.csv");
        let spans: Vec<[&str; 3]> = invoice
            .iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[3].as_str()])
            .collect();
        assert_eq!(
            spans,
            [
                ["2024-05-20", "2024-06-01", "18432"],
                ["2024-06-01", "2024-06-09", "12288"]
            ]
        );
        // May: the GPU-hour-weighted mean of (truth + 0.25), each day weighing alike.
        let may: Vec<f64> = od
            .iter()
            .filter(|(k, _)| k.starts_with("2024-05"))
            .map(|(_, v)| v + 0.25)
            .collect();
        let mean = may.iter().sum::<f64>() / may.len() as f64;
        let billed: f64 = invoice[0][2].parse().unwrap();
        assert!((billed - mean).abs() < 2e-6, "{billed} vs {mean}");
        let (_, h200) = csv(d, "rent_neocloud_h200.csv");
        assert_eq!(h200[0][0], "2024-06-01");
        assert_eq!(h200.len(), 8);
        assert!(h200.iter().all(|r| r[4] == "earn"));
    }

    /// Same seed and parameters, same bytes, whatever the thread count; another
    /// seed, another market.
    #[test]
    fn a_run_is_a_function_of_seed_and_parameters_not_of_threads() {
        let p = small();
        let on = |threads: usize, p: &SimParams| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (dir, _) = pool.install(|| run(p));
            files(dir.path())
        };
        let one = on(1, &p);
        assert_eq!(one, on(4, &p));
        assert_eq!(one, on(2, &p));
        let mut q = p.clone();
        q.seed += 1;
        let other = on(2, &q);
        for f in ["observations.csv", "truth.csv", "rent_producer_h100.csv"] {
            assert_ne!(one[f], other[f], "{f}");
        }
    }

    /// Late trades are appended after the in-order rows, whose days never go back.
    #[test]
    fn late_trades_come_last_and_in_order_rows_keep_their_days() {
        let mut p = small();
        p.noise.bad_row_share = 0.0;
        p.noise.late_share = 0.2;
        let (dir, m) = run(&p);
        let (_, obs) = csv(dir.path(), "observations.csv");
        assert!(m.late_observations > 100, "{}", m.late_observations);
        let cut = obs.len() - m.late_observations as usize;
        let day = |r: &Vec<String>| r[2][..10].to_string();
        assert!(obs[..cut].windows(2).all(|w| day(&w[0]) <= day(&w[1])));
        assert!(obs[cut..]
            .iter()
            .all(|r| r[1] == "trade" && day(r).as_str() > "2024-05-23"));
    }

    /// `rows` scales every rate so the count comes out close to it: 3 000 of a
    /// natural 22 000 over these 20 days, within 10% (Poisson se 1.8%).
    #[test]
    fn the_row_target_is_met() {
        let mut p = small();
        p.rows = 3_000;
        let (_, m) = run(&p);
        assert!(m.activity < 0.2, "{}", m.activity);
        let n = m.observations as f64;
        assert!((n / 3_000.0 - 1.0).abs() < 0.1, "{n}");
    }

    /// The same promise with listings read every 15 minutes: those reads are a
    /// schedule, not arrivals, so the arrivals make up the rest of the target; a
    /// target the schedule alone exceeds is refused (it used to give 729,253 rows
    /// for 3,000).
    #[test]
    fn the_row_target_is_met_with_a_cadence() {
        let mut p = small();
        p.cadence_minutes = Some(15);
        p.rows = 3_000;
        let dir = tempfile::tempdir().unwrap();
        let e = simulate(dir.path(), &p, &|_| {}).unwrap_err();
        assert!(
            matches!(&e, SimError::Params(m) if m.contains("read every 15 minutes")),
            "{e}"
        );
        // The schedule's own size, then a target above it.
        p.rows = 0;
        let (_, natural) = run(&p);
        p.rows = natural.observations + 20_000;
        let (_, m) = run(&p);
        let n = m.observations as f64;
        let want = p.rows as f64;
        assert!((n / want - 1.0).abs() < 0.05, "{n} observations for {want}");
    }

    #[test]
    fn progress_reports_days_done_in_chunks() {
        let p = small();
        let dir = tempfile::tempdir().unwrap();
        let seen = Mutex::new(Vec::new());
        simulate(dir.path(), &p, &|d| seen.lock().unwrap().push(d)).unwrap();
        // Chunks of 16 days: 16, then the remaining 4.
        assert_eq!(*seen.lock().unwrap(), [16, 20]);
    }

    /// A one-day run on 2024-06-01: four GPUs on the market, 4 x 28 truth rows.
    #[test]
    fn a_one_day_run_works() {
        let (dir, m) = run(&window(date(2024, 6, 1), 1));
        assert_eq!(m.truth_rows, 112);
        assert!(m.observations > 0);
        assert_eq!(m.late_observations, 0, "no trade is late before day 4");
        let (_, rent) = csv(dir.path(), "rent_producer_h100_invoice.csv");
        assert_eq!(rent.len(), 1);
        assert_eq!([&rent[0][0], &rent[0][1]], ["2024-06-01", "2024-06-02"]);
    }

    /// Bad parameters are refused before anything is written; an output path that
    /// is a file is a write error naming it. Neither panics.
    #[test]
    fn bad_parameters_and_unwritable_outputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        for days in [0, 20_001] {
            let mut p = small();
            p.days = days;
            match simulate(&out, &p, &|_| {}) {
                Err(SimError::Params(m)) => assert!(m.contains("days must be 1..=20000"), "{m}"),
                other => panic!("{other:?}"),
            }
            assert!(!out.exists());
        }
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        match simulate(&file, &small(), &|_| {}) {
            Err(SimError::Write { path, .. }) => assert_eq!(path, file),
            other => panic!("{other:?}"),
        }
    }
}
