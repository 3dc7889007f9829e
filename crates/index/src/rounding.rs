//! Rounding of published values: half away from zero, on the decimal digits.

/// Rounds half away from zero to `decimals` places, on the decimal value the number
/// is written as (its shortest round-trip representation), not on its binary
/// expansion: 2.00065 (stored as 2.000649999...) rounds to 2.0007, as a person
/// rounding the published digits would.
///
/// Most values are decided by arithmetic: with `y = |x| 10^d` below 10^8, `y` is
/// within 3e-8 of the written value times 10^d, so when its fraction is further
/// than 1e-6 from one half the digits would round the same way, and `k / 10^d`
/// (`k` a whole number, `10^d` exact) is the nearest double to the rounded decimal,
/// which is what parsing its digits gives. Values near a half, or too large, are
/// rounded on their digits ([`round_on_digits`]). Every fixing rounds several
/// values: formatting each was 4% of a full index.
pub(crate) fn round_to(x: f64, decimals: u32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if decimals <= 8 {
        let scale = 10f64.powi(decimals as i32);
        let y = x.abs() * scale;
        let whole = y.floor();
        let frac = y - whole;
        if y < 1e8 && (frac - 0.5).abs() > 1e-6 {
            let k = if frac > 0.5 { whole + 1.0 } else { whole };
            let r = k / scale;
            return if r == 0.0 { 0.0 } else { r.copysign(x) };
        }
    }
    round_on_digits(x, decimals)
}

/// [`round_to`] on the digits of the shortest representation: the definition.
fn round_on_digits(x: f64, decimals: u32) -> f64 {
    let text = format!("{}", x.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let d = decimals as usize;
    if frac.len() <= d {
        return if x == 0.0 { 0.0 } else { x };
    }
    // Digits kept, and whether the first dropped digit rounds them up.
    let mut digits: Vec<u8> = int
        .bytes()
        .chain(frac.bytes().take(d))
        .map(|b| b - b'0')
        .collect();
    if frac.as_bytes()[d] >= b'5' {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let split = digits.len() - d;
    let s: String = digits[..split]
        .iter()
        .map(|v| char::from(b'0' + v))
        .chain(std::iter::once('.'))
        .chain(digits[split..].iter().map(|v| char::from(b'0' + v)))
        .collect();
    let r: f64 = s.trim_end_matches('.').parse().unwrap_or(x.abs());
    if r == 0.0 {
        0.0
    } else {
        r.copysign(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The arithmetic gives the bits the digits give: any magnitude, and values
        /// a hair either side of a half at the last place kept.
        #[test]
        fn arithmetic_rounds_as_the_digits_do(
            mantissa in -1e9f64..1e9,
            exp in -12i32..6,
            d in 0u32..10,
            k in 0u64..100_000_000,
            hair in prop_oneof![Just(0.0), -1e-9f64..1e-9, -1e-15f64..1e-15],
        ) {
            let x = mantissa * 10f64.powi(exp);
            prop_assert_eq!(round_to(x, d).to_bits(), round_on_digits(x, d).to_bits(), "{}", x);
            let half = (k as f64 + 0.5) / 10f64.powi(d as i32) * (1.0 + hair);
            prop_assert_eq!(
                round_to(half, d).to_bits(),
                round_on_digits(half, d).to_bits(),
                "{}",
                half
            );
        }
    }

    #[test]
    fn rounding() {
        assert_eq!(round_to(2.345_65, 4), 2.3457);
        assert_eq!(round_to(-0.000_01, 4), 0.0);
        assert_eq!(round_to(1.0 / 3.0, 2), 0.33);
        // Binary 2.00065 is 2.000649999...: decimal rounding gives 2.0007.
        assert_eq!(round_to(2.000_65, 4), 2.0007);
        assert_eq!(round_to(-2.000_65, 4), -2.0007);
        assert_eq!(round_to(1.005, 2), 1.01);
        assert_eq!(round_to(9.999_95, 4), 10.0);
        assert_eq!(round_to(0.000_05, 4), 0.0001);
        assert_eq!(round_to(2.5, 0), 3.0);
        assert_eq!(round_to(123.0, 4), 123.0);
        assert_eq!(round_to(1e-12, 4), 0.0);
        assert_eq!(round_to(1e21, 2), 1e21);
    }
}
