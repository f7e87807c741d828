//! Region and profile diagnostics (`[[diagnostics]] kind = "region"` and
//! `"profile"`): a box cut into `bins` equal slabs along an axis (a region
//! is one), and per bin the number of particles, the packing fraction, the
//! coordination number, the mean velocity, the granular temperature and the
//! stress. Each rank sums over its owned particles; the sums are reduced
//! over ranks and pooled over `average` samples into one row, as LAMMPS
//! `fix ave/chunk` does with `norm all`.
//!
//! Per bin of volume `V_b`, over the `S` samples of a row and the particles
//! whose centre lies in the bin (`n` of them in all, masses `m`):
//! - `particles = n / S`;
//! - `packing_fraction = Σ V(sphere ∩ bin) / (S V_b)` over every sphere
//!   that reaches into the bin, centre inside or not (periodic images
//!   included), with the exact intersection volumes of
//!   [`crate::math::sphere_box`];
//! - `coordination`: the touching contacts (overlap `> 0`, walls
//!   included) of those particles over `n`, read from the contacts that
//!   carried a force in the step's force stage (by geometry only after a
//!   restart, before the first step's forces);
//! - `mean_velocity = Σ m v / Σ m` (mass-weighted);
//! - `granular_temperature = Σ m |v − v̄|² / (3 Σ m)` (m²/s²);
//! - `stress_kinetic = Σ m (v − v̄) ⊗ (v − v̄) / (S V_b)`: the velocity
//!   fluctuations about the bin's mean, the continuum kinetic stress (the
//!   thermo's box stress takes whole velocities, as its contract says);
//! - `stress_contact = Σ_i s_i / (S V_b)` with `s_i` particle `i`'s share
//!   of the contact virial (half of each pair's `l ⊗ f`, each wall's whole;
//!   see [`super::stress`]);
//! - `stress = stress_kinetic + stress_contact`.
//!
//! A bin without particles has NaN where the quantity is per particle
//! (coordination, velocity, temperature).

use super::contacts::{contacts_of, loads_of, Partner, Sides};
use super::stress::add_outer;
use super::{Sampled, View};
use crate::config::{DiagnosticSpec, Measure};
use crate::io::frames::Fixed;
use crate::io::table::Column;
use crate::math::sphere_box::sphere_box_volume;
use crate::parallel::comm::Comm;
use glam::DVec3;

/// The sums kept per bin, at these offsets.
const COUNT: usize = 0;
const VOLUME: usize = 1;
const MASS: usize = 2;
const MOMENTUM: usize = 3;
/// `Σ m v ⊗ v`, six components.
const MVV: usize = 6;
const CONTACTS: usize = 12;
/// The contact virial, six components.
const VIRIAL: usize = 13;
/// Sums per bin.
const WIDTH: usize = 19;

/// One region or profile diagnostic: its bins and the sums of the samples
/// since its last row.
#[derive(Debug, Clone)]
pub struct Bins {
    spec: DiagnosticSpec,
    /// The axis the bins divide (z for a region).
    axis: usize,
    /// The number of bins (one for a region).
    bins: usize,
    sums: Vec<f64>,
    samples: u64,
}

impl Bins {
    /// A region or profile diagnostic with no samples yet.
    ///
    /// # Panics
    /// If `spec` is of another kind.
    pub fn new(spec: &DiagnosticSpec) -> Self {
        let (axis, bins) = match spec.measure {
            Measure::Region => (2, 1),
            Measure::Profile { axis, bins } => (axis, bins),
            _ => panic!("Bins::new: {} is not a region or a profile", spec.name),
        };
        Self {
            spec: spec.clone(),
            axis,
            bins,
            sums: vec![0.0; bins * WIDTH],
            samples: 0,
        }
    }

    /// The bins' edges along the axis.
    fn edges(&self) -> Vec<f64> {
        let (a, s, bins) = (self.axis, &self.spec, self.bins);
        let w = (s.hi[a] - s.lo[a]) / bins as f64;
        (0..=bins)
            .map(|b| {
                if b == bins {
                    s.hi[a]
                } else {
                    s.lo[a] + b as f64 * w
                }
            })
            .collect()
    }

    /// Bin `b`'s box.
    fn bin_box(&self, edges: &[f64], b: usize) -> (DVec3, DVec3) {
        let (mut lo, mut hi) = (self.spec.lo, self.spec.hi);
        lo[self.axis] = edges[b];
        hi[self.axis] = edges[b + 1];
        (lo, hi)
    }

