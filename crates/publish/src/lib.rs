//! rentix's publication rules, outside the binary so that every surface (the CLI,
//! Python) publishes and verifies the same way: [`intraday`] publishes an intraday
//! methodology's stamps from a store, [`verify`] fixes a publication (daily or
//! intraday) again from its store and compares every cell. The daily publication's
//! own rules (restatement, archive, lock, digest, state) are `rentix_index`'s
//! `publish`.

pub mod intraday;
pub mod verify;
