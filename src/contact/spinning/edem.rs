//! Altair EDEM's "Spinning Friction" with its rocking damping.

use super::{SpinningInput, SpinningLaw};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::error::Result;
use crate::simd::lane::{Lane, V3};
use serde::Deserialize;

/// The safety factor `C_safety` on EDEM's one-step spin-stopping limit.
pub const SPIN_SAFETY: f64 = 0.125;

/// Spinning friction after Altair EDEM's "Spinning Friction" contact model
/// (EDEM documentation), with its rocking damping.
///
/// A uniform Coulomb traction over the contact disk (radius `R_disk`, see
/// [`super`]) resists relative spin about the normal with the couple
///
/// ```text
/// M_spin = −min( (2/3) μ_s |F_n| R_disk ,  C_safety |ω_rel,n| min(I)/Δt ) ω̂_rel,n
/// M_rock = −γ_n 4 R_disk² ω_rel,t
/// M_s    = M_spin + M_rock            (+M_s on i, −M_s on j)
/// ```
///
/// with `ω_rel = ω_i − ω_j`, `ω_rel,n = (ω_rel·n) n`,
/// `ω_rel,t = ω_rel − ω_rel,n`, `C_safety = 0.125` ([`SPIN_SAFETY`]),
/// `min(I)` the smallest principal moment of inertia of the contact's
/// particles (walls excluded) and `γ_n` the normal model's linear damping
/// coefficient at the contact. The limit is a fraction of the torque that
/// would stop the relative spin in one step, so the spin decays to zero
/// without changing sign. The model keeps no history.
///
/// The EDEM page states the rocking-damping magnitude without a sign; gravel
/// applies it against the relative rocking rate (dissipative).
///
/// ```
/// use gravel::contact::spinning::{Edem, SpinningInput, SpinningLaw};
/// use glam::DVec3;
///
/// let m = Edem { friction: 0.75 };
/// let inp = SpinningInput {
///     n: DVec3::Z.into(),
///     omega_rel: DVec3::new(0.0, 0.0, 2.0).into(),
///     normal_force: 4.0,
///     disk_radius: 0.5,
///     min_inertia: 1.0,
///     gamma_n: 0.0,
///     dt: 0.125,
/// };
/// // Coulomb (2/3) · 0.75 · 4 · 0.5 = 1 below the limit 0.125 · 2 · 1/0.125 = 2.
/// assert_eq!(DVec3::from(m.couple(&inp)), DVec3::new(0.0, 0.0, -1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edem {
    /// Spinning friction coefficient `μ_s` (dimensionless, ≥ 0).
    pub friction: f64,
}

/// `spinning = { model = "edem", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Spinning friction coefficient μ_s.
    pub friction: f64,
}

impl Model for Edem {
    fn describe(&self) -> String {
        format!("friction {}", crate::math::figures::sig(self.friction, 4))
    }

    type Spec = Spec;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Edem {
            friction: key.field("friction").non_negative(s.friction)?,
        })
    }

    fn needs_stiffness(&self) -> Option<&'static str> {
        Some("model \"edem\" needs an overlap-based normal model")
    }
}

impl SpinningLaw for Edem {
    #[inline(always)]
    fn couple<T: Lane>(&self, inp: &SpinningInput<T>) -> V3<T> {
        let n = inp.n;
        let spin = inp.omega_rel.dot(n);
        let omega_t = inp.omega_rel - n.scale(spin);
        let rocking =
            omega_t.scale(T::splat(-4.0) * inp.gamma_n * inp.disk_radius * inp.disk_radius);
        let rate = spin.abs();
        let coulomb =
            T::splat((2.0 / 3.0) * self.friction) * inp.normal_force.abs() * inp.disk_radius;
        let stop = T::splat(SPIN_SAFETY) * rate * inp.min_inertia * T::splat(1.0 / inp.dt);
        let magnitude = coulomb.min(stop);
        // ω̂_rel,n = sign(spin) n.
        let spun = rocking - n.scale(magnitude * spin.signum());
        V3::select(rate.eq(T::splat(0.0)), rocking, spun)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::model::Solid;
    use crate::contact::spinning::{disk_radius_wall, spinning_torque};
    use crate::contact::test_support::{unit, vclose, vec3};
    use glam::{DQuat, DVec3};
    use proptest::prelude::*;
    use std::path::Path;

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
        let p = Edem { friction: 0.4 };
        // (2/3)·0.4·10·1e-3 = 2.6667e-3 < limit 0.125·3·1e-6/1e-5 = 0.0375.
        let m = spinning_torque(&p.into(), &base(DVec3::new(0.0, 0.0, 3.0)));
        assert!(vclose(m, DVec3::new(0.0, 0.0, -0.8e-2 / 3.0), 1e-15), "{m}");
        // Negative spin: torque flips.
        let m = spinning_torque(&p.into(), &base(DVec3::new(0.0, 0.0, -3.0)));
        assert!(vclose(m, DVec3::new(0.0, 0.0, 0.8e-2 / 3.0), 1e-15), "{m}");
        // Limited: min I = 1e-8 ⇒ limit 0.125·3·1e-8/1e-5 = 3.75e-4.
        let inp = SpinningInput {
            min_inertia: 1e-8,
            ..base(DVec3::new(0.0, 0.0, 3.0))
        };
        let m = spinning_torque(&p.into(), &inp);
        assert!(vclose(m, DVec3::new(0.0, 0.0, -3.75e-4), 1e-15), "{m}");
        // Rocking: −5·4·1e-6·(1, 2, 0) = (−2e-5, −4e-5, 0), plus the spin part.
        let m = spinning_torque(&p.into(), &base(DVec3::new(1.0, 2.0, 3.0)));
        let expected = DVec3::new(-2e-5, -4e-5, -0.8e-2 / 3.0);
        assert!(vclose(m, expected, 1e-15), "{m}");
        // Normal pointing the other way: the spin part still opposes ω_rel,n.
        let inp = SpinningInput {
            n: (-DVec3::Z).into(),
            ..base(DVec3::new(1.0, 2.0, 3.0))
        };
        assert!(vclose(spinning_torque(&p.into(), &inp), expected, 1e-15));
    }

