//! `rentix contract`: the contract design lab.

use crate::cli::ContractArgs;
use anyhow::{bail, Context};
use rentix_ingest::Store;
use rentix_lab::{
    check_names, evaluate, read_hedgers, read_truth, write, Candidate, Comparison, LabOptions,
    MonthRow, MAX_FAKE_LISTINGS_PER_DAY, MAX_FAKE_RATIO,
};
use std::path::PathBuf;

/// A validated lab run.
pub struct LabPlan {
    pub store: PathBuf,
    pub candidates: Vec<Candidate>,
    pub rent_dir: Option<PathBuf>,
    pub truth: Option<PathBuf>,
    pub options: LabOptions,
    pub out: PathBuf,
    /// Paths in comparison.json are written relative to this directory when they lie
    /// under it (the demo's output does not depend on where it was generated).
    pub relative_to: Option<PathBuf>,
}

impl LabPlan {
    pub fn from_args(a: &ContractArgs) -> anyhow::Result<Self> {
        let candidates = a
            .candidates
            .iter()
            .map(|c| Candidate::parse(c).map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<Vec<_>>>()?;
        check_names(&candidates).map_err(anyhow::Error::msg)?;
        if !(a.attack_price_pct.is_finite()
            && a.attack_price_pct > 0.0
            && a.attack_price_pct <= 100.0)
        {
            bail!(
                "--attack-price-pct {} must be above 0 and at most 100",
                a.attack_price_pct
            );
        }
        if let (Some(f), Some(t)) = (a.from, a.to) {
            if f > t {
                bail!("--from {f} is after --to {t}");
            }
        }
        Ok(Self {
            store: a.store.clone(),
            candidates,
            rent_dir: a.rent_dir.clone(),
            truth: a.truth.clone(),
            options: LabOptions {
                attack_price_pct: a.attack_price_pct,
                from: a.from,
                to: a.to,
            },
            out: a.out.clone(),
            relative_to: None,
        })
    }
}

/// Evaluates every candidate and writes the outputs and charts.
pub fn execute(plan: &LabPlan) -> anyhow::Result<(Comparison, Vec<MonthRow>)> {
    let truth = plan
        .truth
        .as_ref()
        .map(|p| read_truth(p).map_err(anyhow::Error::msg))
        .transpose()?;
    let hedgers = match &plan.rent_dir {
        Some(d) => read_hedgers(d).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let store = Store::open(&plan.store)?;
    let rows = store
        .read_projected(None, None, rentix_ingest::Projection::Fixing)
        .context("reading the store")?;
    let bar = crate::progress::steps("contract lab", plan.candidates.len() as u64);
    let mut candidates = Vec::new();
    let mut months = Vec::new();
    let mut by_hedger = Vec::new();
    for c in &plan.candidates {
        bar.set_message(c.name.clone());
        let e = evaluate(&rows, c, truth.as_ref(), &hedgers, &plan.options)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("candidate {}", c.name))?;
        candidates.push(e.row);
        months.extend(e.months);
        by_hedger.push((c.name.clone(), e.hedgers));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let shown = |p: &std::path::Path| {
        plan.relative_to
            .as_ref()
            .and_then(|base| p.strip_prefix(base).ok())
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let comparison = Comparison {
        store: shown(&plan.store),
        attack_price_pct: plan.options.attack_price_pct,
        max_fake_ratio: MAX_FAKE_RATIO,
        max_fake_listings_per_day: MAX_FAKE_LISTINGS_PER_DAY,
        truth: plan.truth.as_deref().map(shown),
        rent_dir: plan.rent_dir.as_deref().map(shown),
        candidates,
        hedgers: by_hedger,
    };
    write(&plan.out, &comparison, &months).map_err(anyhow::Error::msg)?;
    rentix_report::contract_lab_charts(&plan.out, &comparison).map_err(anyhow::Error::msg)?;
    Ok((comparison, months))
}

fn opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{:.*}", digits, x * scale))
}

pub fn run(a: ContractArgs) -> anyhow::Result<()> {
    let plan = LabPlan::from_args(&a)?;
    let (c, _) = execute(&plan)?;
    outln!(
        "{:<28} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "candidate",
        "settled",
        "trades%",
        "fake→1%",
        "fake→5%",
        "withhold%",
        "MAE USD",
        "hedge eff"
    );
    for r in &c.candidates {
        outln!(
            "{:<28} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}",
            r.candidate.chars().take(28).collect::<String>(),
            format!("{}/{}", r.months_settled, r.months),
            opt(Some(r.share_trades), 100.0, 0),
            opt(r.fake_share_to_move_1pct, 100.0, 1)
                + if r.fake_share_to_move_1pct.is_some() {
                    "%"
                } else {
                    ""
                },
            opt(r.fake_share_to_move_5pct, 100.0, 1)
                + if r.fake_share_to_move_5pct.is_some() {
                    "%"
                } else {
                    ""
                },
            opt(r.withholding_move_pct, 1.0, 2),
            opt(r.truth_mae_usd, 1.0, 3),
            opt(r.effectiveness_median, 1.0, 2),
        );
        if !r.note.is_empty() {
            outln!("  note: {}", r.note);
        }
    }
    outln!(
        "fake→X%: median over settled months of the fake trade volume (share of the month's real volume) one contributor quoting {}% above must add; '-' = not reachable within {}x the real volume",
        c.attack_price_pct, MAX_FAKE_RATIO
    );
    outln!("wrote {}", plan.out.join("comparison.csv").display());
    Ok(())
}
