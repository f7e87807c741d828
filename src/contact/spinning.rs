//! Spinning (twisting) friction after Altair EDEM's "Spinning Friction"
//! contact model (EDEM documentation), with its rocking damping.
//!
//! The contact is treated as a disk of radius `R_disk = sqrt(A_contact/π)`,
//! `A_contact` the area of the overlap region's normal section (the circle in
//! which the two surfaces intersect). A uniform Coulomb traction over that
//! disk resists relative spin about the normal with the couple
//!
//! ```text
//! M_spin = −min( (2/3) μ_s |F_n| R_disk ,  C_safety |ω_rel,n| min(I)/Δt ) ω̂_rel,n
//! M_rock = −γ_n 4 R_disk² ω_rel,t
//! M_s    = M_spin + M_rock            (+M_s on i, −M_s on j)
//! ```
//!
//! with `ω_rel = ω_i − ω_j`, `ω_rel,n = (ω_rel·n) n`,
//! `ω_rel,t = ω_rel − ω_rel,n`, `C_safety = 0.125` ([`SPIN_SAFETY`]),
//! `min(I)` the smallest principal moment of inertia of the contact's
//! particles (walls excluded) and `γ_n` the normal model's linear damping
//! coefficient at the contact. The limit is a fraction of the torque that
//! would stop the relative spin in one step, so the spin decays to zero
//! without changing sign. The model keeps no history.
//!
//! The EDEM page states the rocking-damping magnitude without a sign; gravel
//! applies it against the relative rocking rate (dissipative).

use crate::simd::lane::{Lane, V3};
use glam::DVec3;

/// The safety factor `C_safety` on EDEM's one-step spin-stopping limit.
pub const SPIN_SAFETY: f64 = 0.125;

/// Run-constant parameters of the spinning couple for one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpinningParams {
    /// Spinning friction coefficient `μ_s` (dimensionless, ≥ 0).
    pub friction: f64,
}