    /// The bin whose box holds `x`, if any (`lo ≤ x < hi`).
    fn bin_of(&self, edges: &[f64], x: DVec3) -> Option<usize> {
        let s = &self.spec;
        if !(x.cmpge(s.lo).all() && x.cmplt(s.hi).all()) {
            return None;
        }
        let (a, bins) = (self.axis, self.bins);
        let w = (s.hi[a] - s.lo[a]) / bins as f64;
        let mut b = (((x[a] - s.lo[a]) / w) as usize).min(bins - 1);
        // Rounding at an edge: the edges decide.
        while b > 0 && x[a] < edges[b] {
            b -= 1;
        }
        while b + 1 < bins && x[a] >= edges[b + 1] {
            b += 1;
        }
        Some(b)
    }
}

impl Sampled for Bins {
    fn spec(&self) -> &DiagnosticSpec {
        &self.spec
    }

    /// Take one sample of the state `v` (collective: every rank calls it).
    fn sample(&mut self, v: &View, comm: &dyn Comm) {
        let edges = self.edges();
        let mut sums = vec![0.0; self.sums.len()];
        let p = v.p;
        let a = self.axis;
        let d = v.domain;
        // A periodic axis the box spans whole (other than the bins' axis):
        // a sphere's images along it fill it exactly as the whole sphere
        // would, so the box is taken as unbounded there and no image along
        // it is needed (nor the costly cut of a sphere at a box edge).
        let spans = |x: usize| {
            x != a && d.periodic[x] && self.spec.lo[x] <= d.lo[x] && self.spec.hi[x] >= d.hi[x]
        };
        let (mut box_lo, mut box_hi) = (self.spec.lo, self.spec.hi);
        for x in (0..3).filter(|&x| spans(x)) {
            (box_lo[x], box_hi[x]) = (f64::NEG_INFINITY, f64::INFINITY);
        }
        for k in 0..p.n_owned {
            let r = p.radius[k];
            // The volume of every image that reaches into the box.
            for c in d.images_within_except(p.x[k], r, &spans) {
                if (c + r).cmple(box_lo).any() || (c - r).cmpge(box_hi).any() {
                    continue;
                }
                let first = edges.partition_point(|&e| e <= c[a] - r).saturating_sub(1);
                for b in first..self.bins {
                    if edges[b] >= c[a] + r {
                        break;
                    }
                    let (mut lo, mut hi) = (box_lo, box_hi);
                    (lo[a], hi[a]) = (edges[b], edges[b + 1]);
                    sums[b * WIDTH + VOLUME] += sphere_box_volume(c, r, lo, hi);
                }
            }
            let Some(b) = self.bin_of(&edges, v.domain.wrap(p.x[k])) else {
                continue;
            };
            let s = &mut sums[b * WIDTH..(b + 1) * WIDTH];
            let (m, vel) = (p.mass[k], p.v[k]);
            s[COUNT] += 1.0;
            s[MASS] += m;
            for (d, value) in (m * vel).to_array().into_iter().enumerate() {
                s[MOMENTUM + d] += value;
            }
            let mvv: &mut [f64; 6] = (&mut s[MVV..MVV + 6]).try_into().expect("6");
            add_outer(mvv, vel, vel, m);
            let virial: &mut [f64; 6] = (&mut s[VIRIAL..VIRIAL + 6]).try_into().expect("6");
            let touching = match v.loads {
                // One pass over the forces: the virial, and the contacts
                // among them that touch (a force without overlap, as of a
                // WCA pair, is no contact).
                Some(loads) => {
                    let mut touching = 0;
                    for load in loads_of(p, v.nl, v.walls, loads, k) {
                        let (share, reach) = match load.partner {
                            Partner::Particle(q) => (0.5, p.radius[k] + p.radius[q]),
                            Partner::Wall(_) => (1.0, p.radius[k]),
                        };
                        add_outer(virial, load.branch, load.force, share);
                        touching += usize::from(load.branch.length_squared() < reach * reach);
                    }
                    touching
                }
                None => {
                    virial.fill(f64::NAN);
                    contacts_of(p, v.nl, v.laws, (v.walls, v.near_walls), k, Sides::Both)
                        .filter(|c| c.delta > 0.0)
                        .count()
                }
            };
            s[CONTACTS] += touching as f64;
        }
        comm.sum_f64(&mut sums);
        for (total, s) in self.sums.iter_mut().zip(&sums) {
            *total += s;
        }
        self.samples += 1;
    }

