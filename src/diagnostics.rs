//! Global diagnostics (thermo columns). They never feed back into the
//! trajectory, so their sums may run in any order.

use crate::config::LawTable;
use crate::geometry::walls::Wall;
use crate::neighbor::NeighborList;
use crate::parallel::comm::Comm;
use crate::state::particles::Particles;
use glam::DVec3;
use rayon::prelude::*;

/// Names of the thermo columns, in the order of [`Thermo::row`].
pub const THERMO_COLUMNS: [&str; 11] = [
    "step",
    "time",
    "particles",
    "kinetic_energy",
    "rotational_energy",
    "potential_energy",
    "elastic_energy",
    "contacts",
    "max_overlap",
    "temperature",
    "rotational_temperature",
];

/// One thermo row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Thermo {
    /// Step.
    pub step: u64,
    /// Time.
    pub time: f64,
    /// Particle count.
    pub particles: f64,
    /// Translational kinetic energy `Σ ½ m v²`.
    pub kinetic_energy: f64,
    /// Rotational kinetic energy `Σ ½ I ω²`.
    pub rotational_energy: f64,
    /// Gravitational potential energy `−Σ m g·x`.
    pub potential_energy: f64,
    /// Elastic energy stored in the normal springs of contacts.
    pub elastic_energy: f64,
    /// Number of contacts (pairs and walls), each counted once.
    pub contacts: f64,
    /// Largest overlap relative to the effective radius, `max δ/R*`.
    pub max_overlap: f64,
    /// Translational temperature per degree of freedom (`k_B = 1`) of the
    /// `N` mobile particles, with the centre-of-mass motion removed:
    /// `Σ m |v − v_cm|² / (3(N − 1))` (0 when `N < 2`).
    pub temperature: f64,
    /// Rotational temperature per degree of freedom (`k_B = 1`) of the
    /// mobile particles: `Σ I |ω|² / (3N)` (0 when `N = 0`).
    pub rotational_temperature: f64,
}

impl Thermo {
    /// The row as numbers, in [`THERMO_COLUMNS`] order.
    pub fn row(&self) -> [f64; 11] {
        [
            self.step as f64,
            self.time,
            self.particles,
            self.kinetic_energy,
            self.rotational_energy,
            self.potential_energy,
            self.elastic_energy,
            self.contacts,
            self.max_overlap,
            self.temperature,
            self.rotational_temperature,
        ]
    }
}

/// The deepest overlap a contact may reach, as a fraction of its effective
/// radius `R* = Ri Rj/(Ri + Rj)` (a wall's contact: the sphere's radius), the
/// thermo column `max_overlap`: beyond it a run stops (exit 1). For two equal
/// spheres it is half a radius, for a sphere at a wall its centre on the
/// wall's surface; no contact law means anything there, and a sound run
/// (overlaps of a few per cent of `R*`) never comes near it.
pub const MAX_OVERLAP: f64 = 1.0;

/// A contact deeper than [`MAX_OVERLAP`]: the owned particle `k` with the
/// lowest id in one on this rank (pairs are seen from their lower-id side),
/// what it touches, and its overlap relative to `R*`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeepContact {
    /// Local index of the owned particle.
    pub k: usize,
    /// Its id.
    pub id: u64,
    /// What it overlaps: `particle id 7`, `wall[2]`.
    pub partner: String,
    /// The overlap `δ` (m).
    pub overlap: f64,
    /// `δ/R*`.
    pub ratio: f64,
}

/// The contact deeper than [`MAX_OVERLAP`] whose owned particle has the
/// lowest id on this rank, measured as [`measure`] measures `max_overlap`
/// (so it finds one exactly when that exceeds the bound). Pairs are first
/// tested on their squared distance against the sum of the radii (a deep
/// contact overlaps), which spares the others the root and the division;
/// the owned particles are split over the threads.
pub fn deep_contact(
    p: &Particles,
    nl: &NeighborList,
    laws: &LawTable,
    walls: &[Wall],
) -> Option<DeepContact> {
    (0..p.n_owned)
        .into_par_iter()
        .with_min_len(512)
        .filter_map(|k| {
            let rk = p.radius[k];
            let deep = |partner: &dyn Fn() -> String, overlap: f64, ratio: f64| {
                (ratio > MAX_OVERLAP).then(|| DeepContact {
                    k,
                    id: p.id[k],
                    partner: partner(),
                    overlap,
                    ratio,
                })
            };
            for &q in nl.rows().row_partners(k) {
                let q = q as usize;
                if p.id[k] > p.id[q] {
                    continue;
                }
                let d = (p.x[q] - p.x[k]) + (p.shift[q] - p.shift[k]);
                let sum = rk + p.radius[q];
                if d.length_squared() >= sum * sum {
                    continue;
                }
                let law = laws.get(p.material[k], p.material[q]);
                let r = d.length();
                if r < law.normal.range(rk, p.radius[q]) {
                    let delta = rk + p.radius[q] - r;
                    let r_eff = rk * p.radius[q] / (rk + p.radius[q]);
                    let partner = || format!("particle id {}", p.id[q]);
                    if let Some(c) = deep(&partner, delta, delta / r_eff) {
                        return Some(c);
                    }
                }
            }
            walls.iter().enumerate().find_map(|(i, w)| {
                let t = w.touch(p.x[k], rk, 0.0)?;
                let delta = rk - t.dist;
                deep(&|| format!("wall[{i}]"), delta, delta / rk)
            })
        })
        .min_by_key(|c| c.id)
}

