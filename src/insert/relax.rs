//! A relaxed random fill: spheres at a target packing fraction, which
//! random sequential addition cannot reach (it jams near 0.38 for equal
//! spheres).
//!
//! The method is collective rearrangement (Jodrey & Tory, Phys. Rev. A 32
//! (1985) 2347, in its simplest, overlap-removal form): the spheres are
//! placed at uniform random positions inside the region and clear of the
//! walls, each at the first of up to [`START_CANDIDATES`] candidates that
//! overlaps nothing placed before it (or at the last one), so overlaps
//! are allowed. Then sweeps in index order push every overlapping pair
//! apart along the line of centres, each sphere by half the overlap times
//! `1 + `[`OVERSHOOT`], push spheres off fixed ones (earlier blocks), and
//! put each sphere back inside the region and clear of the walls. The
//! fill is done when a check of all pairs on fresh positions finds no
//! overlap larger than [`FILL_OVERLAP_TOLERANCE`] of the smaller radius,
//! every sphere wholly inside the region and clear of every wall. The
//! radii are never changed, so the packing fraction is the one asked for.
//!
//! Everything runs in index order on one thread from the block's stream:
//! every rank computes the same fill, bit for bit.

use super::sample::{self, clear_of_walls, push_out_of_walls};
use super::{uniform, Placer};
use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use glam::DVec3;
use rand_pcg::Pcg64;

/// The largest overlap a relaxed fill leaves between two spheres, as a
/// fraction of the smaller radius. Contact forces start from these
/// overlaps: 1e-3 of `R` is below the static overlap of a settled bed
/// (1.8 % in the dense-pack benchmark), so the fill starts nearly at rest.
pub const FILL_OVERLAP_TOLERANCE: f64 = 1e-3;

/// Sweeps a relaxed fill may take before it gives up.
pub const FILL_MAX_SWEEPS: usize = 4_000;

/// Random candidates a sphere tries for its starting position.
pub const START_CANDIDATES: usize = 20;

/// How far beyond contact a sweep pushes an overlapping pair, as a
/// fraction of the overlap: a small gap opens, which speeds convergence.
pub const OVERSHOOT: f64 = 0.1;

/// Why a relaxed fill failed.
#[derive(Debug, Clone, PartialEq)]
pub enum FillError {
    /// No position in the region clears the walls for a sphere of this
    /// radius.
    NoRoom {
        /// The sphere's radius.
        radius: f64,
    },
    /// The overlaps were not removed in [`FILL_MAX_SWEEPS`] sweeps.
    NotConverged {
        /// The largest overlap left, as a fraction of the smaller radius.
        largest_overlap: f64,
        /// The packing fraction of the spheres, each shrunk by its largest
        /// remaining overlap: the overlap-free fraction reached.
        reached: f64,
    },
}

/// Spheres sorted into the cells of a dense grid over a box (a cell
/// list): the cells are at least `min_cell` wide (one diameter of the
/// largest sphere, so that touching spheres are in the same or adjacent
/// cells), and at most about 8 per sphere. Points outside the box fall in
/// its edge cells.
struct CellList {
    lo: DVec3,
    inv: f64,
    dims: [usize; 3],
    /// `start[c]..start[c + 1]` indexes `items` for cell `c`.
    start: Vec<u32>,
    items: Vec<u32>,
}

impl CellList {
    fn new(lo: DVec3, hi: DVec3, min_cell: f64, n: usize) -> Self {
        let span = (hi - lo).max(DVec3::splat(min_cell));
        let mut cell = min_cell;
        let cells = |c: f64| ((span / c).floor() + DVec3::ONE).element_product();
        while cells(cell) > 8.0 * n.max(1) as f64 + 27.0 {
            cell *= 1.25;
        }
        let d = (span / cell).floor() + DVec3::ONE;
        let dims = [d.x as usize, d.y as usize, d.z as usize];
        CellList {
            lo,
            inv: 1.0 / cell,
            dims,
            start: vec![0; dims[0] * dims[1] * dims[2] + 1],
            items: Vec::with_capacity(n),
        }
    }

