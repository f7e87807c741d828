//! Tests of the stochastic friction laws and the pair force.

use super::*;
use crate::math::quadrature::{integrate_rel, rel_err};
use crate::rng::{PairNoise, Stream};

/// Linear friction `γ` at `kT = 0` (see [`at`]).
fn linear(gamma: f64) -> StochasticModel {
    Linear { gamma, kt: 0.0 }.into()
}

/// Coulomb friction `κ` at `kT = 0`.
fn coulomb(kappa: f64) -> StochasticModel {
    Coulomb { kappa, kt: 0.0 }.into()
}

/// Coulomb–Newton friction `γ`, `κ` at `kT = 0`.
fn coulomb_newton(gamma: f64, kappa: f64) -> StochasticModel {
    CoulombNewton {
        gamma,
        kappa,
        kt: 0.0,
    }
    .into()
}

/// `law` at the temperature `kt`.
fn at(law: StochasticModel, kt: f64) -> StochasticModel {
    match law {
        StochasticModel::Linear(m) => Linear { kt, ..m }.into(),
        StochasticModel::Coulomb(m) => Coulomb { kt, ..m }.into(),
        StochasticModel::CoulombNewton(m) => CoulombNewton { kt, ..m }.into(),
    }
}

/// `D(u)` by quadrature of its definition, in the variable `s = u' − u`:
/// `D = 1/(kT ν) ∫_0^∞ f(u + s) exp(−s(2u + s)/(2 kT ν)) ds`, truncated
/// where the exponent reaches −60, split at the kink of `f` if any.
fn diffusion_by_quadrature(law: &StochasticModel, u: f64, w: f64, kt: f64, nu: f64) -> f64 {
    let a = 2.0 * kt * nu;
    let s_max = 60.0 * a / (u + (u * u + 60.0 * a).sqrt());
    let integrand = |s: f64| law.force(u + s, w) * (-s * (2.0 * u + s) / a).exp();
    let mut points = vec![0.0];
    if let StochasticModel::CoulombNewton(CoulombNewton { gamma, kappa, .. }) = *law {
        let s_c = kappa * w / gamma - u;
        if s_c > 0.0 && s_c < s_max {
            points.push(s_c);
        }
    }
    points.push(s_max);
    integrate_rel(&integrand, &points, 1e-13) / (kt * nu)
}

// ------------------------------------------------------------------ D(u)

/// Parameter sets `(law, w, kT, ν)`; the CoulombNewton sets put
/// `u_c = κw/γ` inside the tested range `[0, 50 sqrt(2 kT ν)]`, below it
/// and above it.
fn laws() -> Vec<(StochasticModel, f64, f64, f64)> {
    vec![
        (linear(0.7), 3.0, 1.0, 1.0),
        (linear(2.0), 0.1, 4.1e-21, 3.3e13),
        (coulomb(0.5), 2.0, 1.0, 1.0),
        (coulomb(0.3), 10.0, 0.01, 5.0),
        (coulomb(1.2), 1e-9, 4.1e-21, 3.3e13),
        // u_c = 1.5, s = sqrt(2) → u_c/s ≈ 1.06.
        (coulomb_newton(2.0, 0.5), 6.0, 1.0, 1.0),
        // u_c = 40, s = 1 → u_c/s = 40.
        (coulomb_newton(0.05, 0.4), 5.0, 0.25, 2.0),
        // u_c = 0.001, s ≈ 0.32 → u_c/s ≈ 0.003.
        (coulomb_newton(1e3, 0.5), 2.0, 0.1, 0.5),
        // u_c = 1e4 beyond the range: linear everywhere tested.
        (coulomb_newton(1e-4, 1.0), 1.0, 1.0, 1.0),
        // Colloidal units: u_c inside, s ≈ 5.2e-3.
        (coulomb_newton(1e-7, 0.3), 1e-9, 4.1e-21, 3.3e15),
    ]
}

