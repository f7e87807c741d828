//! Tests of the EPSD rolling-resistance couple (models epsd and type_c).

use super::*;
use crate::contact::model::{PairMaterials, Solid};
use crate::contact::test_support::{unit, vclose, vec3};
use std::path::Path;

/// EDEM Type C with `μ_r`, `η_r`, `λ` and `R_r`.
fn type_c(
    friction: f64,
    damping: f64,
    stiffness_factor: f64,
    rolling_radius: Option<f64>,
) -> TypeC {
    TypeC {
        friction,
        damping,
        stiffness_factor,
        rolling_radius,
    }
}

/// The spring-dashpot of an EPSD model.
fn sd(m: impl Into<RollingModel>) -> SpringDashpot {
    m.into().spring_dashpot().expect("an EPSD model")
}
use glam::DQuat;
use proptest::prelude::*;
use std::f64::consts::PI;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// μ_r = 0.1, R* = 0.01, k_n = 1e5 ⇒ k_r = 2.25·1e5·1e-2·1e-4 = 0.225;
/// |F_n| = 10 ⇒ M^m = 0.01; I_r = 1e-6, η_r = 0.3 ⇒
/// C_r = 0.6 sqrt(2.25e-7).
fn base_input(omega_rel: DVec3) -> RollingInput {
    RollingInput {
        n: DVec3::Z.into(),
        omega_rel: omega_rel.into(),
        k_n: 1e5,
        r_eff: 0.01,
        normal_force: 10.0,
        inertia_r: 1e-6,
        dt: 1e-4,
    }
}

#[test]
fn pair_and_wall_inertia() {
    // Solid unit spheres: I + m R² = 0.4 + 1 = 1.4; pair: 0.7.
    assert!(close(wall_rolling_inertia(0.4, 1.0, 1.0), 1.4, 1e-15));
    assert!(close(
        pair_rolling_inertia(0.4, 1.0, 1.0, 0.4, 1.0, 1.0),
        0.7,
        1e-15
    ));
    // Unequal: a_i = 1.4, a_j = 0.4·8·4 + 8·4 = 44.8 ⇒ 1.4·44.8/46.2.
    assert!(close(
        pair_rolling_inertia(0.4, 1.0, 1.0, 12.8, 8.0, 2.0),
        1.4 * 44.8 / 46.2,
        1e-14
    ));
    // An immovable partner gives the wall value.
    assert_eq!(
        pair_rolling_inertia(0.4, 1.0, 1.0, f64::INFINITY, f64::INFINITY, 1.0),
        wall_rolling_inertia(0.4, 1.0, 1.0)
    );
}

/// The force stage's split form (each sphere's part found once, then
/// combined per contact) gives the bits of [`pair_rolling_inertia`] and of
/// `min(I_i, I_j)`, frozen partners (inverses of zero) included.
#[test]
fn inertia_from_each_body_s_part_is_the_pair_s_bits() {
    use crate::contact::{BodyInertia, ContactInertia};
    // (1/I, 1/m, R): spheres of several sizes and densities, and frozen.
    let spheres = [
        (1.0 / 0.4, 1.0, 1.0),
        (1.0 / 12.8, 1.0 / 8.0, 2.0),
        (3.7e9, 1.1e3, 3.3e-4),
        (1.0 / 7.1e-13, 1.0 / 2.9e-6, 5.0e-4),
        (0.0, 0.0, 1.0e-3),
    ];
    for &(ii, mi, ri) in &spheres {
        for &(ij, mj, rj) in &spheres {
            let split =
                ContactInertia::of_bodies(BodyInertia::of(ii, mi, ri), BodyInertia::of(ij, mj, rj));
            let whole = pair_rolling_inertia(1.0 / ii, 1.0 / mi, ri, 1.0 / ij, 1.0 / mj, rj);
            assert_eq!(
                split.rolling.to_bits(),
                whole.to_bits(),
                "{ii} {mi} {ri} / {ij} {mj} {rj}"
            );
            assert_eq!(split.min.to_bits(), (1.0 / ii).min(1.0 / ij).to_bits());
            assert_eq!(split, ContactInertia::pair(ii, mi, ri, ij, mj, rj));
        }
    }
}

