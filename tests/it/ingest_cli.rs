//! `rentix ingest` on the real samples, through their shipped mappings.

use crate::util::{data, ingest_json, p, rentix, rentix_ok};
use serde_json::Value;

#[test]
fn ingest_prints_a_summary_that_adds_up_and_reingest_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let sample = data("data/real/primeintellect_by_provider_sample.csv");
    let mapping = data("data/mappings/primeintellect_by_provider.toml");
    let args = [
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--mapping",
        p(&mapping),
        p(&sample),
    ];
    let s: Value = serde_json::from_str(&rentix_ok(&args)).unwrap();
    let n = |k: &str| s[k].as_u64().unwrap();
    assert_eq!(n("rows_read"), 324);
    assert_eq!(
        n("rows_read"),
        n("accepted") + n("quarantined") + n("duplicates")
    );
    assert!(
        n("duplicates") > 0,
        "the 21:02 and 21:06 re-runs repeat the 21:01 snapshot"
    );
    let again: Value = serde_json::from_str(&rentix_ok(&args)).unwrap();
    assert_eq!(again["accepted"].as_u64(), Some(0));
    assert_eq!(again["files"][0]["already_ingested"].as_bool(), Some(true));
}

#[test]
fn missing_column_is_one_clear_error_naming_file_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "kind,observed_at,source\ntrade,2025-01-01,x\n").unwrap();
    let out = rentix(&[
        "ingest",
        "--json",
        "--store",
        p(&dir.path().join("s")),
        p(&bad),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.csv") && err.contains("\"gpu\""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn invalid_utf8_is_quarantined_with_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("latin1.csv");
    let mut bytes = b"kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n".to_vec();
    bytes.extend_from_slice(b"listing,2025-01-01,caf\xe9,H100 SXM,vm,on-demand,2.5,gpu_hour,USD\n");
    bytes.extend_from_slice(b"listing,2025-01-01,cafe,H100 SXM,vm,on-demand,2.5,gpu_hour,USD\n");
    std::fs::write(&f, bytes).unwrap();
    let store = dir.path().join("s");
    let s: Value = ingest_json(&store, &f);
    assert_eq!(s["quarantined_by_reason"]["invalid_utf8"].as_u64(), Some(1));
    assert_eq!(s["accepted"].as_u64(), Some(1));
    let q = std::fs::read_to_string(store.join("quarantine/run-000001.csv")).unwrap();
    assert!(q.contains(",1,2,invalid_utf8,source,"), "{q}");
}

#[test]
fn gpus_rented_at_scale_resolve_and_unknown_names_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let head = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency";
    let known = [
        ("B300", "b300-sxm-288gb"),
        ("GB200 NVL72", "gb200-186gb"),
        ("GB300", "gb300-288gb"),
        ("H100 NVL", "h100-nvl-94gb"),
        ("NVIDIA H20", "h20-sxm-96gb"),
        ("AMD Instinct MI325X", "mi325x-256gb"),
        ("MI355X", "mi355x-288gb"),
        ("GeForce RTX 5090", "rtx5090-32gb"),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "rtx-pro-6000-96gb",
        ),
        ("A10G", "a10g-24gb"),
        ("A10", "a10-24gb"),
        ("L4", "l4-24gb"),
        ("T4", "t4-16gb"),
        ("V100", "v100-16gb"),
    ];
    let mut body = vec![head.to_string()];
    for (raw, _) in known {
        body.push(format!(
            "listing,2025-03-03T12:00:00Z,a,{raw},vm,on-demand,2.5,gpu_hour,USD"
        ));
    }
    for _ in 0..3 {
        body.push(
            "listing,2025-03-03T12:00:00Z,a,Z9000 Ultra,vm,on-demand,2.5,gpu_hour,USD".into(),
        );
    }
    body.push("listing,2025-03-03T12:00:00Z,a,QPU-1,vm,on-demand,2.5,gpu_hour,USD".into());
    let f = dir.path().join("obs.csv");
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    let store = dir.path().join("store");
    let out = rentix_ok(&["ingest", "--json", "--store", p(&store), p(&f)]);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["accepted"], known.len() as u64, "{out}");
    assert_eq!(
        s["unknown_gpus"],
        serde_json::json!([["Z9000 Ultra", 3], ["QPU-1", 1]])
    );
    let rows = rentix_store::Store::open(&store)
        .unwrap()
        .read(None, None)
        .unwrap();
    for (raw, id) in known {
        assert!(
            rows.iter()
                .any(|r| &*r.obs.gpu_raw == raw && r.obs.grade.gpu.as_str() == id),
            "{raw} -> {id}"
        );
    }
}

