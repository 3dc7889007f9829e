//! `rentix verify` through the binary: every column of every published row, missing
//! and extra rows, the companion forward curve, and the exit codes (0 identical, 1
//! differs, 2 could not check).

use crate::util::{data, p, rentix, rentix_ok};
use std::path::{Path, PathBuf};

const GRADE: &str = "h100-sxm-80gb/vm/on-demand";

/// A store of four days (2025-03-03 .. 06) of two grades, five contributors each
/// trading and listing, indexed under the default methodology into `f.csv`.
struct Published {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Published {
    fn new(ext: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let mut obs = String::from(
            "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
        );
        for day in 3..=6 {
            for (gpu, base) in [("h100-sxm-80gb", 2.0), ("a100-sxm-80gb", 1.2)] {
                for (k, src) in ["a", "b", "c", "d", "e"].iter().enumerate() {
                    let price = base + 0.1 * k as f64 + 0.01 * day as f64;
                    obs.push_str(&format!(
                        "trade,2025-03-0{day}T12:00:00Z,{src},{gpu},vm,on-demand,{price:.2},gpu_hour,USD,{}\n",
                        100 + 10 * k
                    ));
                    obs.push_str(&format!(
                        "listing,2025-03-0{day}T12:00:00Z,{src},{gpu},vm,on-demand,{:.2},gpu_hour,USD,\n",
                        price + 0.3
                    ));
                }
            }
        }
        std::fs::write(dir.join("obs.csv"), obs).unwrap();
        rentix_ok(&[
            "ingest",
            "--json",
            "--store",
            p(&dir.join("store")),
            p(&dir.join("obs.csv")),
        ]);
        let out = dir.join(format!("f.{ext}"));
        rentix_ok(&["index", "--store", p(&dir.join("store")), "--out", p(&out)]);
        Self { _tmp: tmp, dir }
    }

    fn fixings(&self) -> PathBuf {
        self.dir.join("f.csv")
    }

    fn verify(&self, fixings: &Path) -> (Option<i32>, String, String) {
        self.verify_store(&self.dir.join("store"), fixings)
    }

    fn verify_store(&self, store: &Path, fixings: &Path) -> (Option<i32>, String, String) {
        let o = rentix(&[
            "verify",
            "--store",
            p(store),
            "--fixings",
            p(fixings),
            "--methodology",
            p(&data("data/methodologies/default.toml")),
        ]);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    }
}

/// The records of a CSV file, header first.
fn records(path: &Path) -> Vec<csv::StringRecord> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    rdr.records().map(Result::unwrap).collect()
}

fn write_records(path: &Path, recs: &[csv::StringRecord]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    for r in recs {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
}

/// A copy of the fixings with the cell of `column` in the first row of `GRADE` on
/// 2025-03-04 replaced by `f(old)`.
fn edited(pb: &Published, column: &str, f: impl Fn(&str) -> String) -> PathBuf {
    let mut recs = records(&pb.fixings());
    let j = recs[0].iter().position(|c| c == column).unwrap();
    let i = recs
        .iter()
        .position(|r| &r[0] == "2025-03-04" && &r[1] == GRADE)
        .unwrap();
    let mut row: Vec<String> = recs[i].iter().map(str::to_string).collect();
    row[j] = f(&row[j]);
    recs[i] = csv::StringRecord::from(row);
    let out = pb.dir.join(format!("edited_{column}.csv"));
    write_records(&out, &recs);
    out
}

/// A changed cell, of whatever type: a number moved by 1, a boolean negated, text
/// extended; an empty cell becomes 0.
fn changed(v: &str) -> String {
    if let Ok(x) = v.parse::<f64>() {
        return (x + 1.0).to_string();
    }
    match v {
        "true" => "false".into(),
        "false" => "true".into(),
        "" => "0".into(),
        _ => format!("{v}x"),
    }
}

#[test]
fn an_untouched_publication_verifies_with_exit_0() {
    let pb = Published::new("csv");
    // 4 days x (2 grades + the default methodology's 2 composites) = 16 rows.
    let recs = records(&pb.fixings());
    assert_eq!(recs.len() - 1, 16);
    // H100 on 2025-03-03: trades 2.03 .. 2.43 weighted 100 .. 140 (600 GPU-h); the
    // lower weighted median is the first price whose cumulative weight reaches 300:
    // 100, 210, 330 -> 2.23.
    assert!(recs
        .iter()
        .any(|r| &r[0] == "2025-03-03" && &r[1] == GRADE && &r[2] == "2.23"));
    let (code, out, err) = pb.verify(&pb.fixings());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("verified 16 published fixings"), "{out}");
    assert!(
        out.contains("f_forward.csv"),
        "the forward curve is checked: {out}"
    );
}