#[test]
fn single_step_by_hand_below_the_limit() {
    let p = Epsd::new(0.1, 0.3);
    // ω_rel has a twisting part 5 (removed) and a rolling part 2 along x.
    let inp = base_input(DVec3::new(2.0, 0.0, 5.0));
    // Stored torque tilted out of the plane: projected to x, length kept.
    let mut h = [1e-3, 0.0, 5e-4];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    let k_r: f64 = 0.225;
    assert!(close(sd(p).stiffness(inp.k_n, inp.r_eff), k_r, 1e-15));
    let spring_x = 1.25e-6_f64.sqrt() - k_r * 2.0 * 1e-4;
    let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();
    assert!(close(h[0], spring_x, 1e-14) && h[1] == 0.0 && h[2] == 0.0);
    let expected = DVec3::new(spring_x - c_r * 2.0, 0.0, 0.0);
    assert!(vclose(m, expected, 1e-14), "{m} vs {expected}");
    // Hand value: 1.0730340e-3 − 5.6921e-4 = 5.03824e-4.
    assert!((m.x - 5.038243e-4).abs() < 1e-9);
}

#[test]
fn single_step_by_hand_type_c_with_rolling_radius() {
    // λ = 1.5, R_r = 0.02 ⇒ k_r = 1.5·1e5·0.01·4e-4 = 0.6; M^m = 0.02.
    let p = type_c(0.1, 0.5, 1.5, Some(0.02));
    let inp = base_input(DVec3::new(0.0, -3.0, 0.0));
    let mut h = [0.0; 3];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    let k_r: f64 = 0.6;
    assert!(close(sd(p).stiffness(inp.k_n, inp.r_eff), k_r, 1e-15));
    let spring = DVec3::new(0.0, k_r * 3.0 * 1e-4, 0.0);
    let c_r = 0.5 * 2.0 * (1e-6 * k_r).sqrt();
    assert!(vclose(DVec3::from_array(h), spring, 1e-14));
    assert!(vclose(m, spring + DVec3::new(0.0, 3.0 * c_r, 0.0), 1e-14));
}

#[test]
fn fully_mobilised_damping_factor() {
    // ω = 1000 along y: trial spring −0.0225 ŷ exceeds M^m = 0.01.
    let inp = base_input(DVec3::new(0.0, 1000.0, 0.0));
    let k_r: f64 = 0.225;
    let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();

    let mut p = Epsd::new(0.1, 0.3);
    let mut h = [0.0; 3];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    // f = 0: only the capped spring, no damping torque.
    assert!(vclose(m, DVec3::new(0.0, -0.01, 0.0), 1e-15), "{m}");
    assert!(vclose(DVec3::from_array(h), m, 0.0));

    p.mobilised_damping_factor = 0.5;
    let mut h = [0.0; 3];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    let damping_part = m - DVec3::from_array(h);
    let expected = -0.5 * c_r * DVec3::from(inp.omega_rel);
    assert!(vclose(damping_part, expected, 1e-14), "{damping_part}");
    assert!(close(h[1], -0.01, 1e-15));

    // Type C has no damping once mobilised (f = 0).
    let q = type_c(0.1, 0.3, 2.25, None);
    assert_eq!(sd(q).mobilised_damping_factor, 0.0);
    let mut h = [0.0; 3];
    let m = rolling_torque(&q.into(), &inp, &mut h);
    assert!(vclose(m, DVec3::new(0.0, -0.01, 0.0), 1e-15), "{m}");
}

