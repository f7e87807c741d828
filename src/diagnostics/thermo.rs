//! The thermo row: global quantities reduced over ranks, one row per
//! `thermo_every` steps in `/thermo`.

use super::blocks::{in_blocks, merge_sums, Partial};
use super::contacts::{
    contacts_of, higher_pair_load, higher_partners_from, pair_contact, wall_contacts_of,
    wall_loads_of, Contact, Partner, Sides,
};
use super::stress::{add_outer, Sym};
use super::View;
use crate::force::WallLoads;
use crate::io::layout::unit_of;
use crate::io::table::Column;
use crate::parallel::comm::Comm;
use glam::DVec3;

/// The names of the thermo columns of one number per row, in order; the
/// tensor and per-wall columns follow ([`thermo_columns`]).
pub const SCALAR_COLUMNS: [&str; 14] = [
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
    "deleted",
    "deleted_mass",
    "imbalance",
];

/// The thermo columns of a run with `walls` walls, in the order of
/// [`Thermo::row`]: [`SCALAR_COLUMNS`], then `stress`, `stress_kinetic`,
/// `stress_contact` (6 each: `xx, yy, zz, xy, xz, yz`), then `wall_force`
/// and `wall_torque` (`walls` × 3 each; none without walls).
pub fn thermo_columns(walls: usize) -> Vec<Column> {
    let mut columns: Vec<Column> = SCALAR_COLUMNS
        .iter()
        .map(|name| Column::number(name, unit_of(name)))
        .collect();
    for name in ["stress", "stress_kinetic", "stress_contact"] {
        columns.push(Column::shaped(name, &[6], unit_of(name)));
    }
    if walls > 0 {
        for name in ["wall_force", "wall_torque"] {
            columns.push(Column::shaped(name, &[walls, 3], unit_of(name)));
        }
    }
    columns
}

/// One thermo row.
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// Particles deleted so far by outlets and open faces (cumulative; set
    /// by the caller from the run's totals, `crate::sim::Deleted`).
    pub deleted: f64,
    /// Their total mass (kg, cumulative; as `deleted`).
    pub deleted_mass: f64,
    /// The load imbalance over ranks: the largest rank's cost over the
    /// mean (`crate::parallel::balance`; 1 on one rank; set by the caller).
    pub imbalance: f64,
    /// The kinetic stress `(1/V) Σ m v ⊗ v` over the box volume `V` (see
    /// [`super::stress`]).
    pub stress_kinetic: Sym,
    /// The contact stress `(1/V) Σ l ⊗ f` (NaN where the row has no
    /// contact forces: see [`View::loads`]).
    pub stress_contact: Sym,
    /// Per wall, the force the particles exert on it (NaN as above).
    pub wall_force: Vec<[f64; 3]>,
    /// Per wall, the torque the particles exert on it about its `point`
    /// (a cylinder: its `axis_point`), couples included (NaN as above).
    pub wall_torque: Vec<[f64; 3]>,
}

impl Thermo {
    /// The stress `σ`: kinetic plus contact part.
    pub fn stress(&self) -> Sym {
        std::array::from_fn(|c| self.stress_kinetic[c] + self.stress_contact[c])
    }

    /// The row as numbers, in [`thermo_columns`] order.
    pub fn row(&self) -> Vec<f64> {
        let mut row = vec![
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
            self.deleted,
            self.deleted_mass,
            self.imbalance,
        ];
        row.extend(self.stress());
        row.extend(self.stress_kinetic);
        row.extend(self.stress_contact);
        row.extend(self.wall_force.iter().flatten());
        row.extend(self.wall_torque.iter().flatten());
        row
    }
}

/// The contacts of this rank's owned particles (pairs and walls, by the
/// same definition as the `contacts` column), a pair counted once for each
/// owned particle in it: this rank's share of the contact work, for the
/// run's per-rank summary.
pub fn contacts_on_rank(v: &View) -> u64 {
    (0..v.p.n_owned)
        .map(|k| {
            contacts_of(v.p, v.nl, v.laws, (v.walls, v.near_walls), k, Sides::Both).count() as u64
        })
        .sum::<u64>()
}