#[test]
fn ratings_attach_by_operator_scope_and_date() {
    let dir = tempfile::tempdir().unwrap();
    let head = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,operator_tier";
    // data/ratings/example.csv: Lumen Grid managed-cluster underperform from
    // 2024-01-01, bronze from 2025-09-01; no bare-metal rating.
    let rows = [
        "listing,2025-08-31T12:00:00Z,Lumen Grid,H100,managed-cluster,on-demand,2.5,gpu_hour,USD,",
        "listing,2025-09-01T12:00:00Z,Lumen Grid,H100,managed-cluster,on-demand,2.6,gpu_hour,USD,",
        "listing,2025-09-01T12:00:00Z,Lumen Grid,H100,bare-metal,on-demand,2.1,gpu_hour,USD,",
        "listing,2025-09-01T12:00:00Z,lumen grid ,H100,managed-cluster,on-demand,2.7,gpu_hour,USD,gold",
    ];
    let f = dir.path().join("obs.csv");
    std::fs::write(&f, format!("{head}\n{}\n", rows.join("\n"))).unwrap();
    let store = dir.path().join("store");
    let out = rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--ratings",
        p(&data("data/ratings/example.csv")),
        p(&f),
    ]);
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (s["rated_rows"].as_u64(), s["unrated_rows"].as_u64()),
        (Some(3), Some(1)),
        "{out}"
    );
    let stored = rentix_store::Store::open(&store)
        .unwrap()
        .read(None, None)
        .unwrap();
    let tier = |price: f64| {
        stored
            .iter()
            .find(|r| (r.obs.price_raw - price).abs() < 1e-9)
            .unwrap()
            .obs
            .operator_tier
            .map(|t| t.as_str())
    };
    assert_eq!(tier(2.5), Some("underperform"), "before the change");
    assert_eq!(tier(2.6), Some("bronze"), "from the change on");
    assert_eq!(
        tier(2.1),
        None,
        "a managed-cluster rating does not carry over to bare metal"
    );
    assert_eq!(tier(2.7), Some("gold"), "the row's own tier wins");
    let bad = dir.path().join("r.csv");
    std::fs::write(
        &bad,
        "operator,scope,tier,effective_from,source\nX,vm,diamond,2025-01-01,me\n",
    )
    .unwrap();
    let o = rentix(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--ratings",
        p(&bad),
        p(&f),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("r.csv") && err.contains("row 1") && err.contains("diamond"),
        "{err}"
    );
}

/// The docs say "add an alias and ingest again": a file first ingested with an
/// unknown GPU and a bad price, then again with a mapping whose `[aliases]` names
/// the GPU, gets the GPU's row in (retried, accepted) without reading its good rows
/// again; the bad price stays quarantined and is retried by the next run; a third
/// run with nothing new retries only it.
#[test]
fn reingest_retries_the_rows_the_last_run_quarantined() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let obs = dir.path().join("obs.csv");
    std::fs::write(
        &obs,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n\
         listing,2025-03-03T12:00:00Z,a,h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,b,H100 Hyperion,vm,on-demand,2.6,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,c,h100-sxm-80gb,vm,on-demand,abc,gpu_hour,USD\n",
    )
    .unwrap();
    let mapping = dir.path().join("aliases.toml");
    std::fs::write(
        &mapping,
        "name = \"canonical-with-aliases\"\n[aliases]\n\"H100 Hyperion\" = \"h100-sxm-80gb\"\n",
    )
    .unwrap();
    let run = |extra: &[&str]| -> Value {
        let mut args = vec!["ingest", "--json", "--store", p(&store)];
        args.extend_from_slice(extra);
        args.push(p(&obs));
        serde_json::from_str(&rentix_ok(&args)).unwrap()
    };
    let n = |s: &Value, k: &str| s[k].as_u64().unwrap_or(0);

    let first = run(&[]);
    assert_eq!(
        (n(&first, "accepted"), n(&first, "quarantined")),
        (1, 2),
        "{first}"
    );
    assert_eq!(first["quarantined_by_reason"]["unknown_gpu"], 1);

    let second = run(&["--mapping", p(&mapping)]);
    let f = &second["files"][0];
    assert_eq!(f["already_ingested"], true, "{second}");
    assert_eq!(n(f, "retried"), 2, "{second}");
    assert_eq!(
        n(f, "rows_read"),
        2,
        "the good row is not read again: {second}"
    );
    assert_eq!(
        (
            n(&second, "accepted"),
            n(&second, "quarantined"),
            n(&second, "retried")
        ),
        (1, 1, 2)
    );
    assert_eq!(second["quarantined_by_reason"]["unparseable_price"], 1);

    let third = run(&["--mapping", p(&mapping)]);
    assert_eq!(
        (
            n(&third, "accepted"),
            n(&third, "quarantined"),
            n(&third, "retried")
        ),
        (0, 1, 1),
        "{third}"
    );

    // Both valid rows are in the store once.
    let out = dir.path().join("fixings.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "n_listings").unwrap();
    let row = text
        .lines()
        .find(|l| l.contains("h100-sxm-80gb/vm/on-demand"))
        .unwrap();
    assert_eq!(row.split(',').nth(col), Some("2"), "{text}");
}

