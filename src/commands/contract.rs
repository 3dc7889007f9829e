//! `rentix contract`: the contract design lab.

use crate::cli::ContractArgs;
use rentix_lab::{
    check_names, run_on_store, Candidate, Comparison, LabOptions, LabRun, MonthRow,
    MAX_FAKE_LISTINGS_PER_DAY, MAX_FAKE_RATIO,
};
use std::path::PathBuf;

/// A validated lab run.
pub(super) struct LabPlan {
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
    pub(super) fn from_args(a: &ContractArgs) -> anyhow::Result<Self> {
        let candidates = a
            .candidates
            .iter()
            .map(|c| Candidate::parse(c).map_err(anyhow::Error::from))
            .collect::<anyhow::Result<Vec<_>>>()?;
        check_names(&candidates)?;
        let options = LabOptions {
            attack_price_pct: a.attack_price_pct,
            from: a.from,
            to: a.to,
        };
        if let Err(e) = options.check() {
            crate::commands::usage!("{e}");
        }
        Ok(Self {
            store: a.store.clone(),
            candidates,
            rent_dir: a.rent_dir.clone(),
            truth: a.truth.clone(),
            options,
            out: a.out.clone(),
            relative_to: None,
        })
    }
}

/// Evaluates every candidate and writes the outputs and charts
/// (`rentix_lab::run_on_store`, as Python's `rentix.contract()`).
pub(super) fn execute(plan: &LabPlan) -> anyhow::Result<(Comparison, Vec<MonthRow>)> {
    let shown = |p: &std::path::Path| {
        plan.relative_to
            .as_ref()
            .and_then(|base| p.strip_prefix(base).ok())
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let run = LabRun {
        store: &plan.store,
        candidates: &plan.candidates,
        truth: plan.truth.as_deref(),
        rent_dir: plan.rent_dir.as_deref(),
        options: &plan.options,
        labels: (
            shown(&plan.store),
            plan.truth.as_deref().map(shown),
            plan.rent_dir.as_deref().map(shown),
        ),
    };
    let bar = crate::progress::steps("contract lab", plan.candidates.len() as u64);
    let mut started = false;
    let done = run_on_store(&run, &plan.out, |c| {
        if started {
            bar.inc(1);
        }
        started = true;
        bar.set_message(c.name.clone());
    });
    bar.finish_and_clear();
    let (comparison, months) = done?;
    rentix_report::contract_lab_charts(&plan.out, &comparison)?;
    Ok((comparison, months))
}

fn opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{:.*}", digits, x * scale))
}

/// The console cell for the fake amount that moves a settlement by a target: the
/// fake trade volume (share of the month's real volume) when trades move it, else
/// the fake listings over the month (`N lst`, the design fixing on listings), else
/// `-`, with the footnote saying why.
fn fake_cell(
    r: &rentix_lab::CandidateRow,
    target: &str,
    trades: Option<f64>,
    listings: Option<f64>,
    unmovable: usize,
) -> (String, Option<String>) {
    match (trades, listings) {
        (Some(t), _) => (format!("{:.1}%", t * 100.0), None),
        (None, Some(l)) => (format!("{l:.0} lst"), None),
        // No settled month: nothing was attacked, which is not a design no attack
        // moves.
        (None, None) if r.months_settled == 0 => (
            "n/a".into(),
            Some(format!(
                "{}: fake→{target} 'n/a': no settled month to attack ({} months, none settled)",
                r.candidate, r.months
            )),
        ),
        (None, None) => (
            "-".into(),
            Some(format!(
                "{}: fake→{target} '-': neither fake trades up to {MAX_FAKE_RATIO}x the real volume nor {MAX_FAKE_LISTINGS_PER_DAY} fake listings a day move it {target} in the median settled month ({unmovable} of {} settled months unmovable)",
                r.candidate, r.months_settled
            )),
        ),
    }
}