impl SpinningParams {
    /// Check the parameters: `μ_s` finite and ≥ 0.
    pub fn validate(&self) -> Result<(), String> {
        if !self.friction.is_finite() || self.friction < 0.0 {
            return Err(format!(
                "spinning friction: friction (μ_s) must be finite and ≥ 0, got {}",
                self.friction
            ));
        }
        Ok(())
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
#[inline(always)]
pub fn disk_radius_pair<T: Lane>(r_i: T, r_j: T, dist: T) -> T {
    let zero = T::splat(0.0);
    let f1 = r_i + r_j - dist; // the overlap δ
    let f2 = dist - r_i + r_j;
    let f3 = dist + r_i - r_j;
    let f4 = dist + r_i + r_j;
    let a = ((f1 * f2) * (f3 * f4)).sqrt() / (T::splat(2.0) * dist);
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

impl SpinningParams {
    /// The spinning-friction couple on `i` of contacts in lanes (the body
    /// of [`spinning_torque`], which see).
    #[inline(always)]
    pub fn couple<T: Lane>(&self, inp: &SpinningInput<T>) -> V3<T> {
        let n = inp.n;
        let spin = inp.omega_rel.dot(n);
        let omega_t = inp.omega_rel - n.scale(spin);
        let rocking =
            omega_t.scale(T::splat(-4.0) * inp.gamma_n * inp.disk_radius * inp.disk_radius);
        let rate = spin.abs();
        let coulomb =
            T::splat((2.0 / 3.0) * self.friction) * inp.normal_force.abs() * inp.disk_radius;
        let stop = T::splat(SPIN_SAFETY) * rate * inp.min_inertia / T::splat(inp.dt);
        let magnitude = coulomb.min(stop);
        // ω̂_rel,n = sign(spin) n.
        let spun = rocking - n.scale(magnitude * spin.signum());
        V3::select(rate.eq(T::splat(0.0)), rocking, spun)
    }
}

/// Spinning-friction couple on `i` (`j` receives the negation): the
/// spinning part `−min((2/3) μ_s |F_n| R_disk, C_safety |ω_rel,n| min(I)/Δt) ω̂_rel,n`
/// plus the rocking damping `−γ_n 4 R_disk² ω_rel,t` (EDEM "Spinning
/// Friction"; see the [module documentation](self)).
///
/// The spinning part is zero when `ω_rel,n = 0` and is always antiparallel
/// to `ω_rel,n`; the rocking part lies in the tangent plane.
#[inline]
pub fn spinning_torque(p: &SpinningParams, inp: &SpinningInput) -> DVec3 {
    debug_assert!(
        (inp.n.length_squared() - 1.0).abs() < 1e-9,
        "spinning_torque: n is not a unit vector: {:?}",
        inp.n
    );
    debug_assert!(inp.dt > 0.0, "spinning_torque: time step must be positive");
    p.couple(inp).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;
    use proptest::prelude::*;

    fn vclose(a: DVec3, b: DVec3, tol: f64) -> bool {
        (a - b).length() <= tol * (1.0 + a.length().max(b.length()))
    }

    fn base(omega_rel: DVec3) -> SpinningInput {
        SpinningInput {
            n: DVec3::Z.into(),
            omega_rel: omega_rel.into(),
            normal_force: 10.0,
            disk_radius: 1e-3,
            min_inertia: 1e-6,
            gamma_n: 5.0,
            dt: 1e-5,
        }
    }

    #[test]
    fn values_by_hand() {
        let p = SpinningParams { friction: 0.4 };
        p.validate().unwrap();
        // (2/3)·0.4·10·1e-3 = 2.6667e-3 < limit 0.125·3·1e-6/1e-5 = 0.0375.
        let m = spinning_torque(&p, &base(DVec3::new(0.0, 0.0, 3.0)));
        assert!(vclose(m, DVec3::new(0.0, 0.0, -0.8e-2 / 3.0), 1e-15), "{m}");
        // Negative spin: torque flips.
        let m = spinning_torque(&p, &base(DVec3::new(0.0, 0.0, -3.0)));
        assert!(vclose(m, DVec3::new(0.0, 0.0, 0.8e-2 / 3.0), 1e-15), "{m}");
        // Limited: min I = 1e-8 ⇒ limit 0.125·3·1e-8/1e-5 = 3.75e-4.
        let inp = SpinningInput {
            min_inertia: 1e-8,
            ..base(DVec3::new(0.0, 0.0, 3.0))
        };
        let m = spinning_torque(&p, &inp);
        assert!(vclose(m, DVec3::new(0.0, 0.0, -3.75e-4), 1e-15), "{m}");
        // Rocking: −5·4·1e-6·(1, 2, 0) = (−2e-5, −4e-5, 0), plus the spin part.
        let m = spinning_torque(&p, &base(DVec3::new(1.0, 2.0, 3.0)));
        let expected = DVec3::new(-2e-5, -4e-5, -0.8e-2 / 3.0);
        assert!(vclose(m, expected, 1e-15), "{m}");
        // Normal pointing the other way: the spin part still opposes ω_rel,n.
        let inp = SpinningInput {
            n: (-DVec3::Z).into(),
            ..base(DVec3::new(1.0, 2.0, 3.0))
        };
        assert!(vclose(spinning_torque(&p, &inp), expected, 1e-15));
    }

    #[test]
    fn validate_messages() {
        assert!(SpinningParams { friction: 0.0 }.validate().is_ok());
        for bad in [-0.1, f64::NAN, f64::INFINITY] {
            let e = SpinningParams { friction: bad }.validate().unwrap_err();
            assert!(e.contains("friction (μ_s)"), "{e}");
        }
    }

    #[test]
    fn pure_rolling_has_no_spinning_part() {
        let p = SpinningParams { friction: 0.4 };
        let w = DVec3::new(3.0, -1.0, 0.0);
        let no_rock = SpinningInput {
            gamma_n: 0.0,
            ..base(w)
        };
        assert_eq!(spinning_torque(&p, &no_rock), DVec3::ZERO);
        let m = spinning_torque(&p, &base(w));
        assert_eq!(m.z, 0.0);
        assert!(vclose(m, -4.0 * 5.0 * 1e-6 * w, 1e-15));
        // At rest: nothing (and no NaN).
        assert_eq!(spinning_torque(&p, &base(DVec3::ZERO)), DVec3::ZERO);
    }

    #[test]
    fn spin_on_a_fixed_plane_decays_linearly_and_stops() {
        // Glass-like sphere, R = 5 mm, ρ = 2500: m = 1.309e-3 kg,
        // I = 0.4 m R² = 1.309e-8 kg m². Resting on a plane under gravity,
        // Hertz overlap δ = 1e-6 m (set directly); μ_s = 0.3.
        let (r, rho, g) = (5e-3_f64, 2500.0, 9.81);
        let mass = rho * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let inertia = 0.4 * mass * r * r;
        let p = SpinningParams { friction: 0.3 };
        let disk = disk_radius_wall(r, 1e-6);
        let f_n = mass * g;
        let torque = 2.0 / 3.0 * 0.3 * f_n * disk;
        let omega0 = 10.0;
        let t_stop = inertia * omega0 / torque;
        let dt = t_stop / 10_000.0;
        let mut omega = omega0;
        let mut t = 0.0;
        let mut stopped_at = None;
        let mut limited_steps = 0;
        for k in 1..=12_000 {
            let inp = SpinningInput {
                n: (-DVec3::Z).into(), // from the sphere (i) down into the plane (j)
                omega_rel: DVec3::new(0.0, 0.0, omega).into(),
                normal_force: f_n,
                disk_radius: disk,
                min_inertia: inertia,
                gamma_n: 0.0,
                dt,
            };
            let m = spinning_torque(&p, &inp);
            assert!(m.x == 0.0 && m.y == 0.0);
            if m.z.abs() < torque {
                limited_steps += 1;
            }
            omega += m.z / inertia * dt;
            t += dt;
            assert!(omega >= 0.0, "spin changed sign at step {k}: {omega}");
            // Linear decay while the Coulomb couple is below the limit.
            if m.z.abs() == torque {
                let exact = omega0 - torque / inertia * k as f64 * dt;
                assert!((omega - exact).abs() < 1e-9 * omega0, "step {k}");
            }
            if stopped_at.is_none() && omega < 1e-6 * omega0 {
                stopped_at = Some(t);
            }
        }
        let t_s = stopped_at.expect("the spin must stop");
        println!(
            "spin decay: t_stop = I ω0/M = {t_stop:.6e} s, ω < 1e-6 ω0 at {t_s:.6e} s \
             (rel. {:.2e}); limited steps {limited_steps}; final ω/ω0 = {:.2e}",
            (t_s - t_stop) / t_stop,
            omega / omega0
        );
        assert!(t_s >= t_stop - 9.0 * dt && t_s <= t_stop + 150.0 * dt);
        assert!(omega < 1e-12 * omega0 || omega == 0.0);
    }

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

    fn unit(v: DVec3) -> DVec3 {
        let l = v.length();
        if l < 1e-3 {
            DVec3::Z
        } else {
            v / l
        }
    }

    fn vec3(s: f64) -> impl Strategy<Value = DVec3> {
        (-s..s, -s..s, -s..s).prop_map(|(x, y, z)| DVec3::new(x, y, z))
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

        #[test]
        fn rotation_covariance_and_direction(
            n in vec3(1.0),
            w in vec3(100.0),
            mu in 0.0..1.0f64,
            f_n in 0.0..1e3f64,
            disk in 0.0..1e-2f64,
            i_min in 1e-12..1e-4f64,
            gamma in 0.0..10.0f64,
            dt in 1e-7..1e-4f64,
            axis in vec3(1.0),
            angle in -std::f64::consts::PI..std::f64::consts::PI,
        ) {
            let p = SpinningParams { friction: mu };
            let n = unit(n);
            let inp = SpinningInput {
                n: n.into(), omega_rel: w.into(), normal_force: f_n, disk_radius: disk,
                min_inertia: i_min, gamma_n: gamma, dt,
            };
            let m = spinning_torque(&p, &inp);
            let q = DQuat::from_axis_angle(unit(axis), angle);
            let m2 = spinning_torque(&p, &SpinningInput { n: (q * n).into(), omega_rel: (q * w).into(), ..inp });
            prop_assert!((q * m - m2).length() <= 1e-12 * m.length() + 1e-300);
            // Spin part opposes ω_rel,n and never exceeds the stopping limit.
            let spin = w.dot(n);
            let m_n = m.dot(n);
            prop_assert!(m_n * spin <= 0.0);
            prop_assert!(m_n.abs() <= SPIN_SAFETY * spin.abs() * i_min / dt * (1.0 + 1e-12));
            prop_assert!(m_n.abs() <= 2.0 / 3.0 * mu * f_n * disk * (1.0 + 1e-12));
        }
    }
}