/// A mapping with neither `[[emit]]` nor `[aliases]` / `[value_map]` does nothing
/// and is refused, saying what it needs.
#[test]
fn an_empty_mapping_is_refused_saying_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let mapping = dir.path().join("empty.toml");
    std::fs::write(&mapping, "name = \"nothing\"\n").unwrap();
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, "kind\n").unwrap();
    let out = rentix(&[
        "ingest",
        "--json",
        "--store",
        p(&dir.path().join("s")),
        "--mapping",
        p(&mapping),
        p(&obs),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[[emit]]") && err.contains("[aliases]"),
        "{err}"
    );
}

/// A retry never breaks a run: a file read before whose header today's mapping does
/// not fit (an earlier vendor's file among today's) is left as it is, and rows
/// refused for their bytes (a wrong number of fields), which no mapping changes, are
/// not read again; the run ingests the rest.
#[test]
fn a_retry_skips_files_the_mapping_does_not_fit_and_rows_no_mapping_can_fix() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let old = dir.path().join("old.csv");
    std::fs::write(
        &old,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n\
         listing,2025-03-03T12:00:00Z,a,H100 Hyperion,vm,on-demand,2.6,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,b,h100-sxm-80gb,vm,on-demand,2.6,gpu_hour\n",
    )
    .unwrap();
    let first: Value = serde_json::from_str(&rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&old),
    ]))
    .unwrap();
    assert_eq!(first["quarantined"], 2, "{first}");
    // Today's file is FSDL's rate card, read with its mapping; old.csv rides along.
    let fsdl = data("data/real/fsdl_cloud_gpus_sample.csv");
    let mapping = data("data/mappings/fsdl_cloud_gpus.toml");
    let out = rentix(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--mapping",
        p(&mapping),
        p(&old),
        p(&fsdl),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["files"][0]["already_ingested"], true);
    assert_eq!(s["files"][0]["rows_read"], 0, "{s}");
    assert!(s["files"][1]["accepted"].as_u64().unwrap() > 0);
    // Again with the canonical layout: only the unknown GPU's row is retried, not the
    // row with a field missing.
    let again: Value = serde_json::from_str(&rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&old),
    ]))
    .unwrap();
    assert_eq!(again["files"][0]["retried"], 1, "{again}");
}

/// `ingest` speaks first to a person: a few lines with the counts, why duplicates
/// happen, the quarantine by reason with the file's full path, and what to do about
/// an unknown GPU; the JSON with `--json`.
#[test]
fn ingest_prints_a_human_summary_and_the_json_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let obs = dir.path().join("obs.csv");
    std::fs::write(
        &obs,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n\
         listing,2025-03-03T12:00:00Z,a,h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,a,h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,b,H100 Hyperion,vm,on-demand,2.6,gpu_hour,USD\n",
    )
    .unwrap();
    let text = rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    assert!(text.lines().count() <= 10, "{text}");
    assert!(text.contains("3 rows read"), "{text}");
    assert!(text.contains("accepted             1"), "{text}");
    assert!(text.contains("snapshot feed"), "{text}");
    assert!(text.contains("unknown_gpu 1"), "{text}");
    let q = store.join("quarantine/run-000001.csv");
    assert!(text.contains(&q.display().to_string()), "{text}");
    assert!(
        text.contains("\"H100 Hyperion\" (1)") && text.contains("[aliases]"),
        "{text}"
    );
    let again = rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let s: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(s["files"][0]["already_ingested"], true);
}

