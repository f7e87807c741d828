//! Numbers for people: a float to a few significant digits, plain where it
//! reads well (`0.2155`, `2500`), scientific where it is small or large
//! (`2.4e-4`, `2.747e6`), trailing zeros dropped. `gravel check`, `gravel
//! info` and the progress lines print with it; what must read back exactly
//! (a time step to paste as `dt`, a state dump) does not.

/// `x` to `digits` significant digits (at least 1): plain for
/// `1e-3 ≤ |x| < 1e5`, else scientific; `0`, `inf` and `NaN` as such.
///
/// ```
/// use gravel::math::figures::sig;
/// assert_eq!(sig(2.747252747252747e6, 4), "2.747e6");
/// assert_eq!(sig(2.3999999999999998e-4, 4), "2.4e-4");
/// assert_eq!(sig(0.215454, 4), "0.2155");
/// assert_eq!(sig(2500.0, 4), "2500");
/// assert_eq!(sig(0.0000000010952839974493789, 6), "1.09528e-9");
/// assert_eq!(sig(-45000.0, 4), "-45000");
/// assert_eq!(sig(0.0, 4), "0");
/// ```
pub fn sig(x: f64, digits: usize) -> String {
    let digits = digits.max(1);
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    // The exponent after rounding (9.9996 to 4 digits is 10.00).
    let sci = format!("{:.*e}", digits - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-3..5).contains(&exp) {
        let decimals = (digits as i32 - 1 - exp).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    } else {
        format!("{}e{exp}", trim(mantissa.to_string()))
    }
}