#[test]
fn type_c_with_2_25_reproduces_epsd() {
    let a = Epsd::new(0.3, 0.2);
    let b = type_c(0.3, 0.2, 2.25, None);
    let inp = RollingInput {
        n: DVec3::new(0.6, 0.0, 0.8).into(),
        omega_rel: DVec3::new(3.0, -7.0, 1.0).into(),
        ..base_input(DVec3::ZERO)
    };
    let (mut ha, mut hb) = ([1e-4, 2e-4, -0.75e-4], [1e-4, 2e-4, -0.75e-4]);
    for _ in 0..50 {
        let ma = rolling_torque(&a.into(), &inp, &mut ha);
        let mb = rolling_torque(&b.into(), &inp, &mut hb);
        assert_eq!(ma, mb);
        assert_eq!(ha, hb);
    }
}

#[test]
fn zero_friction_gives_zero_torque_and_clears_history() {
    let p = Epsd::new(0.0, 0.3);
    let mut h = [1.0, 2.0, 3.0];
    let m = rolling_torque(&p.into(), &base_input(DVec3::new(1.0, 2.0, 3.0)), &mut h);
    assert_eq!(m, DVec3::ZERO);
    assert_eq!(h, [0.0; 3]);
}

#[test]
fn zero_normal_force_releases_the_spring() {
    let mut p = Epsd::new(0.1, 0.3);
    let inp = RollingInput {
        normal_force: 0.0,
        ..base_input(DVec3::new(1.0, 0.0, 0.0))
    };
    let mut h = [1e-3, 0.0, 0.0];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    assert_eq!(h, [0.0; 3]);
    assert_eq!(m, DVec3::ZERO); // f = 0
    p.mobilised_damping_factor = 1.0;
    let mut h = [1e-3, 0.0, 0.0];
    let m = rolling_torque(&p.into(), &inp, &mut h);
    let c_r = sd(p).damping_coefficient(0.225, 1e-6);
    assert!(vclose(m, -c_r * DVec3::from(inp.omega_rel), 1e-15));
    // At rest with no force and no history nothing happens (not "mobilised").
    let mut h = [0.0; 3];
    let m = rolling_torque(
        &p.into(),
        &RollingInput {
            omega_rel: DVec3::ZERO.into(),
            ..inp
        },
        &mut h,
    );
    assert_eq!((m, h), (DVec3::ZERO, [0.0; 3]));
}

#[test]
fn torsion_only_loads_the_spring_when_enabled() {
    let mut p = Epsd::new(0.1, 0.3);
    let twist = DVec3::new(0.0, 0.0, 4.0); // ω_rel ∥ n
    let mut h = [0.0; 3];
    let m = rolling_torque(&p.into(), &base_input(twist), &mut h);
    assert_eq!(m, DVec3::ZERO);
    assert_eq!(h, [0.0; 3]);

    p.torsion_torque = true;
    let mut h = [0.0; 3];
    let m = rolling_torque(&p.into(), &base_input(twist), &mut h);
    let k_r: f64 = 0.225;
    let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();
    let spring = -k_r * 1e-4 * twist;
    assert!(vclose(DVec3::from_array(h), spring, 1e-15));
    assert!(vclose(m, spring - c_r * twist, 1e-14));
    assert!(m.z < 0.0, "opposes the twist");
}

#[test]
fn stored_torque_follows_a_turning_normal() {
    let p = Epsd::new(0.1, 0.3);
    let mut h = [5e-3, 0.0, 0.0];
    for k in 1..=90 {
        let a = (k as f64).to_radians();
        let n = DVec3::new(-a.sin(), 0.0, a.cos()); // tilts towards −x
        let inp = RollingInput {
            n: n.into(),
            ..base_input(DVec3::ZERO)
        };
        let m = rolling_torque(&p.into(), &inp, &mut h);
        assert!(m.dot(n).abs() < 1e-15, "stays tangential");
        assert!(close(m.length(), 5e-3, 1e-13), "keeps its length");
    }
    // After a quarter turn the torque has rotated with the normal.
    assert!(vclose(
        DVec3::from_array(h),
        DVec3::new(0.0, 0.0, 5e-3),
        1e-12
    ));
}