/// A CSV published before floats kept their decimal point (`600`, not `600.0`)
/// still verifies: a cell is the same when it reads as the same double. A value that
/// differs in its last digit still does not (`an_edit_of_any_column_exits_1_naming_it`).
#[test]
fn a_publication_written_with_whole_floats_without_a_point_verifies() {
    let pb = Published::new("csv");
    let mut recs = records(&pb.fixings());
    let mut stripped = 0;
    for r in recs.iter_mut().skip(1) {
        let row: Vec<String> = r
            .iter()
            .map(|c| match c.strip_suffix(".0") {
                Some(whole) if whole.parse::<i64>().is_ok() => {
                    stripped += 1;
                    whole.to_string()
                }
                _ => c.to_string(),
            })
            .collect();
        *r = csv::StringRecord::from(row);
    }
    assert!(stripped > 10, "whole floats in the publication: {stripped}");
    let old = pb.dir.join("old.csv");
    write_records(&old, &recs);
    std::fs::copy(pb.dir.join("f_forward.csv"), pb.dir.join("old_forward.csv")).unwrap();
    // Its digest, of its own text, as the version that wrote it recorded it.
    let text = rentix_table::TextTable::read(&old).unwrap();
    let hex = rentix_index::canonical_sha256_text(&text);
    std::fs::write(
        rentix_index::digest_path(&old),
        rentix_index::digest_line(&old, &hex),
    )
    .unwrap();
    let (code, out, err) = pb.verify(&old);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("verified 16 published fixings"), "{out}");
}

#[test]
fn a_parquet_publication_verifies_too() {
    let pb = Published::new("parquet");
    let (code, out, err) = pb.verify(&pb.dir.join("f.parquet"));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("verified 16 published fixings"), "{out}");
}

/// Every column is compared: a change to any one cell (p25, p99, method, n_trades,
/// volume_gpu_hours, change_1d, contributor_hhi, publication ...) exits 1 naming
/// that column and the row.
#[test]
fn an_edit_of_any_column_exits_1_naming_it() {
    let pb = Published::new("csv");
    let header = records(&pb.fixings())[0].clone();
    assert_eq!(header.len(), 26, "{header:?}");
    for column in header.iter().filter(|c| !["date", "grade"].contains(c)) {
        let f = edited(&pb, column, changed);
        let (code, _, err) = pb.verify(&f);
        assert_eq!(code, Some(1), "{column}: {err}");
        assert!(
            err.contains(&format!("2025-03-04 {GRADE} {column}:")),
            "{column}: {err}"
        );
    }
}

#[test]
fn edits_of_p25_method_and_n_trades_name_both_values() {
    let pb = Published::new("csv");
    for (column, new) in [("p25", "1.5"), ("method", "median"), ("n_trades", "4")] {
        let old = {
            let recs = records(&pb.fixings());
            let j = recs[0].iter().position(|c| c == column).unwrap();
            let i = recs
                .iter()
                .position(|r| &r[0] == "2025-03-04" && &r[1] == GRADE)
                .unwrap();
            recs[i][j].to_string()
        };
        assert_ne!(old, new);
        let (code, _, err) = pb.verify(&edited(&pb, column, |_| new.to_string()));
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "2025-03-04 {GRADE} {column}: published {new:?}, recomputed {old:?}"
            )),
            "{err}"
        );
    }
}