#[test]
fn diffusion_matches_quadrature() {
    let mut worst = [0.0f64; 3];
    for (law, w, kt, nu) in laws() {
        let s = (2.0 * kt * nu).sqrt();
        let mut us: Vec<f64> = (0..=200).map(|k| 50.0 * s * k as f64 / 200.0).collect();
        if let StochasticModel::CoulombNewton(CoulombNewton { gamma, kappa, .. }) = law {
            let u_c = kappa * w / gamma;
            us.extend([u_c, u_c * (1.0 - 1e-9), u_c * (1.0 + 1e-9), 0.5 * u_c]);
        }
        for u in us {
            let d = at(law, kt).diffusion(u, w, nu);
            let q = diffusion_by_quadrature(&law, u, w, kt, nu);
            let e = rel_err(d, q);
            assert!(e < 1e-8, "{law:?} u = {u}: {d} vs {q} ({e:e})");
            let slot = match law {
                StochasticModel::Linear(_) => 0,
                StochasticModel::Coulomb(_) => 1,
                StochasticModel::CoulombNewton(_) => 2,
            };
            worst[slot] = worst[slot].max(e);
        }
    }
    eprintln!(
        "D vs quadrature, max relative error: linear {:.2e}, coulomb {:.2e}, coulomb_newton {:.2e}",
        worst[0], worst[1], worst[2]
    );
}

#[test]
fn diffusion_is_finite_everywhere() {
    for (law, w, kt, nu) in laws() {
        let s = (2.0 * kt * nu).sqrt();
        let mut u = 0.0;
        while u <= 1e6 * s {
            let d = at(law, kt).diffusion(u, w, nu);
            assert!(d.is_finite() && d >= 0.0, "{law:?} u = {u}: {d}");
            u = if u == 0.0 { 1e-6 * s } else { u * 1.01 };
        }
        for u in [1e6 * s, 1e300, f64::MAX] {
            let d = at(law, kt).diffusion(u, w, nu);
            assert!(d.is_finite() && d >= 0.0, "{law:?} u = {u}: {d}");
        }
        // Deterministic limit and degenerate inputs.
        assert_eq!(at(law, 0.0).diffusion(1.0, w, nu), 0.0);
        assert_eq!(at(law, kt).diffusion(1.0, w, 0.0), 0.0);
        assert_eq!(at(law, 1e-300).diffusion(1.0, w, 1e-300), 0.0);
        // Tiny but representable 2kTν.
        let d = at(law, 1e-200).diffusion(0.0, w, 1e-100);
        assert!(d.is_finite() && d >= 0.0);
    }
    // Coulomb: D → κw/u for u ≫ sqrt(2kTν).
    let law = coulomb(0.5);
    assert!(rel_err(at(law, 1.0).diffusion(1e9, 2.0, 1.0) * 1e9, 1.0) < 1e-15);
    // CoulombNewton reduces to its two limits.
    let cn = coulomb_newton(0.0, 0.5);
    assert_eq!(at(cn, 1.0).diffusion(1.0, 2.0, 1.0), 0.0);
    let cn = coulomb_newton(1e-300, 0.5);
    assert!(rel_err(at(cn, 1.0).diffusion(1.0, 2.0, 1.0), 1e-300) < 1e-15);
}

#[test]
fn diffusion_is_continuous_at_the_crossover() {
    let law = coulomb_newton(2.0, 0.5);
    let (w, kt, nu) = (6.0, 1.0, 1.0);
    let u_c = 1.5;
    let below = at(law, kt).diffusion(u_c * (1.0 - 1e-15), w, nu);
    let at_uc = at(law, kt).diffusion(u_c, w, nu);
    assert!(rel_err(below, at_uc) < 1e-14);
    // Above u_c it is exactly the Coulomb form.
    let coulomb = coulomb(0.5);
    assert_eq!(
        at(law, kt).diffusion(2.0, w, nu),
        at(coulomb, kt).diffusion(2.0, w, nu)
    );
}

// -------------------------------------------------------------- pair force

/// The configuration of the hand calculation below.
fn hand_input() -> StochasticPairInput {
    StochasticPairInput {
        n: DVec3::Z,
        v_i: DVec3::new(1.0, 0.0, 0.0),
        v_j: DVec3::new(0.0, 2.0, 0.5),
        omega_i: DVec3::new(0.0, 0.5, 0.0),
        omega_j: DVec3::new(1.0, 0.0, 0.0),
        r_i: 0.5,
        r_j: 1.0,
        m_i: 1.0,
        m_j: 2.0,
        inertia_i: 0.1,
        inertia_j: 0.8,
        w: 10.0,
    }
}

fn assert_close(a: DVec3, b: DVec3, tol: f64) {
    assert!((a - b).length() <= tol * b.length().max(1.0), "{a} vs {b}");
}

