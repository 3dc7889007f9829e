//! One module per command; each validates its arguments, then does the work.

mod backtest;
mod contract;
mod cost;
mod demo;
mod health;
mod index;
mod ingest;
mod report;
mod settle;
mod simulate;
mod store;
mod track;
mod verify;

use crate::cli::{Cli, Command};

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    for (flag, path) in inputs(&cli.command) {
        if !path.exists() {
            return Err(Missing {
                flag,
                path: path.to_path_buf(),
                shipped: None,
            }
            .into());
        }
    }
    for (flag, path, kind) in configs(&cli.command) {
        if !path.exists() && rentix_core::bundled(kind, &file_name(&path)).is_none() {
            let names: Vec<&str> = kind.bundled().iter().map(|(n, _)| *n).collect();
            return Err(Missing {
                flag,
                path,
                shipped: Some((kind, names.join(", "))),
            }
            .into());
        }
    }
    match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Ingest(a) => ingest::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Index(a) => index::run(a),
        Command::Backtest(a) => backtest::run(a),
        Command::Track(a) => track::run(a),
        Command::Report(a) => report::run(a),
        Command::Store(a) => store::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Health(a) => health::run(a),
        Command::Settle(a) => settle::run(a),
        Command::Cost(a) => cost::run(a),
        Command::Contract(a) => contract::run(a),
    }
}

/// An input file or directory the command line names that is not there: exit 4
/// (I/O), whichever command and flag named it (issue 49: it was 2, 3 or 4 by
/// command).
#[derive(Debug)]
pub(crate) struct Missing {
    flag: &'static str,
    path: std::path::PathBuf,
    /// For a flag that also takes a shipped name: its kind and the shipped names.
    shipped: Option<(rentix_core::ConfigKind, String)>,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} does not exist", self.flag, self.path.display())?;
        if let Some((kind, names)) = &self.shipped {
            write!(
                f,
                ", and no shipped {} has that name (shipped: {names})",
                kind.as_str()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Missing {}

/// The files and directories a command reads that must already exist, with the flag
/// that names each. Shipped names (contracts, methodologies, mappings, perps) are not
/// paths and are looked up by their commands; stores a command creates are left out.
fn inputs(c: &Command) -> Vec<(&'static str, &std::path::Path)> {
    use std::path::{Path, PathBuf};
    fn opt<'a>(flag: &'static str, p: &'a Option<PathBuf>) -> Option<(&'static str, &'a Path)> {
        p.as_deref().map(|p| (flag, p))
    }
    fn all<'a>(
        flag: &'static str,
        v: &'a [PathBuf],
    ) -> impl Iterator<Item = (&'static str, &'a Path)> + 'a {
        v.iter().map(move |p| (flag, p.as_path()))
    }
    match c {
        Command::Backtest(a) => [("--index", a.index.as_path()), ("--rent", a.rent.as_path())]
            .into_iter()
            .chain(opt("--events", &a.events))
            .chain(opt("--throughput", &a.throughput))
            .collect(),
        Command::Track(a) => [("--index", a.index.as_path()), ("--rent", a.rent.as_path())]
            .into_iter()
            .chain(opt("--events", &a.events))
            .collect(),
        Command::Report(a) => all("--in", &a.input)
            .chain(opt("--truth", &a.truth))
            .collect(),
        Command::Verify(a) => vec![
            ("--store", a.store.as_path()),
            ("--fixings", a.fixings.as_path()),
        ],
        Command::Settle(a) => vec![("--fixings", a.fixings.as_path())],
        Command::Health(a) => [("--store", a.store.as_path())]
            .into_iter()
            .chain(opt("--fixings", &a.fixings))
            .collect(),
        Command::Index(a) => opt("--store", &a.store)
            .into_iter()
            .chain(opt("--ballots", &a.ballots))
            .chain(all("--input", &a.input))
            .chain(all("--ratings", &a.ratings))
            .collect(),
        Command::Ingest(a) => all("FILE", &a.files)
            .chain(opt("--fx", &a.fx))
            .chain(all("--ratings", &a.ratings))
            .collect(),
        Command::Cost(a) => [("--throughput", a.throughput.as_path())]
            .into_iter()
            .chain(opt("--fixings", &a.fixings))
            .chain(opt("--store", &a.store))
            .collect(),
        Command::Contract(a) => [("--store", a.store.as_path())]
            .into_iter()
            .chain(opt("--rent-dir", &a.rent_dir))
            .chain(opt("--truth", &a.truth))
            .collect(),
        Command::Store(a) => vec![("--store", a.command.store())],
        Command::Simulate(a) => opt("--params", &a.params).into_iter().collect(),
        Command::Demo(_) => Vec::new(),
    }
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// The flags that take a file or a shipped name (a methodology, contract, mapping or
/// perp): one that is neither is a missing input, exit 4 like any other, whichever
/// command names it (issue 49: it was 2, 3 or 4 by command). A contract lab
/// candidate's two files are checked the same way.
fn configs(c: &Command) -> Vec<(&'static str, std::path::PathBuf, rentix_core::ConfigKind)> {
    use rentix_core::ConfigKind as K;
    let one = |flag: &'static str, p: &Option<std::path::PathBuf>, kind: K| {
        p.clone().map(|p| (flag, p, kind))
    };
    match c {
        Command::Backtest(a) => one("--contract", &a.contract, K::Contract)
            .into_iter()
            .chain(one("--perp", &a.perp, K::Perp))
            .collect(),
        Command::Track(a) => one("--contract", &a.contract, K::Contract)
            .into_iter()
            .collect(),
        Command::Verify(a) => one("--methodology", &a.methodology, K::Methodology)
            .into_iter()
            .collect(),
        Command::Index(a) => one("--methodology", &a.methodology, K::Methodology)
            .into_iter()
            .chain(one("--mapping", &a.mapping, K::Mapping))
            .collect(),
        Command::Ingest(a) => one("--mapping", &a.mapping, K::Mapping)
            .into_iter()
            .collect(),
        Command::Contract(a) => a
            .candidates
            .iter()
            .filter_map(|arg| rentix_lab::Candidate::files(arg))
            .flat_map(|(m, c)| {
                [
                    ("--candidate", m, K::Methodology),
                    ("--candidate", c, K::Contract),
                ]
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A command's failure that is its finding, not a failure to run: `verify`'s
/// differences, `store check`'s problems. Exit 1.
#[derive(Debug)]
pub(crate) struct Finding(pub String);

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// A command line or configuration that cannot be run: exit 2.
#[derive(Debug)]
pub(crate) struct Usage(pub String);

/// A published file named through a symbolic link, as its target: a
/// publication's digest, state and companions live beside the file itself, and
/// its renames would replace the link with a regular file. A hostile round
/// found a link to an intact publication refused as "changed since it was
/// published (no digest file)", and verify through it naming three differences.
/// Says on stderr which file is meant; any other path is returned as given.
pub(crate) fn through_link(flag: &str, path: &std::path::Path) -> std::path::PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match is_link.then(|| std::fs::canonicalize(path).ok()).flatten() {
        Some(target) => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("rentix: {flag} {} is a symbolic link: {} is the file meant (its digest, state and companions are beside it)\n",
                path.display(),
                target.display()),
            );
            target
        }
        None => path.to_path_buf(),
    }
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// `bail!` for a usage or configuration error (exit 2).
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(crate::commands::Usage(format!($($arg)*)).into())
    };
}
pub(crate) use usage;

