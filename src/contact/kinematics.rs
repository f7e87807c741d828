//! Per-pair kinematics, computed once per contact and shared by every sub-model.
//!
//! Notation follows `physics.md`: `i` is the body with the lower global id (a
//! wall is always `j`), `n = d/r` points from `i` to `j`, the overlap is
//! `δ = R_i + R_j − r`, and the lever arms `ℓ_i = R_i − δ/2`, `ℓ_j = R_j − δ/2`
//! put the contact point in the middle of the overlap so that the two lever
//! arms sum to `r` and angular momentum is conserved exactly.
//!
//! Also here, for the models whose history is a vector that must turn with
//! the contact (the spring-slider's elongation, the EPSD spring torque):
//! [`rotate_into_plane`] and [`rotate_about_normal`].

use crate::math::series::small_sin_cos;
use crate::simd::lane::{Lane, Lanes, V3};
use glam::DVec3;

/// The state of one body that a contact law reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Centre position (for `j`, already including any periodic image shift).
    pub x: DVec3,
    /// Velocity.
    pub v: DVec3,
    /// Angular velocity.
    pub omega: DVec3,
    /// Radius.
    pub radius: f64,
    /// Inverse mass (0 for a frozen particle).
    pub inv_mass: f64,
}

/// Relative kinematics of one contact (see the module docs for the
/// notation), in lanes: `Kinematics<f64>` for one contact,
/// `Kinematics<F64x4>` for four. The default is all zeros (for examples
/// and tests that set the fields a model reads).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Kinematics<T: Lane = f64> {
    /// Unit normal from `i` to `j`.
    pub n: V3<T>,
    /// Centre distance (for walls: the distance from the centre to the wall surface).
    pub r: T,
    /// Overlap `δ`.
    pub delta: T,
    /// Overlap rate `δ̇ = −v_c·n`.
    pub delta_dot: T,
    /// Lever arm of `i`, `ℓ_i = R_i − δ/2`.
    pub lever_i: T,
    /// Lever arm of `j`, `ℓ_j = R_j − δ/2` (infinite for a wall).
    pub lever_j: T,
    /// Tangential part of the contact-point velocity of `j` relative to `i`.
    pub v_t: V3<T>,
    /// `ω_i − ω_j`.
    pub omega_rel: V3<T>,
    /// Mean spin about the normal, `½(ω_i + ω_j)·n`: the rate at which a
    /// rigidly rotating pair turns about `n` (tangential history co-rotates with it).
    pub spin_n: T,
    /// Effective radius `R*`.
    pub r_eff: T,
    /// Effective mass `m*` (infinite parts excluded: a frozen body or wall counts as infinitely heavy).
    pub m_eff: T,
}

/// The two bodies of sphere–sphere contacts, in lanes, in canonical
/// orientation (`i` the lower id), with their separation: what
/// [`Kinematics::of_pair`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairBodies<T> {
    /// Separation `d = x_j − x_i`.
    pub d: V3<T>,
    /// Its length `r > 0`.
    pub r: T,
    /// Radii `R_i`, `R_j`.
    pub radius: [T; 2],
    /// Velocities `v_i`, `v_j`.
    pub v: [V3<T>; 2],
    /// Angular velocities `ω_i`, `ω_j`.
    pub omega: [V3<T>; 2],
    /// Inverse masses (0 for a frozen particle).
    pub inv_mass: [T; 2],
}

impl PairBodies<f64> {
    /// One contact: bodies `bi`, `bj` (their positions are not read) with
    /// separation `d = x_j − x_i` of length `r`.
    #[inline(always)]
    pub fn of(bi: &Body, bj: &Body, d: DVec3, r: f64) -> Self {
        PairBodies {
            d: d.into(),
            r,
            radius: [bi.radius, bj.radius],
            v: [bi.v.into(), bj.v.into()],
            omega: [bi.omega.into(), bj.omega.into()],
            inv_mass: [bi.inv_mass, bj.inv_mass],
        }
    }
}

impl<const N: usize> PairBodies<Lanes<N>> {
    /// Put a contact in lane `l` (as [`PairBodies::of`]).
    #[inline(always)]
    pub fn set_lane(&mut self, l: usize, [bi, bj]: [&Body; 2], d: DVec3, r: f64) {
        self.d.set_lane(l, d);
        self.r.0[l] = r;
        for (side, b) in [bi, bj].into_iter().enumerate() {
            self.radius[side].0[l] = b.radius;
            self.v[side].set_lane(l, b.v);
            self.omega[side].set_lane(l, b.omega);
            self.inv_mass[side].0[l] = b.inv_mass;
        }
    }
}