#[test]
fn from_spec_messages() {
    let none = Solid(None);
    let mats = PairMaterials([&none, &none]);
    let key = Key::new(Path::new("a.toml"), "contact.rolling");
    let epsd = |friction, damping, f| {
        let spec = epsd::Spec {
            friction,
            damping,
            torsion_torque: false,
            mobilised_damping_factor: f,
        };
        Epsd::from_spec(&spec, &key, &mats).map_err(|e| e.to_string())
    };
    let type_c = |stiffness_factor, rolling_radius| {
        let spec = type_c::Spec {
            friction: 0.1,
            damping: 0.3,
            stiffness_factor,
            rolling_radius,
        };
        TypeC::from_spec(&spec, &key, &mats).map_err(|e| e.to_string())
    };
    assert_eq!(epsd(0.1, 0.3, 0.0).unwrap(), Epsd::new(0.1, 0.3));
    assert_eq!(
        type_c(4.0, Some(1e-3)).unwrap(),
        self::type_c(0.1, 0.3, 4.0, Some(1e-3))
    );
    let says = |r: std::result::Result<_, String>, what: &str| {
        let e = r.map(|_: Epsd| ()).unwrap_err();
        assert!(
            e.starts_with("a.toml: contact.rolling.") && e.contains(what),
            "{e}"
        );
    };
    says(epsd(-0.1, 0.3, 0.0), "friction: must be zero or positive");
    says(
        epsd(f64::NAN, 0.3, 0.0),
        "friction: must be zero or positive",
    );
    for eta in [-0.1, 1.5, f64::NAN] {
        says(epsd(0.1, eta, 0.0), "damping: must lie in [0, 1]");
    }
    for f in [1.2, -0.1] {
        says(
            epsd(0.1, 0.3, f),
            "mobilised_damping_factor: must lie in [0, 1]",
        );
    }
    let says = |r: std::result::Result<TypeC, String>, what: &str| {
        let e = r.unwrap_err();
        assert!(
            e.starts_with("a.toml: contact.rolling.") && e.contains(what),
            "{e}"
        );
    };
    says(
        type_c(0.0, None),
        "stiffness_factor: must be a positive number",
    );
    says(
        type_c(-1.0, None),
        "stiffness_factor: must be a positive number",
    );
    says(
        type_c(2.0, Some(0.0)),
        "rolling_radius: must be a positive number",
    );
}

/// Single body (moment `I_r`) rocking on a fixed wall about x. The torque
/// call advances the spring with the current ω (drift), then ω is kicked
/// by the new torque: symplectic Euler. Returns the angle θ = −M^k/k_r
/// at every step (θ is the spring's angle, as the history stores
/// `M^k = −k_r θ`).
fn rock(p: &RollingModel, theta0: f64, omega0: f64, steps: usize, dt: f64) -> Vec<f64> {
    let base = RollingInput {
        n: DVec3::Z.into(),
        omega_rel: DVec3::ZERO.into(),
        k_n: 1e6,
        r_eff: 0.01,
        normal_force: 100.0,
        inertia_r: 1e-5,
        dt,
    };
    let k_r = sd(*p).stiffness(base.k_n, base.r_eff);
    let limit = sd(*p).friction * base.r_eff * base.normal_force;
    let mut h = [-k_r * theta0, 0.0, 0.0];
    let mut omega = omega0;
    let mut theta = Vec::with_capacity(steps);
    for _ in 0..steps {
        let inp = RollingInput {
            omega_rel: DVec3::new(omega, 0.0, 0.0).into(),
            ..base
        };
        let m = rolling_torque(p, &inp, &mut h);
        assert!(h[0].abs() < limit, "test must stay below the limit");
        omega += m.x / base.inertia_r * dt;
        theta.push(-h[0] / k_r);
    }
    theta
}

