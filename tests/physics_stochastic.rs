//! Markovian stochastic friction through the engine (physics.md, "Markovian
//! stochastic friction" and its rows of "Validation targets"; the model of
//! Hofmann, Dormann, Liebchen, Schmid, arXiv:2507.16388 (2025), as HOOMD-blue's
//! `FrictionalPair` ships it).
//!
//! - deterministic friction (kT = 0) between two WCA spheres against a hand
//!   calculation, Newton's third law and the torque convention;
//! - Newton's third law to the last bit with noise (kT > 0);
//! - the noise a pair receives does not depend on the order in which pairs
//!   are evaluated, nor on which of the two particles asks;
//! - equipartition of a WCA fluid thermostatted by the friction alone:
//!   translational and rotational temperature equal kT, Gaussian velocities,
//!   total momentum conserved to round-off at every step.

mod common;

use common::*;
use glam::DVec3;
use gravel::config::Setup;
use gravel::contact::normal::Wca;
use gravel::contact::stochastic::Coulomb;
use gravel::contact::{
    Body, ContactLaw, Kinematics, NormalModel, PairContext, StochasticModel, TangentialModel,
};
use gravel::parallel::comm::SerialComm;
use gravel::rng::{PairNoise, Stream};
use gravel::sim::Simulation;

/// Density that gives a sphere of radius 1/2 unit mass (reduced units).
const UNIT_MASS_DENSITY: f64 = 6.0 / std::f64::consts::PI;

/// WCA magnitude `F = 24ε/r [2(σ/r)^12 − (σ/r)^6]` (physics.md, `F_n = −dU/dr`
/// of `U = 4ε[(σ/r)^12 − (σ/r)^6] + ε`), written out independently of the engine.
fn wca_force(r: f64, epsilon: f64, sigma: f64) -> f64 {
    let s6 = (sigma / r).powi(6);
    24.0 * epsilon / r * (2.0 * s6 * s6 - s6)
}

/// Two WCA spheres (ε = σ = 1, R = 1/2, m = 1) at r = 1.05 along x, with
/// the velocities of the hand calculation below.
fn two_spheres(stochastic: &str) -> Case {
    let mut c = Case {
        dt: 1e-3,
        lo: [-2.0; 3],
        hi: [3.0; 3],
        density: UNIT_MASS_DENSITY,
        normal: "{ model = \"wca\", epsilon = 1.0, sigma = 1.0 }".into(),
        stochastic: stochastic.into(),
        ..Default::default()
    };
    c.sphere(0.5, [0.0, 0.0, 0.0], [0.1, 0.2, -0.3], [0.3, 0.0, 1.0]);
    c.sphere(0.5, [1.05, 0.0, 0.0], [0.4, -0.1, 0.5], [0.5, -0.2, 0.0]);
    c
}

fn assert_close(a: DVec3, b: DVec3, tol: f64, what: &str) {
    assert!(
        (a - b).length() <= tol * b.length().max(1e-300),
        "{what}: {a} vs {b}"
    );
}

