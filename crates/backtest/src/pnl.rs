//! P&L decomposition of one hedge period.
//!
//! With `s = +1` for an earner and `-1` for a payer, rent change `dr = rent - R_ref`
//! (USD per GPU-hour, measured from the rent the hedge locked in, see `periods`),
//! futures change `dF = S - F` (settlement minus entry price), carry `c = F - I`
//! (the entry price's premium over the index level at entry: an assumed premium, or
//! a term structure's discount), the index change `dI = S - I = dF + c`, exposure
//! `E`, GPU-hours lost to operational events `L`, delivered `D = E - L` and hedged
//! GPU-hours `Q` (contracts x size; a payer is long, an earner short):
//!
//! - rent change P&L      `s dr D`
//! - futures P&L          `-s dF Q`
//! - basis P&L            `s (dr - dI) min(Q, D)`: rent and index moved differently
//!   on hedged, delivered hours;
//! - entry carry P&L      `s c Q`: what entering above (or below) the index level
//!   costs (or earns) whatever the index does; carry, not basis;
//! - volume mismatch P&L  `-s dI (min(Q, E) - min(Q, D))`: hedged hours that events
//!   made undeliverable or unpaid leave the futures without rent to offset;
//! - unhedged remainder   `s dr max(D - Q, 0)`;
//! - over-hedge           `-s dI max(Q - E, 0)`: hedged beyond the exposure by choice.
//!
//! The last five add up to rent change + futures exactly. A perpetual swap (`perp`)
//! adds its funding P&L (0 for futures): the position's risk is
//! `hedged_before_fees`, the rent change plus futures plus any funding that was not
//! known at entry (a dated premium's); `hedged_total` is the rent change plus
//! futures plus all funding less the fees. Fees, and funding at a constant premium
//! (the premium times the position and its known schedule), are costs known at
//! entry and so no part of the risk the effectiveness measures. Operational loss (the USD the events cost) is reported
//! beside, never inside, these numbers.

use serde::Serialize;

/// Inputs of one period's decomposition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PnlInputs {
    /// `s`: +1 for an earner, -1 for a payer ([`Side::sign`](crate::Side::sign)).
    pub sign: f64,
    /// `dr = rent - R_ref`, USD per GPU-hour.
    pub rent_change: f64,
    /// `dF = S - F`, USD per GPU-hour (a perp's price change).
    pub futures_change: f64,
    /// `F - I`: entry price minus the index level at entry, USD per GPU-hour.
    pub carry: f64,
    /// `E`: GPU-hours of rent in the period.
    pub exposure: f64,
    /// `L`: GPU-hours operational events made undeliverable or unpaid.
    pub lost: f64,
    /// `Q`: GPU-hours hedged, contracts x size.
    pub hedged_gpu_hours: f64,
    /// Fees of the position, USD.
    pub fees: f64,
    /// A perp's funding P&L, USD (0 for futures).
    pub funding: f64,
    /// Whether `funding` was known when the position was entered (a constant
    /// premium on a known position and schedule): a cost like the fees, not risk.
    pub funding_known: bool,
}

/// One period's P&L in USD: every part but `fees` is a gain to the user when
/// positive, whichever side the user is on (the sign `s` is applied).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeriodPnl {
    /// `s dr D`: the rent's change on the delivered hours.
    pub rent_change: f64,
    /// `-s dF Q`: the futures (or perp price) P&L.
    pub futures: f64,
    /// `s (dr - dI) min(Q, D)`: rent and index moved differently on hedged, delivered
    /// hours.
    pub basis: f64,
    /// `s c Q`: entering above (or below) the index level.
    pub entry_carry: f64,
    /// `-s dI (min(Q, E) - min(Q, D))`: hedged hours events left without rent to
    /// offset.
    pub volume_mismatch: f64,
    /// `s dr max(D - Q, 0)`: delivered hours beyond the hedge.
    pub unhedged_remainder: f64,
    /// `-s dI max(Q - E, 0)`: hedged beyond the exposure.
    pub over_hedge: f64,
    /// A perp's funding P&L (0 for futures).
    pub funding: f64,
    /// Fees of the position (positive, a cost).
    pub fees: f64,
    /// Rent change plus futures (plus a perp's funding at a dated premium): the
    /// hedged position's risk, before the costs known at entry, the fees and
    /// funding at a constant premium (effectiveness is measured on this).
    pub hedged_before_fees: f64,
    /// Rent change plus futures plus funding, less the fees: the position's P&L.
    pub hedged_total: f64,
    /// The position without a hedge: `rent_change`.
    pub unhedged_total: f64,
}