/// kT = 0 by hand. v_j − v_i = (−1, 2, 0.5), projected: (−1, 2, 0).
/// ω_i R_i + ω_j R_j = (0, 0.25, 0) + (1, 0, 0) = (1, 0.25, 0);
/// (1, 0.25, 0) × ẑ = (0.25, −1, 0). u = (−1.25, 3, 0), |u| = 3.25,
/// û = (−5/13, 12/13, 0).
/// Coulomb κ = 0.4, w = 10: f = 4, F_i = (−20/13, 48/13, 0);
/// ẑ × F_i = (−48/13, −20/13, 0); τ_i = 0.5 × that, τ_j = 1.0 × that.
/// Linear γ = 0.1: f = γ w |u| = 3.25, F_i = u = (−1.25, 3, 0).
/// CoulombNewton γ = 2, κ = 0.4: u_c = 2 < 3.25, f = 4 (as Coulomb);
/// γ = 1: u_c = 4 > 3.25, f = γ|u| = 3.25, F_i = u.
#[test]
fn deterministic_friction_by_hand() {
    let input = hand_input();
    let noise = [0.3, -1.2, 0.7, 2.0, -0.4, 0.9]; // ignored at kT = 0
    let out = stochastic_pair(&at(coulomb(0.4), 0.0), 1e-3, &input, &noise);
    let f = DVec3::new(-20.0 / 13.0, 48.0 / 13.0, 0.0);
    let arm = DVec3::new(-48.0 / 13.0, -20.0 / 13.0, 0.0);
    assert_close(out.force_i, f, 1e-15);
    assert_close(out.torque_i, 0.5 * arm, 1e-15);
    assert_close(out.torque_j, 1.0 * arm, 1e-15);

    let u = DVec3::new(-1.25, 3.0, 0.0);
    let lin = stochastic_pair(&at(linear(0.1), 0.0), 1e-3, &input, &noise);
    assert_close(lin.force_i, u, 1e-15);
    assert_close(lin.torque_i, 0.5 * DVec3::new(-3.0, -1.25, 0.0), 1e-15);

    let cn_sliding = coulomb_newton(2.0, 0.4);
    assert_close(
        stochastic_pair(&at(cn_sliding, 0.0), 1e-3, &input, &noise).force_i,
        f,
        1e-15,
    );
    let cn_viscous = coulomb_newton(1.0, 0.4);
    assert_close(
        stochastic_pair(&at(cn_viscous, 0.0), 1e-3, &input, &noise).force_i,
        u,
        1e-15,
    );
}

/// At kT = 0, |F_i| = f(|u|) along û, for random configurations.
#[test]
fn deterministic_force_is_f_along_u() {
    let noise = PairNoise::new(3, Stream::StochasticFriction);
    let laws = [linear(0.3), coulomb(0.6), coulomb_newton(1.0, 0.5)];
    for k in 0..1000u64 {
        let g = noise.pair_normals(k, 0, 1);
        let h = noise.pair_normals(k, 1, 2);
        let n = DVec3::new(g[0], g[1], g[2]).normalize();
        let mut input = hand_input();
        input.n = n;
        input.v_i = DVec3::new(g[3], g[4], g[5]);
        input.v_j = DVec3::new(h[0], h[1], h[2]);
        input.omega_i = DVec3::new(h[3], h[4], h[5]);
        input.omega_j = DVec3::new(g[5], h[0], g[1]);
        input.w = 1.0 + g[2].abs();
        let dv = input.v_j - input.v_i;
        let u =
            dv - n * n.dot(dv) - (input.omega_i * input.r_i + input.omega_j * input.r_j).cross(n);
        for law in laws {
            let out = stochastic_pair(&at(law, 0.0), 1e-3, &input, &g);
            let f = law.force(u.length(), input.w);
            assert!(rel_err(out.force_i.length(), f) < 1e-13);
            assert!(out.force_i.normalize().dot(u.normalize()) > 1.0 - 1e-13);
            assert!(out.force_i.dot(n).abs() < 1e-13 * f);
            assert_close(out.torque_i, input.r_i * n.cross(out.force_i), 1e-15);
            assert_close(out.torque_j, input.r_j * n.cross(out.force_i), 1e-15);
        }
    }
}

