//! The command line as plain clap structs; `commands` turns them into validated
//! configurations before any work starts.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "rentix",
    version,
    about = "GPU rental price indices, and how well a futures contract on them would hedge your rent",
    long_about = "rentix turns GPU rental prices (trades, firm offers, listings) into daily \
                  fixings that say which tier fixed them and how much data stood behind them, \
                  and backtests cash-settled futures hedges of a user's own rent.",
    after_help = "Exit codes (every command):\n  \
                  0    done\n  \
                  1    a finding: verify found differences, store check found problems\n  \
                  2    usage or configuration: a flag; a methodology, contract, perp or mapping that is found but cannot be run\n  \
                  3    bad input data: a file, row or store that cannot be used (named in the message)\n  \
                  4    I/O: a file that does not exist (a path or shipped name that names nothing), could not be read or written\n  \
                  130  interrupted (Ctrl-C, SIGTERM); the message says what was committed"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the whole pipeline on a simulated market: simulate, ingest, index,
    /// backtest, track, cost, the contract lab, a 15-minute index, report.
    #[command(
        after_help = "Example:\n  rentix demo                 # writes reports/demo/report.html\n  \
                            rentix demo --out /tmp/demo"
    )]
    Demo(DemoArgs),
    /// Normalize offers and trades into a store and print the ingest summary.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix ingest --store real --mapping primeintellect_by_provider \\\n      \
                            data/real/primeintellect_by_provider_sample.csv   # a shipped mapping by name, on a clone's public sample"
    )]
    Ingest(IngestArgs),
    /// Write a synthetic GPU rental market with known truth.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 365\n  \
                            rentix simulate --out big --rows 10000000   # for benchmarks"
    )]
    Simulate(SimulateArgs),
    /// Compute fixings for each grade (and composites) from a store, or from raw files
    /// in memory (`--input`).
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix index --store store --out h100.parquet --grade 'h100-*/*/*' \\\n      \
                            --methodology settlement_business_days --from 2024-07-01   # a shipped methodology, by name\n  \
                            rentix index --input sim/observations.csv --out oneshot.csv   # raw files, no store\n  \
                            rentix index --store store --out listings.csv --methodology listings_7d_sigma"
    )]
    Index(IndexArgs),
    /// Backtest a futures hedge of a rent series on an index.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix backtest --index fixings.csv --rent sim/rent_producer_h100_spot_rate.csv \\\n      \
                            --events sim/events_producer_h100_spot_rate.csv --out bt\n  \
                            rentix backtest --index fixings.csv --rent sim/rent_producer_h100_invoice.csv \\\n      \
                            --strategy one-to-one --strategy walk-forward --out bt_invoice   # the grade of the rent's gpu column"
    )]
    Backtest(BacktestArgs),
    /// Rank every grade in a fixings file by how well it tracks (and would hedge) a rent.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix track --index fixings.csv --rent sim/rent_producer_h100_spot_rate.csv --out track.csv"
    )]
    Track(TrackArgs),
    /// Render the human report (one self-contained HTML file) for a backtest or index output.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix backtest --index fixings.csv --rent sim/rent_producer_h100_spot_rate.csv --out bt\n  \
                            rentix report --in bt --out bt/report.html\n  \
                            rentix report --in fixings.csv --out index.html\n  \
                            rentix index --store store --out listings.csv --methodology listings_7d_sigma\n  \
                            rentix report --in fixings.csv --in listings.csv --truth sim/truth.csv --out compare.html   # methodologies side by side"
    )]
    Report(ReportArgs),
    /// Inspect or maintain a store: `rentix store check` reads back every run and partition, `rentix store compact` merges each month's files into one, `rentix store migrate` rewrites a store of date partitions by month.
    Store(StoreArgs),
    /// Recompute every published fixing from the store under its methodology and
    /// compare every column of every row (and the forward curve and tier files
    /// beside it), naming missing, extra and different rows.
    #[command(
        after_help = "Exit codes:\n  0  the publication is identical to its recomputation\n  \
                            1  it differs (the first differences are named; --out lists all)\n  \
                            2  it could not be checked for a usage or methodology error, 3 for input it \
                            cannot use (a store or file), 4 for I/O (never 1)\n\n\
                            Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix verify --store store --fixings fixings.csv\n  \
                            rentix verify --store store --fixings fixings.csv --methodology default --out differences.csv"
    )]
    Verify(VerifyArgs),
    /// Feed health: contributors gone silent, contributors whose prices jumped
    /// against their own history, grades that lost sufficiency, level breaks of each
    /// index, and coverage per settlement month; each finding dated, with its
    /// evidence. Findings are information: exit 0.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix health --store store\n  \
                            rentix health --store store --fixings fixings.csv --out health.csv --coverage coverage.csv"
    )]
    Health(HealthArgs),
    /// A contract period's settlement rate from a fixings file (intraday or daily):
    /// the mean of the period's stamps with each gap filled by the mean of the last
    /// min(G, L) published values before it, its coverage, longest gap and verdict
    /// (settled, review, or determination with an indicative number). Periods of any
    /// length; the rule is the open Computable index's (docs/methodology.md,
    /// "Settling a period").
    #[command(
        after_help = "Example:\n  rentix simulate --out sim15 --days 2 --cadence 15m\n  \
                            rentix ingest --store store15 sim15/observations.csv\n  \
                            rentix index --store store15 --methodology intraday_lowest_listing_15m --out intraday.csv\n  \
                            rentix settle --fixings intraday.csv --grade h100-sxm-80gb/vm/on-demand --from 2024-01-01 --to 2024-01-02\n  \
                            rentix settle --fixings intraday.csv --grade h100-sxm-80gb/vm/on-demand --from 2024-01-01 --to 2024-01-02 --schedule 1h   # a lane published hourly"
    )]
    Settle(SettleArgs),
    /// The cost of useful output: rent per million useful tokens by operator, and the
    /// industry cost curve (operators sorted by cost, bar width = capacity).
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix index --store store --out fixings.csv\n  \
                            rentix cost --throughput sim/throughput.csv --store store --out cost\n  \
                            rentix cost --throughput sim/throughput.csv --fixings fixings.csv --out cost_fixings   # --date D dates rows that have no date"
    )]
    Cost(CostArgs),
    /// The contract design lab: evaluate candidate methodology + contract pairs for
    /// sufficiency, manipulation cost, representativeness, hedger utility and
    /// economics, and compare them.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix contract --store store \\\n      \
                            --candidate trades=default:h100-sxm-80gb-bare-metal-on-demand \\\n      \
                            --candidate listings=listings_only_naive:h100-sxm-80gb-bare-metal-on-demand \\\n      \
                            --rent-dir sim --truth sim/truth.csv --out lab\n\n\
                            Methodologies and contracts are files, or the shipped ones by name (data/methodologies, data/contracts)."
    )]
    Contract(ContractArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ContractArgs {
    /// Store to evaluate over.
    #[arg(long)]
    pub store: PathBuf,
    /// A candidate: `[NAME=]METHODOLOGY.toml:CONTRACT.toml` (repeat; at least one).
    #[arg(long = "candidate", required = true)]
    pub candidates: Vec<String>,
    /// Directory of rent_*.csv (and events_*.csv) files: hedger utility.
    #[arg(long)]
    pub rent_dir: Option<PathBuf>,
    /// truth.csv of a simulated market: settlement error against the fair price.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// The manipulator's price, percent above the honest settlement.
    #[arg(long, default_value_t = 10.0)]
    pub attack_price_pct: f64,
    /// First month evaluated (YYYY-MM-DD; the month containing it).
    #[arg(long)]
    pub from: Option<chrono::NaiveDate>,
    /// Last month evaluated (the month containing it).
    #[arg(long)]
    pub to: Option<chrono::NaiveDate>,
    /// Output directory: comparison.csv, comparison.json, by_month.csv, charts.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct CostArgs {
    /// Throughput CSV: operator, gpu, scope, model, input_tokens, output_tokens,
    /// target_tokens_per_s_per_user, output_tokens_per_s_per_gpu, success_rate,
    /// capacity_gpus, optional usd_per_gpu_hour and date.
    #[arg(long)]
    pub throughput: PathBuf,
    /// Price rows without usd_per_gpu_hour at the fixing of GPU/SCOPE/on-demand.
    #[arg(long)]
    pub fixings: Option<PathBuf>,
    /// Or at the median observed price of GPU/SCOPE/on-demand in a store (7 days to the date).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Date for rows without one (YYYY-MM-DD).
    #[arg(long)]
    pub date: Option<chrono::NaiveDate>,
    /// Output directory: cost_curve.csv, position_changes.csv, cost_curve.png/.svg.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

impl StoreCommand {
    /// The store every store command names.
    pub(crate) fn store(&self) -> &std::path::Path {
        match self {
            Self::Check { store, .. }
            | Self::Compact { store, .. }
            | Self::Migrate { store, .. } => store,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum StoreCommand {
    /// Read back every run record and partition; name what cannot be read or does
    /// not add up (exit 1), and list uncommitted leftovers and a held lock. Each
    /// partition's size, SHA-256 and rows are compared with its run record's.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix store check --store store\n  rentix store check --store store --quick   # sizes and footers' rows only\n  rentix store check --store store --json    # the whole report, for scripts"
    )]
    Check {
        /// Store directory.
        #[arg(long)]
        store: PathBuf,
        /// The default check, kept as an alias: every partition's SHA-256 is
        /// recomputed and compared with its run record's.
        #[arg(long, conflicts_with = "quick")]
        deep: bool,
        /// Sizes only: each partition's size against its run record and its rows as
        /// its footer counts them; no byte hashed, so a changed byte that keeps the
        /// size is not found.
        #[arg(long)]
        quick: bool,
        /// Print the whole report as JSON (for scripts) instead of a few lines.
        #[arg(long)]
        json: bool,
    },
    /// Merge the files each month has accumulated (one per run that touched it)
    /// into one file per month: same rows, same provenance, fewer files to open.
    /// A run of its own, committed atomically; prints what it did.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix store compact --store store\n  rentix store compact --store store --min-files 24"
    )]
    Compact {
        /// Store directory.
        #[arg(long)]
        store: PathBuf,
        /// Compact a month only when it has at least this many files (2 or more).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..))]
        min_files: u32,
        /// Rows held in memory: months with fewer together are merged in parallel;
        /// a month with more is merged from its files a slice at a time.
        #[arg(long, default_value_t = rentix_ingest::DEFAULT_BATCH_ROWS)]
        batch_rows: usize,
        /// Print what it did as JSON (for scripts) instead of a line.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite a store written before month partitions (one file per fixing date,
    /// `observations/date=YYYY-MM-DD/`) as one file per month
    /// (`observations/month=YYYY-MM/`): same rows, same provenance, the fixings
    /// computed from it byte-identical. A run of its own, committed atomically
    /// (a kill leaves the store as it was); a store already by month is left as it
    /// is. Such stores are read as they are, so migrating is never required.
    #[command(
        after_help = "Example:\n  rentix simulate --out sim --seed 7 --days 400   # a market of its own\n  \
                            rentix ingest --store store sim/observations.csv\n  \
                            rentix store migrate --store store"
    )]
    Migrate {
        /// Store directory.
        #[arg(long)]
        store: PathBuf,
        /// Rows held in memory, as for `store compact`.
        #[arg(long, default_value_t = rentix_ingest::DEFAULT_BATCH_ROWS)]
        batch_rows: usize,
        /// Print what it did as JSON (for scripts) instead of a line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Store the fixings were computed from.
    #[arg(long)]
    pub store: PathBuf,
    /// Published fixings file (.csv or .parquet).
    #[arg(long)]
    pub fixings: PathBuf,
    /// The methodology the fixings name (its version must match theirs): a file, or
    /// a shipped methodology's name; by default the shipped methodology whose version
    /// the fixings record.
    #[arg(long)]
    pub methodology: Option<PathBuf>,
    /// Write every difference to this CSV file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct SettleArgs {
    /// A fixings file (.csv or .parquet), intraday or daily.
    #[arg(long)]
    pub fixings: PathBuf,
    /// The grade (or composite) settled; may be left out when the file holds one.
    #[arg(long)]
    pub grade: Option<String>,
    /// Start of the period: a date (its 00:00 UTC) or an RFC 3339 time. The period
    /// holds the stamps whose intervals lie in [from, to).
    #[arg(long)]
    pub from: String,
    /// End of the period (exclusive), as --from.
    #[arg(long)]
    pub to: String,
    /// The schedule's step (15m, 1h, 1d); default: the file's (the commonest step
    /// between the grade's stamps, a stamp off its grid counted off grid; 1d for a
    /// daily file).
    #[arg(long)]
    pub cadence: Option<String>,
    /// The lane's publication schedule, when it is not every stamp of one step:
    /// `GRID` or `FROM=GRID`, where GRID is a step (`15m`, `6h`) or times of day in
    /// UTC (`00:00,06:00,12:00,18:00`) and FROM a date or RFC 3339 time from which
    /// the era holds (its stamps after FROM). Repeat for eras; one has no FROM (the
    /// first). Replaces --cadence: a lane published four times a day counts 4
    /// scheduled stamps a day, not 96 with 92 missing.
    #[arg(long = "schedule", conflicts_with = "cadence")]
    pub schedule: Vec<String>,
    /// L: a gap is filled from at most this much of published stamps before it (a
    /// duration, divided by the cadence).
    #[arg(long, default_value = "72h")]
    pub lookback: String,
    /// Coverage at or above which the period settles.
    #[arg(long, default_value_t = 0.98)]
    pub settle_at: f64,
    /// Coverage below which the period goes to determination.
    #[arg(long, default_value_t = 0.90)]
    pub review_at: f64,
    /// Longest gap, a share of the period's stamps, above which it goes to
    /// determination.
    #[arg(long, default_value_t = 0.02)]
    pub max_gap: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// The observation store the feeds were ingested into.
    #[arg(long)]
    pub store: PathBuf,
    /// Published fixings (.csv or .parquet) to check for sufficiency drops and level
    /// breaks, and to count coverage from.
    #[arg(long)]
    pub fixings: Option<PathBuf>,
    /// Days without a report that make a regular contributor silent.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=366))]
    pub silent_days: u32,
    /// Relative move of a contributor's daily median against its own history
    /// (the median of its previous --history-days) that is a jump, held for its
    /// next two report days.
    #[arg(long, default_value_t = 0.15)]
    pub jump: f64,
    /// Days of a contributor's history its price is compared with.
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(5..=366))]
    pub history_days: u32,
    /// Relative day-on-day move of a published value that is a level break.
    #[arg(long, default_value_t = 0.10)]
    pub level_break: f64,
    /// Write every finding to this CSV file (date, kind, grade, contributor, evidence).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write coverage per grade and settlement month to this CSV file (needs --fixings).
    #[arg(long, requires = "fixings")]
    pub coverage: Option<PathBuf>,
    /// Feed health as of this day: the store's observations and the fixings
    /// through it only (what a publication `--to` this day reports).
    #[arg(long)]
    pub to: Option<chrono::NaiveDate>,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A backtest output directory, a directory holding fixings.csv (or
    /// fixings.parquet), both (the demo's), a contract lab's output directory, or a
    /// fixings file of any name itself (`--in real.csv`). Given several times with
    /// fixings files (several methodologies of one store), the report compares them.
    #[arg(long = "in", required = true)]
    pub input: Vec<PathBuf>,
    /// A simulator's truth.csv the compared fixings are also measured against
    /// (with several `--in` files).
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// Output HTML file.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct BacktestArgs {
    /// Fixings file written by `rentix index` (.csv or .parquet).
    #[arg(long)]
    pub index: PathBuf,
    /// Rent CSV: period_start, period_end, usd_per_gpu_hour, gpu_hours, side.
    #[arg(long)]
    pub rent: PathBuf,
    /// How the rent file's period_end is read: exclusive (the first day not covered,
    /// `2025-01-01,2025-02-01` is January) or inclusive (the last day billed, as
    /// invoices write it: `2025-01-01,2025-01-31`).
    #[arg(long, default_value = "exclusive", value_parser = ["exclusive", "inclusive"])]
    pub period_end: String,
    /// The rent's side for a file without a `side` column: pay (a producer) or earn
    /// (a neocloud).
    #[arg(long, value_parser = ["pay", "earn"])]
    pub side: Option<String>,
    /// Events CSV: start, end, kind, gpu_hours_lost, usd_loss, note.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Contract TOML (default: the terms of
    /// data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml, on the grade of the
    /// rent file's gpu and scope columns: a rent without a gpu column needs
    /// --underlying or --contract).
    #[arg(long)]
    pub contract: Option<PathBuf>,
    /// Override the contract's underlying: a grade, or a composite of the fixings
    /// file (index points, rebased to the rent's first month).
    #[arg(long)]
    pub underlying: Option<String>,
    /// Settle on today's restated fixings instead of the fixings as first published
    /// (the default: a settled month is final, whatever arrives later).
    #[arg(long)]
    pub as_restated: bool,
    /// Throughput file (see `rentix cost`): split the change of your cost per useful
    /// token into rent, throughput and failures (cost_decomposition.csv).
    #[arg(long, requires = "operator")]
    pub throughput: Option<PathBuf>,
    /// Your operator name in the throughput file.
    #[arg(long, requires = "throughput")]
    pub operator: Option<String>,
    /// Override the contract's entry-price assumption: index, forward or premium.
    #[arg(long)]
    pub entry: Option<String>,
    /// Also hedge with a perpetual swap on the same index (a perp TOML, or the
    /// shipped `h100-sxm-80gb-bare-metal-perp`): the same strategies, statistics and
    /// decision beside the futures, with its funding (summary.json `perp`).
    #[arg(long)]
    pub perp: Option<PathBuf>,
    /// Override the perp's premium (mark minus index), USD per GPU-hour.
    #[arg(long, requires = "perp", allow_hyphen_values = true)]
    pub perp_premium: Option<f64>,
    /// Strategies to run (default: all): unhedged, one-to-one, static-min-variance,
    /// walk-forward, ewma, layered.
    #[arg(long = "strategy")]
    pub strategies: Vec<String>,
    /// Bootstrap resamples for confidence intervals.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = 20240101)]
    pub seed: u64,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct TrackArgs {
    /// Fixings file written by `rentix index`.
    #[arg(long)]
    pub index: PathBuf,
    /// Rent CSV.
    #[arg(long)]
    pub rent: PathBuf,
    /// How the rent file's period_end is read: exclusive or inclusive (see backtest).
    #[arg(long, default_value = "exclusive", value_parser = ["exclusive", "inclusive"])]
    pub period_end: String,
    /// The rent's side for a file without a `side` column: pay (a producer) or earn
    /// (a neocloud).
    #[arg(long, value_parser = ["pay", "earn"])]
    pub side: Option<String>,
    /// Events CSV.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Fewest monthly hedge periods a candidate needs to be ranked.
    #[arg(long, default_value_t = rentix_backtest::DEFAULT_MIN_PERIODS)]
    pub min_periods: usize,
    /// Smallest share of sufficient fixings (0-1) a candidate needs to be ranked.
    #[arg(long, default_value_t = rentix_backtest::DEFAULT_MIN_SUFFICIENT_SHARE)]
    pub min_sufficient_share: f64,
    /// Contract TOML giving size, settlement rule and fees (its underlying is replaced
    /// by each candidate in turn).
    #[arg(long)]
    pub contract: Option<PathBuf>,
    /// Bootstrap resamples per candidate.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    #[arg(long, default_value_t = 20240101)]
    pub seed: u64,
    /// Output file (.csv or .parquet); the ranking is printed when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// Store directory written by `rentix ingest`.
    #[arg(
        long,
        required_unless_present_any = ["input", "ballots"],
        conflicts_with_all = ["input", "ballots"]
    )]
    pub store: Option<PathBuf>,
    /// Fix each stamp of an intraday methodology again from its ballots: a
    /// receipts file (`fixed_at`, `grade`, `contributor`, `vote`, `sigma`, `weight`,
    /// `status`; a publication's `<stem>_receipts`, or a record's seats written so),
    /// by the methodology's sigma votes and aggregation alone, as an auditor
    /// recomputes a published record. Writes a new `--out`.
    #[arg(long, conflicts_with = "input")]
    pub ballots: Option<PathBuf>,
    /// Fix these observation files directly, normalized and deduplicated in memory as
    /// `ingest` would, with no store (for reproducing an index from raw files);
    /// repeatable.
    #[arg(long, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// Mapping file for a foreign layout of the `--input` files.
    #[arg(long, requires = "input")]
    pub mapping: Option<PathBuf>,
    /// Operator ratings for the `--input` files' rows without a tier, as `ingest
    /// --ratings`; repeatable.
    #[arg(long = "ratings", requires = "input")]
    pub ratings: Vec<PathBuf>,
    /// `--input` files of more than this many MiB in all are fixed through a
    /// temporary store beside `--out` (read in bounded memory and removed after),
    /// not in memory, which takes about six times the files' size. The fixings are
    /// the same either way. Default 512.
    #[arg(long, requires = "input", value_name = "MIB")]
    pub in_memory_mib: Option<u64>,
    /// Write only rows with a value (a sparse source, such as a rate card revised now
    /// and then, leaves most days of a grade without one); `verify` recognizes such a
    /// file.
    #[arg(long)]
    pub valued_only: bool,
    /// Output file, .csv or .parquet. A forward curve is written beside it
    /// (`<stem>_forward.<ext>`); an existing file is restated, not overwritten.
    #[arg(long)]
    pub out: PathBuf,
    /// Methodology file (default: data/methodologies/default.toml, bundled).
    #[arg(long)]
    pub methodology: Option<PathBuf>,
    /// Only grades matching these patterns (`h100-*/*/on-demand`); repeatable.
    #[arg(long = "grade")]
    pub grades: Vec<String>,
    /// First fixing date (YYYY-MM-DD).
    #[arg(long)]
    pub from: Option<chrono::NaiveDate>,
    /// Last fixing date (YYYY-MM-DD).
    #[arg(long)]
    pub to: Option<chrono::NaiveDate>,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Parameter file (default: the bundled data/sim/default.toml).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Random seed (overrides the parameter file).
    #[arg(long)]
    pub seed: Option<u64>,
    /// First day, YYYY-MM-DD (overrides the parameter file).
    #[arg(long)]
    pub start: Option<chrono::NaiveDate>,
    /// Number of days (overrides the parameter file).
    #[arg(long)]
    pub days: Option<u32>,
    /// Target number of observation rows (scales market activity).
    #[arg(long)]
    pub rows: Option<u64>,
    /// Read every provider's listings at every stamp of this cadence (`15m`, `1h`)
    /// for an intraday index, instead of a few sightings a day.
    #[arg(long)]
    pub cadence: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Output directory (its generated files are replaced).
    #[arg(long, default_value = "reports/demo")]
    pub out: PathBuf,
    /// Seed of the simulated market.
    #[arg(long, default_value_t = 20240101)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// Store directory (created if missing).
    #[arg(long)]
    pub store: PathBuf,
    /// Print the run's full summary as JSON (the run record, whole, partition
    /// checksums included) instead of the few lines a person reads.
    #[arg(long)]
    pub json: bool,
    /// Mapping file for a foreign layout (see data/mappings/); canonical layout if absent.
    #[arg(long)]
    pub mapping: Option<PathBuf>,
    /// FX table `date,currency,usd_per_unit` (default: the bundled data/fx/usd_rates.csv).
    #[arg(long)]
    pub fx: Option<PathBuf>,
    /// Fixing cut-off, local time HH:MM (24:00 = end of day).
    #[arg(long, default_value = "24:00")]
    pub cutoff: String,
    /// Time zone of the cut-off (IANA name).
    #[arg(long, default_value = "UTC")]
    pub timezone: String,
    /// Accepted rows held in memory before spilling to disk.
    #[arg(long, default_value_t = rentix_ingest::DEFAULT_BATCH_ROWS)]
    pub batch_rows: usize,
    /// Days after now an observation may be dated (clock skew); later ones are
    /// quarantined as implausible_date (as are dates before 2010).
    #[arg(long, default_value_t = rentix_ingest::DEFAULT_FUTURE_DAYS)]
    pub max_future_days: u32,
    /// Smallest plausible price, USD per GPU-hour after unit and currency
    /// conversion; below it rows are quarantined as implausible_price (0: no bound
    /// beyond prices > 0).
    #[arg(long, default_value_t = rentix_ingest::DEFAULT_MIN_USD_PER_GPU_HOUR)]
    pub min_price: f64,
    /// Largest plausible price, USD per GPU-hour after normalization; above it rows
    /// are quarantined as implausible_price.
    #[arg(long, default_value_t = rentix_ingest::DEFAULT_MAX_USD_PER_GPU_HOUR)]
    pub max_price: f64,
    /// Largest plausible quantity of one observation, GPU-hours; above it rows are
    /// quarantined as implausible_quantity.
    #[arg(long, default_value_t = rentix_ingest::DEFAULT_MAX_QUANTITY_GPU_HOURS)]
    pub max_quantity: f64,
    /// Operator ratings `operator,scope,tier,effective_from,source` (data/ratings/),
    /// attached to rows without a tier by operator, scope and date; repeatable.
    #[arg(long = "ratings")]
    pub ratings: Vec<PathBuf>,
    /// Input files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}