#[test]
fn undamped_rocking_period() {
    // k_r = 2.25·1e6·0.2²·0.01² = 9 N m/rad, I_r = 1e-5 ⇒ T = 2π sqrt(I_r/k_r).
    let p = Epsd::new(0.2, 0.0);
    let k_r: f64 = 9.0;
    let period = 2.0 * PI * (1e-5 / k_r).sqrt();
    let dt = period / 2000.0;
    let theta = rock(&p.into(), 0.0, 1.0, 20_500, dt);
    // Upward zero crossings, linearly interpolated.
    let crossings: Vec<f64> = theta
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
        .map(|(i, w)| (i as f64 + 1.0 + w[0] / (w[0] - w[1])) * dt)
        .collect();
    assert!(crossings.len() >= 9, "{} crossings", crossings.len());
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let rel = (measured - period).abs() / period;
    println!("rocking period: measured {measured:.6e} s, 2π sqrt(I_r/k_r) = {period:.6e} s, rel. error {rel:.2e}");
    assert!(rel < 0.01);
    // Undamped: the amplitude ω0/ω_r is kept.
    let amp = theta.iter().fold(0.0_f64, |a, t| a.max(t.abs()));
    let expected = 1.0 / (k_r / 1e-5).sqrt();
    assert!(close(amp, expected, 1e-2), "{amp} vs {expected}");
}

/// Last time |θ| exceeds 2 % of θ0 (the 2 % settling time).
fn settling_time(theta: &[f64], theta0: f64, dt: f64) -> f64 {
    let last = theta
        .iter()
        .rposition(|t| t.abs() > 0.02 * theta0)
        .unwrap_or(0);
    (last + 1) as f64 * dt
}

#[test]
fn critical_damping_at_eta_one() {
    let k_r: f64 = 9.0;
    let w = (k_r / 1e-5).sqrt();
    let dt = 2.0 * PI / w / 2000.0;
    let steps = 20_000; // ≈ 10 periods
    let theta0 = 1e-3;
    let run = |eta: f64| rock(&Epsd::new(0.2, eta).into(), theta0, 0.0, steps, dt);

    let crit = run(1.0);
    let under = run(0.5);
    let over = run(2.0);

    // No overshoot of zero at η = 1; η = 0.5 overshoots by about
    // exp(−πζ/sqrt(1−ζ²)) = 16 %.
    let min_crit = crit.iter().cloned().fold(f64::INFINITY, f64::min);
    let min_under = under.iter().cloned().fold(f64::INFINITY, f64::min);
    let min_over = over.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "min θ/θ0: η=1 {:.3e}, η=0.5 {:.3e}, η=2 {:.3e}",
        min_crit / theta0,
        min_under / theta0,
        min_over / theta0
    );
    assert!(min_crit >= 0.0, "critically damped must not cross zero");
    assert!(min_over >= 0.0);
    assert!(close(
        min_under / theta0,
        -(-PI * 0.5 / 0.75_f64.sqrt()).exp(),
        0.02
    ));

    // Critically damped solution θ0 (1 + ω t) e^{−ω t}.
    let err = crit
        .iter()
        .enumerate()
        .map(|(k, th)| {
            let x = w * (k + 1) as f64 * dt;
            (th - theta0 * (1.0 + x) * (-x).exp()).abs()
        })
        .fold(0.0_f64, f64::max);
    println!("max |θ − θ_exact|/θ0 at η=1: {:.3e}", err / theta0);
    assert!(err < 5e-3 * theta0);

    // 2 % settling: fastest at η = 1 among {0.5, 1, 2}; critical value
    // solves (1 + x) e^{−x} = 0.02, x = 5.834.
    let (t_c, t_u, t_o) = (
        settling_time(&crit, theta0, dt),
        settling_time(&under, theta0, dt),
        settling_time(&over, theta0, dt),
    );
    println!(
        "2% settling ω t: η=0.5 {:.3}, η=1 {:.3}, η=2 {:.3}",
        w * t_u,
        w * t_c,
        w * t_o
    );
    assert!(t_c < t_u && t_c < t_o);
    assert!(close(w * t_c, 5.834, 5e-3));
}

