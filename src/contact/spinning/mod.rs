//! Spinning (twisting) friction models, one file each, listed in the
//! registry [`SpinningModel`]: a couple `M_s` about the contact that acts
//! `+M_s` on `i` and `−M_s` on `j`. The only one is Altair EDEM's
//! "Spinning Friction" with its rocking damping ([`edem`]).
//!
//! The contact is treated as a disk of radius `R_disk = sqrt(A_contact/π)`,
//! `A_contact` the area of the overlap region's normal section (the circle in
//! which the two surfaces intersect): [`disk_radius_pair`],
//! [`disk_radius_wall`].

pub mod edem;

pub use edem::{Edem, SPIN_SAFETY};

use super::model::{registry, Model};
use crate::simd::lane::{Lane, V3};
use glam::DVec3;

/// The kernel of a spinning model, besides what every [`Model`] provides.
pub trait SpinningLaw: Model {
    /// The couple on `i` of a contact (or of a group, one per lane).
    fn couple<T: Lane>(&self, inp: &SpinningInput<T>) -> V3<T>;
}

registry! {
    /// A spinning friction model with its run-constant parameters for one
    /// material pair.
    pub enum SpinningModel;
    /// Spinning friction models, chosen by `model = "..."` (physics.md,
    /// "Spinning friction"; default none).
    pub enum SpinningSpec or
        /// No spinning friction.
        None;
    each: each_spinning, $;
    /// Altair EDEM "Spinning Friction" with rocking damping ([`edem`]).
    Edem(Edem) = "edem",
}

impl SpinningModel {
    /// The couple on `i` of contacts in lanes ([`SpinningLaw::couple`]).
    #[inline(always)]
    pub fn couple<T: Lane>(&self, inp: &SpinningInput<T>) -> V3<T> {
        each_spinning!(self, m => m.couple(inp))
    }
}

/// Contact disk radius of two overlapping spheres: the radius `a` of the
/// circle in which their surfaces intersect,
/// `a² = R_i² − ((r² + R_i² − R_j²)/(2r))²` for centre distance `r`.
///
/// Evaluated in the factored form
/// `a² = (R_i + R_j − r)(r − R_i + R_j)(r + R_i − R_j)(r + R_i + R_j)/(4r²)`
/// (the same quantity, free of cancellation at small overlap). Zero when the
/// surfaces do not intersect (no overlap, one sphere inside the other, or
/// `r ≤ 0`). For equal spheres `a² = Rδ − δ²/4`; for small overlap
/// `a ≈ sqrt(2 R* δ)`, √2 times the Hertz contact radius. Per lane.
///
/// The root is multiplied by `½ · (1/r)`, whose division is the one the
/// contact normal `n = d (1/r)` takes
/// ([`crate::contact::Kinematics::of_pair_for`]): the compiler computes it
/// once for both (a division fewer a contact, within an ulp of dividing
/// by `2r`).
#[inline(always)]
pub fn disk_radius_pair<T: Lane>(r_i: T, r_j: T, dist: T) -> T {
    let zero = T::splat(0.0);
    let f1 = r_i + r_j - dist; // the overlap δ
    let f2 = dist - r_i + r_j;
    let f3 = dist + r_i - r_j;
    let f4 = dist + r_i + r_j;
    let a = ((f1 * f2) * (f3 * f4)).sqrt() * (T::splat(0.5) * (T::splat(1.0) / dist));
    let apart = dist.le(zero) | f1.le(zero) | f2.le(zero) | f3.le(zero);
    T::select(apart, zero, a)
}

/// Contact disk radius of a sphere of radius `r` on a plane at overlap
/// `delta`: `a² = 2Rδ − δ²` (the plane cuts the sphere in that circle),
/// clamped at `a² ≥ 0`, so `δ ≤ 0` and `δ ≥ 2R` give zero. For small
/// overlap `a ≈ sqrt(2Rδ)`, √2 times the Hertz contact radius. Per lane.
#[inline(always)]
pub fn disk_radius_wall<T: Lane>(r: T, delta: T) -> T {
    (delta * (T::splat(2.0) * r - delta))
        .max(T::splat(0.0))
        .sqrt()
}

/// Per-contact, per-step input of [`spinning_torque`] (per lane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpinningInput<T: Lane = f64> {
    /// Unit contact normal `n`, from `i` to `j`.
    pub n: V3<T>,
    /// Relative angular velocity `ω_rel = ω_i − ω_j` (for a wall `ω_j` is the
    /// wall's angular velocity).
    pub omega_rel: V3<T>,
    /// Normal force magnitude `|F_n|` \[N\] (the absolute value is taken).
    pub normal_force: T,
    /// Contact disk radius `R_disk` \[m\], from [`disk_radius_pair`] or
    /// [`disk_radius_wall`].
    pub disk_radius: T,
    /// Smallest principal moment of inertia over the contact's particles
    /// (walls excluded) \[kg m²\].
    pub min_inertia: T,
    /// The normal model's linear damping coefficient `γ_n` \[N s/m\] at this
    /// contact (for Hertz, its value at the current overlap).
    pub gamma_n: T,
    /// Time step `Δt` \[s\].
    pub dt: f64,
}

