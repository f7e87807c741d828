//! Helpers the contact models' unit tests share.

use glam::DVec3;
use proptest::prelude::*;

/// `a` and `b` agree to `tol` relative to the larger length (and to `tol`
/// absolutely near zero).
pub(crate) fn vclose(a: DVec3, b: DVec3, tol: f64) -> bool {
    (a - b).length() <= tol * (1.0 + a.length().max(b.length()))
}

/// `v` normalised, or `ẑ` for a vector too short to give a direction.
pub(crate) fn unit(v: DVec3) -> DVec3 {
    let l = v.length();
    if l < 1e-3 {
        DVec3::Z
    } else {
        v / l
    }
}

/// A vector with components uniform in `(−s, s)`.
pub(crate) fn vec3(s: f64) -> impl Strategy<Value = DVec3> {
    (-s..s, -s..s, -s..s).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}
