//! Conservation laws of the whole engine (physics.md: "all: isolated
//! cluster, no walls/gravity: total linear and angular momentum conserved
//! to round-off"; "every pair force is applied as +F on one body and −F on
//! the other (Newton's third law to the last bit)").

mod common;

use common::*;
use glam::DVec3;

/// 36 polydisperse spheres (R = 0.8–1.2 mm) on a jittered 4×3×3 lattice
/// around the origin, with random velocities, an inward drift (so the
/// cluster collapses into a dense frictional heap), a swirl about z and
/// random spins; Hertz (e = 0.3) with Mindlin
/// spring_slider friction (μ = 0.5, tangential damping on).
fn cluster() -> Case {
    let mut rng = SplitMix64(20240611);
    let mut c = Case {
        dt: 1e-5,
        lo: [-0.05; 3],
        hi: [0.05; 3],
        elastic: Some((1e7, 0.3)),
        normal: "{ model = \"hertz\", restitution = 0.3 }".into(),
        tangential:
            "{ model = \"spring_slider\", friction = 0.5, mindlin = true, damping_ratio = 0.5 }"
                .into(),
        ..Default::default()
    };
    let spacing = 2.7e-3;
    let swirl = DVec3::new(0.0, 0.0, 20.0);
    for i in 0..4 {
        for j in 0..3 {
            for k in 0..3 {
                let site = DVec3::new(i as f64 - 1.5, j as f64 - 1.0, k as f64 - 1.0) * spacing;
                let jitter = DVec3::new(
                    rng.range(-1e-4, 1e-4),
                    rng.range(-1e-4, 1e-4),
                    rng.range(-1e-4, 1e-4),
                );
                let x = site + jitter;
                let v = DVec3::new(
                    rng.range(-0.1, 0.1),
                    rng.range(-0.1, 0.1),
                    rng.range(-0.1, 0.1),
                ) - 200.0 * x
                    + swirl.cross(x);
                let w = DVec3::new(
                    rng.range(-200.0, 200.0),
                    rng.range(-200.0, 200.0),
                    rng.range(-200.0, 200.0),
                );
                c.sphere(
                    rng.range(0.8e-3, 1.2e-3),
                    x.to_array(),
                    v.to_array(),
                    w.to_array(),
                );
            }
        }
    }
    c
}

/// Total momentum and angular momentum (orbital + spin, `I = 0.4 m R²`) of
/// an isolated frictional cluster over 3000 steps (30 ms: the cluster
/// collapses into a heap with up to ~40 simultaneous sticking and sliding
/// contacts, loses most of its kinetic energy and spreads out again).
///
/// Exact in exact arithmetic: pair forces are antisymmetric, and the
/// torques `ℓ_i n × F`, `ℓ_j n × F` with `ℓ_i + ℓ_j = r` cancel the moment
/// of the force pair; velocity Verlet preserves both (half kicks add zero
/// total, the drift adds `Σ m v × v = 0`). Round-off: each step rounds every
/// velocity update at relative 1.1e-16, a random walk of ~36 × 3000 terms;
/// tolerance 1e-12 of the scales `Σ m|v|` and `Σ (m|x||v| + I|ω|)`
/// (measured values printed).
#[test]
fn isolated_cluster_conserves_momentum_and_angular_momentum() {
    let c = cluster();
    serial(|| {
        let mut sim = c.build();
        let m0 = momenta(&sim);
        let (mut dp, mut dl) = (0.0f64, 0.0f64);
        let mut max_contacts = 0.0f64;
        let e0 = sim.thermo();
        for step in 1..=3000 {
            sim.step().unwrap();
            let m = momenta(&sim);
            dp = dp.max((m.linear - m0.linear).length() / m0.linear_scale);
            dl = dl.max((m.angular - m0.angular).length() / m0.angular_scale);
            if step % 10 == 0 {
                max_contacts = max_contacts.max(sim.thermo().contacts);
            }
        }
        let e1 = sim.thermo();
        let end_contacts = e1.contacts;
        let (ke0, ke1) = (
            e0.kinetic_energy + e0.rotational_energy,
            e1.kinetic_energy + e1.rotational_energy,
        );
        eprintln!(
            "cluster of {}: max |ΔP|/Σm|v| = {dp:.2e}, max |ΔL|/scale = {dl:.2e}, contacts up to {max_contacts} ({end_contacts} at the end), \
             kinetic energy {ke0:.3e} → {ke1:.3e} J, {} neighbour rebuilds",
            sim.particles.n_owned, sim.timers.rebuilds
        );
        // The test must exercise many frictional contacts.
        assert!(max_contacts >= 30.0, "only {max_contacts} contacts");
        assert!(ke1 < 0.5 * ke0, "the cluster should dissipate energy");
        assert!(dp < 1e-12, "linear momentum drifted by {dp:e} of Σm|v|");
        assert!(
            dl < 1e-12,
            "angular momentum drifted by {dl:e} of its scale"
        );
    });
}