#[test]
fn a_deleted_row_exits_1_naming_it() {
    let pb = Published::new("csv");
    let mut recs = records(&pb.fixings());
    let i = recs
        .iter()
        .position(|r| &r[0] == "2025-03-05" && &r[1] == GRADE)
        .unwrap();
    recs.remove(i);
    let f = pb.dir.join("deleted.csv");
    write_records(&f, &recs);
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("2025-03-05 {GRADE} row: missing")),
        "{err}"
    );
    // The row, and the digest and forward curves a publication writes beside the
    // file (this copy was made by hand, so it has neither).
    assert!(err.contains("3 difference"), "{err}");
    assert!(
        err.contains("deleted.csv.sha256: sha256: published \"(no digest file)\""),
        "{err}"
    );
    assert!(
        err.contains("deleted_forward.csv: file: published \"(no such file)\""),
        "{err}"
    );
}

#[test]
fn a_changed_cell_that_recomputes_is_still_caught_by_the_digest() {
    // The digest covers every cell, also those verify does not recompute the same
    // way by construction: a publication edited after it was written is named.
    let pb = Published::new("csv");
    let f = pb.fixings();
    let text = std::fs::read_to_string(&f).unwrap();
    let digest = std::fs::read_to_string(rentix_index::digest_path(&f)).unwrap();
    // Its first line is the file's; the companions' follow.
    assert!(
        digest
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!("  {}", f.file_name().unwrap().to_string_lossy())),
        "{digest}"
    );
    // Reordering two rows changes no cell verify compares by key, but the bytes.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(1, 2);
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("2 difference") && err.contains("sha256") && err.contains("out of order"),
        "{err}"
    );
}

/// A hostile run: rows reordered (reversed, two swapped, the last moved first) and
/// the digest regenerated to match verified, exit 0, "every one recomputes": a
/// file rentix never wrote was certified. A publication's rows are in its
/// writer's order (date, then grade); a row out of it is a difference, named.
#[test]
fn rows_out_of_the_published_order_exit_1_even_with_a_matching_digest() {
    use sha2::{Digest, Sha256};
    let pb = Published::new("csv");
    let f = pb.fixings();
    let text = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (head, rows) = (lines[0], &lines[1..]);
    let reversed: Vec<&str> = rows.iter().rev().copied().collect();
    let mut last_first = vec![rows[rows.len() - 1]];
    last_first.extend_from_slice(&rows[..rows.len() - 1]);
    for (name, order) in [("reversed.csv", reversed), ("last_first.csv", last_first)] {
        let out = pb.dir.join(name);
        let body = std::iter::once(head)
            .chain(order.iter().copied())
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        std::fs::write(&out, &body).unwrap();
        let forward = name.replace(".csv", "_forward.csv");
        std::fs::copy(pb.dir.join("f_forward.csv"), pb.dir.join(forward)).unwrap();
        let hex: String = Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        std::fs::write(rentix_index::digest_path(&out), format!("{hex}  {name}\n")).unwrap();
        let (code, out_text, err) = pb.verify(&out);
        assert_eq!(code, Some(1), "{name}: {out_text}{err}");
        assert!(
            err.contains("1 difference") && err.contains("out of order") && err.contains("row 2"),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_repeated_row_exits_1_as_extra() {
    let pb = Published::new("csv");
    let mut recs = records(&pb.fixings());
    recs.push(recs[3].clone());
    let f = pb.dir.join("repeated.csv");
    write_records(&f, &recs);
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("row: extra"), "{err}");
}

#[test]
fn an_edited_forward_curve_exits_1_naming_the_file() {
    let pb = Published::new("csv");
    let fwd = pb.dir.join("f_forward.csv");
    let mut recs = records(&fwd);
    let j = recs[0].iter().position(|c| c == "value").unwrap();
    let mut row: Vec<String> = recs[1].iter().map(str::to_string).collect();
    row[j] = changed(&row[j]);
    recs[1] = csv::StringRecord::from(row);
    write_records(&fwd, &recs);
    let (code, _, err) = pb.verify(&pb.fixings());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("f_forward.csv") && err.contains("value"),
        "{err}"
    );
}

/// A hostile run deleted the forward curves beside a publication: verify said
/// exit 0 and just stopped naming the file. A companion every publication of the
/// methodology writes is a difference when it is gone.
#[test]
fn a_deleted_forward_curve_exits_1_naming_the_file() {
    let pb = Published::new("csv");
    std::fs::remove_file(pb.dir.join("f_forward.csv")).unwrap();
    let (code, _, err) = pb.verify(&pb.fixings());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("f_forward.csv: file: published \"(no such file)\""),
        "{err}"
    );
}

