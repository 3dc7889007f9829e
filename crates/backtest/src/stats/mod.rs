//! Hedge statistics, one concept per file. Each file's header gives the formula,
//! the degrees of freedom and a reference; tests check published or hand-computed
//! numbers.

pub mod basis;
pub mod bootstrap;
pub mod break_test;
pub mod correlation;
pub mod dollar_offset;
pub mod effectiveness;
pub mod hedge_ratio;
pub mod moments;
pub mod regression;
pub mod rolling;
pub mod selection;
pub mod tracking_error;
pub mod var;

#[cfg(test)]
mod tests_support;