/// Newton's third law to the last bit (physics.md): in a two-particle
/// contact the force on one is the exact negation of the force on the other.
/// An oblique, frictional (spring_slider with history, sliding and
/// sticking), spinning collision of unequal spheres; every step in contact
/// is compared bit for bit. Also the torques: `τ_i/ℓ_i` and `τ_j/ℓ_j` are
/// the same vector `n × F_i`, checked to 1e-12 relative.
#[test]
fn newton_third_law_is_bitwise() {
    let models = [
        (
            "{ model = \"hertz\", restitution = 0.6 }",
            "{ model = \"spring_slider\", friction = 0.3, mindlin = true, damping_ratio = 0.3 }",
        ),
        (
            "{ model = \"hooke\", stiffness = 1000.0, restitution = 0.6 }",
            "{ model = \"dashpot_slider\", friction = 0.3, damping = 0.05 }",
        ),
    ];
    for (normal, tangential) in models {
        let mut c = Case {
            dt: 1e-6,
            lo: [-0.05; 3],
            hi: [0.05; 3],
            elastic: Some((1e7, 0.3)),
            normal: normal.into(),
            tangential: tangential.into(),
            ..Default::default()
        };
        let (ri, rj) = (1.0e-3, 1.3e-3);
        c.sphere(
            ri,
            [-1.2e-3, -0.37e-3, 0.11e-3],
            [0.7, 0.2, -0.1],
            [30.0, -120.0, 75.0],
        );
        c.sphere(
            rj,
            [1.2e-3, 0.41e-3, -0.23e-3],
            [-0.6, -0.3, 0.15],
            [-90.0, 40.0, 210.0],
        );
        serial(|| {
            let mut sim = c.build();
            let mut in_contact = 0;
            for _ in 0..20000 {
                sim.step().unwrap();
                let (xi, _, _, fi, ti) = body(&sim, 0);
                let (xj, _, _, fj, tj) = body(&sim, 1);
                let d = xj - xi;
                let delta = ri + rj - d.length();
                if delta <= 0.0 {
                    if in_contact > 0 {
                        break;
                    }
                    continue;
                }
                in_contact += 1;
                assert_negated_bits(fi, fj);
                let (li, lj) = (ri - 0.5 * delta, rj - 0.5 * delta);
                let arm = (ti / li - tj / lj).length();
                assert!(arm <= 1e-12 * (ti / li).length(), "torques {ti} / {tj}");
            }
            assert!(
                in_contact > 50,
                "the spheres should touch ({in_contact} steps)"
            );
        });
    }
}

/// The same isolated cluster with stochastic friction instead of the
/// spring-slider (physics.md, "Markovian stochastic friction": the noise on
/// `j` is the exact negation of the noise on `i`, `ξ` signed by id order):
/// total linear momentum is conserved to round-off at every step, with the
/// noise on (kT = 1e-6 J, a quarter of the initial kinetic energy per particle)
/// and for each friction law. Angular momentum is *not* conserved by this
/// model: the torques `R_i n × F`, `R_j n × F` use the radii, which sum to
/// `r + δ`, not `r` (the source's convention), so it is not checked.
/// Tolerance as above: 1e-12 of `Σ m|v|`.
#[test]
fn isolated_cluster_with_stochastic_friction_conserves_momentum() {
    for law in [
        "{ model = \"coulomb\", kappa = 0.5, kT = 1e-6 }",
        "{ model = \"linear\", gamma = 1e-3, kT = 1e-6 }",
        "{ model = \"coulomb_newton\", gamma = 0.01, kappa = 0.5, kT = 1e-6 }",
    ] {
        let mut c = cluster();
        c.tangential = "{ model = \"none\" }".into();
        c.stochastic = law.into();
        serial(|| {
            let mut sim = c.build();
            let m0 = momenta(&sim);
            let mut dp = 0.0f64;
            let mut max_contacts = 0.0f64;
            for step in 1..=1500 {
                sim.step().unwrap();
                let m = momenta(&sim);
                dp = dp.max((m.linear - m0.linear).length() / m0.linear_scale);
                if step % 10 == 0 {
                    max_contacts = max_contacts.max(sim.thermo().contacts);
                }
            }
            eprintln!("{law}: max |ΔP|/Σm|v| = {dp:.2e}, contacts up to {max_contacts}");
            assert!(max_contacts >= 20.0, "only {max_contacts} contacts");
            assert!(
                dp < 1e-12,
                "{law}: linear momentum drifted by {dp:e} of Σm|v|"
            );
        });
    }
}
