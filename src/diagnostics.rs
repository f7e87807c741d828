//! Global diagnostics (thermo columns). They never feed back into the
//! trajectory, so their sums may run in any order.

use crate::config::LawTable;
use crate::contact::ContactLaw;
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

/// What a contact of an owned particle touches.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Partner {
    /// Another particle, by local index.
    Particle(usize),
    /// A wall, by index.
    Wall(usize),
}

/// One contact as the diagnostics measure it.
struct Contact<'l> {
    partner: Partner,
    /// The overlap `δ`.
    delta: f64,
    /// The centre distance (at a wall: the centre's distance from its surface).
    dist: f64,
    /// `R* = Ri Rj/(Ri + Rj)` (at a wall: the sphere's radius).
    r_eff: f64,
    /// The law between the two materials.
    law: &'l ContactLaw,
}

/// Every contact of the owned particle `k`: its pairs within the normal
/// law's range, each seen from its lower-id side only (so each pair counts
/// once over all ranks), then the walls it touches. Both the thermo row
/// ([`measure`]) and the overlap bound ([`deep_contact`]) read contacts
/// through this one definition, so they agree.
fn contacts_of<'a>(
    p: &'a Particles,
    nl: &'a NeighborList,
    laws: &'a LawTable,
    walls: &'a [Wall],
    k: usize,
) -> impl Iterator<Item = Contact<'a>> + 'a {
    let rk = p.radius[k];
    let pairs = nl.rows().row_partners(k).iter().filter_map(move |&q| {
        let q = q as usize;
        if p.id[k] > p.id[q] {
            return None;
        }
        let d = (p.x[q] - p.x[k]) + (p.shift[q] - p.shift[k]);
        let law = laws.get(p.material[k], p.material[q]);
        let range = law.normal.range(rk, p.radius[q]);
        // Most partners are out of range: a test on the squared distance,
        // with a margin far above the root's rounding, spares them the root.
        if d.length_squared() >= range * range * (1.0 + 1e-12) {
            return None;
        }
        let r = d.length();
        (r < range).then(|| Contact {
            partner: Partner::Particle(q),
            delta: rk + p.radius[q] - r,
            dist: r,
            r_eff: rk * p.radius[q] / (rk + p.radius[q]),
            law,
        })
    });
    let touched = walls.iter().enumerate().filter_map(move |(i, w)| {
        let t = w.touch(p.x[k], rk, 0.0)?;
        Some(Contact {
            partner: Partner::Wall(i),
            delta: rk - t.dist,
            dist: t.dist,
            r_eff: rk,
            law: laws.get(p.material[k], w.material),
        })
    });
    pairs.chain(touched)
}

/// The contact deeper than [`MAX_OVERLAP`] whose owned particle has the
/// lowest id on this rank, among the contacts [`measure`] measures
/// `max_overlap` over (so it finds one exactly when that exceeds the
/// bound); the owned particles are split over the threads.
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
            contacts_of(p, nl, laws, walls, k).find_map(|c| {
                let ratio = c.delta / c.r_eff;
                (ratio > MAX_OVERLAP).then(|| DeepContact {
                    k,
                    id: p.id[k],
                    partner: match c.partner {
                        Partner::Particle(q) => format!("particle id {}", p.id[q]),
                        Partner::Wall(i) => format!("wall[{i}]"),
                    },
                    overlap: c.delta,
                    ratio,
                })
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
        for c in contacts_of(p, nl, laws, walls, k) {
            sums[4] += c.law.normal.energy(c.delta, c.dist, c.r_eff);
            sums[5] += 1.0;
            max_overlap = max_overlap.max(c.delta / c.r_eff);
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
