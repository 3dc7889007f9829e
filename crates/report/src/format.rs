//! Numbers as a desk prints them: money with units and thousands, counts with
//! separators. One place, so the card, the tables and the chart axes agree.

/// Money as a desk prints it: `-$203k`, `$1.2M`, `$3.9k`, `$950` (two significant
/// figures at least).
pub fn money(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a >= 1e6 {
        format!("{sign}${:.1}M", a / 1e6)
    } else if a >= 1e4 {
        format!("{sign}${:.0}k", a / 1e3)
    } else if a >= 1e3 {
        format!("{sign}${:.1}k", a / 1e3)
    } else {
        format!("{sign}${a:.0}")
    }
}

/// Money on an axis, as a desk prints it: `-$10k`, `$2.5k`, `$1.2M`, `$950`.
pub(crate) fn money_tick(x: f64) -> String {
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    let trim = |v: f64| {
        if (v - v.round()).abs() < 1e-9 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    if a >= 1e6 {
        format!("{sign}${}M", trim(a / 1e6))
    } else if a >= 1e3 {
        format!("{sign}${}k", trim(a / 1e3))
    } else {
        format!("{sign}${a:.0}")
    }
}

/// A count with thousands separators: `23,500`.
pub(crate) fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 && digits != "0" {
        format!("-{out}")
    } else {
        out
    }
}

/// A whole number of dollars in a table: `5,437`; `n/a` when absent or not finite.
pub(crate) fn whole(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        Some(v) => thousands(v),
        None => "n/a".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_as_a_desk_prints_it() {
        assert_eq!(money(-203_412.0), "-$203k");
        assert_eq!(money(1_234_567.0), "$1.2M");
        assert_eq!(money(950.4), "$950");
        assert_eq!(money(3_854.0), "$3.9k");
        assert_eq!(money(f64::NAN), "n/a");
    }

    #[test]
    fn axis_money_and_counts_as_a_desk_prints_them() {
        assert_eq!(money_tick(-10_000.0), "-$10k");
        assert_eq!(money_tick(2_500.0), "$2.5k");
        assert_eq!(money_tick(1_200_000.0), "$1.2M");
        assert_eq!(money_tick(950.0), "$950");
        assert_eq!(money_tick(0.0), "$0");
        assert_eq!(thousands(23_500.0), "23,500");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
        assert_eq!(thousands(-5_000.0), "-5,000");
        assert_eq!(thousands(999.0), "999");
    }

    #[test]
    fn whole_numbers_in_tables() {
        assert_eq!(whole(Some(5_437.4)), "5,437");
        assert_eq!(whole(None), "n/a");
        assert_eq!(whole(Some(f64::NAN)), "n/a");
    }
}
