//! P&L decomposition of one hedge period.
//!
//! With `s = +1` for an earner and `-1` for a payer, rent change `dr = r_t - r_{t-1}`
//! (USD per GPU-hour), futures change `dF = S_t - F_t` (settlement minus entry),
//! exposure `E`, GPU-hours lost to operational events `L`, delivered `D = E - L` and
//! hedged GPU-hours `Q` (contracts x size; a payer is long, an earner short):
//!
//! - rent change P&L      `s dr D`
//! - futures P&L          `-s dF Q`
//! - basis P&L            `s (dr - dF) min(Q, D)`: rent and index moved differently
//!   on hedged, delivered hours;
//! - volume mismatch P&L  `-s dF (min(Q, E) - min(Q, D))`: hedged hours that events
//!   made undeliverable or unpaid leave the futures without rent to offset;
//! - unhedged remainder   `s dr max(D - Q, 0)`;
//! - over-hedge           `-s dF max(Q - E, 0)`: hedged beyond the exposure by choice.
//!
//! The last four add up to rent change + futures exactly. Operational loss (the USD
//! the events cost) is reported beside, never inside, these numbers.

use serde::Serialize;

/// Inputs of one period's decomposition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PnlInputs {
    pub sign: f64,
    pub rent_change: f64,
    pub futures_change: f64,
    pub exposure: f64,
    pub lost: f64,
    pub hedged_gpu_hours: f64,
    pub fees: f64,
}

/// One period's P&L in USD.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeriodPnl {
    pub rent_change: f64,
    pub futures: f64,
    pub basis: f64,
    pub volume_mismatch: f64,
    pub unhedged_remainder: f64,
    pub over_hedge: f64,
    pub fees: f64,
    pub hedged_total: f64,
    pub unhedged_total: f64,
}

pub fn decompose(i: PnlInputs) -> PeriodPnl {
    let s = i.sign;
    let (dr, df, e, q) = (
        i.rent_change,
        i.futures_change,
        i.exposure,
        i.hedged_gpu_hours,
    );
    let d = (e - i.lost).max(0.0);
    let rent_change = s * dr * d;
    let futures = -s * df * q;
    let basis = s * (dr - df) * q.min(d);
    let volume_mismatch = -s * df * (q.min(e) - q.min(d));
    let unhedged_remainder = s * dr * (d - q).max(0.0);
    let over_hedge = -s * df * (q - e).max(0.0);
    PeriodPnl {
        rent_change,
        futures,
        basis,
        volume_mismatch,
        unhedged_remainder,
        over_hedge,
        fees: i.fees,
        hedged_total: rent_change + futures - i.fees,
        unhedged_total: rent_change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(-1.0, 1000.0, 0.0, 800.0)]
    #[case(-1.0, 1000.0, 300.0, 800.0)]
    #[case(1.0, 1000.0, 600.0, 800.0)]
    #[case(1.0, 1000.0, 0.0, 1460.0)]
    #[case(1.0, 1000.0, 1000.0, 730.0)]
    fn parts_add_up(#[case] sign: f64, #[case] e: f64, #[case] lost: f64, #[case] q: f64) {
        let p = decompose(PnlInputs {
            sign,
            rent_change: 0.3,
            futures_change: 0.25,
            exposure: e,
            lost,
            hedged_gpu_hours: q,
            fees: 10.0,
        });
        let parts = p.basis + p.volume_mismatch + p.unhedged_remainder + p.over_hedge;
        assert!((parts - (p.rent_change + p.futures)).abs() < 1e-9);
        assert!((p.hedged_total - (p.rent_change + p.futures - 10.0)).abs() < 1e-9);
    }

    #[test]
    fn an_outage_is_volume_mismatch_not_basis() {
        // A neocloud (earner) hedged 1000 GPU-hours short; the index fell 0.5 and so did
        // its rent. An outage made 400 of the hours undeliverable.
        let p = decompose(PnlInputs {
            sign: 1.0,
            rent_change: -0.5,
            futures_change: -0.5,
            exposure: 1000.0,
            lost: 400.0,
            hedged_gpu_hours: 1000.0,
            fees: 0.0,
        });
        assert_eq!(p.basis, 0.0, "rent and index moved together: no basis");
        assert!(
            (p.volume_mismatch - 200.0).abs() < 1e-12,
            "short futures gain on 400 undelivered hours"
        );
        assert!((p.rent_change + 300.0).abs() < 1e-12);
        assert!((p.futures - 500.0).abs() < 1e-12);
    }
}