/// With kT > 0 the force is the kT = 0 friction plus a noise term that is
/// linear in the normal variates, with amplitude sqrt(D kT/Δt):
/// ξ = e_x gives amplitude · P(n) e_x, N = e_x gives −amplitude · n × e_x.
#[test]
fn noise_is_linear_with_amplitude_sqrt_d_kt_over_dt() {
    let input = hand_input();
    let (kt, dt) = (0.8, 2e-3);
    let nu = pair_mobility(1.0, 2.0, 0.5, 1.0, 0.1, 0.8);
    assert!(rel_err(nu, 1.0 + 0.5 + 2.5 + 1.25) < 1e-15);
    let speed = 3.25;
    for law in [linear(0.1), coulomb(0.4), coulomb_newton(1.0, 0.4)] {
        let amplitude = (at(law, kt).diffusion(speed, input.w, nu) * kt / dt).sqrt();
        let base = stochastic_pair(&at(law, 0.0), dt, &input, &[0.0; 6]).force_i;
        let zero = stochastic_pair(&at(law, kt), dt, &input, &[0.0; 6]).force_i;
        assert_eq!(base, zero);
        let noise_of = |g: [f64; 6]| stochastic_pair(&at(law, kt), dt, &input, &g).force_i - base;
        // Unit vectors (n = ẑ): ξ_x → +x, ξ_y → +y, ξ_z → 0 (projected out),
        // N_x → −ẑ × x̂ = −ŷ, N_y → −ẑ × ŷ = +x̂, N_z → 0.
        let expected = [
            DVec3::X,
            DVec3::Y,
            DVec3::ZERO,
            -DVec3::Y,
            DVec3::X,
            DVec3::ZERO,
        ];
        for (c, e) in expected.iter().enumerate() {
            let mut g = [0.0; 6];
            g[c] = 1.0;
            assert_close(noise_of(g), amplitude * *e, 1e-14);
        }
        // Linearity: scaling and superposition.
        let g = [0.3, -1.2, 0.7, 2.0, -0.4, 0.9];
        let ng = noise_of(g);
        assert_close(noise_of(g.map(|x| -2.5 * x)), -2.5 * ng, 1e-14);
        let sum: DVec3 = (0..6)
            .map(|c| g[c] * noise_of(std::array::from_fn(|k| f64::from(k == c))))
            .sum();
        assert_close(ng, sum, 1e-14);
        // Scaling with kT/Δt at fixed D... D depends on kT for Coulomb, so
        // check the combination directly.
        let kt2 = 3.0 * kt;
        let amplitude2 = (at(law, kt2).diffusion(speed, input.w, nu) * kt2 / dt).sqrt();
        let n2 = stochastic_pair(&at(law, kt2), dt, &input, &g).force_i - base;
        assert_close(n2, ng * (amplitude2 / amplitude), 1e-14);
        let n3 = stochastic_pair(&at(law, kt), 0.25 * dt, &input, &g).force_i - base;
        assert_close(n3, 2.0 * ng, 1e-14);
        // The noise lies in the tangent plane, and torques follow F_i.
        let out = stochastic_pair(&at(law, kt), dt, &input, &g);
        assert!(out.force_i.z.abs() < 1e-14 * out.force_i.length());
        assert_close(out.torque_i, 0.5 * DVec3::Z.cross(out.force_i), 1e-15);
        assert_close(out.torque_j, 1.0 * DVec3::Z.cross(out.force_i), 1e-15);
    }
}

#[test]
fn zero_slip_and_walls() {
    // u = 0: no friction, noise only.
    let mut input = hand_input();
    input.v_i = DVec3::ZERO;
    input.v_j = DVec3::new(0.0, 0.0, 0.3); // normal motion only
    input.omega_i = DVec3::ZERO;
    input.omega_j = DVec3::Z; // spin about the normal: no slip
    let law = coulomb(0.5);
    let out = stochastic_pair(&at(law, 0.0), 1e-3, &input, &[1.0; 6]);
    assert_eq!(out, StochasticPairOutput::default());
    let out = stochastic_pair(&at(law, 1.0), 1e-3, &input, &[1.0; 6]);
    let nu = pair_mobility(1.0, 2.0, 0.5, 1.0, 0.1, 0.8);
    let amp = (at(law, 1.0).diffusion(0.0, 10.0, nu) * 1.0 / 1e-3).sqrt();
    // ξ = (1,1,1) → (1,1,0); −ẑ × (1,1,1) = (1,−1,0); sum (2, 0, 0).
    assert_close(out.force_i, DVec3::new(2.0 * amp, 0.0, 0.0), 1e-14);

    // A wall as j: infinite mass, inertia and radius.
    let mut wall = hand_input();
    wall.r_j = f64::INFINITY;
    wall.m_j = f64::INFINITY;
    wall.inertia_j = f64::INFINITY;
    wall.omega_j = DVec3::new(3.0, 1.0, 0.0); // ignored
    assert_eq!(
        pair_mobility(1.0, f64::INFINITY, 0.5, f64::INFINITY, 0.1, f64::INFINITY),
        1.0 + 2.5
    );
    let out = stochastic_pair(
        &at(law, 1.0),
        1e-3,
        &wall,
        &[0.5, -0.1, 0.2, 0.3, 0.4, -0.6],
    );
    assert!(out.force_i.is_finite() && out.torque_i.is_finite());
    assert_eq!(out.torque_j, DVec3::ZERO);
    // Slip with the wall: (−1, 2, 0) − (0, 0.25, 0) × ẑ = (−1.25, 2, 0).
    let det = stochastic_pair(&at(law, 0.0), 1e-3, &wall, &[0.0; 6]);
    assert_close(
        det.force_i,
        5.0 * DVec3::new(-1.25, 2.0, 0.0).normalize(),
        1e-15,
    );
}

