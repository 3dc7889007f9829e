//! The two statistics every crate needs, written once: the median (midpoint of the
//! two middle values for an even count) and the sample standard deviation (n - 1);
//! and how a share is written for a person ([`percent`]).

/// Median with the midpoint rule; `None` for no values. Values are ordered by
/// `total_cmp`, so a NaN sorts last instead of panicking.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Sample standard deviation (n - 1); `None` below two values.
pub fn sample_std(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((ss / (n - 1) as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squares 32, 32 / 7 = 4.571428..., sd 2.13809.
        let s = sample_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(sample_std(&[1.0]), None);
    }
}

/// A number as a refusal shows it: `{}` from 1e-6 to 1e9, in scientific form beyond
/// (`{}` wrote a hostile 1e308 as 309 digits in a quarantine row's detail, and
/// 1e-300 as 300 zeros).
pub fn shown(x: f64) -> String {
    if x == 0.0 || (1e-6..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` to `digits` decimals, a value that rounds to zero written without its sign:
/// a console read "effectiveness -0.000 [-0.000, 0.000]" of a hedge that removed
/// exactly nothing.
pub fn fixed(x: f64, digits: usize) -> String {
    let text = format!("{x:.digits$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => text,
    }
}

/// A share (0.25) as a person reads it (`25%`): whole percents, except that a share
/// short of 100% (or away from 0%) is never written as 100% (or 0%): a hedge that
/// removes 99.96% of the risk reads `99.96%`, not a perfect `100%`. Up to two
/// decimals; beyond them `>99.99%` or `<0.01%`. Not finite: `n/a`.
pub fn percent(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let p = 100.0 * x;
    let whole = p.round();
    let exact = p == whole;
    if exact || !(whole == 100.0 || whole == 0.0 || whole == -0.0 || whole == -100.0) {
        // `-0` never shows: a whole zero is 0.
        return format!("{}%", if whole == 0.0 { 0.0 } else { whole });
    }
    for digits in 1..=2 {
        let text = format!("{p:.digits$}");
        let v: f64 = text.parse().unwrap_or(p);
        if v.abs() != 100.0 && v != 0.0 {
            return format!("{text}%");
        }
    }
    match (whole.abs() == 100.0, p > 0.0) {
        (true, true) => ">99.99%".into(),
        (true, false) => "<-99.99%".into(),
        (false, true) => "<0.01%".into(),
        (false, false) => ">-0.01%".into(),
    }
}

#[cfg(test)]
mod percent_tests {
    use super::{fixed, percent};

    #[test]
    fn whole_percents_except_near_0_and_100() {
        // Hand values: 0.25 -> 25%; 0.994 rounds to 99%; 0.9996 would round to 100%,
        // so it keeps the decimals that tell it from 100 (99.96%); 0.99996 needs
        // more than two (>99.99%); 1.0 is exactly 100%.
        assert_eq!(percent(0.25), "25%");
        assert_eq!(percent(0.994), "99%");
        assert_eq!(percent(0.9996), "99.96%");
        assert_eq!(percent(0.9962), "99.6%");
        assert_eq!(percent(0.99996), ">99.99%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(-0.0), "0%");
        assert_eq!(percent(0.004), "0.4%");
        assert_eq!(percent(-0.004), "-0.4%");
        assert_eq!(percent(0.000_01), "<0.01%");
        assert_eq!(percent(-0.000_01), ">-0.01%");
        assert_eq!(fixed(-0.0, 3), "0.000");
        assert_eq!(fixed(-0.000_4, 3), "0.000");
        assert_eq!(fixed(-0.000_5, 3), "-0.001");
        assert_eq!(fixed(0.443, 3), "0.443");
        assert_eq!(percent(-0.5), "-50%");
        assert_eq!(percent(f64::NAN), "n/a");
    }
}
