//! The class of a rentix failure, decided once from the error's type: the CLI exits
//! by it (`rentix --help`: 1 a finding, 2 usage or configuration, 3 input it cannot
//! use, 4 I/O) and the Python package raises its exception class by it
//! (`UsageError`, `InputError`, `IoError`, subclasses of `RentixError`), so that one
//! failure has one class on every surface.

/// What kind of failure an error is. The discriminant is the CLI's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Class {
    /// A check found something (`verify`'s differences, `store check`'s problems):
    /// the command ran; its answer is the finding.
    Finding = 1,
    /// A flag, methodology, contract, perp or mapping that cannot be run.
    Usage = 2,
    /// A file, row or store that cannot be used (named in the message).
    Input = 3,
    /// A file that does not exist, could not be read or written.
    Io = 4,
}

/// The class of a failure: that of the first error of its chain (outermost first)
/// whose type says one; [`Class::Input`] when none does (what the run was given
/// could not be used).
pub fn class(e: &(dyn std::error::Error + 'static)) -> Class {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if let Some(c) = class_of(e) {
            return c;
        }
        cur = e.source();
    }
    Class::Input
}

/// The class of one error, when its type says it (a typed error of a rentix
/// crate, an I/O error, a JSON error); `None` for any other, whose class its
/// causes may say ([`class`] walks them).
pub fn class_of(e: &(dyn std::error::Error + 'static)) -> Option<Class> {
    use rentix_backtest::BacktestError as B;
    use rentix_index::IndexError as X;
    use rentix_ingest::IngestError as G;
    use rentix_store::StoreError as S;
    use rentix_table::TableError as T;
    if e.is::<rentix_publish::verify::Differs>() {
        return Some(Class::Finding);
    }
    if e.is::<rentix_publish::verify::Usage>() {
        return Some(Class::Usage);
    }
    if let Some(e) = e.downcast_ref::<T>() {
        return Some(match e {
            T::Read { .. } | T::Write { .. } => Class::Io,
            T::Format { .. } | T::NoParquet { .. } => Class::Usage,
            _ => Class::Input,
        });
    }
    if let Some(e) = e.downcast_ref::<S>() {
        return match e {
            S::Read { .. } | S::Write { .. } => Some(Class::Io),
            S::Table(t) => class_of(t),
            _ => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<G>() {
        return match e {
            G::Read { .. } | G::Write { .. } => Some(Class::Io),
            G::Mapping { .. } | G::Cutoff { .. } | G::GivenTwice { .. } => Some(Class::Usage),
            G::Store(s) => class_of(s),
            G::Table(t) => class_of(t),
            _ => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<X>() {
        return match e {
            X::Methodology { .. } | X::Config(_) => Some(Class::Usage),
            X::Store(g) => class_of(g),
            X::Published(f) => class_of(f),
            X::Table(t) => class_of(t),
            _ => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<rentix_index::FixingsError>() {
        use rentix_index::FixingsError as F;
        return match e {
            F::Table(t) => class_of(t),
            F::Input { .. } | F::Fixings { .. } => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<B>() {
        return match e {
            B::Contract { .. } | B::ContractOnIndex(_) | B::Underlying(_) => Some(Class::Usage),
            B::Index(x) => class_of(x),
            B::Table(t) => class_of(t),
            _ => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<rentix_lab::LabError>() {
        use rentix_lab::LabError as L;
        return match e {
            L::Candidate { .. } | L::DuplicateName(_) | L::Settings(_) => Some(Class::Usage),
            L::Table(t) => class_of(t),
            L::Backtest(b) => class_of(b),
            L::Store(s) => class_of(s),
            _ => Some(Class::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<rentix_report::ReportError>() {
        use rentix_report::ReportError as P;
        return match e {
            P::Usage(_) => Some(Class::Usage),
            P::Input { .. } => Some(Class::Input),
            P::Index(x) => class_of(x),
            P::Backtest(x) => class_of(x),
            P::Lab(x) => class_of(x),
            P::Table(t) => class_of(t),
            P::Chart { .. } => Some(Class::Io),
        };
    }
    if let Some(e) = e.downcast_ref::<rentix_sim::SimError>() {
        return Some(match e {
            rentix_sim::SimError::Params(_) => Class::Usage,
            _ => Class::Io,
        });
    }
    if e.is::<rentix_core::CoreError>()
        || e.is::<serde_json::Error>()
        || e.is::<rentix_backtest::CostError>()
    {
        return Some(Class::Input);
    }
    if e.is::<std::io::Error>() {
        return Some(Class::Io);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cause's class is found under a context that says none; an error no type
    /// classes is input; a missing file read by the store is I/O.
    #[test]
    fn a_failure_is_classed_by_the_first_typed_error_of_its_chain() {
        #[derive(Debug)]
        struct Context(std::io::Error);
        impl std::fmt::Display for Context {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "while reading")
            }
        }
        impl std::error::Error for Context {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        assert_eq!(class(&Context(io)), Class::Io);
        let plain = std::fmt::Error;
        assert_eq!(class(&plain), Class::Input);
        let usage = rentix_lab::LabError::DuplicateName("a".into());
        assert_eq!(class(&usage), Class::Usage);
        assert_eq!(Class::Io as u8, 4);
    }
}