/// The period's P&L, part by part (the module doc's formulas).
pub(crate) fn decompose(i: PnlInputs) -> PeriodPnl {
    let s = i.sign;
    let (dr, df, e, q) = (
        i.rent_change,
        i.futures_change,
        i.exposure,
        i.hedged_gpu_hours,
    );
    let d = (e - i.lost).max(0.0);
    let di = df + i.carry;
    let rent_change = s * dr * d;
    let futures = -s * df * q;
    let basis = s * (dr - di) * q.min(d);
    let entry_carry = s * i.carry * q;
    let volume_mismatch = -s * di * (q.min(e) - q.min(d));
    let unhedged_remainder = s * dr * (d - q).max(0.0);
    let over_hedge = -s * di * (q - e).max(0.0);
    PeriodPnl {
        rent_change,
        futures,
        basis,
        entry_carry,
        volume_mismatch,
        unhedged_remainder,
        over_hedge,
        funding: i.funding,
        fees: i.fees,
        hedged_before_fees: rent_change + futures + if i.funding_known { 0.0 } else { i.funding },
        hedged_total: rent_change + futures + i.funding - i.fees,
        unhedged_total: rent_change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up() {
        // (sign, exposure, lost, hedged GPU-hours, carry)
        let cases = [
            (-1.0, 1000.0, 0.0, 800.0, 0.0),
            (-1.0, 1000.0, 300.0, 800.0, 0.05),
            (1.0, 1000.0, 600.0, 800.0, -0.12),
            (1.0, 1000.0, 0.0, 1460.0, 0.05),
            (1.0, 1000.0, 1000.0, 730.0, 0.0),
        ];
        for (sign, e, lost, q, carry) in cases {
            let p = decompose(PnlInputs {
                sign,
                rent_change: 0.3,
                futures_change: 0.25,
                carry,
                exposure: e,
                lost,
                hedged_gpu_hours: q,
                fees: 10.0,
                funding: 0.0,
                funding_known: false,
            });
            let parts =
                p.basis + p.entry_carry + p.volume_mismatch + p.unhedged_remainder + p.over_hedge;
            assert!((parts - (p.rent_change + p.futures)).abs() < 1e-9);
            assert!((p.hedged_total - (p.rent_change + p.futures - 10.0)).abs() < 1e-9);
        }
    }

    #[test]
    fn an_outage_is_volume_mismatch_not_basis() {
        // A neocloud (earner) hedged 1000 GPU-hours short; the index fell 0.5 and so did
        // its rent. An outage made 400 of the hours undeliverable.
        let p = decompose(PnlInputs {
            sign: 1.0,
            rent_change: -0.5,
            futures_change: -0.5,
            carry: 0.0,
            exposure: 1000.0,
            lost: 400.0,
            hedged_gpu_hours: 1000.0,
            fees: 0.0,
            funding: 0.0,
            funding_known: false,
        });
        assert_eq!(p.basis, 0.0, "rent and index moved together: no basis");
        assert!(
            (p.volume_mismatch - 200.0).abs() < 1e-12,
            "short futures gain on 400 undelivered hours"
        );
        assert!((p.rent_change + 300.0).abs() < 1e-12);
        assert!((p.futures - 500.0).abs() < 1e-12);
    }

    #[test]
    fn an_entry_premium_is_carry_not_basis() {
        // A payer (long) entered at the index plus 0.05 on 730 GPU-hours; rent and
        // index both rose 0.2, so the futures gained 0.15 a GPU-hour.
        let p = decompose(PnlInputs {
            sign: -1.0,
            rent_change: 0.2,
            futures_change: 0.15,
            carry: 0.05,
            exposure: 730.0,
            lost: 0.0,
            hedged_gpu_hours: 730.0,
            fees: 0.0,
            funding: 0.0,
            funding_known: false,
        });
        assert!(p.basis.abs() < 1e-12, "{p:?}");
        assert!((p.entry_carry + 0.05 * 730.0).abs() < 1e-9, "{p:?}");
        assert!(
            (p.hedged_total + 36.5).abs() < 1e-9,
            "locked rent plus the premium"
        );
    }
}