/// Exit codes, by the class of a failure (`rentix --help`, README).
pub(crate) const FINDING: u8 = rentix_errors::Class::Finding as u8;
pub(crate) const USAGE: u8 = rentix_errors::Class::Usage as u8;
pub(crate) const INPUT: u8 = rentix_errors::Class::Input as u8;
pub(crate) const IO: u8 = rentix_errors::Class::Io as u8;

/// The class of one error of a chain, when its type says it: the binary's own
/// types here, every library crate's in [`rentix_errors::class_of`] (which Python
/// raises its exception classes by).
fn class_of(e: &(dyn std::error::Error + 'static)) -> Option<u8> {
    if e.is::<Finding>() {
        return Some(FINDING);
    }
    if e.is::<Usage>() {
        return Some(USAGE);
    }
    if e.is::<Missing>() {
        return Some(IO);
    }
    rentix_errors::class_of(e).map(|c| c as u8)
}

/// The message of a failed command: the error and its causes joined by ": ", as
/// `{:#}` writes them, except a cause whose text the message already ends with. An
/// error type that prints its source in its own text and also declares it (a
/// `thiserror` field named `source`) would otherwise say the reason twice:
/// `cannot write f.lock: No such file or directory (os error 2): No such file or
/// directory (os error 2)`.
pub(crate) fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let said = cause.to_string();
        if !text.is_empty() && text.ends_with(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

/// The exit code of a failed command: the class of the first error of its chain
/// whose type says one (outermost first); 3 (what the run was given could not be
/// used) when none does. `verify` that could not check never exits 1.
pub(crate) fn exit_code(err: &anyhow::Error) -> u8 {
    let class = err.chain().find_map(class_of).unwrap_or(INPUT);
    if err
        .downcast_ref::<rentix_publish::verify::Unchecked>()
        .is_some()
        && class == FINDING
    {
        return INPUT;
    }
    class
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reason said by an error and again by its declared source is written once;
    /// a context above them, and a cause that says something else, are kept.
    #[test]
    fn a_reason_its_error_already_says_is_written_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let table = rentix_table::TableError::Write {
            path: "f.csv.lock".into(),
            source: io(),
        };
        let err = anyhow::Error::new(table).context("writing f.csv");
        assert_eq!(
            error_text(&err),
            "writing f.csv: cannot write f.csv.lock: no such file"
        );
        assert_eq!(format!("{err:#}").matches("no such file").count(), 2);
        let plain = anyhow::Error::new(io()).context("reading g.csv");
        assert_eq!(error_text(&plain), "reading g.csv: no such file");
    }
}