#[test]
fn what_cannot_be_checked_exits_by_its_cause_never_1() {
    let pb = Published::new("csv");
    // A store whose run record is not JSON.
    let store = pb.dir.join("store");
    let broken = pb.dir.join("broken");
    std::fs::create_dir_all(broken.join("runs")).unwrap();
    std::fs::write(broken.join("runs/run-000001.json"), "{").unwrap();
    // Exit 3: what it was given (a store whose record is not JSON) cannot be used.
    let (code, _, err) = pb.verify_store(&broken, &pb.fixings());
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("could not verify"), "{err}");
    // A fixings file that does not exist: I/O, 4, as for every command's missing
    // input (issue 49).
    let (code, _, err) = pb.verify_store(&store, &pb.dir.join("none.csv"));
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("none.csv"), "{err}");
    // A methodology that is not valid.
    std::fs::write(pb.dir.join("m.toml"), "version = 3").unwrap();
    let o = rentix(&[
        "verify",
        "--store",
        p(&store),
        "--fixings",
        p(&pb.fixings()),
        "--methodology",
        p(&pb.dir.join("m.toml")),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a methodology that cannot be one is usage"
    );
}

/// Late data restates a fixing (publication 2, logged beside the file): the restated
/// file verifies, its publication numbers recomputed from the log.
#[test]
fn a_restated_publication_verifies() {
    let pb = Published::new("csv");
    let late = pb.dir.join("late.csv");
    std::fs::write(
        &late,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n\
         trade,2025-03-04T13:00:00Z,f,h100-sxm-80gb,vm,on-demand,2.9,gpu_hour,USD,900\n",
    )
    .unwrap();
    rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&pb.dir.join("store")),
        p(&late),
    ]);
    let out = rentix_ok(&[
        "index",
        "--store",
        p(&pb.dir.join("store")),
        "--out",
        p(&pb.fixings()),
    ]);
    assert!(out.contains("restated"), "{out}");
    let recs = records(&pb.fixings());
    let j = recs[0].iter().position(|c| c == "publication").unwrap();
    assert!(recs
        .iter()
        .any(|r| &r[0] == "2025-03-04" && &r[1] == GRADE && &r[j] == "2"));
    let (code, _, err) = pb.verify(&pb.fixings());
    assert_eq!(code, Some(0), "{err}");
}

/// A file without a column `index` writes (as one written before `contributor_hhi`
/// existed) differs, the column named.
#[test]
fn a_missing_column_exits_1_naming_it() {
    let pb = Published::new("csv");
    let recs = records(&pb.fixings());
    let j = recs[0].iter().position(|c| c == "contributor_hhi").unwrap();
    let cut: Vec<csv::StringRecord> = recs
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .filter(|(i, _)| *i != j)
                .map(|(_, c)| c)
                .collect()
        })
        .collect();
    let f = pb.dir.join("cut.csv");
    write_records(&f, &cut);
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("contributor_hhi: published \"(no such column)\""),
        "{err}"
    );
}