/// kT = 0 through the engine (the forces of step 0, evaluated with the
/// initial velocities). Hand calculation, physics.md notation, n = x̂:
///
/// - `v_j − v_i = (0.3, −0.3, 0.8)`, `P(n)(v_j − v_i) = (0, −0.3, 0.8)`;
/// - `ω_i R_i + ω_j R_j = ½(0.3, 0, 1) + ½(0.5, −0.2, 0) = (0.4, −0.1, 0.5)`,
///   `(0.4, −0.1, 0.5) × x̂ = (0, 0.5, 0.1)`;
/// - `u = (0, −0.8, 0.7)`, `|u| = sqrt(1.13)`;
/// - `w = F_WCA(1.05) = 24/1.05 (2·1.05^−12 − 1.05^−6) ≈ 8.39907`;
/// - coulomb κ = 0.5: `F_i = −w n + κ w û`; linear γ = 0.2: `F_i = −w n + γ w u`;
///   coulomb_newton γ = 1, κ = 0.5: `u_c = κw/γ ≈ 4.2 > |u|`, so `f = γ|u|`
///   and `F_i = −w n + γ u`;
/// - `F_j = −F_i`; `τ_i = R_i n × F_i`, `τ_j = R_j n × F_i` (same sign);
///   `x̂ × (0, a, b) = (0, −b, a)`.
///
/// Tolerance 1e-14 relative: a handful of roundings in either calculation.
#[test]
fn deterministic_friction_between_two_wca_spheres_by_hand() {
    let w = wca_force(1.05, 1.0, 1.0);
    assert!((w - 8.39907).abs() < 1e-5, "{w}");
    let u = DVec3::new(0.0, -0.8, 0.7);
    let n = DVec3::X;
    let cases = [
        (
            "{ model = \"coulomb\", kappa = 0.5, kT = 0.0 }",
            0.5 * w * u / 1.13f64.sqrt(),
        ),
        ("{ model = \"linear\", gamma = 0.2, kT = 0.0 }", 0.2 * w * u),
        (
            "{ model = \"coulomb_newton\", gamma = 1.0, kappa = 0.5, kT = 0.0 }",
            1.0 * u,
        ),
    ];
    for (spec, friction) in cases {
        serial(|| {
            let sim = two_spheres(spec).build();
            let (_, _, _, fi, ti) = body(&sim, 0);
            let (_, _, _, fj, tj) = body(&sim, 1);
            let expect = -w * n + friction;
            assert_close(fi, expect, 1e-14, spec);
            assert_negated_bits(fi, fj);
            let arm = DVec3::new(0.0, -friction.z, friction.y);
            assert_close(ti, 0.5 * arm, 1e-14, spec);
            assert_close(tj, 0.5 * arm, 1e-14, spec);
            // The friction is tangential and follows the slip of j relative to i.
            assert!((fi + w * n).dot(n).abs() < 1e-14 * w);
            assert!((fi + w * n).dot(u) > 0.0);
        });
    }
    // Unequal radii: the torques use each body's own radius, same sign.
    let mut c = two_spheres("{ model = \"coulomb\", kappa = 0.5, kT = 0.0 }");
    c.radius = vec![0.5, 0.52];
    serial(|| {
        let sim = c.build();
        let (_, _, _, fi, ti) = body(&sim, 0);
        let (_, _, _, _, tj) = body(&sim, 1);
        let f = fi - (fi.dot(n)) * n;
        assert_close(ti, 0.5 * n.cross(f), 1e-14, "τ_i");
        assert_close(tj, 0.52 * n.cross(f), 1e-14, "τ_j");
    });
}

/// With noise (kT > 0), over many steps of the two-sphere collision: the
/// force on j is the exact negation of the force on i, bit for bit, and the
/// torques are `R n × F_i` on both bodies (same sign), to 1e-12 relative.
#[test]
fn newton_third_law_is_bitwise_with_noise() {
    for spec in [
        "{ model = \"coulomb\", kappa = 0.5, kT = 1.0 }",
        "{ model = \"linear\", gamma = 0.2, kT = 1.0 }",
        "{ model = \"coulomb_newton\", gamma = 1.0, kappa = 0.5, kT = 1.0 }",
    ] {
        serial(|| {
            let mut sim = two_spheres(spec).build();
            let mut in_contact = 0;
            let mut previous = DVec3::ZERO;
            let mut changed = 0;
            for _ in 0..300 {
                let (xi, _, _, fi, ti) = body(&sim, 0);
                let (xj, _, _, fj, tj) = body(&sim, 1);
                let d = xj - xi;
                if d.length() < 1.122 {
                    in_contact += 1;
                    assert_negated_bits(fi, fj);
                    let n = d.normalize();
                    let ft = fi - fi.dot(n) * n;
                    assert!((ti - 0.5 * n.cross(ft)).length() <= 1e-12 * ti.length().max(1e-300));
                    assert!((tj - 0.5 * n.cross(ft)).length() <= 1e-12 * tj.length().max(1e-300));
                    if ft != previous {
                        changed += 1;
                    }
                    previous = ft;
                }
                sim.step().unwrap();
            }
            assert!(in_contact > 20, "{spec}: {in_contact} steps in contact");
            assert!(changed > 20, "{spec}: the noise should vary");
        });
    }
}

