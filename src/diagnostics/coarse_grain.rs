//! Coarse-grained continuum fields (`[[diagnostics]] kind =
//! "coarse_grain"`): density, momentum, velocity and stress on a grid of
//! cells, smoothed by a kernel, after Goldhirsch (Granular Matter 12 (2010)
//! 239) and Weinhart, Thornton, Luding & Bokhove (Granular Matter 14 (2012)
//! 289).
//!
//! The kernel is the product `φ(r) = ψ(x) ψ(y) ψ(z)` of the one-dimensional
//! kernels of [`super::kernel`] (the product form is what lets a cell be
//! integrated in closed form). At a point `r`, over the particles `i`
//! (mass `m`, velocity `v`) and the contacts `c` (force `f` on particle
//! `i`, branch `l = x_i − x_partner`; at a wall the partner is the contact
//! point):
//! - `ρ(r) = Σ_i m_i φ(r − x_i)`, `p(r) = Σ_i m_i v_i φ(r − x_i)`, `V = p/ρ`;
//! - `σ_k(r) = Σ_i m_i (v_i − V)(v_i − V) φ(r − x_i)`;
//! - `σ_c(r) = Σ_c l ⊗ f ∫₀¹ φ(r − x_i + s l) ds`: the force spread along
//!   the branch vector, so that `∇·σ_c = −Σ_i f_i^contact φ(r − x_i)`
//!   (plus the wall forces at their contact points) and the momentum
//!   balance `∂p/∂t + ∇·(ρVV) = −∇·σ + ρ g` holds at every point
//!   (compressive positive, as the thermo's stress).
//!
//! Each field is written as its average over each cell of the grid, not its
//! value at the cell's centre: the cell integrals of `ψ` are differences of
//! its cumulative `F`, so a particle's density sums over the cells that
//! cover its kernel to its mass to rounding, and the integral of
//! `ρ` over the grid is the mass inside it exactly. A gridded axis has
//! `bins` cells; an axis that is not gridded has one cell, the box's
//! extent, so the fields are averaged over it (on a periodic axis the box
//! spans whole, exactly). Along the branch vector the mean of `F` has a
//! closed form too ([`Kernel::mean_cdf`]); where more than one axis varies
//! along it (grids of two or three axes), the mean of the product is
//! taken by 16-point Gauss–Legendre quadrature.
//!
//! A row pools its `S` samples: `density = Σ ρ / S`, `momentum = Σ p / S`,
//! `velocity = Σ p / Σ ρ`, `stress_kinetic = (Σ Σ_i m v v φ − (Σ p)(Σ p)/Σ ρ)/S`
//! (fluctuations about the pooled velocity), `stress_contact = Σ σ_c / S`.
//! A cell without mass has NaN velocity and zero kinetic stress.

use super::contacts::{loads_of, Partner};
use super::kernel::Kernel;
use super::stress::{add_outer, Sym};
use super::{Sampled, View};
use crate::config::{DiagnosticSpec, GridSpec, Measure};
use crate::geometry::domain::Domain;
use crate::io::frames::Fixed;
use crate::io::table::Column;
use crate::math::gauss_legendre::gauss_legendre;
use crate::parallel::comm::Comm;
use glam::DVec3;

/// The sums kept per cell, at these offsets.
const MASS: usize = 0;
const MOMENTUM: usize = 1;
/// `Σ m v ⊗ v φ`, six components.
const MVV: usize = 4;
/// The contact stress, six components.
const VIRIAL: usize = 10;
/// Sums per cell.
const WIDTH: usize = 16;
/// Nodes of the quadrature along a branch vector where several axes vary.
const NODES: usize = 16;

/// One axis of the grid.
#[derive(Debug, Clone)]
struct Axis {
    /// The box's extent.
    lo: f64,
    hi: f64,
    /// Number of cells.
    cells: usize,
    /// The cell width.
    h: f64,
    /// The domain's length along a periodic axis.
    period: Option<f64>,
    /// Averaged over a periodic axis that the box spans whole: every
    /// kernel lies inside (its images together), weight one.
    whole: bool,
}