/// A file published `--to` the 1st of March from a store that later grew by a
/// week: `verify` recomputed the tier differentials to the store's new end and
/// named every day after the file's last as missing from its differentials. Both
/// sides are compared through the file's last day.
#[test]
fn an_untouched_publication_still_verifies_after_the_store_grows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = std::fs::read_to_string(crate::fixture::market().sim("observations.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let at = header.split(',').position(|c| c == "observed_at").unwrap();
    let (mut before, mut week) = (format!("{header}\n"), format!("{header}\n"));
    for line in lines {
        let day = line
            .split(',')
            .nth(at)
            .unwrap_or("")
            .get(..10)
            .unwrap_or("");
        if ("2024-12-01"..="2025-03-01").contains(&day) {
            before.push_str(line);
            before.push('\n');
        } else if ("2025-03-02"..="2025-03-08").contains(&day) {
            week.push_str(line);
            week.push('\n');
        }
    }
    let (a, b, store, out) = (
        dir.join("a.csv"),
        dir.join("b.csv"),
        dir.join("store"),
        dir.join("f.csv"),
    );
    std::fs::write(&a, before).unwrap();
    std::fs::write(&b, week).unwrap();
    rentix_ok(&["ingest", "--store", p(&store), p(&a)]);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&out),
        "--to",
        "2025-03-01",
    ]);
    let differentials = std::fs::read_to_string(dir.join("f_tier_differentials.csv")).unwrap();
    assert!(differentials.lines().count() > 1, "{differentials}");
    rentix_ok(&["ingest", "--store", p(&store), p(&b)]);
    // The week's data may change earlier rows (a grade's life it extends back):
    // those are differences; the days after the file's last are not.
    let diffs = dir.join("d.csv");
    let o = rentix(&[
        "verify",
        "--store",
        p(&store),
        "--fixings",
        p(&out),
        "--out",
        p(&diffs),
    ]);
    let listed = std::fs::read_to_string(&diffs).unwrap_or_default();
    assert!(
        matches!(o.status.code(), Some(0 | 1)) && !listed.contains("f_tier_differentials"),
        "{}{listed}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A published file cut in the middle of a row, its digest kept, was changed since
/// it was published: exit 1 naming the digest and why the file cannot be read, as a
/// cut at a row's end exits 1 naming the missing rows (it exited 3, "could not
/// verify"). Without its digest, the same file cannot be told from one never
/// published: it could not be verified (3).
#[test]
fn a_file_cut_mid_row_differs_from_its_digest() {
    let pb = Published::new("csv");
    let f = pb.fixings();
    let bytes = std::fs::read(&f).unwrap();
    // The file cut after the first 40 bytes of its last row: a row of a few cells
    // where the header has 26.
    let last_row = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    std::fs::write(&f, &bytes[..last_row + 40]).unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("f.csv: sha256"), "{err}");
    assert!(err.contains("the file cannot be checked"), "{err}");
    assert!(err.contains("found record with"), "{err}");
    // Cut inside its header, emptied, or its header alone: no methodology to
    // check it under (that exited 2, "pass --methodology"), and still a file
    // changed since it was published.
    let header = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    for cut in [&bytes[..50], &[][..], &bytes[..header]] {
        std::fs::write(&f, cut).unwrap();
        let (code, _, err) = pb.verify(&f);
        assert_eq!(code, Some(1), "{} bytes: {err}", cut.len());
        assert!(err.contains("the file cannot be checked"), "{err}");
    }
    std::fs::write(&f, &bytes[..last_row + 40]).unwrap();
    std::fs::remove_file(pb.dir.join("f.csv.sha256")).unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("could not verify"), "{err}");
    // Its header alone, without a digest: a damaged file (3), not a methodology to
    // pass (it exited 2, "pass --methodology FILE").
    std::fs::write(&f, &bytes[..header]).unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("holds no fixing row"), "{err}");
    assert!(!err.contains("--methodology"), "{err}");
}

