//! The diagnostics against what statics says exactly: a bed at rest on its
//! floor weighs on it with its whole weight, and its contact stress
//! balances gravity (`V σ_zz = Σ m g z`, the virial theorem of a static
//! assembly); a sphere at rest off the floor's reference point loads it
//! with the torque of its weight.

mod common;

use common::*;
use gravel::diagnostics::Thermo;
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;

const G: f64 = 9.81;

/// 300 glass beads (radius 0.8–1.2 mm) dropped at random into a box
/// periodic in x and y onto a floor named `floor`, with strong damping so
/// that they come to rest within `steps` steps of 10 µs.
fn bed(steps: u64) -> Config {
    Config::new("bed")
        .run("dt", 1e-5)
        .run("steps", steps)
        .run("seed", 3)
        .run("gravity", [0.0, 0.0, -G])
        .domain([0.0; 3], [0.012, 0.012, 0.03])
        .periodic([true, true, false])
        .material(glass())
        .contact("normal", hertz(0.2))
        .contact("tangential", mindlin(0.5))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass").with("name", "floor"))
        .particles(random(
            "glass",
            radius_range(0.0008, 0.0012),
            300,
            region([0.0; 3], [0.012, 0.012, 0.03]),
        ))
        .output("every", 0)
}

/// Run `sim` to its last step and return the thermo row there.
fn settle(mut sim: Simulation) -> (Simulation, Thermo) {
    while sim.step < sim.setup.steps {
        sim.step().unwrap();
    }
    let t = sim.thermo();
    (sim, t)
}

/// The relative difference `|a − b| / |b|`.
fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn a_settled_bed_weighs_on_its_floor_and_its_stress_balances_gravity() {
    let (sim, t) = settle(build(&bed(30_000)));
    let p = &sim.particles;
    assert_eq!(p.n_owned, 300);
    // At rest: the kinetic energy is a vanishing part of the potential.
    assert!(t.kinetic_energy < 1e-6 * t.potential_energy.abs(), "{t:?}");
    let weight: f64 = p.mass[..p.n_owned].iter().map(|m| m * G).sum();
    let mgz: f64 = (0..p.n_owned).map(|k| p.mass[k] * G * p.x[k].z).sum();
    // The floor carries the whole weight, straight down (0.5 %).
    let [fx, fy, fz] = t.wall_force[0];
    assert!(rel(-fz, weight) < 0.005, "floor {fz} N, weight {weight} N");
    assert!(fx.abs().max(fy.abs()) < 0.005 * weight, "{fx}, {fy}");
    // V σ_zz = Σ m g z, z from the floor (1 %); both parts as the sum.
    let volume = 0.012 * 0.012 * 0.03;
    let stress = t.stress();
    assert!(
        rel(volume * stress[2], mgz) < 0.01,
        "V σzz {} against Σ m g z {mgz}",
        volume * stress[2]
    );
    for (c, s) in stress.iter().enumerate() {
        assert_eq!(*s, t.stress_kinetic[c] + t.stress_contact[c]);
    }
    // A bed under its own weight is compressed sideways too (positive),
    // and its shear stresses are small beside its normal ones.
    assert!(
        stress[0] > 0.1 * stress[2] && stress[1] > 0.1 * stress[2],
        "{stress:?}"
    );
    assert!(
        stress[3..].iter().all(|s| s.abs() < 0.1 * stress[2]),
        "{stress:?}"
    );
}

#[test]
fn a_sphere_at_rest_loads_the_floor_with_the_torque_of_its_weight() {
    // One sphere 3 mm from the floor's point along x, dropped from 0.1 mm.
    let (a, r) = (0.003, 0.001);
    let config = Config::new("one")
        .run("dt", 1e-5)
        .run("steps", 20_000)
        .run("gravity", [0.0, 0.0, -G])
        .domain([-0.01; 3], [0.01, 0.01, 0.01])
        .material(glass())
        .contact("normal", hertz(0.1))
        .contact("tangential", mindlin(0.5))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
        .particles(list("glass", r, vec![[a, 0.0, r + 1e-4]]))
        .output("every", 0);
    let (sim, t) = settle(build(&config));
    let mg = sim.particles.mass[0] * G;
    // The force on the floor is the weight, at the contact point (a, 0, 0):
    // its torque about the floor's point (0, 0, 0) is (a, 0, 0) × (0, 0, −mg).
    let [tx, ty, tz] = t.wall_torque[0];
    assert!(rel(ty, a * mg) < 1e-3, "torque {ty} against {}", a * mg);
    assert!(tx.abs().max(tz.abs()) < 1e-6 * a * mg, "{tx}, {tz}");
    assert!(rel(-t.wall_force[0][2], mg) < 1e-3);
}

#[test]
fn a_restart_has_no_contact_loads_until_its_first_step() {
    let (sim, before) = settle(build(&bed(200)));
    let snap = sim.snapshot();
    let setup = sim.setup.clone();
    let mut restarted = Simulation::from_snapshot(setup, Box::new(SerialComm), &snap).unwrap();
    // Forces are restored, contacts' shares are not: the row says so (NaN).
    let t = restarted.thermo();
    assert_eq!(t.kinetic_energy, before.kinetic_energy);
    assert!(t.stress_contact.iter().all(|s| s.is_nan()), "{t:?}");
    assert!(t.wall_force[0].iter().all(|f| f.is_nan()));
    restarted.step().unwrap();
    let t = restarted.thermo();
    assert!(t.stress_contact.iter().all(|s| s.is_finite()), "{t:?}");
    assert!(t.wall_force[0][2] < 0.0, "{t:?}");
}