fn params() -> impl Strategy<Value = RollingModel> {
    (
        prop::bool::ANY,
        0.0..1.0f64,
        0.0..1.0f64,
        prop::bool::ANY,
        0.0..1.0f64,
        0.5..4.0f64,
        prop::option::of(1e-3..1e-1f64),
    )
        .prop_map(|(epsd, mu, eta, torsion, f, lambda, rr)| {
            if epsd {
                Epsd {
                    torsion_torque: torsion,
                    mobilised_damping_factor: f,
                    ..Epsd::new(mu, eta)
                }
                .into()
            } else {
                type_c(mu, eta, lambda, rr).into()
            }
        })
}

/// A contact input and a stored torque lying near the tangent plane (as
/// left by the previous step, a small turn of the normal away).
fn input_and_history() -> impl Strategy<Value = (RollingInput, DVec3)> {
    (
        vec3(1.0),
        vec3(100.0),
        1e3..1e7f64,
        1e-3..1e-1f64,
        0.0..1e3f64,
        1e-9..1e-3f64,
        1e-7..1e-4f64,
        vec3(1.0),
        -0.1..0.1f64,
    )
        .prop_map(|(n, w, k_n, r, f_n, i_r, dt, hv, tilt)| {
            let n = unit(n);
            let scale = 1e-3 * k_n * r * r;
            let t = hv - hv.dot(n) * n;
            let h = (t + tilt * hv.length() * n) * scale;
            (
                RollingInput {
                    n: n.into(),
                    omega_rel: w.into(),
                    k_n,
                    r_eff: r,
                    normal_force: f_n,
                    inertia_r: i_r,
                    dt,
                },
                h,
            )
        })
}

proptest! {
    #[test]
    fn rotation_covariance(
        p in params(),
        (inp, h) in input_and_history(),
        axis in vec3(1.0),
        angle in -PI..PI,
    ) {
        let q = DQuat::from_axis_angle(unit(axis), angle);
        let mut h1 = h.to_array();
        let m1 = rolling_torque(&p, &inp, &mut h1);
        let rotated = RollingInput { n: (q * DVec3::from(inp.n)).into(), omega_rel: (q * DVec3::from(inp.omega_rel)).into(), ..inp };
        let mut h2 = (q * h).to_array();
        let m2 = rolling_torque(&p, &rotated, &mut h2);
        let hs = DVec3::from_array(h1).length().max(h.length());
        prop_assert!((q * m1 - m2).length() <= 1e-12 * (m1.length() + hs) + 1e-300,
            "torque {} vs {}", q * m1, m2);
        prop_assert!((q * DVec3::from_array(h1) - DVec3::from_array(h2)).length()
            <= 1e-12 * hs + 1e-300);
    }

    #[test]
    fn spring_never_exceeds_full_mobilisation(
        p in params(),
        (inp, h) in input_and_history(),
        omegas in prop::collection::vec(vec3(1e3), 1..20),
        forces in prop::collection::vec(0.0..1e3f64, 1..20),
    ) {
        let mut hist = h.to_array();
        for (k, w) in omegas.iter().enumerate() {
            let f_n = forces[k % forces.len()];
            let step = RollingInput { omega_rel: (*w).into(), normal_force: f_n, ..inp };
            rolling_torque(&p, &step, &mut hist);
            let limit = sd(p).friction * sd(p).rolling_radius(inp.r_eff) * f_n;
            let len = DVec3::from_array(hist).length();
            prop_assert!(len <= limit * (1.0 + 1e-12), "|M^k| = {len} > M^m = {limit}");
        }
    }
}