/// Measure the thermo quantities over all ranks: particles, kinetic,
/// rotational, potential and elastic energy, contacts, max overlap,
/// temperature and rotational temperature (see [`Thermo`]; its `step`
/// and `time` are left at zero for the caller).
pub fn measure(
    p: &Particles,
    nl: &NeighborList,
    laws: &LawTable,
    walls: &[Wall],
    gravity: DVec3,
    comm: &dyn Comm,
) -> Thermo {
    let mut sums = [0.0; 9];
    // Mobile particles: count, Σm, Σ m v (3), Σ m v², Σ I ω².
    let mut mobile = [0.0; 7];
    let mut max_overlap: f64 = 0.0;
    for k in 0..p.n_owned {
        sums[0] += 1.0;
        sums[1] += 0.5 * p.mass[k] * p.v[k].length_squared();
        if p.inv_inertia[k] > 0.0 {
            sums[2] += 0.5 / p.inv_inertia[k] * p.omega[k].length_squared();
        }
        sums[3] -= p.mass[k] * gravity.dot(p.x[k]);
        if !p.frozen[k] {
            let (m, v) = (p.mass[k], p.v[k]);
            mobile[0] += 1.0;
            mobile[1] += m;
            mobile[2] += m * v.x;
            mobile[3] += m * v.y;
            mobile[4] += m * v.z;
            mobile[5] += m * v.length_squared();
            mobile[6] += p.omega[k].length_squared() / p.inv_inertia[k];
        }
        for &q in nl.rows().row_partners(k) {
            let q = q as usize;
            if p.id[k] > p.id[q] {
                continue;
            }
            let d = (p.x[q] - p.x[k]) + (p.shift[q] - p.shift[k]);
            let law = laws.get(p.material[k], p.material[q]);
            let r = d.length();
            if r < law.normal.range(p.radius[k], p.radius[q]) {
                let delta = p.radius[k] + p.radius[q] - r;
                let r_eff = p.radius[k] * p.radius[q] / (p.radius[k] + p.radius[q]);
                sums[4] += law.normal.energy(delta, r, r_eff);
                sums[5] += 1.0;
                max_overlap = max_overlap.max(delta / r_eff);
            }
        }
        for w in walls {
            if let Some(t) = w.touch(p.x[k], p.radius[k], 0.0) {
                let delta = p.radius[k] - t.dist;
                sums[4] +=
                    laws.get(p.material[k], w.material)
                        .normal
                        .energy(delta, t.dist, p.radius[k]);
                sums[5] += 1.0;
                max_overlap = max_overlap.max(delta / p.radius[k]);
            }
        }
    }
    comm.sum_f64(&mut sums[..6]);
    sums[6] = comm.max_f64(max_overlap);
    comm.sum_f64(&mut mobile);
    let n = mobile[0];
    if n >= 2.0 {
        let momentum = DVec3::new(mobile[2], mobile[3], mobile[4]);
        let peculiar = (mobile[5] - momentum.length_squared() / mobile[1]).max(0.0);
        sums[7] = peculiar / (3.0 * (n - 1.0));
    }
    if n >= 1.0 {
        sums[8] = mobile[6] / (3.0 * n);
    }
    let [particles, kinetic_energy, rotational_energy, potential_energy, elastic_energy, contacts, max_overlap, temperature, rotational_temperature] =
        sums;
    Thermo {
        step: 0,
        time: 0.0,
        particles,
        kinetic_energy,
        rotational_energy,
        potential_energy,
        elastic_energy,
        contacts,
        max_overlap,
        temperature,
        rotational_temperature,
    }
}
