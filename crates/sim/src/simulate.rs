//! `rentix simulate`: writes the market's files, streaming, in parallel by day and
//! byte-identical for a given seed and parameters.

use crate::error::SimError;
use crate::market::{Market, TERMS};
use crate::observations::{Context, HEADER};
use crate::params::SimParams;
use crate::providers::roster;
use crate::users::{billed, day_text, events, rent};
use rayon::prelude::*;
use rentix_core::{FxTable, GpuModel, Grade, ServiceScope};
use serde::Serialize;
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
#[allow(
    clippy::too_many_lines,
    reason = "not split yet (issue 26 lists it); new functions stay under 100 lines"
)]
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
        // Calibrate: count the natural activity, then scale every rate.
        let natural: u64 = (0..params.days)
            .into_par_iter()
            .map(|d| {
                let r = ctx.day(d);
                (r.rows.len() + r.late.len()) as u64
            })
            .sum();
        ctx.activity = params.rows as f64 / natural.max(1) as f64;
    }

    let obs_path = out.join("observations.csv");
    let mut w = csv_writer(&obs_path)?;
    w.write_record(HEADER).map_err(csv_err(&obs_path))?;
    let mut late_rows = Vec::new();
    let mut n_obs = 0u64;
    let mut day = 0;
    while day < params.days {
        let end = (day + CHUNK).min(params.days);
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
    let n_late = late_rows.len() as u64;
    drop(late_rows);

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

    let mut files = vec!["observations.csv".to_string(), "truth.csv".to_string()];
    let mut first_rent_day: std::collections::BTreeMap<String, u32> =
        std::collections::BTreeMap::new();
    for u in &params.user {
        let rows = rent(params, &market, u);
        if let Some(r) = rows.first() {
            first_rent_day.insert(u.name.clone(), r.day);
        }
        let path = out.join(format!("rent_{}.csv", u.name));
        let mut w = csv_writer(&path)?;
        w.write_record([
            "period_start",
            "period_end",
            "usd_per_gpu_hour",
            "gpu_hours",
            "side",
        ])
        .map_err(csv_err(&path))?;
        for r in &billed(params, &rows, &u.billing) {
            w.write_record([
                day_text(params, r.start),
                day_text(params, r.end),
                format!("{:.6}", r.usd_per_gpu_hour),
                format!("{}", r.gpu_hours),
                u.side.clone(),
            ])
            .map_err(csv_err(&path))?;
        }
        w.flush().map_err(werr(&path))?;
        let ev = events(params, u, &rows);
        let epath = out.join(format!("events_{}.csv", u.name));
        let mut w = csv_writer(&epath)?;
        w.write_record(["start", "end", "kind", "gpu_hours_lost", "usd_loss", "note"])
            .map_err(csv_err(&epath))?;
        for e in &ev {
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
        files.push(format!("rent_{}.csv", u.name));
        files.push(format!("events_{}.csv", u.name));
    }

    let rpath = out.join("ratings.csv");
    let mut w = csv_writer(&rpath)?;
    w.write_record(["operator", "scope", "tier", "effective_from", "source"])
        .map_err(csv_err(&rpath))?;
    for r in crate::operators::ratings(params, &providers) {
        w.write_record(&r).map_err(csv_err(&rpath))?;
    }
    w.flush().map_err(werr(&rpath))?;
    let tpath = out.join("throughput.csv");
    let mut w = csv_writer(&tpath)?;
    w.write_record(crate::operators::THROUGHPUT_HEADER)
        .map_err(csv_err(&tpath))?;
    for r in crate::operators::throughput(params, &providers, &first_rent_day) {
        w.write_record(&r).map_err(csv_err(&tpath))?;
    }
    w.flush().map_err(werr(&tpath))?;
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
    let mpath = out.join("manifest.json");
    let json =
        serde_json::to_string_pretty(&manifest).map_err(|e| SimError::Params(e.to_string()))?;
    let mut f = File::create(&mpath).map_err(werr(&mpath))?;
    f.write_all(json.as_bytes()).map_err(werr(&mpath))?;
    f.write_all(b"\n").map_err(werr(&mpath))?;
    Ok(manifest)
}