    /// The row of the samples since the last one, in [`Self::columns`]
    /// order, and a fresh start.
    fn take_row(&mut self, step: u64, time: f64) -> Vec<f64> {
        let edges = self.edges();
        let samples = self.samples.max(1) as f64;
        let bins = self.bins;
        // Per bin: particles, packing, coordination, velocity (3),
        // temperature, stress, kinetic, contact (6 each).
        let mut per_bin: Vec<[f64; 25]> = Vec::with_capacity(bins);
        for b in 0..bins {
            let s = &self.sums[b * WIDTH..(b + 1) * WIDTH];
            let (lo, hi) = self.bin_box(&edges, b);
            let d = hi - lo;
            let volume = d.x * d.y * d.z * samples;
            let mass = s[MASS];
            let mean = DVec3::new(s[MOMENTUM], s[MOMENTUM + 1], s[MOMENTUM + 2]) / mass;
            let mut kinetic = [0.0; 6];
            kinetic.copy_from_slice(&s[MVV..MVV + 6]);
            add_outer(&mut kinetic, mean, mean, -mass);
            let kinetic = if mass > 0.0 {
                kinetic.map(|k| k / volume)
            } else {
                [0.0; 6]
            };
            let contact: [f64; 6] = std::array::from_fn(|c| s[VIRIAL + c] / volume);
            let temperature = (kinetic[0] + kinetic[1] + kinetic[2]) * volume / (3.0 * mass);
            let mut row = [0.0; 25];
            row[0] = s[COUNT] / samples;
            row[1] = s[VOLUME] / volume;
            row[2] = s[CONTACTS] / s[COUNT];
            row[3..6].copy_from_slice(&mean.to_array());
            row[6] = temperature;
            for c in 0..6 {
                row[7 + c] = kinetic[c] + contact[c];
                row[13 + c] = kinetic[c];
                row[19 + c] = contact[c];
            }
            per_bin.push(row);
        }
        self.sums.fill(0.0);
        self.samples = 0;
        // Column-major over the bins: each quantity's bins together.
        let mut out = vec![step as f64, time];
        for (start, len) in [
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 3),
            (6, 1),
            (7, 6),
            (13, 6),
            (19, 6),
        ] {
            for row in &per_bin {
                out.extend_from_slice(&row[start..start + len]);
            }
        }
        out
    }

    /// The table's columns: `step`, `time`, then each quantity, with a
    /// bins dimension for a profile.
    fn columns(&self) -> Vec<Column> {
        let bins: &[usize] = match self.spec.measure {
            Measure::Profile { .. } => std::slice::from_ref(&self.bins),
            _ => &[],
        };
        let shaped = |name: &str, per: &[usize], units| {
            let shape: Vec<usize> = bins.iter().chain(per).copied().collect();
            Column::shaped(name, &shape, units)
        };
        vec![
            Column::number("step", None),
            Column::number("time", Some("s")),
            shaped("particles", &[], None),
            shaped("packing_fraction", &[], Some("1")),
            shaped("coordination", &[], None),
            shaped("mean_velocity", &[3], Some("m/s")),
            shaped("granular_temperature", &[], Some("m^2/s^2")),
            shaped("stress", &[6], Some("Pa")),
            shaped("stress_kinetic", &[6], Some("Pa")),
            shaped("stress_contact", &[6], Some("Pa")),
        ]
    }

    /// The datasets written once beside the table: the box (`lo`, `hi`)
    /// and, for a profile, `bin_edges` and `bin_centres` along its axis.
    fn fixed(&self) -> Vec<Fixed> {
        let vector = |name: &str, v: DVec3| Fixed {
            name: name.to_owned(),
            shape: vec![3],
            values: v.to_array().to_vec(),
            units: Some("m"),
        };
        let mut out = vec![vector("lo", self.spec.lo), vector("hi", self.spec.hi)];
        if matches!(self.spec.measure, Measure::Profile { .. }) {
            let edges = self.edges();
            let centres: Vec<f64> = edges.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
            out.push(Fixed {
                name: "bin_centres".to_owned(),
                shape: vec![centres.len()],
                values: centres,
                units: Some("m"),
            });
            out.push(Fixed {
                name: "bin_edges".to_owned(),
                shape: vec![edges.len()],
                values: edges,
                units: Some("m"),
            });
        }
        out
    }

    /// The group's string attributes: `kind`, and a profile's `axis`.
    fn attrs(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = vec![("kind", self.spec.measure.name())];
        if matches!(self.spec.measure, Measure::Profile { .. }) {
            out.push(("axis", ["x", "y", "z"][self.axis]));
        }
        out
    }
}