/// One block's part of the thermo sums ([`measure`]).
#[derive(Debug, Clone, Default)]
struct ThermoSums {
    /// Count, kinetic, rotational, potential and elastic energy, contacts
    /// (and, filled in by [`measure`], max overlap and the temperatures).
    sums: [f64; 9],
    /// Mobile particles: count, Σm, Σ m v (3), Σ m v², Σ I ω².
    mobile: [f64; 7],
    /// The largest overlap over `R*`.
    max_overlap: f64,
    /// The kinetic stress's sum `Σ m v ⊗ v`.
    kinetic: Sym,
    /// Where the row has contact forces ([`View::loads`]): the contact
    /// virial `Σ l ⊗ f` (6 values), then per wall the force and the
    /// torque the particles exert on it (6 values each); empty otherwise.
    loads: Vec<f64>,
}

impl ThermoSums {
    /// Add owned particle `k`, its pairs with higher-id partners (each
    /// pair once over all ranks, as the `contacts` column counts them) and
    /// its walls: one walk over its row for the contacts and their forces.
    fn add(&mut self, v: &View, gravity: DVec3, k: usize) {
        let p = v.p;
        let sums = &mut self.sums;
        sums[0] += 1.0;
        sums[1] += 0.5 * p.mass[k] * p.v[k].length_squared();
        if p.inv_inertia[k] > 0.0 {
            sums[2] += 0.5 / p.inv_inertia[k] * p.omega[k].length_squared();
        }
        sums[3] -= p.mass[k] * gravity.dot(p.x[k]);
        add_outer(&mut self.kinetic, p.v[k], p.v[k], p.mass[k]);
        if !p.frozen[k] {
            let (m, vk, mobile) = (p.mass[k], p.v[k], &mut self.mobile);
            mobile[0] += 1.0;
            mobile[1] += m;
            mobile[2] += m * vk.x;
            mobile[3] += m * vk.y;
            mobile[4] += m * vk.z;
            mobile[5] += m * vk.length_squared();
            mobile[6] += p.omega[k].length_squared() / p.inv_inertia[k];
        }
        if v.loads.is_some() {
            self.loads.resize(6 + 6 * v.walls.len(), 0.0);
        }
        let (rows, jobs, history) = (v.nl.rows(), v.nl.jobs(), v.nl.history());
        for e in higher_partners_from(p, v.nl, k)..rows.row(k).end {
            // A pair the last force stage found apart holds no record: it
            // is neither a contact nor a load, and most pairs in reach are
            // apart (the chute: 15,000 contacts of 122,000 pairs).
            if !history.is_active(jobs.job_of(e)) {
                continue;
            }
            let q = rows.partner(e);
            if let Some(c) = pair_contact(p, v.laws, k, e, q) {
                self.add_contact(&c);
            }
            if v.loads.is_some() {
                if let Some(load) = higher_pair_load(p, v.nl, k, e, q) {
                    // The pair whole, once: `l ⊗ f` is the same from
                    // either side.
                    let virial = (&mut self.loads[..6]).try_into().expect("6 values");
                    add_outer(virial, load.branch, load.force, 1.0);
                }
            }
        }
        // The walls' iterators cost more than the rest of a particle's
        // sums where there is no wall to iterate over.
        if v.walls.is_empty() {
            return;
        }
        for c in wall_contacts_of(p, v.laws, (v.walls, v.near_walls), k) {
            self.add_contact(&c);
        }
        if let Some(loads) = v.loads {
            add_wall_loads(v, loads, k, &mut self.loads);
        }
    }