impl Axis {
    /// Edge `j` of the cells (the last is `hi` itself).
    fn edge(&self, j: usize) -> f64 {
        if j == self.cells {
            self.hi
        } else {
            self.lo + j as f64 * self.h
        }
    }

    /// The cells a kernel centred on the segment from `a` to `a − l` reaches
    /// (`l = 0`: a point), each with the mean over the segment of the
    /// kernel's integral over the cell, pushed onto `out` (a cell may come
    /// twice, from two periodic images).
    fn weights(&self, k: &Kernel, a: f64, l: f64, out: &mut Vec<(usize, f64)>) {
        out.clear();
        if self.whole {
            out.push((0, 1.0));
            return;
        }
        let c = k.cutoff();
        let shifts: &[f64] = match self.period {
            Some(p) => &[0.0, -p, p],
            None => &[0.0],
        };
        for &shift in shifts {
            let a = a + shift;
            let (u0, u1) = (a.min(a - l) - c, a.max(a - l) + c);
            if u1 <= self.lo || u0 >= self.hi {
                continue;
            }
            let cell =
                |u: f64| (((u - self.lo) / self.h).floor().max(0.0) as usize).min(self.cells - 1);
            let (first, last) = (cell(u0), cell(u1));
            let mut below = k.mean_cdf(self.edge(first) - a, l);
            for j in first..=last {
                let above = k.mean_cdf(self.edge(j + 1) - a, l);
                out.push((j, above - below));
                below = above;
            }
        }
    }
}

/// One coarse-graining diagnostic: its grid, kernel and the sums of the
/// samples since its last row.
#[derive(Debug, Clone)]
pub struct CoarseGrain {
    spec: DiagnosticSpec,
    grid: GridSpec,
    kernel: Kernel,
    axes: [Axis; 3],
    /// The quadrature along a branch vector, on `[0, 1]`.
    nodes: Vec<(f64, f64)>,
    sums: Vec<f64>,
    samples: u64,
}

/// Per-axis scratch lists of (cell, weight).
type Weights = [Vec<(usize, f64)>; 3];

impl CoarseGrain {
    /// A coarse-graining diagnostic with no samples yet, in the box
    /// `domain` (whose periodic axes its kernels wrap around).
    ///
    /// # Panics
    /// If `spec` is of another kind.
    pub fn new(spec: &DiagnosticSpec, domain: &Domain) -> Self {
        let Measure::CoarseGrain(grid) = &spec.measure else {
            panic!("CoarseGrain::new: {} is not a coarse_grain", spec.name);
        };
        let axes = std::array::from_fn(|d| {
            let (lo, hi, cells) = (spec.lo[d], spec.hi[d], grid.cells[d]);
            let periodic = domain.periodic[d];
            Axis {
                lo,
                hi,
                cells,
                h: (hi - lo) / cells as f64,
                period: periodic.then(|| domain.hi[d] - domain.lo[d]),
                whole: !grid.gridded[d] && periodic && lo <= domain.lo[d] && hi >= domain.hi[d],
            }
        });
        let (x, w) = gauss_legendre(NODES);
        let nodes = x
            .iter()
            .zip(&w)
            .map(|(x, w)| (0.5 * (x + 1.0), 0.5 * w))
            .collect();
        let n: usize = grid.cells.iter().product();
        Self {
            spec: spec.clone(),
            grid: grid.clone(),
            kernel: Kernel::new(grid.kernel, grid.width),
            axes,
            nodes,
            sums: vec![0.0; n * WIDTH],
            samples: 0,
        }
    }

    /// The number of cells.
    fn cells(&self) -> usize {
        self.grid.cells.iter().product()
    }

