//! `rentix verify`: anyone holding the store and the methodology can re-derive every
//! published fixing. Each published row is recomputed (over the whole history, as
//! `index` computes it) and compared field by field; any difference exits 1.

use crate::cli::VerifyArgs;
use anyhow::bail;
use rentix_index::{compute_from_store, read_fixings, Fixing, IndexRequest, Methodology};
use rentix_ingest::Store;
use rentix_table::{Col, Table};
use std::collections::BTreeMap;

/// Published and recomputed values of one field that differ.
struct Difference {
    date: String,
    grade: String,
    field: &'static str,
    published: String,
    recomputed: String,
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The fields a published fixing must reproduce.
fn fields(f: &Fixing) -> [(&'static str, String); 7] {
    [
        ("value", opt(f.value)),
        ("level", f.level.map(|l| l.to_string()).unwrap_or_default()),
        ("n_obs", f.n_obs.to_string()),
        ("n_contributors", f.n_contributors.to_string()),
        ("sufficient", f.sufficient.to_string()),
        ("flags", f.flags.clone()),
        ("input_sha256", f.input_sha256.clone()),
    ]
}

pub fn run(a: VerifyArgs) -> anyhow::Result<()> {
    let methodology = Methodology::from_file(&a.methodology)?;
    let published = read_fixings(&a.fixings)?;
    if let Some(other) = published
        .iter()
        .find(|f| f.methodology_version != methodology.version)
    {
        bail!(
            "{} was published under methodology {:?} (e.g. {} {}), not {:?} ({})",
            a.fixings.display(),
            other.methodology_version,
            other.date,
            other.grade,
            methodology.version,
            a.methodology.display()
        );
    }
    let store = Store::open(&a.store)?;
    let req = IndexRequest {
        methodology,
        grade_filters: Vec::new(),
        from: None,
        to: None,
    };
    let again = compute_from_store(&store, &req).map_err(anyhow::Error::msg)?;
    let by_key: BTreeMap<(chrono::NaiveDate, &str), &Fixing> = again
        .fixings
        .iter()
        .map(|f| ((f.date, f.grade.as_str()), f))
        .collect();
    let mut diffs = Vec::new();
    for p in &published {
        let Some(r) = by_key.get(&(p.date, p.grade.as_str())) else {
            diffs.push(Difference {
                date: p.date.to_string(),
                grade: p.grade.clone(),
                field: "row",
                published: "published".into(),
                recomputed: "not produced".into(),
            });
            continue;
        };
        for ((field, pv), (_, rv)) in fields(p).into_iter().zip(fields(r)) {
            if pv != rv {
                diffs.push(Difference {
                    date: p.date.to_string(),
                    grade: p.grade.clone(),
                    field,
                    published: pv,
                    recomputed: rv,
                });
            }
        }
    }
    if let Some(out) = &a.out {
        let col = |g: &dyn Fn(&Difference) -> String| {
            Col::Str(diffs.iter().map(|d| Some(g(d))).collect())
        };
        let mut t = Table::new();
        t.push("date", col(&|d| d.date.clone()));
        t.push("grade", col(&|d| d.grade.clone()));
        t.push("field", col(&|d| d.field.to_string()));
        t.push("published", col(&|d| d.published.clone()));
        t.push("recomputed", col(&|d| d.recomputed.clone()));
        t.write(out)?;
    }
    if let Some(d) = diffs.first() {
        bail!(
            "{} difference(s) between {} and the store; the first: {} {} {}: published {:?}, recomputed {:?}",
            diffs.len(),
            a.fixings.display(),
            d.date,
            d.grade,
            d.field,
            d.published,
            d.recomputed
        );
    }
    outln!(
        "verified {} published fixings of {}: every one recomputes from {} under {}",
        published.len(),
        a.fixings.display(),
        a.store.display(),
        req.methodology.version
    );
    Ok(())
}