/// An Excel "CSV UTF-8" export (byte-order mark, CRLF line ends) of the kind a user
/// brings: each refused row names the line a spreadsheet shows (before: every line
/// one too low, issue 49), a row with two bad fields names both at once, a totals
/// row and the header pasted again are named as what they are (before: "9 fields,
/// header has 18" and `unknown_kind "kind"`), and a too-long line is the one cut (a
/// CRLF file used to have its cut taken for the line before).
#[test]
fn a_spreadsheet_export_is_refused_row_by_row_naming_its_lines_and_every_fault() {
    let dir = tempfile::tempdir().unwrap();
    let head = "obs_id,kind,observed_at,source,gpu,scope,term,price,price_unit,currency";
    let ok = |i: u32| {
        format!(",listing,2025-03-03T12:0{i}:00Z,a{i},H100 SXM,vm,on-demand,2.5,gpu_hour,USD")
    };
    let lines = [
        head.to_string(),                                                      // line 1
        ok(1),                                                                 // line 2
        ",listing,2025-03-03T12:00:00Z,b,Z9000,vm,5y,2.5,gpu_hour,USD".into(), // line 3: gpu and term
        ok(2),                                                                 // line 4
        format!(
            ",listing,2025-03-03T12:00:00Z,c,H100 SXM,vm,on-demand,2.5,gpu_hour,USD{}",
            "x".repeat(1_100_000)
        ), // line 5: too long
        "Total,,,,,,,7.5,,".into(),                                            // line 6
        head.to_uppercase(),                                                   // line 7
        ok(3),                                                                 // line 8
    ];
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(lines.join("\r\n").as_bytes());
    bytes.extend_from_slice(b"\r\n");
    let f = dir.path().join("export.csv");
    std::fs::write(&f, bytes).unwrap();
    let store = dir.path().join("s");
    let s: Value = ingest_json(&store, &f);
    assert_eq!(s["accepted"].as_u64(), Some(3), "{s}");
    let mut rdr = csv::Reader::from_path(store.join("quarantine/run-000001.csv")).unwrap();
    assert_eq!(
        rdr.headers().unwrap().iter().collect::<Vec<_>>(),
        ["file", "row", "line", "reason", "field", "detail", "raw"]
    );
    let got: Vec<(String, String, String, String)> = rdr
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[1].to_string(),
                r[2].to_string(),
                r[3].to_string(),
                r[5].to_string(),
            )
        })
        .collect();
    let at: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(r, l, why, _)| (r.as_str(), l.as_str(), why.as_str()))
        .collect();
    assert_eq!(
        at,
        [
            ("2", "3", "unknown_gpu"),
            ("4", "5", "record_too_long"),
            ("5", "6", "totals_row"),
            ("6", "7", "repeated_header"),
        ]
    );
    assert!(
        got[0].3.contains("also: term \"5y\" (unknown_term)"),
        "{}",
        got[0].3
    );
    assert!(got[2].3.contains("\"Total\""), "{}", got[2].3);
}

/// A quarantine file deleted by hand: `store check` names it (before: "sound"), and
/// an ingest of the same file reads it whole again, so that a row an alias now
/// accepts is not lost for good (before: nothing was ever read again).
#[test]
fn a_deleted_quarantine_file_is_a_finding_and_its_file_is_read_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.csv");
    std::fs::write(
        &f,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n\
         listing,2025-03-03T12:00:00Z,a,H100 SXM,vm,on-demand,2.5,gpu_hour,USD\n\
         listing,2025-03-03T12:00:00Z,b,Z9000,vm,on-demand,2.5,gpu_hour,USD\n",
    )
    .unwrap();
    let store = dir.path().join("s");
    rentix_ok(&["ingest", "--store", p(&store), p(&f)]);
    std::fs::remove_file(store.join("quarantine/run-000001.csv")).unwrap();
    let check = rentix(&["store", "check", "--store", p(&store)]);
    assert_eq!(check.status.code(), Some(1));
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(
        out.contains("quarantine/run-000001.csv is gone (1 refused row(s)"),
        "{out}"
    );
    let s: Value = ingest_json(&store, &f);
    let file = &s["files"][0];
    assert_eq!(file["reread_whole"].as_bool(), Some(true), "{s}");
    assert_eq!(file["retried"].as_u64(), Some(2), "{s}");
    assert_eq!(s["duplicates"].as_u64(), Some(1), "{s}");
    assert_eq!(
        s["quarantined"].as_u64(),
        Some(1),
        "still an unknown GPU: {s}"
    );
}