/// The spinning couple on `i` (`j` receives the negation) of one contact,
/// for any spinning model.
#[inline]
pub fn spinning_torque(m: &SpinningModel, inp: &SpinningInput) -> DVec3 {
    debug_assert!(
        (inp.n.length_squared() - 1.0).abs() < 1e-9,
        "spinning_torque: n is not a unit vector: {:?}",
        inp.n
    );
    debug_assert!(inp.dt > 0.0, "spinning_torque: time step must be positive");
    m.couple(inp).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_spheres_disk_radius_from_direct_geometry() {
        let r = 2e-3;
        for nominal in [1e-9, 1e-6, 1e-4, 1e-3, 2e-3] {
            let dist = 2.0 * r - nominal;
            // The overlap actually represented by `dist` (exact in f64).
            let delta = 2.0 * r - dist;
            let a = disk_radius_pair(r, r, dist);
            // The intersection circle lies in the mid-plane, at distance
            // dist/2 from each centre: a² = R² − (dist/2)² = Rδ − δ²/4.
            let direct = (r * r - (dist / 2.0) * (dist / 2.0)).sqrt();
            let closed = (r * delta - delta * delta / 4.0).sqrt();
            assert!((a - closed).abs() <= 1e-14 * closed, "{a} vs {closed}");
            // The direct form loses digits to cancellation at tiny δ.
            assert!((a - direct).abs() <= 1e-6 * closed, "{a} vs {direct}");
            // √2 × Hertz radius sqrt(R* δ) at small overlap (R* = R/2).
            if delta <= 1e-6 {
                let hertz = (r / 2.0 * delta).sqrt();
                assert!((a / hertz - 2f64.sqrt()).abs() < 1e-3);
            }
        }
        assert_eq!(disk_radius_pair(r, r, 2.0 * r), 0.0);
        assert_eq!(disk_radius_pair(r, r, 2.5 * r), 0.0);
        assert_eq!(disk_radius_pair(r, r, 0.0), 0.0);
        // One sphere inside the other: no intersection circle.
        assert_eq!(disk_radius_pair(3.0, 1.0, 1.5), 0.0);
    }

    #[test]
    fn sphere_plane_disk_radius() {
        let r = 2e-3;
        for delta in [1e-9, 1e-6, 1e-4, 1e-3, 2e-3] {
            let a = disk_radius_wall(r, delta);
            // The plane at distance R − δ from the centre cuts the sphere in
            // a circle of radius sqrt(R² − (R − δ)²) = sqrt(2Rδ − δ²).
            let closed = (2.0 * r * delta - delta * delta).sqrt();
            assert!((a - closed).abs() <= 1e-14 * closed);
            let direct = (r * r - (r - delta) * (r - delta)).sqrt();
            assert!((a - direct).abs() <= 1e-6 * closed);
        }
        assert_eq!(disk_radius_wall(r, 0.0), 0.0);
        assert_eq!(disk_radius_wall(r, -1e-6), 0.0);
        assert_eq!(disk_radius_wall(r, 3.0 * r), 0.0);
    }

    proptest! {
        /// A point of the computed circle lies on both sphere surfaces.
        #[test]
        fn pair_disk_radius_lies_on_both_spheres(
            r_i in 1e-4..1e-1f64,
            ratio in 0.1..10.0f64,
            frac in 1e-6..0.9f64,
        ) {
            let r_j = r_i * ratio;
            // Overlap up to 90 % of the smaller diameter-ish range, while the
            // smaller sphere still sticks out of the larger one.
            let lo = (r_i - r_j).abs();
            let hi = r_i + r_j;
            let dist = hi - frac * (hi - lo);
            let a = disk_radius_pair(r_i, r_j, dist);
            let h = (dist * dist + r_i * r_i - r_j * r_j) / (2.0 * dist);
            let point = DVec3::new(a, 0.0, h); // i at origin, j at (0, 0, dist)
            let scale = r_i.max(r_j);
            prop_assert!((point.length() - r_i).abs() <= 1e-12 * scale);
            prop_assert!(((point - DVec3::new(0.0, 0.0, dist)).length() - r_j).abs()
                <= 1e-12 * scale);
            // Symmetric in the two spheres.
            let b = disk_radius_pair(r_j, r_i, dist);
            prop_assert!((a - b).abs() <= 1e-14 * scale);
        }
    }
}