/// The noise a pair receives depends on (seed, step, min id, max id) only:
/// evaluating a set of contacts in any order, and asking from either
/// particle (the engine always evaluates the canonical orientation, so the
/// other particle gets the exact negation), gives the same bits.
#[test]
fn pair_noise_does_not_depend_on_evaluation_order() {
    let law = ContactLaw {
        normal: NormalModel::Wca(Wca {
            epsilon: 1.0,
            sigma: 1.0,
        }),
        tangential: TangentialModel::None,
        stochastic: Some(StochasticModel::Coulomb(Coulomb {
            kappa: 0.4,
            kt: 1.5,
        })),
        rolling: None,
        spinning: None,
    };
    let noise = PairNoise::new(77, Stream::StochasticFriction);
    let mut rng = SplitMix64(5);
    let mut vec3 = |s: f64| DVec3::new(rng.range(-s, s), rng.range(-s, s), rng.range(-s, s));
    // 40 contacts between ids drawn from 0..20 (some share a particle).
    let mut contacts = Vec::new();
    for c in 0..40u64 {
        let (a, b) = ((c * 7) % 20, (c * 13 + 3) % 20);
        if a == b {
            continue;
        }
        let body = |v: DVec3, w: DVec3| Body {
            x: DVec3::ZERO,
            v,
            omega: w,
            radius: 0.5,
            inv_mass: 1.0,
        };
        let (bi, bj) = (body(vec3(1.0), vec3(2.0)), body(vec3(1.0), vec3(2.0)));
        let d = DVec3::new(1.0, 0.0, 0.0) + vec3(0.05);
        contacts.push((a, b, bi, bj, d));
    }
    let evaluate = |step: u64, &(a, b, bi, bj, d): &(u64, u64, Body, Body, DVec3)| {
        // Canonical orientation: i is the lower id.
        let (id_i, id_j, bi, bj, d) = if a < b {
            (a, b, bi, bj, d)
        } else {
            (b, a, bj, bi, -d)
        };
        let kin = Kinematics::pair(&bi, &bj, d, d.length());
        let ctx = PairContext {
            bi: &bi,
            bj: &bj,
            inv_inertia_i: 10.0,
            inv_inertia_j: 10.0,
            id_i,
            id_j,
            step,
            noise: &noise,
        };
        law.evaluate_pair(&kin, 1e-3, &mut [], &ctx, || {
            unreachable!("no rolling or spinning: the inertia is never asked for")
        })
    };
    let bits = |v: gravel::simd::lane::V3<f64>| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
    for step in [0u64, 1, 2, 1 << 33] {
        let forward: Vec<_> = contacts.iter().map(|c| evaluate(step, c)).collect();
        // Reverse and a fixed shuffle.
        let mut order: Vec<usize> = (0..contacts.len()).collect();
        order.reverse();
        let mut rng = SplitMix64(step + 9);
        for k in (1..order.len()).rev() {
            order.swap(k, (rng.next_u64() % (k as u64 + 1)) as usize);
        }
        for &k in &order {
            let pf = evaluate(step, &contacts[k]);
            assert_eq!(bits(pf.force_i), bits(forward[k].force_i));
            assert_eq!(bits(pf.torque_i), bits(forward[k].torque_i));
            assert_eq!(bits(pf.torque_j), bits(forward[k].torque_j));
        }
        // The same contact listed with its ids the other way round (as the
        // other particle's neighbour list holds it) gets the same bits.
        for (k, &(a, b, bi, bj, d)) in contacts.iter().enumerate() {
            let swapped = evaluate(step, &(b, a, bj, bi, -d));
            assert_eq!(bits(swapped.force_i), bits(forward[k].force_i));
        }
        // The noise is really there and differs between pairs and steps.
        assert_ne!(bits(forward[0].force_i), bits(forward[1].force_i));
        assert_ne!(
            bits(evaluate(step + 1, &contacts[0]).force_i),
            bits(forward[0].force_i)
        );
    }
}