    fn coord(&self, x: DVec3) -> [usize; 3] {
        let c = ((x - self.lo) * self.inv).floor();
        let clamp = |v: f64, n: usize| (v.max(0.0) as usize).min(n - 1);
        [
            clamp(c.x, self.dims[0]),
            clamp(c.y, self.dims[1]),
            clamp(c.z, self.dims[2]),
        ]
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// Sort the points `x` into the cells (a counting sort: within a cell,
    /// in index order).
    fn fill(&mut self, x: &[DVec3]) {
        self.start.iter_mut().for_each(|s| *s = 0);
        let cells: Vec<usize> = x.iter().map(|&p| self.index(self.coord(p))).collect();
        for &c in &cells {
            self.start[c + 1] += 1;
        }
        for c in 1..self.start.len() {
            self.start[c] += self.start[c - 1];
        }
        self.items.clear();
        self.items.resize(x.len(), 0);
        let mut next = self.start.clone();
        for (i, &c) in cells.iter().enumerate() {
            self.items[next[c] as usize] = i as u32;
            next[c] += 1;
        }
    }

    /// Call `f(j)` for every point in the cells around `x`'s.
    fn around(&self, x: DVec3, mut f: impl FnMut(usize)) {
        let c = self.coord(x);
        let range = |a: usize| c[a].saturating_sub(1)..=(c[a] + 1).min(self.dims[a] - 1);
        for z in range(2) {
            for y in range(1) {
                let row = self.index([0, y, z]);
                let (a, b) = (*range(0).start(), *range(0).end());
                let (s, e) = (
                    self.start[row + a] as usize,
                    self.start[row + b + 1] as usize,
                );
                for &j in &self.items[s..e] {
                    f(j as usize);
                }
            }
        }
    }
}

/// A unit direction for two coincident centres, from their indices.
fn fallback_direction(i: usize, j: usize) -> DVec3 {
    let h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (j as u64);
    DVec3::new(
        (h & 0xff) as f64 - 127.5,
        ((h >> 8) & 0xff) as f64 - 127.5,
        ((h >> 16) & 0xff) as f64 - 127.5,
    )
    .normalize()
}

/// Fill `region` with spheres of `radii` (any order), clear of `walls` and
/// of the fixed spheres in `fixed`, by collective rearrangement (see the
/// module). Returns the centres, in the order of `radii`.
pub fn relaxed_fill(
    rng: &mut Pcg64,
    region: &Region,
    walls: &[Wall],
    radii: &[f64],
    fixed: &Placer,
) -> Result<Vec<DVec3>, FillError> {
    let n = radii.len();
    let inner: Vec<Region> = radii
        .iter()
        .map(|&r| sample::shrunk(region, r).ok_or(FillError::NoRoom { radius: r }))
        .collect::<Result<_, _>>()?;
    // Starting positions: clear of the walls, overlapping little.
    let mut x = Vec::with_capacity(n);
    let mut start = fixed.clone();
    for (i, &r) in radii.iter().enumerate() {
        let mut last = None;
        let mut tried = 0;
        // Up to 50 draws per candidate clear of the walls.
        for _ in 0..START_CANDIDATES * 50 {
            let u = [uniform(rng), uniform(rng), uniform(rng)];
            let p = sample::point_in(&inner[i], u);
            if !clear_of_walls(walls, p, r) {
                continue;
            }
            last = Some(p);
            tried += 1;
            if !start.overlaps(p, r) || tried >= START_CANDIDATES {
                break;
            }
        }
        let p = last.ok_or(FillError::NoRoom { radius: r })?;
        start.add(p, r);
        x.push(p);
    }
    let r_max = radii.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = region.bounds();
    let mut cells = CellList::new(lo, hi, 2.0 * r_max.max(f64::MIN_POSITIVE), n);
    let has_fixed = !fixed.is_empty();
    for _ in 0..FILL_MAX_SWEEPS {
        cells.fill(&x);
        let mut sweep_worst: f64 = 0.0;
        for i in 0..n {
            let ri = radii[i];
            cells.around(x[i], |j| {
                if j <= i {
                    return;
                }
                let rj = radii[j];
                let d = x[j] - x[i];
                let d2 = d.length_squared();
                if d2 >= (ri + rj) * (ri + rj) {
                    return;
                }
                let dist = d2.sqrt();
                let ov = ri + rj - dist;
                sweep_worst = sweep_worst.max(ov / ri.min(rj));
                let dir = if dist > 0.0 {
                    d / dist
                } else {
                    fallback_direction(i, j)
                };
                let shift = 0.5 * ov * (1.0 + OVERSHOOT) * dir;
                x[i] -= shift;
                x[j] += shift;
            });
            let mut xi = x[i];
            if has_fixed {
                fixed.each_overlapping(xi, ri, |y, s| {
                    let d = xi - y;
                    let dist = d.length();
                    let ov = ri + s - dist;
                    sweep_worst = sweep_worst.max(ov / ri.min(s));
                    let dir = if dist > 0.0 { d / dist } else { DVec3::Z };
                    xi += ov * (1.0 + OVERSHOOT) * dir;
                });
            }
            xi = sample::project(&inner[i], xi);
            xi = push_out_of_walls(walls, xi, ri);
            x[i] = sample::project(&inner[i], xi);
        }
        if sweep_worst < FILL_OVERLAP_TOLERANCE {
            let (w, _) = largest_overlaps(&x, radii, fixed, &mut cells);
            let placed = x
                .iter()
                .zip(radii)
                .all(|(&p, &r)| clear_of_walls(walls, p, r));
            if w < FILL_OVERLAP_TOLERANCE && placed {
                return Ok(x);
            }
        }
    }
    let (w, each) = largest_overlaps(&x, radii, fixed, &mut cells);
    let shrunk_volume: f64 = radii
        .iter()
        .zip(&each)
        .map(|(&r, &o)| 4.0 / 3.0 * std::f64::consts::PI * (r - o).max(0.0).powi(3))
        .sum();
    Err(FillError::NotConverged {
        largest_overlap: w,
        reached: shrunk_volume / region.volume(),
    })
}

/// The largest overlap between the spheres `(x, radii)` and with the fixed
/// ones, as a fraction of the smaller radius, and each sphere's largest
/// overlap (a length), on fresh cells.
fn largest_overlaps(
    x: &[DVec3],
    radii: &[f64],
    fixed: &Placer,
    cells: &mut CellList,
) -> (f64, Vec<f64>) {
    cells.fill(x);
    let mut worst: f64 = 0.0;
    let mut each = vec![0.0f64; x.len()];
    for i in 0..x.len() {
        cells.around(x[i], |j| {
            if j == i {
                return;
            }
            let ov = radii[i] + radii[j] - (x[j] - x[i]).length();
            if ov > 0.0 {
                worst = worst.max(ov / radii[i].min(radii[j]));
                each[i] = each[i].max(ov);
            }
        });
        fixed.each_overlapping(x[i], radii[i], |y, s| {
            let ov = radii[i] + s - (x[i] - y).length();
            worst = worst.max(ov / radii[i].min(s));
            each[i] = each[i].max(ov);
        });
    }
    (worst, each)
}

/// The largest overlap between the spheres `(x, radii)` and with the fixed
/// ones, as a fraction of the smaller radius (what a fill must bring below
/// [`FILL_OVERLAP_TOLERANCE`]).
pub fn largest_overlap(x: &[DVec3], radii: &[f64], fixed: &Placer) -> f64 {
    let (lo, hi) = x
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(a, b), &p| {
            (a.min(p), b.max(p))
        });
    if x.is_empty() {
        return 0.0;
    }
    let r_max = radii.iter().copied().fold(0.0, f64::max);
    let mut cells = CellList::new(lo, hi, 2.0 * r_max.max(f64::MIN_POSITIVE), x.len());
    largest_overlaps(x, radii, fixed, &mut cells).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insert::stream;

