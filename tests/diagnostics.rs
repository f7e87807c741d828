//! The diagnostics against what statics says exactly: a bed at rest on its
//! floor weighs on it with its whole weight, and its contact stress
//! balances gravity (`V σ_zz = Σ m g z`, the virial theorem of a static
//! assembly); a sphere at rest off the floor's reference point loads it
//! with the torque of its weight.

mod common;

use common::*;
use glam::DVec3;
use gravel::diagnostics::contact_list::local_contacts;
use gravel::diagnostics::sampler;
use gravel::diagnostics::Thermo;
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;

const G: f64 = 9.81;

/// 300 glass beads (radius 0.8–1.2 mm) dropped at random into a box
/// periodic in x and y onto a floor named `floor`, with strong damping so
/// that they come to rest within `steps` steps of 10 µs.
fn bed(steps: u64) -> Config {
    bed_on(0.0, steps)
}

/// [`bed`] with its floor at height `floor` in the box.
fn bed_on(floor: f64, steps: u64) -> Config {
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
        .wall(plane([0.0, 0.0, floor], [0.0, 0.0, 1.0], "glass").with("name", "floor"))
        .particles(random(
            "glass",
            radius_range(0.0008, 0.0012),
            300,
            region([0.0, 0.0, floor], [0.012, 0.012, 0.03]),
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
    let (sim, t) = settle(build(&bed(45_000)));
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
    let (sim, before) = settle(build(&bed(3000)));
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

/// `bed` with a region across its middle (reaching the periodic faces in x
/// and cutting y) and a profile of 12 bins along z over the whole box.
fn bed_with_bins(steps: u64) -> Config {
    let region = raw("{ lo = [0.0, 0.002, 0.002], hi = [0.012, 0.009, 0.006] }");
    bed(steps)
        .push(
            "diagnostics",
            Table::new()
                .with("name", "bulk")
                .with("kind", "region")
                .with("every", 100)
                .with("region", region),
        )
        .push(
            "diagnostics",
            Table::new()
                .with("name", "depth")
                .with("kind", "profile")
                .with("axis", "z")
                .with("bins", 12)
                .with("every", 100),
        )
}

/// One sample of each diagnostic of `sim`, as the rows they write.
fn rows(sim: &Simulation) -> Vec<Vec<f64>> {
    sim.setup
        .diagnostics
        .iter()
        .map(|spec| {
            let mut d = sampler(spec, &sim.setup.domain).expect("a table");
            d.sample(&sim.view(), &SerialComm);
            d.take_row(sim.step, sim.time())
        })
        .collect()
}

#[test]
fn a_region_measures_what_the_positions_say() {
    let (sim, _) = settle(build(&bed_with_bins(8_000)));
    let p = &sim.particles;
    let n = p.n_owned;
    let row = &rows(&sim)[0];
    // step, time, particles, packing, coordination, velocity (3), temperature, stress ...
    let (lo, hi) = (
        DVec3::new(0.0, 0.002, 0.002),
        DVec3::new(0.012, 0.009, 0.006),
    );
    let wrap = |x: DVec3| sim.setup.domain.wrap(x);
    let inside: Vec<usize> = (0..n)
        .filter(|&k| {
            let x = wrap(p.x[k]);
            x.cmpge(lo).all() && x.cmplt(hi).all()
        })
        .collect();
    assert!(inside.len() > 20, "{} particles inside", inside.len());
    assert_eq!(row[2], inside.len() as f64);
    // Coordination: touching pairs (minimum image in x and y) and the floor.
    let l = sim.setup.domain.length();
    let touching = |k: usize| -> usize {
        let pairs = (0..n)
            .filter(|&q| q != k)
            .filter(|&q| {
                let mut d = wrap(p.x[q]) - wrap(p.x[k]);
                for a in 0..2 {
                    d[a] -= l[a] * (d[a] / l[a]).round();
                }
                d.length() < p.radius[k] + p.radius[q]
            })
            .count();
        pairs + usize::from(p.x[k].z < p.radius[k])
    };
    let contacts: usize = inside.iter().map(|&k| touching(k)).sum();
    assert_eq!(row[4], contacts as f64 / inside.len() as f64);
    // Packing fraction: points of a fine grid in the region that lie in a
    // sphere (periodic images in x), against the exact volumes (0.3 %).
    let m = [96, 56, 32];
    let mut hits = 0usize;
    for i in 0..m[0] {
        for j in 0..m[1] {
            for kz in 0..m[2] {
                let f = DVec3::new(
                    (i as f64 + 0.5) / m[0] as f64,
                    (j as f64 + 0.5) / m[1] as f64,
                    (kz as f64 + 0.5) / m[2] as f64,
                );
                let x = lo + f * (hi - lo);
                let hit = (0..n).any(|q| {
                    let mut d = wrap(p.x[q]) - x;
                    for a in 0..2 {
                        d[a] -= l[a] * (d[a] / l[a]).round();
                    }
                    d.length_squared() < p.radius[q] * p.radius[q]
                });
                hits += usize::from(hit);
            }
        }
    }
    let grid = hits as f64 / (m[0] * m[1] * m[2]) as f64;
    assert!(
        rel(row[3], grid) < 0.003,
        "packing {} against the grid's {grid}",
        row[3]
    );
    assert!(row[3] > 0.4 && row[3] < 0.7, "{}", row[3]);
}

#[test]
fn a_profile_over_the_box_partitions_volume_particles_and_stress() {
    let (sim, t) = settle(build(&bed_with_bins(3_000)));
    let p = &sim.particles;
    let n = p.n_owned;
    let row = &rows(&sim)[1];
    let bins = 12;
    let bin_volume = 0.012 * 0.012 * 0.03 / bins as f64;
    // Columns after step and time: particles, packing, coordination (12
    // each), velocity (12 × 3), temperature (12), stress, kinetic, contact
    // (12 × 6 each).
    let col = |start: usize, width: usize| &row[2 + start * bins..2 + (start + width) * bins];
    assert_eq!(col(0, 1).iter().sum::<f64>(), n as f64);
    // The solid volume inside the box (less the caps below the floor and
    // above the open top: π h² (3R − h)/3), split exactly between the bins.
    let cap = |r: f64, h: f64| {
        let h = h.clamp(0.0, 2.0 * r);
        std::f64::consts::PI * h * h * (3.0 * r - h) / 3.0
    };
    let solid: f64 = (0..n)
        .map(|k| {
            let (r, z) = (p.radius[k], p.x[k].z);
            4.0 / 3.0 * std::f64::consts::PI * r * r * r - cap(r, r - z) - cap(r, z + r - 0.03)
        })
        .sum();
    let binned: f64 = col(1, 1).iter().map(|f| f * bin_volume).sum();
    assert!(rel(binned, solid) < 1e-12, "{binned} against {solid}");
    // The bins' contact stress adds up to the box's (each pair split in
    // halves either way).
    let contact = col(19, 6);
    for c in 0..6 {
        let sum: f64 = (0..bins).map(|b| contact[b * 6 + c] * bin_volume).sum();
        let whole = t.stress_contact[c] * 0.012 * 0.012 * 0.03;
        assert!(
            (sum - whole).abs() <= 1e-12 * t.stress_contact[2].abs() * 0.012 * 0.012 * 0.03,
            "component {c}: bins {sum} against the box {whole}"
        );
    }
}

/// A `coarse_grain` block of `width` on the gridded `axes`.
fn coarse_grain(axes: &str, bins: impl Into<Value>, width: f64) -> Table {
    Table::new()
        .with("name", format!("cg_{axes}"))
        .with("kind", "coarse_grain")
        .with("axes", axes)
        .with("bins", bins)
        .with("width", width)
        .with("every", 1)
}

/// The columns of a coarse-graining row: density, momentum, velocity,
/// stress, kinetic, contact, each over the `cells`.
fn fields(row: &[f64], cells: usize) -> Vec<&[f64]> {
    let mut out = Vec::new();
    let mut at = 2;
    for per in [1, 3, 3, 6, 6, 6] {
        out.push(&row[at..at + per * cells]);
        at += per * cells;
    }
    assert_eq!(at, row.len());
    out
}

/// Goldhirsch (2010) and Weinhart et al. (2012): the coarse-grained
/// density, momentum and contact stress integrate over space to the total
/// mass, momentum and contact virial `Σ l ⊗ f`, whatever the kernel, for
/// any kernel that integrates to one; the cell averages make this exact,
/// here to 1e-12 of the total (1e-10 for the stress, a sum of terms of both
/// signs), on a grid along z (the closed form along a branch) and on a
/// grid in x, y and z (the quadrature along a branch, kernels wrapping
/// around the periodic x and y).
#[test]
fn coarse_grained_mass_momentum_and_contact_stress_integrate_to_the_totals() {
    // Mid-fall: particles moving, the lowest already in contact.
    // The floor raised 2 mm above the bottom of the box, so that kernels
    // of width 0.25 mm (support 0.75 mm, below the smallest radius) around
    // every particle and every floor contact lie inside the box.
    let config = bed_on(0.002, 7_000)
        .push("diagnostics", coarse_grain("z", 112, 0.00025))
        .push(
            "diagnostics",
            coarse_grain("xyz", vec![5, 6, 28], 0.00025).with("kernel", "lucy"),
        );
    let (sim, t) = settle(build(&config));
    let p = &sim.particles;
    let n = p.n_owned;
    let mass: f64 = p.mass[..n].iter().sum();
    let momentum: DVec3 = (0..n).map(|k| p.mass[k] * p.v[k]).sum();
    let speed: f64 = (0..n).map(|k| p.mass[k] * p.v[k].length()).sum();
    let volume = 0.012 * 0.012 * 0.03;
    let virial = t.stress_contact.map(|s| s * volume);
    assert!(virial[2] > 0.0, "contacts yet: {virial:?}");
    for (row, cells) in rows(&sim).iter().zip([112, 5 * 6 * 28]) {
        let cell = volume / cells as f64;
        let f = fields(row, cells);
        let total = |field: &[f64], per: usize, c: usize| -> f64 {
            field.iter().skip(c).step_by(per).sum::<f64>() * cell
        };
        assert!(
            rel(total(f[0], 1, 0), mass) < 1e-12,
            "mass {}",
            total(f[0], 1, 0)
        );
        for c in 0..3 {
            let got = total(f[1], 3, c);
            assert!(
                (got - momentum[c]).abs() < 1e-12 * speed,
                "momentum {c}: {got} against {}",
                momentum[c]
            );
        }
        let scale = virial.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (c, want) in virial.iter().enumerate() {
            let got = total(f[5], 6, c);
            assert!(
                (got - want).abs() < 1e-10 * scale,
                "virial {c}: {got} against {want}"
            );
        }
    }
}

/// The momentum balance of a static bed (Weinhart et al. 2012, eq. for
/// steady flow): `∂σ_zz/∂z = −ρ g` (compressive positive) at every depth
/// inside it, the coarse-grained stress and density of a settled bed on a
/// grid of 0.25 mm along z with a Gaussian of width 1 mm, from 4 mm above
/// the floor to 4 mm below the free surface (away from the floor's
/// contacts and the surface's gradient of density), within 0.5 % of the
/// bulk `ρ g` (measured: 0.07 % at most; centred differences of cell
/// averages err by about `h²/24w²`, and a bed at rest keeps small residual
/// accelerations).
#[test]
fn coarse_grained_stress_of_a_settled_bed_balances_gravity() {
    let config = bed(45_000).push("diagnostics", coarse_grain("z", 120, 0.001));
    let (sim, _) = settle(build(&config));
    let p = &sim.particles;
    let top = (0..p.n_owned).map(|k| p.x[k].z).fold(0.0f64, f64::max);
    let row = &rows(&sim)[0];
    let f = fields(row, 120);
    let h = 0.03 / 120.0;
    let (density, stress) = (f[0], f[3]);
    let szz = |k: usize| stress[6 * k + 2];
    let bulk = density.iter().fold(0.0f64, |m, r| m.max(*r)) * G;
    let mut checked = 0;
    for (k, rho) in density.iter().enumerate().take(119).skip(1) {
        let z = (k as f64 + 0.5) * h;
        if z < 0.004 || z > top - 0.004 {
            continue;
        }
        let slope = (szz(k + 1) - szz(k - 1)) / (2.0 * h);
        let residual = slope + rho * G;
        assert!(
            residual.abs() < 0.005 * bulk,
            "z = {z}: dσzz/dz = {slope}, ρg = {}",
            rho * G
        );
        checked += 1;
    }
    assert!(checked > 10, "{checked} cells checked");
}

/// A contact list of a settled bed against what statics and the thermo
/// row say: every touching contact once (pairs from the lower id, as the
/// thermo counts them); the floor's normal forces carry the weight (0.5 %,
/// as the floor's `wall_force`); normals are unit vectors and a pair's
/// contact point lies between the centres at `R_i − δ/2`; and the virial
/// rebuilt from the list, `Σ l ⊗ f` with `l = −(R_i − δ/2 + R_j − δ/2) n`
/// for a pair and `−(R_i − δ) n` for a wall, is the thermo's contact
/// stress times the box volume (to 1e-9: the same forces, summed in
/// another order).
#[test]
fn a_contact_list_holds_the_weight_and_the_virial_of_a_settled_bed() {
    let (sim, t) = settle(build(&bed(30_000)));
    let p = &sim.particles;
    let list = local_contacts(&sim.view());
    assert_eq!(list.len() as f64, t.contacts);
    let radius = |id: i64| p.radius[(0..p.n_owned).find(|&k| p.id[k] as i64 == id).unwrap()];
    let weight: f64 = p.mass[..p.n_owned].iter().map(|m| m * G).sum();
    let mut floor = 0.0;
    let mut virial = [0.0; 6];
    for c in &list {
        assert!(
            c.overlap > 0.0 && (c.normal.length() - 1.0).abs() < 1e-12,
            "{c:?}"
        );
        let ri = radius(c.id[0]);
        let force = -c.force_normal * c.normal + c.force_tangential;
        assert!(c.force_tangential.dot(c.normal).abs() < 1e-9 * force.length());
        let branch = if c.wall >= 0 {
            assert_eq!((c.id[1], c.wall), (-1, 0));
            floor += c.force_normal;
            -(ri - c.overlap) * c.normal
        } else {
            assert!(c.id[0] < c.id[1], "a pair from its lower id: {c:?}");
            -(ri + radius(c.id[1]) - c.overlap) * c.normal
        };
        let t = [
            branch.x * force.x,
            branch.y * force.y,
            branch.z * force.z,
            0.5 * (branch.x * force.y + branch.y * force.x),
            0.5 * (branch.x * force.z + branch.z * force.x),
            0.5 * (branch.y * force.z + branch.z * force.y),
        ];
        for (v, t) in virial.iter_mut().zip(t) {
            *v += t;
        }
    }
    assert!(
        rel(floor, weight) < 0.005,
        "floor {floor} N, weight {weight} N"
    );
    let volume = 0.012 * 0.012 * 0.03;
    let scale = t.stress_contact[2] * volume;
    for (c, v) in virial.iter().enumerate() {
        let want = t.stress_contact[c] * volume;
        assert!(
            (v - want).abs() < 1e-9 * scale,
            "virial {c}: {v} against {want}"
        );
    }
}