/// A hostile run: a row re-sent under its id in a later run is a duplicate of the
/// store, which keeps its row (never replaced by a later run); a re-send that
/// differs only in grade, at the same price, is a conflict too, and the console
/// said "duplicates whose price differs", though both prices were 2.5.
#[test]
fn a_later_run_never_replaces_a_stored_row_and_names_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let head = "obs_id,kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n";
    let write = |name: &str, row: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, format!("{head}{row}\n")).unwrap();
        f
    };
    let a = write(
        "a.csv",
        "x1,listing,2025-03-03T12:00:00Z,acme,H100 SXM,vm,on-demand,2.5,gpu_hour,USD",
    );
    let b = write(
        "b.csv",
        "x1,listing,2025-03-03T13:00:00Z,acme,H100 SXM,vm,on-demand,2.9,gpu_hour,USD",
    );
    let c = write(
        "c.csv",
        "x1,listing,2025-03-03T14:00:00Z,acme,H100 SXM,bare-metal,on-demand,2.5,gpu_hour,USD",
    );
    let store = dir.path().join("s");
    ingest_json(&store, &a);
    let s = ingest_json(&store, &b);
    assert_eq!(
        (&s["accepted"], &s["duplicates"], &s["conflicts"]),
        (&0.into(), &1.into(), &1.into()),
        "{s}"
    );
    let e = &s["conflict_examples"][0];
    assert_eq!(
        (
            &e["kept_usd_per_gpu_hour"],
            &e["dropped_usd_per_gpu_hour"],
            &e["kept_from_store"]
        ),
        (&2.5.into(), &2.9.into(), &true.into()),
        "{s}"
    );
    let said = rentix_ok(&["ingest", "--store", p(&store), p(&c)]);
    assert!(
        said.contains("conflicts") && said.contains("kind, grade, price or volume differs"),
        "{said}"
    );
}

/// A file that is not UTF-8 text is named for what it is: a gzip file was "not
/// valid UTF-8" and a UTF-16 file (big-endian, no byte-order mark) had "no column
/// \"kind\"" (a hostile round).
#[test]
fn a_compressed_or_utf16_file_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\nlisting,2025-03-01T10:00:00Z,acme,h100-sxm-80gb,vm,on-demand,2.10,gpu_hour,USD\n";
    let utf16 = |big: bool, bom: bool| -> Vec<u8> {
        let mut b: Vec<u8> = Vec::new();
        if bom {
            b.extend(if big { [0xfe, 0xff] } else { [0xff, 0xfe] });
        }
        for u in text.encode_utf16() {
            b.extend(if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        b
    };
    let mut gz = vec![0x1f, 0x8b, 0x08, 0x00];
    gz.extend_from_slice(&[0x55; 64]);
    for (name, bytes, says) in [
        ("gz.csv", gz, "gzip-compressed"),
        ("le.csv", utf16(false, true), "UTF-16 (its byte-order mark"),
        ("be.csv", utf16(true, false), "NUL bytes"),
        ("latin1.csv", b"kind,source\xe9\n".to_vec(), "Latin-1"),
    ] {
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let o = rentix(&["ingest", "--store", p(&dir.path().join("s")), p(&f)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

/// A column that looks like a canonical one the file lacks is named: a one-year
/// reservation's `upfront_usd` was dropped without a word and the fixing halved
/// (a hostile round). The rows are read as before; the console and the run
/// summary say which columns were not read and what they look like.
#[test]
fn a_look_alike_column_is_named_as_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("reserved.csv");
    std::fs::write(
        &f,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,upfront_usd,gpu_count\nlisting,2025-03-01T10:00:00Z,acme,h100-sxm-80gb,vm,1y,1.00,gpu_hour,USD,8760,8\n",
    )
    .unwrap();
    let store = dir.path().join("s");
    let console = rentix_ok(&["ingest", "--store", p(&store), p(&f)]);
    assert!(
        console.contains("columns not read in")
            && console.contains("\"upfront_usd\" (like \"upfront\")")
            && console.contains("\"gpu_count\" (like \"gpus_per_unit\")"),
        "{console}"
    );
    let json = ingest_json(&dir.path().join("s2"), &f);
    assert_eq!(
        json["files"][0]["unread_columns"]["upfront_usd"], "upfront",
        "{json}"
    );
    // The one-shot says it too.
    let out = dir.path().join("fx.csv");
    let one_shot = rentix_ok(&["index", "--input", p(&f), "--out", p(&out)]);
    assert!(
        one_shot.contains("\"upfront_usd\" (like \"upfront\")"),
        "{one_shot}"
    );
}