/// Packing fraction of the equipartition runs.
const PHI: f64 = 0.45;
/// Spheres per lattice edge (5³ = 125 spheres).
const EDGE: usize = 5;

/// A periodic WCA fluid (ε = σ = 1, R = 1/2, m = 1) at packing fraction
/// 0.45, started at rest on a simple cubic lattice, with stochastic friction
/// as the only thermostat.
fn fluid_config(stochastic: &str, dt: f64, seed: u64) -> Config {
    colloid_lattice(EDGE, PHI, dt, 1, seed, stochastic)
}

/// Mean and block-average standard error of a series (`blocks` equal blocks).
fn block_stats(x: &[f64], blocks: usize) -> (f64, f64) {
    let len = x.len() / blocks;
    let means: Vec<f64> = (0..blocks)
        .map(|b| x[b * len..(b + 1) * len].iter().sum::<f64>() / len as f64)
        .collect();
    let mean = means.iter().sum::<f64>() / blocks as f64;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (blocks - 1) as f64;
    (mean, (var / blocks as f64).sqrt())
}

struct Equilibrium {
    temperature: (f64, f64),
    rotational: (f64, f64),
    kurtosis: f64,
    momentum_drift: f64,
    contacts: f64,
}

/// Run the fluid: `burn_in` steps, then `steps` steps sampling every
/// `every`; total momentum (summed by id) checked at every step.
fn equilibrate(stochastic: &str, kt: f64, burn_in: u64, steps: u64, every: u64) -> Equilibrium {
    let setup = setup(&fluid_config(stochastic, 0.002, 2025));
    serial(|| {
        let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
        assert_eq!(sim.particles.n_owned, EDGE * EDGE * EDGE);
        let (mut t, mut r) = (Vec::new(), Vec::new());
        let (mut s2, mut s4, mut count) = (0.0, 0.0, 0.0);
        let mut drift: f64 = 0.0;
        let mut contacts = 0.0;
        for step in 1..=burn_in + steps {
            sim.step().unwrap();
            let pa = &sim.particles;
            let mut state: Vec<(u64, f64, DVec3)> = (0..pa.n_owned)
                .map(|k| (pa.id[k], pa.mass[k], pa.v[k]))
                .collect();
            state.sort_by_key(|e| e.0);
            let (mut p, mut scale) = (DVec3::ZERO, 0.0);
            for &(_, m, v) in &state {
                p += m * v;
                scale += m * v.length();
            }
            drift = drift.max(p.length() / scale);
            if step > burn_in && step % every == 0 {
                let th = sim.thermo();
                t.push(th.temperature / kt);
                r.push(th.rotational_temperature / kt);
                contacts += th.contacts;
                for &(_, _, v) in &state {
                    for a in 0..3 {
                        let z2 = v[a] * v[a];
                        s2 += z2;
                        s4 += z2 * z2;
                        count += 1.0;
                    }
                }
            }
        }
        let (m2, m4) = (s2 / count, s4 / count);
        Equilibrium {
            temperature: block_stats(&t, 20),
            rotational: block_stats(&r, 20),
            kurtosis: m4 / (m2 * m2),
            momentum_drift: drift,
            contacts: contacts / t.len() as f64,
        }
    })
}

