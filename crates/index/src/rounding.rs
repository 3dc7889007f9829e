//! Rounding of published values: half away from zero, on the decimal digits.

/// Rounds half away from zero to `decimals` places, on the decimal value the number
/// is written as (its shortest round-trip representation), not on its binary
/// expansion: 2.00065 (stored as 2.000649999...) rounds to 2.0007, as a person
/// rounding the published digits would.
pub(crate) fn round_to(x: f64, decimals: u32) -> f64 {
    if !x.is_finite() {
        return x;
    }
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
