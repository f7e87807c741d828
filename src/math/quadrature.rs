//! Test helpers of the numerical functions and of the models that use them:
//! relative error and adaptive Simpson quadrature.

/// The relative error `|a − b|/|b|` (0 when `a == b`).
pub(crate) fn rel_err(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs()
    }
}

/// Simpson's rule on [a, b] from the end and mid values.
fn simpson(a: f64, b: f64, fa: f64, fm: f64, fb: f64) -> f64 {
    (b - a) / 6.0 * (fa + 4.0 * fm + fb)
}

/// Adaptive Simpson with Richardson correction: split until the two
/// halves agree with the whole to `15 tol`.
#[allow(clippy::too_many_arguments)]
fn adapt(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    fa: f64,
    fm: f64,
    fb: f64,
    whole: f64,
    tol: f64,
    depth: u32,
) -> f64 {
    let m = 0.5 * (a + b);
    let (lm, rm) = (0.5 * (a + m), 0.5 * (m + b));
    let (flm, frm) = (f(lm), f(rm));
    let left = simpson(a, m, fa, flm, fm);
    let right = simpson(m, b, fm, frm, fb);
    let delta = left + right - whole;
    if depth == 0 || delta.abs() <= 15.0 * tol {
        left + right + delta / 15.0
    } else {
        adapt(f, a, m, fa, flm, fm, left, 0.5 * tol, depth - 1)
            + adapt(f, m, b, fm, frm, fb, right, 0.5 * tol, depth - 1)
    }
}

/// `∫_a^b f` to absolute tolerance `tol`.
fn integrate(f: &dyn Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    let (fa, fm, fb) = (f(a), f(0.5 * (a + b)), f(b));
    adapt(f, a, b, fa, fm, fb, simpson(a, b, fa, fm, fb), tol, 50)
}

/// `∫_a^b f` to relative tolerance `rel` (two passes: a rough value sets
/// the absolute tolerance of the second), with optional break points.
pub(crate) fn integrate_rel(f: &dyn Fn(f64) -> f64, points: &[f64], rel: f64) -> f64 {
    let pass = |tol: f64| -> f64 {
        points
            .windows(2)
            .map(|w| integrate(f, w[0], w[1], tol))
            .sum()
    };
    let rough = pass(
        1e-6 * points
            .iter()
            .map(|p| p.abs())
            .fold(0.0, f64::max)
            .max(1e-300),
    );
    pass(rel * rough.abs())
}