    /// The volume of one cell (an averaged axis contributes the box's extent).
    fn cell_volume(&self) -> f64 {
        self.axes.iter().map(|a| a.h).product()
    }

    /// Add `scale · values` to every cell of the product of `w`'s lists,
    /// weighted by the product of their weights.
    fn spread(&self, sums: &mut [f64], w: &Weights, offset: usize, values: &[f64], scale: f64) {
        let [_, ny, nz] = self.grid.cells;
        for &(ix, wx) in &w[0] {
            for &(iy, wy) in &w[1] {
                let wxy = scale * wx * wy;
                for &(iz, wz) in &w[2] {
                    let weight = wxy * wz;
                    let cell = (ix * ny + iy) * nz + iz;
                    let s = &mut sums[cell * WIDTH + offset..cell * WIDTH + offset + values.len()];
                    for (s, v) in s.iter_mut().zip(values) {
                        *s += weight * v;
                    }
                }
            }
        }
    }

    /// Spread the contact tensor `t` along the segment from `x` to `x − l`.
    fn spread_contact(&self, sums: &mut [f64], w: &mut Weights, x: DVec3, l: DVec3, t: &Sym) {
        let varying = (0..3)
            .filter(|&d| l[d] != 0.0 && !self.axes[d].whole)
            .count();
        if varying <= 1 {
            // The mean of a product with at most one factor varying along
            // the segment is the product of the means: closed form.
            for d in 0..3 {
                self.axes[d].weights(&self.kernel, x[d], l[d], &mut w[d]);
            }
            self.spread(sums, w, VIRIAL, t, 1.0);
            return;
        }
        for &(s, weight) in &self.nodes {
            let at = x - s * l;
            for d in 0..3 {
                self.axes[d].weights(&self.kernel, at[d], 0.0, &mut w[d]);
            }
            self.spread(sums, w, VIRIAL, t, weight);
        }
    }

    /// The shape of a field: the cells along each gridded axis.
    fn shape(&self, per: &[usize]) -> Vec<usize> {
        (0..3)
            .filter(|&d| self.grid.gridded[d])
            .map(|d| self.grid.cells[d])
            .chain(per.iter().copied())
            .collect()
    }
}

impl Sampled for CoarseGrain {
    fn spec(&self) -> &DiagnosticSpec {
        &self.spec
    }