/// A CSV publication's digest is of its bytes, as `sha256sum -c` checks it: the
/// same cells written with CRLF line endings, a byte order mark, a field quoted or
/// without the last line break are not the file published (verify said they were,
/// exit 0, while `sha256sum -c` failed). The difference says the cells are as
/// published.
#[test]
fn a_csv_publication_s_bytes_are_what_its_digest_certifies() {
    let pb = Published::new("csv");
    let f = pb.fixings();
    let bytes = std::fs::read(&f).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let quoted = text.replacen(",vw-median,", ",\"vw-median\",", 1);
    assert_ne!(quoted, text, "a method cell to quote");
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend_from_slice(&bytes);
    for (what, changed) in [
        ("CRLF", text.replace('\n', "\r\n").into_bytes()),
        ("BOM", with_bom),
        ("quoted", quoted.into_bytes()),
        ("no last line break", bytes[..bytes.len() - 1].to_vec()),
    ] {
        std::fs::write(&f, &changed).unwrap();
        let (code, _, err) = pb.verify(&f);
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(err.contains("its cells are as published"), "{what}: {err}");
    }
    std::fs::write(&f, &bytes).unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(0), "{err}");
}

/// A digest sidecar whose line names another file records no digest of this one
/// (`sha256sum -c f.csv.sha256` would check `other.csv`): a difference, exit 1, that
/// says which file it names. `sha256sum`'s binary-mode marker (`HEX *f.csv`) and a
/// line of the digest alone are this file's.
#[test]
fn a_digest_naming_another_file_is_no_digest_of_this_one() {
    let pb = Published::new("csv");
    let f = pb.fixings();
    let sidecar = pb.dir.join("f.csv.sha256");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    let line = text.lines().next().unwrap();
    let hex = line.split_whitespace().next().unwrap().to_string();
    assert_eq!(line, format!("{hex}  f.csv"));
    std::fs::write(&sidecar, format!("{hex}  other.csv\n")).unwrap();
    let (code, _, err) = pb.verify(&f);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(r#"a digest of \"other.csv\", not of \"f.csv\""#),
        "{err}"
    );
    // A publication over it says what is wrong: the digest file, not the rows.
    let o = rentix(&["index", "--store", p(&pb.dir.join("store")), "--out", p(&f)]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("f.csv.sha256 records no digest of"), "{said}");
    assert!(said.contains("nothing was published"), "{said}");
    // A name with a trailing space is another file's, as `sha256sum -c` reads it.
    std::fs::write(&sidecar, format!("{hex}  f.csv \n")).unwrap();
    assert_eq!(pb.verify(&f).0, Some(1));
    // The forms `sha256sum -c` reads as this file's: binary mode, `./`, its absolute
    // path, a path through the directory or a link to it, upper-case digits, BSD's
    // layout, after a comment line; and the digest alone.
    let absolute = std::fs::canonicalize(&f).unwrap();
    let dir_name = pb.dir.file_name().unwrap().to_string_lossy().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&f, pb.dir.join("link.csv")).unwrap();
    for ok in [
        format!("{hex} *f.csv\n"),
        format!("{hex}  ./f.csv\n"),
        format!("{hex}  .//f.csv\n"),
        format!("{hex}  ../{dir_name}/f.csv\n"),
        format!("{hex}  {}\n", absolute.display()),
        #[cfg(unix)]
        format!("{hex}  link.csv\n"),
        format!("{}  f.csv\n", hex.to_uppercase()),
        format!("SHA256 (f.csv) = {hex}\n"),
        format!("# published by rentix\n{hex}  f.csv\n"),
        format!("{hex}\n"),
    ] {
        std::fs::write(&sidecar, &ok).unwrap();
        let (code, out, err) = pb.verify(&f);
        assert_eq!(code, Some(0), "{ok:?}: {err}");
        assert!(out.contains("verified 16 published fixings"), "{out}");
    }
}