impl<T: Lane> Kinematics<T> {
    /// Kinematics of sphere–sphere contacts.
    #[inline(always)]
    pub fn of_pair(b: &PairBodies<T>) -> Self {
        Self::of_pair_for(b, true)
    }

    /// [`Self::of_pair`] for a law that may not read `R*`
    /// ([`crate::contact::ContactLaw::reads_r_eff`]): without `with_r_eff`,
    /// `r_eff` is NaN and its division is saved.
    #[inline(always)]
    pub fn of_pair_for(b: &PairBodies<T>, with_r_eff: bool) -> Self {
        let [ri, rj] = b.radius;
        let [vi, vj] = b.v;
        let [wi, wj] = b.omega;
        // One division instead of three (n differs from d / r by at most an ulp).
        let n = b.d.scale(T::splat(1.0) / b.r);
        let delta = ri + rj - b.r;
        let lever_i = ri - T::splat(0.5) * delta;
        let lever_j = rj - T::splat(0.5) * delta;
        let v_c = (vj - vi) + wj.cross(n.scale(-lever_j)) - wi.cross(n.scale(lever_i));
        let vn = v_c.dot(n);
        Self {
            n,
            r: b.r,
            delta,
            delta_dot: -vn,
            lever_i,
            lever_j,
            v_t: v_c - n.scale(vn),
            omega_rel: wi - wj,
            spin_n: T::splat(0.5) * (wi + wj).dot(n),
            r_eff: if with_r_eff {
                ri * rj / (ri + rj)
            } else {
                T::splat(f64::NAN)
            },
            m_eff: T::splat(1.0) / (b.inv_mass[0] + b.inv_mass[1]),
        }
    }
}

impl Kinematics {
    /// Kinematics of a sphere–sphere contact with separation `d = x_j − x_i` of length `r > 0`.
    #[inline(always)]
    pub fn pair(bi: &Body, bj: &Body, d: DVec3, r: f64) -> Self {
        Self::of_pair(&PairBodies::of(bi, bj, d, r))
    }

    /// Kinematics of a sphere–wall contact. `n` is the unit normal from the
    /// sphere's centre towards the wall, `dist` the centre-to-surface distance,
    /// `wall_velocity` the wall's velocity at the contact point and
    /// `wall_omega` its angular velocity.
    #[inline]
    pub fn wall(bi: &Body, n: DVec3, dist: f64, wall_velocity: DVec3, wall_omega: DVec3) -> Self {
        let delta = bi.radius - dist;
        let lever_i = bi.radius - 0.5 * delta;
        let v_c = wall_velocity - bi.v - bi.omega.cross(lever_i * n);
        let vn = v_c.dot(n);
        Self {
            n: n.into(),
            r: dist,
            delta,
            delta_dot: -vn,
            lever_i,
            lever_j: f64::INFINITY,
            v_t: (v_c - vn * n).into(),
            omega_rel: (bi.omega - wall_omega).into(),
            spin_n: 0.5 * (bi.omega + wall_omega).dot(n),
            r_eff: bi.radius,
            m_eff: 1.0 / bi.inv_mass,
        }
    }
}
/// Rotate `v` (in the plane normal to the unit vector `n`) by `angle` about
/// `n`: the part of a rigid rotation that twists the contact, which the
/// projection alone cannot follow.
#[inline(always)]
pub fn rotate_about_normal<T: Lane>(v: V3<T>, n: V3<T>, angle: T) -> V3<T> {
    let (s, c) = small_sin_cos(angle);
    let turned = v.scale(c) + n.cross(v).scale(s);
    V3::select(angle.eq(T::splat(0.0)), v, turned)
}

/// Project `v` onto the plane normal to the unit vector `n` and rescale it to
/// its old length (objective history update; a vector already in the plane is
/// returned unchanged up to rounding; a zero vector stays zero, and one
/// along `n` becomes zero).
#[inline(always)]
pub fn rotate_into_plane<T: Lane>(v: V3<T>, n: V3<T>) -> V3<T> {
    let zero = T::splat(0.0);
    let old2 = v.length_squared();
    let p = v - n.scale(v.dot(n));
    let new2 = p.length_squared();
    let rescaled = p.scale((old2 / new2).sqrt());
    let in_plane = V3::select(new2.eq(zero), V3::zero(), rescaled);
    V3::select(old2.eq(zero), v, in_plane)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_into_plane_keeps_length() {
        let v = DVec3::new(1.0, 2.0, 0.5);
        let n = DVec3::new(0.0, 0.0, 1.0);
        let p: DVec3 = rotate_into_plane(v.into(), n.into()).into();
        assert!(p.dot(n).abs() < 1e-15);
        assert!((p.length() - v.length()).abs() < 1e-14);
    }
}