/// Fluctuation–dissipation, end to end: two bodies coupled only by this
/// contact (fixed normal ẑ), integrated with Euler–Maruyama using the
/// pair noise. The slip velocity u lives in the tangent plane and obeys
/// du = −ν F_i dt, so its stationary density must be the Maxwell one,
/// exp(−|u|²/(2 kT ν)): ⟨|u|²⟩ = 2 kT ν and ⟨|u|⁴⟩/⟨|u|²⟩² = 2. Linear
/// momentum m_i v_i + m_j v_j is conserved to round-off.
///
/// Tolerances: about 10^4 relaxation times give a statistical error
/// near 1.5 % on ⟨|u|²⟩ and 3 % on the ratio; the time-step bias is
/// about Δt/τ = 0.5 %. A wrong D (e.g. a missing sqrt(π) or a plain
/// exp·erfc) shifts ⟨|u|²⟩ by tens of percent.
#[test]
fn slip_velocity_thermalises() {
    let (m_i, m_j, r_i, r_j) = (1.0, 1.5, 0.5, 0.8);
    let (inertia_i, inertia_j) = (0.4 * m_i * r_i * r_i, 0.4 * m_j * r_j * r_j);
    let nu = pair_mobility(m_i, m_j, r_i, r_j, inertia_i, inertia_j);
    let (kt, dt, w) = (1.0, 5e-3, 2.0);
    let steps = 2_000_000u64;
    let burn_in = 5_000u64;
    let rng = PairNoise::new(99, Stream::StochasticFriction);
    for law in [linear(0.1), coulomb(0.2), coulomb_newton(0.2, 0.2)] {
        let mut input = StochasticPairInput {
            n: DVec3::Z,
            v_i: DVec3::ZERO,
            v_j: DVec3::ZERO,
            omega_i: DVec3::ZERO,
            omega_j: DVec3::ZERO,
            r_i,
            r_j,
            m_i,
            m_j,
            inertia_i,
            inertia_j,
            w,
        };
        let (mut s2, mut s4) = (0.0, 0.0);
        for step in 0..steps {
            let out = stochastic_pair(&at(law, kt), dt, &input, &rng.pair_normals(step, 4, 9));
            if step >= burn_in {
                let dv = input.v_j - input.v_i;
                let u = dv - (input.omega_i * r_i + input.omega_j * r_j).cross(DVec3::Z);
                let u2 = u.length_squared();
                s2 += u2;
                s4 += u2 * u2;
            }
            input.v_i += out.force_i / m_i * dt;
            input.v_j -= out.force_i / m_j * dt;
            input.omega_i += out.torque_i / inertia_i * dt;
            input.omega_j += out.torque_j / inertia_j * dt;
        }
        let count = (steps - burn_in) as f64;
        let mean_u2 = s2 / count;
        let ratio = (s4 / count) / (mean_u2 * mean_u2);
        let momentum = m_i * input.v_i + m_j * input.v_j;
        eprintln!(
            "{law:?}: <|u|^2>/(2 kT nu) = {:.4}, <|u|^4>/<|u|^2>^2 = {ratio:.4}, |p| = {:.1e}",
            mean_u2 / (2.0 * kt * nu),
            momentum.length()
        );
        assert!((mean_u2 / (2.0 * kt * nu) - 1.0).abs() < 0.05, "{law:?}");
        assert!((ratio - 2.0).abs() < 0.12, "{law:?}");
        assert!(momentum.length() < 1e-10);
    }
}