    #[test]
    fn from_spec_messages() {
        let none = Solid(None);
        let mats = PairMaterials([&none, &none]);
        let key = Key::new(Path::new("a.toml"), "contact.spinning");
        let ok = Edem::from_spec(&Spec { friction: 0.0 }, &key, &mats).unwrap();
        assert_eq!(ok, Edem { friction: 0.0 });
        for bad in [-0.1, f64::NAN, f64::INFINITY] {
            let e = Edem::from_spec(&Spec { friction: bad }, &key, &mats)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("a.toml: contact.spinning.friction: must be zero or positive"),
                "{e}"
            );
        }
    }

    #[test]
    fn pure_rolling_has_no_spinning_part() {
        let p = Edem { friction: 0.4 };
        let w = DVec3::new(3.0, -1.0, 0.0);
        let no_rock = SpinningInput {
            gamma_n: 0.0,
            ..base(w)
        };
        assert_eq!(spinning_torque(&p.into(), &no_rock), DVec3::ZERO);
        let m = spinning_torque(&p.into(), &base(w));
        assert_eq!(m.z, 0.0);
        assert!(vclose(m, -4.0 * 5.0 * 1e-6 * w, 1e-15));
        // At rest: nothing (and no NaN).
        assert_eq!(spinning_torque(&p.into(), &base(DVec3::ZERO)), DVec3::ZERO);
    }

    #[test]
    fn spin_on_a_fixed_plane_decays_linearly_and_stops() {
        // Glass-like sphere, R = 5 mm, ρ = 2500: m = 1.309e-3 kg,
        // I = 0.4 m R² = 1.309e-8 kg m². Resting on a plane under gravity,
        // Hertz overlap δ = 1e-6 m (set directly); μ_s = 0.3.
        let (r, rho, g) = (5e-3_f64, 2500.0, 9.81);
        let mass = rho * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let inertia = 0.4 * mass * r * r;
        let p = Edem { friction: 0.3 };
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
            let m = spinning_torque(&p.into(), &inp);
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

    /// The case proptest found (CI, 2026-11-27): no spin friction
    /// (`μ_s F_n = 0`) with rocking damping; the spin couple is exactly
    /// zero, the rocking couple tangential to rounding.
    #[test]
    fn no_spin_friction_leaves_only_the_rocking_couple() {
        let n = unit(DVec3::new(0.007288534948865691, 0.0, 0.6102850130268842));
        let w = DVec3::new(-71.74682985371662, 0.0, 94.43805117373876);
        let inp = SpinningInput {
            n: n.into(),
            omega_rel: w.into(),
            normal_force: 0.0,
            disk_radius: 0.007212251328919258,
            min_inertia: 1e-12,
            gamma_n: 9.893843737092995,
            dt: 1e-7,
        };
        let p = Edem { friction: 0.0 };
        let spin_only = SpinningInput {
            gamma_n: 0.0,
            ..inp
        };
        assert_eq!(spinning_torque(&p.into(), &spin_only).dot(n), 0.0);
        let m = spinning_torque(&p.into(), &inp);
        assert!(
            m.length() > 0.1 && m.dot(n).abs() <= 1e-14 * m.length(),
            "{m}"
        );
    }

    proptest! {
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
            let p = Edem { friction: mu };
            let n = unit(n);
            let inp = SpinningInput {
                n: n.into(), omega_rel: w.into(), normal_force: f_n, disk_radius: disk,
                min_inertia: i_min, gamma_n: gamma, dt,
            };
            let m = spinning_torque(&p.into(), &inp);
            let q = DQuat::from_axis_angle(unit(axis), angle);
            let m2 = spinning_torque(&p.into(), &SpinningInput { n: (q * n).into(), omega_rel: (q * w).into(), ..inp });
            // Rounding is relative to the inputs, not to `m`: with ω_rel
            // nearly tangential, ω_rel·n cancels to a small spin whose
            // rounding (a few ε |ω_rel|) the stopping limit multiplies by
            // SPIN_SAFETY I_min/dt, and the rocking term's by 4 γ_n d².
            let scale = (4.0 * gamma * disk * disk + SPIN_SAFETY * i_min / dt) * w.length();
            prop_assert!((q * m - m2).length() <= 1e-12 * (m.length() + scale) + 1e-300);
            // Spin part opposes ω_rel,n and never exceeds the stopping limit.
            // Measured without the rocking damping: `M_rock` is tangential,
            // but its rounding leaves a normal residue of about 1e-16
            // |M_rock|, which a zero spin limit (μ_s F_n = 0) would read.
            let spin = w.dot(n);
            let spin_only = SpinningInput { gamma_n: 0.0, ..inp };
            let m_n = spinning_torque(&p.into(), &spin_only).dot(n);
            prop_assert!(m_n * spin <= 0.0);
            prop_assert!(m_n.abs() <= SPIN_SAFETY * spin.abs() * i_min / dt * (1.0 + 1e-12));
            prop_assert!(m_n.abs() <= 2.0 / 3.0 * mu * f_n * disk * (1.0 + 1e-12));
        }
    }
}
