"""rentix from Python against the CLI: the same engine, the same fixings.

Run after `cargo build --release` and `pip install ./python`:

    python3 -m unittest discover -s python/tests -v

The CLI is found at $RENTIX_BIN, else $CARGO_TARGET_DIR/release/rentix, else
target/release/rentix.
"""

import os
import subprocess
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

import polars as pl

import rentix

REPO = Path(__file__).resolve().parents[2]


def cli() -> str:
    if os.environ.get("RENTIX_BIN"):
        return os.environ["RENTIX_BIN"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "release" / "rentix")


def run(*args: str) -> str:
    out = subprocess.run([cli(), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"rentix {' '.join(args)}: {out.stderr}")
    return out.stdout


class Market(unittest.TestCase):
    """A simulated market of 90 days, ingested once by the CLI."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rentix-py-")
        cls.dir = Path(cls.tmp.name)
        run("simulate", "--out", str(cls.dir / "sim"), "--seed", "9", "--start", "2025-01-01", "--days", "240")
        cls.obs = cls.dir / "sim" / "observations.csv"
        cls.store = cls.dir / "store"
        run("ingest", "--store", str(cls.store), str(cls.obs))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def cli_fixings(self, *args: str) -> pl.DataFrame:
        out = self.dir / "cli" / "f.parquet"
        out.parent.mkdir(exist_ok=True)
        for f in out.parent.iterdir():
            f.unlink()
        run("index", "--out", str(out), *args)
        return pl.read_parquet(out)

    def test_store_index_equals_the_cli_for_every_shipped_methodology(self):
        store = rentix.Store(self.store)
        methodologies = sorted((REPO / "data" / "methodologies").glob("*.toml"))
        self.assertGreaterEqual(len(methodologies), 17)
        for m in methodologies:
            with self.subTest(methodology=m.stem):
                want = self.cli_fixings("--store", str(self.store), "--methodology", m.stem)
                got = store.index(m.stem)
                self.assertTrue(got.equals(want), f"{m.stem}: Python and CLI fixings differ")

    def test_store_index_of_an_intraday_methodology_equals_the_cli(self):
        sim, store = self.dir / "sim15", self.dir / "store15"
        run("simulate", "--out", str(sim), "--days", "1", "--start", "2025-06-01", "--cadence", "15m")
        run("ingest", "--store", str(store), str(sim / "observations.csv"))
        want = self.cli_fixings("--store", str(store), "--methodology", "intraday_lowest_listing_15m")
        got = rentix.Store(store).index("intraday_lowest_listing_15m")
        self.assertTrue(got.equals(want), "Python and CLI intraday fixings differ")
        self.assertEqual(got.height % 96, 0)
        self.assertIn("fixed_at", got.columns)

    def test_fix_from_files_equals_index_input(self):
        want = self.cli_fixings("--input", str(self.obs), "--methodology", "listings_7d_sigma")
        got = rentix.fix(self.obs, "listings_7d_sigma")
        self.assertTrue(got.equals(want))
        # A methodology given as a dict (the shipped file, parsed) fixes the same.
        with open(REPO / "data" / "methodologies" / "listings_7d_sigma.toml", "rb") as f:
            as_dict = tomllib.load(f)
        self.assertTrue(rentix.fix(self.obs, as_dict).equals(want))

    def test_fix_of_a_dataframe_equals_fix_of_its_file(self):
        df = pl.read_csv(self.obs, infer_schema_length=0)
        head = df.head(20000)
        path = self.dir / "head.csv"
        head.write_csv(path)
        self.assertTrue(rentix.fix(head).equals(rentix.fix(path)))

    def test_the_packages_own_example_fixes_normalized_observations(self):
        # Issue 49: `obs, q = rentix.normalize(path)` then `rentix.fix(obs)` returned an
        # empty frame with no error. The normalized rows are fixed as the file is.
        head = self.dir / "head_norm.csv"
        pl.read_csv(self.obs, infer_schema_length=0).head(20000).write_csv(head)
        obs, _ = rentix.normalize(head)
        got = rentix.fix(obs).select("date", "grade", "value", "n_obs")
        want = rentix.fix(head).select("date", "grade", "value", "n_obs")
        self.assertGreater(got.height, 0)
        self.assertTrue(got.equals(want))

    def test_normalize_accounts_for_every_row_as_ingest_does(self):
        obs, quarantine = rentix.normalize(self.obs)
        summary = rentix.Store(self.dir / "store2").ingest([self.obs])
        self.assertEqual(obs.height, summary["accepted"])
        self.assertEqual(quarantine.height, summary["quarantined"])
        self.assertIn("usd_per_gpu_hour", obs.columns)
        self.assertIn("reason", quarantine.columns)

    def test_observations_scan_the_committed_partitions(self):
        lazy = rentix.Store(self.store).observations()
        self.assertIsInstance(lazy, pl.LazyFrame)
        n = lazy.select(pl.len()).collect().item()
        obs, _ = rentix.normalize(self.obs)
        self.assertEqual(n, obs.height)

    def test_errors_carry_the_clis_message(self):
        with self.assertRaises(rentix.RentixError) as e:
            rentix.fix(self.obs, "no_such_methodology")
        self.assertIn("no_such_methodology", str(e.exception))
        bad = self.dir / "bad.csv"
        bad.write_text("kind,observed_at,source\ntrade,2025-01-01,x\n")
        with self.assertRaises(rentix.RentixError) as e:
            rentix.normalize(bad)
        self.assertIn("bad.csv", str(e.exception))
        self.assertIn('"gpu"', str(e.exception))
        with self.assertRaises(rentix.RentixError):
            rentix.Store(self.dir / "nowhere").index()

    def test_simulate_and_report_write_the_clis_bytes(self):
        """simulate() and report() are the CLI's: the same market and the same HTML
        to the byte."""
        py_sim, cli_sim = self.dir / "py_sim", self.dir / "cli_sim"
        manifest = rentix.simulate(py_sim, seed=3, start="2025-01-01", days=40)
        run("simulate", "--out", str(cli_sim), "--seed", "3", "--start", "2025-01-01", "--days", "40")
        self.assertEqual(manifest["observations"], len((py_sim / "observations.csv").read_text().splitlines()) - 1)
        for f in ["observations.csv", "truth.csv", "manifest.json"]:
            self.assertEqual((py_sim / f).read_bytes(), (cli_sim / f).read_bytes(), f)
        fixings = self.dir / "rep" / "fixings.csv"
        fixings.parent.mkdir(exist_ok=True)
        run("index", "--store", str(self.store), "--out", str(fixings))
        py_html, cli_html = self.dir / "rep" / "py.html", self.dir / "rep" / "cli.html"
        self.assertEqual(rentix.report(fixings, py_html), py_html)
        run("report", "--in", str(fixings), "--out", str(cli_html))
        self.assertEqual(py_html.read_bytes(), cli_html.read_bytes())
        with self.assertRaises(rentix.UsageError):
            rentix.report(fixings, self.dir / "rep" / "x.pdf")
        with self.assertRaises(rentix.UsageError):
            rentix.simulate(self.dir / "x", rows=0)

    def test_contract_is_the_clis_lab(self):
        """contract() is `rentix contract` (one library run): the same files to the
        byte, comparison.csv returned; an unknown contract is refused by the class
        the CLI exits by."""
        cand = ["settlement_business_days:nymex-gpu1-h100"]
        py_out, cli_out = self.dir / "lab_py", self.dir / "lab_cli"
        got = rentix.contract(self.store, cand, py_out, from_="2025-03-01")
        run("contract", "--store", str(self.store), "--candidate", cand[0], "--out", str(cli_out),
            "--from", "2025-03-01")
        self.assertGreater(got.height, 0)
        for f in ["comparison.csv", "by_month.csv", "comparison.json"]:
            self.assertEqual((py_out / f).read_bytes(), (cli_out / f).read_bytes(), f)
        with self.assertRaises(rentix.IoError):
            rentix.contract(self.store, ["settlement_business_days:no_such_contract"], self.dir / "lab_x")

    def test_verify_is_the_clis_check(self):
        """verify() is the CLI's check (one library call): a publication verifies
        (an empty frame, exit 0), a value edited by hand is named (exit 1), a
        missing store raises IoError (exit 4)."""
        fixings = self.dir / "ver" / "fixings.csv"
        fixings.parent.mkdir(exist_ok=True)
        run("index", "--store", str(self.store), "--out", str(fixings))
        diffs = rentix.verify(self.store, fixings)
        self.assertEqual(diffs.columns, ["file", "date", "grade", "column", "published", "recomputed"])
        self.assertEqual(diffs.height, 0, diffs)
        lines = fixings.read_text().splitlines()
        header = lines[0].split(",")
        v = header.index("value")
        k = next(i for i, line in enumerate(lines) if i > 0 and line.split(",")[v])
        cells = lines[k].split(",")
        cells[v] = "123.456"
        lines[k] = ",".join(cells)
        fixings.write_text("\n".join(lines) + "\n")
        diffs = rentix.verify(self.store, fixings, methodology="default")
        self.assertIn("123.456", diffs.filter(pl.col("column") == "value")["published"].to_list())
        checked = subprocess.run(
            [cli(), "verify", "--store", str(self.store), "--fixings", str(fixings)],
            capture_output=True,
        )
        self.assertEqual(checked.returncode, 1)
        with self.assertRaises(rentix.IoError):
            rentix.verify(self.dir / "nowhere", fixings)

    def test_errors_are_raised_by_the_class_the_cli_exits_by(self):
        """One failure, one class: each Python exception is the subclass of
        RentixError whose exit code the CLI gives for the same input (it was one
        RentixError for everything)."""
        bad = self.dir / "bad_columns.csv"
        bad.write_text("kind,observed_at,source\ntrade,2025-01-01,x\n")
        out = str(self.dir / "cls.csv")
        cases = [
            (lambda: rentix.fix(self.obs, "no_such_methodology"), rentix.IoError,
             ["index", "--input", str(self.obs), "--methodology", "no_such_methodology", "--out", out]),
            (lambda: rentix.normalize(bad), rentix.InputError,
             ["index", "--input", str(bad), "--out", out]),
            (lambda: rentix.Store(self.dir / "nowhere").index(), rentix.IoError,
             ["index", "--store", str(self.dir / "nowhere"), "--out", out]),
            (lambda: rentix.Store(self.dir / "nowhere").index(from_="2025-13-01"), rentix.UsageError,
             ["index", "--store", str(self.store), "--from", "2025-13-01", "--out", out]),
            (lambda: rentix.fix(self.obs, {"version": "x"}), rentix.UsageError, None),
        ]
        codes = {rentix.UsageError: 2, rentix.InputError: 3, rentix.IoError: 4}
        for call, cls, cli_args in cases:
            with self.assertRaises(cls) as e:
                call()
            self.assertIsInstance(e.exception, rentix.RentixError)
            if cli_args is not None:
                got = subprocess.run([cli(), *cli_args], capture_output=True, text=True)
                self.assertEqual(got.returncode, codes[cls], (cli_args, got.stderr))

    def test_a_damaged_parquet_file_raises_input_error_and_prints_no_panic(self):
        """polars' Parquet decoder panics on some damaged pages: the package
        raises InputError naming the file (as the CLI exits 3), and the panic it
        caught is not printed above it."""
        data = bytearray((REPO / "crates/table/tests/data/polars_zstd.parquet").read_bytes())
        data[345] ^= 0xFF  # the byte tests/it/hostile.rs overwrites: the decoder asserts
        damaged = self.dir / "damaged.parquet"
        damaged.write_bytes(bytes(data))
        rent = self.dir / "damaged_rent.csv"
        rent.write_text("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n"
                        "2025-01-01,2025-02-01,2.95,730,pay\n")
        code = (
            "import rentix\n"
            "try:\n"
            f"    rentix.backtest({str(damaged)!r}, {str(rent)!r})\n"
            "except rentix.InputError as e:\n"
            "    print('InputError:', e)\n"
        )
        got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertIn("InputError:", got.stdout, got.stderr)
        self.assertIn("damaged.parquet", got.stdout)
        self.assertIn("does not decode", got.stdout)
        self.assertNotIn("panicked", got.stderr)

    def test_backtest_and_track_give_the_clis_numbers(self):
        fixings = self.dir / "bt" / "fixings.csv"
        fixings.parent.mkdir(exist_ok=True)
        run("index", "--store", str(self.store), "--out", str(fixings))
        sim = self.dir / "sim"
        rent, events = sim / "rent_producer_h100.csv", sim / "events_producer_h100.csv"
        cli_out = self.dir / "bt" / "cli"
        run("backtest", "--index", str(fixings), "--rent", str(rent), "--events", str(events),
            "--resamples", "200", "--out", str(cli_out))
        import json
        want = json.loads((cli_out / "summary.json").read_text())
        bt = rentix.backtest(fixings, rent, events, resamples=200)
        self.assertEqual(bt.summary, want)
        self.assertIn(bt.recommendation["decision"], ("hedge", "do_not_hedge", "not_enough_data"))
        self.assertTrue(bt.periods.equals(pl.read_csv(cli_out / "periods.csv")))
        # The rent as a DataFrame backtests the same.
        self.assertEqual(rentix.backtest(fixings, pl.read_csv(rent, infer_schema_length=0), events,
                                         resamples=200).summary, want)
        track_out = self.dir / "bt" / "track.parquet"
        run("track", "--index", str(fixings), "--rent", str(rent), "--resamples", "100",
            "--out", str(track_out))
        got = rentix.track(fixings, rent, resamples=100)
        self.assertTrue(got.equals(pl.read_parquet(track_out)))
        with self.assertRaises(rentix.RentixError) as e:
            rentix.backtest(fixings, rent, side="lend")
        self.assertIn("lend", str(e.exception))
        # A perp beside the futures: the CLI's numbers too.
        perp_out = self.dir / "bt" / "perp"
        run("backtest", "--index", str(fixings), "--rent", str(rent), "--resamples", "50",
            "--perp", "h100-sxm-80gb-bare-metal-perp", "--perp-premium", "0.01",
            "--out", str(perp_out))
        bt = rentix.backtest(fixings, rent, resamples=50, perp="h100-sxm-80gb-bare-metal-perp",
                             perp_premium=0.01)
        self.assertEqual(bt.summary, json.loads((perp_out / "summary.json").read_text()))
        self.assertLess(bt.summary["perp"]["strategies"]["one-to-one"]["total_funding_pnl"], 0)
        self.assertEqual(set(bt.periods["instrument"]), {"futures", "perp"})

    def test_pandas_via_to_pandas(self):
        try:
            import pandas  # noqa: F401
            import pyarrow  # noqa: F401
        except ImportError:
            self.skipTest("pandas or pyarrow not installed")
        fixings = rentix.Store(self.store).index(grades=["h100-*/*/*"])
        self.assertEqual(len(fixings.to_pandas()), fixings.height)


if __name__ == "__main__":
    sys.exit(unittest.main())


class DemoStore(unittest.TestCase):
    """The demo's own store (`rentix demo`): `rentix.fix` on the raw file the demo
    ingested gives the CLI's fixings of that store for every shipped methodology."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rentix-demo-")
        cls.out = Path(cls.tmp.name) / "demo"
        run("demo", "--out", str(cls.out))
        cls.sim = cls.out / "work" / "sim"
        cls.store = cls.out / "work" / "store"

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_fix_equals_rentix_index_on_the_demo_store_for_every_shipped_methodology(self):
        methodologies = sorted((REPO / "data" / "methodologies").glob("*.toml"))
        self.assertGreaterEqual(len(methodologies), 17)
        cli_out = Path(self.tmp.name) / "cli.parquet"
        for m in methodologies:
            with self.subTest(methodology=m.stem):
                for f in Path(self.tmp.name).glob("cli*"):
                    f.unlink()
                run("index", "--store", str(self.store), "--out", str(cli_out), "--methodology", m.stem)
                want = pl.read_parquet(cli_out)
                got = rentix.fix(self.sim / "observations.csv", m.stem, ratings=self.sim / "ratings.csv")
                self.assertGreater(got.height, 10_000)
                self.assertTrue(got.equals(want), f"{m.stem}: rentix.fix and rentix index differ")

    def test_the_ratings_give_rows_without_a_tier_theirs(self):
        # The simulator writes each row's tier; with the column emptied, the ratings
        # file (operator, scope, tier from a date) puts back the same tiers, and
        # without it the rows stay unrated.
        rows = pl.read_csv(self.sim / "observations.csv", n_rows=2000, infer_schema_length=0)
        head = Path(self.tmp.name) / "untiered.csv"
        rows.with_columns(operator_tier=pl.lit(None, pl.String)).write_csv(head)
        rated, _ = rentix.normalize(head, ratings=self.sim / "ratings.csv")
        plain, _ = rentix.normalize(head)
        want, _ = rentix.normalize(self.sim / "observations.csv")
        self.assertEqual(plain["operator_tier"].null_count(), plain.height)
        self.assertEqual(rated["operator_tier"].null_count(), 0)
        key = ["dedupe_key"]
        joined = rated.select(key + ["operator_tier"]).join(
            want.select(key + [pl.col("operator_tier").alias("sim_tier")]), on=key
        )
        self.assertEqual(joined.height, rated.height)
        self.assertTrue((joined["operator_tier"] == joined["sim_tier"]).all())


class ReadmeExample(unittest.TestCase):
    """The README's Python example runs as written and answers: its frames are not
    empty (the package's own example returned an empty frame, issue 49), and a range
    past the data is refused, as the CLI refuses it, not returned empty."""

    def test_the_readme_python_block_runs_and_answers(self):
        text = (REPO / "README.md").read_text()
        block = text.split("```python\n", 1)[1].split("```", 1)[0]
        with tempfile.TemporaryDirectory(prefix="rentix-readme-") as d:
            d = Path(d)
            # What the README's shell commands before it leave in the directory (its
            # market: `rentix simulate --out sim --seed 7`, 2024 and 2025).
            subprocess.run([cli(), "simulate", "--out", str(d / "sim"), "--seed", "7"],
                           check=True, capture_output=True)
            (d / "today.csv").write_bytes((d / "sim" / "observations.csv").read_bytes())
            subprocess.run([cli(), "ingest", "--store", str(d / "fixstore"), str(d / "sim" / "observations.csv")],
                           check=True, capture_output=True)
            subprocess.run([cli(), "index", "--store", str(d / "fixstore"), "--out", str(d / "fixings.csv")],
                           check=True, capture_output=True)
            here = os.getcwd()
            os.chdir(d)
            try:
                scope: dict = {}
                exec(compile(block, "README.md", "exec"), scope)
            finally:
                os.chdir(here)
            self.assertGreater(scope["obs"].height, 0)
            self.assertGreater(scope["fixings"].height, 0)
            self.assertGreater(scope["fixings"].filter(pl.col("value").is_not_null()).height, 0)
            self.assertIn(scope["bt"].recommendation["decision"], ("hedge", "do_not_hedge", "not_enough_data"))
            self.assertTrue((d / "report.html").exists())
            self.assertTrue((d / "sim2" / "observations.csv").exists())
            with self.assertRaises(rentix.InputError) as e:
                rentix.Store(d / "store").index("default", from_="2030-01-01")
            self.assertIn("the fixings run 2024-01-01 to", str(e.exception))