    #[test]
    fn a_relaxed_fill_reaches_a_dense_fraction_without_overlaps() {
        // 0.55 of a box with equal spheres: N = 0.55 V / v.
        let region = Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::splat(1.0),
        };
        let r = 0.06;
        let v = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let n = (0.55 / v).round() as usize;
        let radii = vec![r; n];
        let x = relaxed_fill(&mut stream(1, 0, 0), &region, &[], &radii, &Placer::new(r)).unwrap();
        let phi = n as f64 * v / region.volume();
        assert!((phi - 0.55).abs() < 0.01, "{phi}");
        let w = largest_overlap(&x, &radii, &Placer::new(r));
        assert!(w < FILL_OVERLAP_TOLERANCE, "{w}");
        assert!(x.iter().all(|&p| region.holds_sphere(p, r * (1.0 - 1e-12))));
    }

    #[test]
    fn an_impossible_fill_reports_the_fraction_it_reached() {
        // 0.70 of equal spheres exceeds random close packing (0.64).
        let region = Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::splat(1.0),
        };
        let r = 0.1;
        let v = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let n = (0.70 / v).round() as usize;
        let e = relaxed_fill(
            &mut stream(1, 0, 0),
            &region,
            &[],
            &vec![r; n],
            &Placer::new(r),
        )
        .unwrap_err();
        let FillError::NotConverged {
            largest_overlap,
            reached,
        } = e
        else {
            panic!("{e:?}")
        };
        assert!(largest_overlap >= FILL_OVERLAP_TOLERANCE);
        assert!(reached < 0.70 && reached > 0.2, "{reached}");
    }
}