/// The console table's cells for one candidate, and a footnote for each `-`.
fn console_row(
    r: &rentix_lab::CandidateRow,
    cross: &[String],
    failed: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut notes = Vec::new();
    let mut cell = |v: (String, Option<String>)| {
        notes.extend(v.1);
        v.0
    };
    // The footnote for a '-' cell: `None` when the cell has a value.
    let why =
        |v: Option<f64>, text: String| v.is_none().then(|| format!("{}: {text}", r.candidate));
    let cells = vec![
        r.candidate.chars().take(28).collect::<String>(),
        format!("{}/{}", r.months_settled, r.months),
        opt(Some(r.share_trades), 100.0, 0),
        cell(fake_cell(
            r,
            "1%",
            r.fake_share_to_move_1pct,
            r.fake_listings_to_move_1pct,
            r.unmovable_months_1pct,
        )),
        cell(fake_cell(
            r,
            "5%",
            r.fake_share_to_move_5pct,
            r.fake_listings_to_move_5pct,
            r.unmovable_months_5pct,
        )),
        cell((
            opt(r.withholding_move_pct, 1.0, 2),
            why(
                r.withholding_move_pct,
                "withhold% '-': no settled month to withhold from".into(),
            ),
        )),
        cell((
            opt(r.truth_mae_usd, 1.0, 3),
            why(
                r.truth_mae_usd,
                // With no settled month there is nothing to compare with the
                // truth: it said "no --truth price" where --truth was given.
                if r.months_settled == 0 {
                    "MAE '-': no settled month to compare with --truth".into()
                } else {
                    "MAE '-': no --truth price for this grade".into()
                },
            ),
        )),
        cell((
            opt(r.effectiveness_median, 1.0, 2),
            why(
                r.effectiveness_median,
                // Rents of its own GPU that could not be backtested come first: an
                // H100 design whose H100 rents all failed (the grade settles no
                // month) was said to have only rents of other GPUs.
                if r.hedgers == 0 && !failed.is_empty() {
                    format!(
                        "hedge eff '-': no rent of the contract's GPU could be backtested: {}{}",
                        failed.join("; "),
                        if cross.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; the others are of other GPUs ({}), cross-hedges left out",
                                cross.join(", ")
                            )
                        }
                    )
                } else if r.hedgers == 0 && !cross.is_empty() {
                    format!(
                        "hedge eff '-': every rent is of another GPU than the contract's ({}): cross-hedges, left out of the hedge utility",
                        cross.join(", ")
                    )
                } else {
                    format!(
                        "hedge eff '-': no rent could be backtested ({} hedgers)",
                        r.hedgers
                    )
                },
            ),
        )),
    ];
    (cells, notes)
}

/// The note under a candidate whose hedge utility left rents of other GPUs out.
fn cross_note(r: &rentix_lab::CandidateRow, cross: &[String]) -> Option<String> {
    (r.effectiveness_median.is_some() && !cross.is_empty()).then(|| {
        format!(
            "hedge eff is the median over its {} rent(s) of the contract's GPU; {} of other GPUs ({}) are cross-hedges, left out (each rent's effectiveness is in comparison.json)",
            r.hedgers,
            cross.len(),
            cross.join(", ")
        )
    })
}

pub(super) fn run(a: ContractArgs) -> anyhow::Result<()> {
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
    let mut footnotes = Vec::new();
    for r in &c.candidates {
        // Its rents of other GPUs, and those of its GPU whose backtest failed, with
        // the reason.
        let (mut cross, mut failed) = (Vec::new(), Vec::new());
        for h in c
            .hedgers
            .iter()
            .filter(|(name, _)| *name == r.candidate)
            .flat_map(|(_, hs)| hs.iter())
        {
            match (&h.cross_hedge, &h.failed) {
                (Some(_), _) => cross.push(h.hedger.clone()),
                (None, Some(why)) => failed.push(format!("{} ({why})", h.hedger)),
                (None, None) => {}
            }
        }
        let (v, notes) = console_row(r, &cross, &failed);
        outln!(
            "{:<28} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}",
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7]
        );
        if !r.note.is_empty() {
            outln!("  note: {}", r.note);
        }
        if let Some(n) = cross_note(r, &cross) {
            outln!("  note: {n}");
        }
        footnotes.extend(notes);
    }
    outln!(
        "fake→X%: median over settled months of the fake trade volume (share of the month's real volume) one contributor quoting {}% above must add, or, for a design that fixes on listings, the fake listings over the month ('N lst')",
        c.attack_price_pct
    );
    for n in footnotes {
        outln!("- {n}");
    }
    // The verdict as comparison.json and the report hold it: it was printed
    // nowhere on the console.
    if let Some(v) = &c.utility_verdict {
        outln!("verdict: {}", v.sentence);
    }
    outln!("wrote {}", plan.out.join("comparison.csv").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::console_row;

    /// An H100 design whose H100 rents all failed (its grade settles no month) was
    /// told "every rent is of another GPU" (a hostile round): the failures come
    /// first, with their reasons, then the cross-hedges.
    #[test]
    fn an_empty_hedge_utility_names_the_rents_that_failed() {
        let r = rentix_lab::CandidateRow {
            candidate: "r1m".into(),
            ..rentix_lab::CandidateRow::default()
        };
        let (_, notes) = console_row(
            &r,
            &["neocloud_h200".into()],
            &["producer_h100 (no month settles)".into()],
        );
        let note = notes.iter().find(|n| n.contains("hedge eff")).unwrap();
        assert!(
            note.contains("no rent of the contract's GPU could be backtested: producer_h100 (no month settles)")
                && note.contains("the others are of other GPUs (neocloud_h200)"),
            "{note}"
        );
    }
}