    /// Add a contact's elastic energy, count and overlap.
    #[inline(always)]
    fn add_contact(&mut self, c: &Contact) {
        self.sums[4] += c.law.normal.energy(c.delta, c.dist, c.r_eff);
        self.sums[5] += 1.0;
        self.max_overlap = self.max_overlap.max(c.delta / c.r_eff);
    }
}

impl Partial for ThermoSums {
    fn merge(&mut self, other: &Self) {
        merge_sums(&mut self.sums, &other.sums);
        merge_sums(&mut self.mobile, &other.mobile);
        merge_sums(&mut self.kinetic, &other.kinetic);
        self.loads.merge(&other.loads);
        self.max_overlap = self.max_overlap.max(other.max_overlap);
    }
}

/// Measure the thermo quantities over all ranks (see [`Thermo`]; its
/// `step`, `time`, `deleted`, `deleted_mass` and `imbalance` are left at
/// zero for the caller). Collective.
pub fn measure(v: &View, comm: &dyn Comm) -> Thermo {
    let (p, gravity) = (v.p, v.gravity);
    let ThermoSums {
        mut sums,
        mut mobile,
        max_overlap,
        mut kinetic,
        loads,
    } = in_blocks(p.n_owned, |ks, out: &mut ThermoSums| {
        for k in ks {
            out.add(v, gravity, k);
        }
    });
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
    let volume = v.domain.volume();
    comm.sum_f64(&mut kinetic);
    let (stress_contact, wall_force, wall_torque) = contact_loads(v, loads, comm);
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
        deleted: 0.0,
        deleted_mass: 0.0,
        imbalance: 0.0,
        stress_kinetic: kinetic.map(|s| s / volume),
        stress_contact: stress_contact.map(|s| s / volume),
        wall_force,
        wall_torque,
    }
}

/// Add the loads of the walls on owned particle `k` to `sums`: their part
/// of the virial (6 values), then per wall the force and the torque it
/// takes (6 values each).
fn add_wall_loads(v: &View, loads: &WallLoads, k: usize, sums: &mut [f64]) {
    let p = v.p;
    for load in wall_loads_of(p, v.walls, loads, k) {
        let Partner::Wall(w) = load.partner else {
            unreachable!("a wall load of a pair")
        };
        let virial: &mut Sym = (&mut sums[..6]).try_into().expect("6 values");
        add_outer(virial, load.branch, load.force, 1.0);
        let (x, at) = (v.domain.wrap(p.x[k]), v.walls[w].reference_point());
        // Angular momentum about `at` is exchanged whole: the wall takes
        // −((x − at) × f + t).
        let torque = -((x - at).cross(load.force) + load.torque);
        let s = 6 + 6 * w;
        for (a, value) in (-load.force).to_array().into_iter().enumerate() {
            sums[s + a] += value;
        }
        for (a, value) in torque.to_array().into_iter().enumerate() {
            sums[s + 3 + a] += value;
        }
    }
}

/// The box's contact virial `Σ l ⊗ f` (each pair once, by the owner of its
/// lower-id side) and, per wall, the force and the torque the particles
/// exert on it, from the blocks' `sums` ([`ThermoSums::loads`]) summed
/// over ranks; NaN without contact forces. Collective.
fn contact_loads(
    v: &View,
    mut sums: Vec<f64>,
    comm: &dyn Comm,
) -> (Sym, Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let nw = v.walls.len();
    sums.resize(6 + 6 * nw, 0.0);
    comm.sum_f64(&mut sums);
    // Every rank has its forces or none has (a restart restores them on all).
    if v.loads.is_none() {
        sums.fill(f64::NAN);
    }
    let virial: Sym = sums[..6].try_into().expect("6 values");
    let per_wall = |off: usize| -> Vec<[f64; 3]> {
        (0..nw)
            .map(|w| {
                let s = 6 + 6 * w + off;
                [sums[s], sums[s + 1], sums[s + 2]]
            })
            .collect()
    };
    (virial, per_wall(0), per_wall(3))
}