    /// Take one sample of the state `v` (collective: every rank calls it).
    fn sample(&mut self, v: &View, comm: &dyn Comm) {
        let mut sums = vec![0.0; self.sums.len()];
        let mut w: Weights = Default::default();
        let p = v.p;
        for k in 0..p.n_owned {
            let x = v.domain.wrap(p.x[k]);
            for d in 0..3 {
                self.axes[d].weights(&self.kernel, x[d], 0.0, &mut w[d]);
            }
            let (m, vel) = (p.mass[k], p.v[k]);
            let mut values = [0.0; 10];
            values[0] = m;
            values[1..4].copy_from_slice(&(m * vel).to_array());
            let mvv: &mut Sym = (&mut values[4..10]).try_into().expect("6");
            add_outer(mvv, vel, vel, m);
            self.spread(&mut sums, &w, MASS, &values, 1.0);
            let Some(loads) = v.loads else {
                continue;
            };
            // Each pair once over all ranks (from its lower-id side), each
            // wall contact whole.
            for load in loads_of(p, v.nl, v.walls, loads, k) {
                if let Partner::Particle(q) = load.partner {
                    if p.id[q] < p.id[k] {
                        continue;
                    }
                }
                let mut t = [0.0; 6];
                add_outer(&mut t, load.branch, load.force, 1.0);
                self.spread_contact(&mut sums, &mut w, x, load.branch, &t);
            }
        }
        if v.loads.is_none() {
            for cell in sums.chunks_mut(WIDTH) {
                cell[VIRIAL..VIRIAL + 6].fill(f64::NAN);
            }
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
        let n = self.cells();
        let scale = 1.0 / (self.samples.max(1) as f64 * self.cell_volume());
        let mut density = Vec::with_capacity(n);
        let mut momentum = Vec::with_capacity(3 * n);
        let mut velocity = Vec::with_capacity(3 * n);
        let (mut stress, mut kinetic, mut contact) = (
            Vec::with_capacity(6 * n),
            Vec::with_capacity(6 * n),
            Vec::with_capacity(6 * n),
        );
        for s in self.sums.chunks(WIDTH) {
            let mass = s[MASS];
            let p = DVec3::new(s[MOMENTUM], s[MOMENTUM + 1], s[MOMENTUM + 2]);
            density.push(mass * scale);
            momentum.extend_from_slice(&(p * scale).to_array());
            velocity.extend_from_slice(&(p / mass).to_array());
            let mut k: Sym = [0.0; 6];
            if mass > 0.0 {
                k.copy_from_slice(&s[MVV..MVV + 6]);
                add_outer(&mut k, p, p, -1.0 / mass);
            }
            for c in 0..6 {
                let (kc, cc) = (k[c] * scale, s[VIRIAL + c] * scale);
                kinetic.push(kc);
                contact.push(cc);
                stress.push(kc + cc);
            }
        }
        self.sums.fill(0.0);
        self.samples = 0;
        let mut out = vec![step as f64, time];
        for field in [density, momentum, velocity, stress, kinetic, contact] {
            out.extend(field);
        }
        out
    }

    /// The table's columns: `step`, `time`, then each field, with one
    /// dimension per gridded axis.
    fn columns(&self) -> Vec<Column> {
        let field =
            |name: &str, per: &[usize], units| Column::shaped(name, &self.shape(per), units);
        vec![
            Column::number("step", None),
            Column::number("time", Some("s")),
            field("density", &[], Some("kg/m^3")),
            field("momentum", &[3], Some("kg/(m^2 s)")),
            field("velocity", &[3], Some("m/s")),
            field("stress", &[6], Some("Pa")),
            field("stress_kinetic", &[6], Some("Pa")),
            field("stress_contact", &[6], Some("Pa")),
        ]
    }

    /// The datasets written once beside the table: the box (`lo`, `hi`),
    /// the kernel's `width`, and the cell centres along each gridded axis
    /// (`x`, `y`, `z`).
    fn fixed(&self) -> Vec<Fixed> {
        let metres = |name: &str, values: Vec<f64>, shape: Vec<usize>| Fixed {
            name: name.to_owned(),
            shape,
            values,
            units: Some("m"),
        };
        let mut out = vec![
            metres("lo", self.spec.lo.to_array().to_vec(), vec![3]),
            metres("hi", self.spec.hi.to_array().to_vec(), vec![3]),
            metres("width", vec![self.grid.width], vec![]),
        ];
        for d in (0..3).filter(|&d| self.grid.gridded[d]) {
            let a = &self.axes[d];
            let centres: Vec<f64> = (0..a.cells)
                .map(|j| 0.5 * (a.edge(j) + a.edge(j + 1)))
                .collect();
            let n = centres.len();
            out.push(metres(["x", "y", "z"][d], centres, vec![n]));
        }
        out
    }

    /// The group's string attributes: `kind`, `axes` (the gridded ones, in
    /// order) and `kernel`.
    fn attrs(&self) -> Vec<(&'static str, &'static str)> {
        let axes = match self.grid.gridded {
            [true, false, false] => "x",
            [false, true, false] => "y",
            [false, false, true] => "z",
            [true, true, false] => "xy",
            [true, false, true] => "xz",
            [false, true, true] => "yz",
            _ => "xyz",
        };
        vec![
            ("kind", self.spec.measure.name()),
            ("axes", axes),
            ("kernel", self.grid.kernel.name()),
        ]
    }
}