/// Equipartition (physics.md, "Validation targets": WCA fluid, friction +
/// noise only, no thermostat: translational and rotational temperature =
/// kT per degree of freedom within statistical error; total momentum
/// conserved to round-off).
///
/// 125 spheres at φ = 0.45, Δt = 0.002 σ sqrt(m/ε), kT = 1. 2,500 steps
/// (5 τ) of burn-in from rest, then 25,000 steps (50 τ) sampled every 10
/// steps. The standard errors come from 20 block averages (2.5 τ each, long
/// against the velocity correlation time). Translational temperature is per
/// degree of freedom with the centre-of-mass motion removed (3(N − 1)
/// degrees of freedom: total momentum is conserved), rotational per each of
/// the 3N rotational ones. Requirements: each within 3 standard errors of
/// kT; the kurtosis of the velocity components (the momentum is zero, so
/// about the origin) 3 ± 0.15 (Maxwell distribution); momentum zero to
/// 1e-12 of Σ m|v| at every step.
#[test]
fn wca_fluid_equilibrates_at_kt_with_friction_only() {
    let kt = 1.0;
    for spec in [
        "{ model = \"linear\", gamma = 0.05, kT = 1.0 }",
        "{ model = \"coulomb\", kappa = 0.2, kT = 1.0 }",
    ] {
        let eq = equilibrate(spec, kt, 2_500, 25_000, 10);
        let (t, dt) = eq.temperature;
        let (r, dr) = eq.rotational;
        eprintln!(
            "{spec}: T/kT = {t:.4} ± {dt:.4}, T_rot/kT = {r:.4} ± {dr:.4}, kurtosis {:.4}, \
             max |P|/Σm|v| = {:.1e}, {:.1} contacts per sample",
            eq.kurtosis, eq.momentum_drift, eq.contacts
        );
        assert!(eq.contacts > 100.0, "a fluid with too few contacts");
        assert!((t - 1.0).abs() < 3.0 * dt, "{spec}: T/kT = {t} ± {dt}");
        assert!((r - 1.0).abs() < 3.0 * dr, "{spec}: T_rot/kT = {r} ± {dr}");
        // The error bars are small enough to mean something.
        assert!(dt < 0.02 && dr < 0.02, "{spec}: errors {dt}, {dr}");
        assert!(
            (eq.kurtosis - 3.0).abs() < 0.15,
            "{spec}: kurtosis {}",
            eq.kurtosis
        );
        assert!(eq.momentum_drift < 1e-12, "{spec}: {}", eq.momentum_drift);
    }
}

/// `configs/colloid.toml` (1000 WCA spheres, coulomb stochastic friction,
/// kT = 1, no other thermostat) heats from rest to kT: the mean of the thermo
/// columns `temperature` and `rotational_temperature` over steps 2000–4000
/// (4–8 τ; the translational temperature reaches kT within about 3 τ) lies
/// within 5 % of kT. (A smoke test of the shipped config; the statistical
/// test of equipartition is the one above. Per row the relative fluctuation
/// is sqrt(2/3000) ≈ 2.6 %, so the 21-row mean is good to about 1 %.)
#[test]
fn colloid_config_heats_to_kt() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/colloid.toml");
    let setup = Setup::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let kt = match setup.laws.get(0, 0).stochastic {
        Some(s) => s.kt(),
        None => panic!("configs/colloid.toml has no stochastic friction"),
    };
    assert_eq!(setup.laws.get(0, 0).tangential, TangentialModel::None);
    serial(|| {
        let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
        assert_eq!(sim.particles.n_owned, 1000);
        let (mut t, mut r, mut rows) = (0.0, 0.0, 0.0);
        for step in 1..=4000 {
            sim.step().unwrap();
            if step >= 2000 && step % 100 == 0 {
                let th = sim.thermo();
                t += th.temperature;
                r += th.rotational_temperature;
                rows += 1.0;
            }
        }
        let (t, r) = (t / rows / kt, r / rows / kt);
        eprintln!("configs/colloid.toml, steps 2000-4000: T/kT = {t:.4}, T_rot/kT = {r:.4}");
        assert!((t - 1.0).abs() < 0.05, "T/kT = {t}");
        assert!((r - 1.0).abs() < 0.05, "T_rot/kT = {r}");
    });
}
