//! Particle insertion: lattice fill, random non-overlapping fill, pouring at a
//! rate, explicit lists and CSV files.
//!
//! Random draws come from `rand_pcg::Pcg64` streams seeded from the seed,
//! the block and a counter (a sphere's number, a cell, a step), so every
//! rank draws the same candidates and a restarted run continues the same
//! sequence.
//!
//! A `random` block with a `count` is placed cell by cell ([`cells`]), the
//! same spheres on any number of ranks, each rank placing only the cells
//! near its subdomain; a pouring source places each batch on such cells
//! too ([`pour`]).
//!
//! Size distributions stay true however dense the fill: each particle's
//! radius is drawn once and kept while positions are retried
//! ([`cells`], [`pour`]), random cells place their largest
//! spheres first, and a poured particle that finds no room waits, with
//! its radius, for the next interval.

pub mod cells;
pub mod earlier;
pub mod file;
pub mod initial;
pub mod pour;
pub mod radius;
pub mod relax;
pub mod sample;

pub use pour::{PourSource, POUR_ATTEMPTS};
pub use radius::{RadiusDist, SizeStats};
pub use sample::clear_of_walls;

use crate::geometry::domain::Domain;
use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use glam::DVec3;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::HashMap;

/// A uniform variate in `[0, 1)` with 53 random bits.
pub fn uniform(rng: &mut Pcg64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A seeded stream for one purpose: `(seed, block, step)` are mixed so that
/// distinct triples give independent streams.
pub fn stream(seed: u64, block: u64, step: u64) -> Pcg64 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for v in [block, step] {
        h = (h ^ v).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 31;
    }
    Pcg64::seed_from_u64(h)
}

/// Spheres already placed, hashed on a grid, for overlap checks during insertion.
///
/// The cells are at least one diameter of the largest sphere recorded (the
/// grid is rebuilt, with cells at least twice as large, when a larger one
/// arrives), so a query looks only at the cells within its reach.
///
/// In a box with periodic axes ([`Placer::periodic_in`]) a sphere is
/// recorded with its periodic images, so that a candidate inside the box
/// sees a sphere across a periodic face.
#[derive(Debug, Clone)]
pub struct Placer {
    cell: f64,
    max_stored: f64,
    grid: HashMap<[i64; 3], Vec<(DVec3, f64)>>,
    /// Lattices, asked by index arithmetic rather than stored sphere by
    /// sphere (see [`initial::Lattice`]).
    lattices: Vec<initial::Lattice>,
    /// The largest radius a candidate may have.
    max_candidate: f64,
    /// The box across whose periodic axes images are recorded.
    domain: Option<Domain>,
}

impl Placer {
    /// An empty placer, sized for spheres up to radius `max_radius`.
    pub fn new(max_radius: f64) -> Self {
        Self {
            cell: 2.0 * max_radius.max(f64::MIN_POSITIVE),
            max_stored: 0.0,
            grid: HashMap::new(),
            lattices: Vec::new(),
            max_candidate: max_radius,
            domain: None,
        }
    }

    /// The same placer, recording spheres with their images across the
    /// periodic axes of `domain` (its candidates lie inside the box and have
    /// radii of at most the `max_radius` it was made for).
    pub fn periodic_in(mut self, domain: &Domain) -> Self {
        if domain.periodic.iter().any(|&p| p) {
            self.domain = Some(*domain);
        }
        self
    }

    /// Record a sphere (of any size), with its periodic images where a
    /// candidate can touch them.
    pub fn add(&mut self, x: DVec3, r: f64) {
        match self.domain {
            Some(d) => {
                for y in d.images_within(x, r + self.max_candidate) {
                    self.add_one(y, r);
                }
            }
            None => self.add_one(x, r),
        }
    }

    /// Record every sphere of `lattice` (it keeps no copy of them).
    pub fn add_lattice(&mut self, lattice: &initial::Lattice) {
        self.lattices.push(lattice.clone());
    }

    /// Call `f(y, s)` for every lattice sphere that a sphere of radius `r`
    /// at `x` overlaps (periodic images included).
    fn each_lattice_overlapping(&self, x: DVec3, r: f64, mut f: impl FnMut(DVec3, f64)) {
        for l in &self.lattices {
            let reach = r + l.radius();
            let images = match &self.domain {
                Some(d) => d.images_within(x, reach),
                None => vec![x],
            };
            for y in images {
                // A site near the image `y` is as near the candidate `x`
                // through the periodic face: report it where `x` sees it.
                l.each_site_near(y, reach, |s| f(s + (x - y), l.radius()));
            }
        }
    }

    fn key(&self, x: DVec3) -> [i64; 3] {
        let c = (x / self.cell).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    }

    fn add_one(&mut self, x: DVec3, r: f64) {
        if r > 0.5 * self.cell {
            let all: Vec<(DVec3, f64)> = self.grid.drain().flat_map(|(_, v)| v).collect();
            self.cell = (2.0 * r).max(2.0 * self.cell);
            for (y, s) in all {
                let k = self.key(y);
                self.grid.entry(k).or_default().push((y, s));
            }
        }
        self.max_stored = self.max_stored.max(r);
        let k = self.key(x);
        self.grid.entry(k).or_default().push((x, r));
    }

    /// Call `f(y, s)` for every recorded sphere (centre `y`, radius `s`)
    /// that a sphere of radius `r` at `x` overlaps.
    pub fn each_overlapping(&self, x: DVec3, r: f64, mut f: impl FnMut(DVec3, f64)) {
        self.each_lattice_overlapping(x, r, &mut f);
        let k = self.key(x);
        let n = ((r + self.max_stored) / self.cell).ceil().max(1.0) as i64;
        for dz in -n..=n {
            for dy in -n..=n {
                for dx in -n..=n {
                    for &(y, s) in self
                        .grid
                        .get(&[k[0] + dx, k[1] + dy, k[2] + dz])
                        .into_iter()
                        .flatten()
                    {
                        if (y - x).length_squared() < (r + s) * (r + s) {
                            f(y, s);
                        }
                    }
                }
            }
        }
    }

    /// The first recorded sphere (centre, radius) that a sphere of radius
    /// `r` at `x` overlaps, if any.
    pub fn first_overlapping(&self, x: DVec3, r: f64) -> Option<(DVec3, f64)> {
        let mut hit = None;
        self.each_overlapping(x, r, |y, s| {
            hit.get_or_insert((y, s));
        });
        hit
    }

    /// Whether no sphere is recorded.
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty() && self.lattices.iter().all(|l| l.count() == 0)
    }

    /// Whether a sphere at `x` with radius `r` would overlap a recorded one.
    pub fn overlaps(&self, x: DVec3, r: f64) -> bool {
        let mut hit = false;
        self.each_lattice_overlapping(x, r, |_, _| hit = true);
        if hit {
            return true;
        }
        let k = self.key(x);
        let n = ((r + self.max_stored) / self.cell).ceil().max(1.0) as i64;
        for dz in -n..=n {
            for dy in -n..=n {
                for dx in -n..=n {
                    if let Some(list) = self.grid.get(&[k[0] + dx, k[1] + dy, k[2] + dz]) {
                        if list
                            .iter()
                            .any(|&(y, s)| (y - x).length_squared() < (r + s) * (r + s))
                        {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

/// The number of lattice sites along each axis of [`lattice_positions`], as
/// `f64` so that an absurd region or spacing gives a large number (which
/// the config's memory check refuses) rather than an overflow.
pub fn lattice_shape(lo: DVec3, hi: DVec3, r: f64, spacing: f64) -> [f64; 3] {
    let count = |a: f64, b: f64| (((b - a - 2.0 * r) / spacing).floor() + 1.0).max(0.0);
    [count(lo.x, hi.x), count(lo.y, hi.y), count(lo.z, hi.z)]
}

/// Positions of a simple cubic lattice of spheres of radius `r` with spacing
/// `spacing` inside `[lo, hi]` (whole spheres), in x-fastest order, those
/// for which `keep` holds (the sites inside a region of those bounds), at
/// most `limit` of them.
pub fn lattice_positions(
    lo: DVec3,
    hi: DVec3,
    r: f64,
    spacing: f64,
    limit: Option<u64>,
    keep: impl Fn(DVec3) -> bool,
) -> Vec<DVec3> {
    let [nx, ny, nz] = lattice_shape(lo, hi, r, spacing).map(|n| n as usize);
    let sites = nx.saturating_mul(ny).saturating_mul(nz);
    let mut out = Vec::with_capacity(limit.map_or(sites, |l| sites.min(l as usize)).min(1 << 20));
    'fill: for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                if limit.is_some_and(|l| out.len() as u64 >= l) {
                    break 'fill;
                }
                let x = lo + DVec3::splat(r) + spacing * DVec3::new(i as f64, j as f64, k as f64);
                if keep(x) {
                    out.push(x);
                }
            }
        }
    }
    out
}

/// A uniform point of `region` from three draws of `rng`.
fn draw_point(rng: &mut Pcg64, region: &Region) -> DVec3 {
    let u = [uniform(rng), uniform(rng), uniform(rng)];
    sample::point_in(region, u)
}

/// Whether `region` has room for one sphere of radius `r` clear of the
/// walls: some of 100,000 uniform candidates (a fixed stream) is. A
/// region that leaves less than about 1e-4 of itself to such a sphere is
/// taken as having none.
pub fn has_room(region: &Region, walls: &[Wall], r: f64) -> bool {
    let Some(inner) = sample::shrunk(region, r) else {
        return false;
    };
    let mut rng = stream(0, u64::MAX, u64::MAX);
    (0..100_000).any(|_| clear_of_walls(walls, draw_point(&mut rng, &inner), r))
}

/// The candidates a random block's sphere tries before the block fails.
pub const RANDOM_ATTEMPTS: u64 = 10_000;

/// Sort radii largest first (ties in drawn order), the order in which a
/// random block places them, so that the large spheres, which find room
/// hardest, are not the ones left out.
pub fn largest_first(radii: &mut [f64]) {
    radii.sort_by(|a, b| b.total_cmp(a));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placer_sees_spheres_larger_than_it_was_sized_for() {
        // Sized for radius 0.001, then a sphere of radius 0.01 arrives (as from
        // a `list` or `file` block): small spheres touching it anywhere on its
        // surface are found, and ones just clear of it are not.
        let mut p = Placer::new(0.001);
        p.add(DVec3::new(0.5, 0.5, 0.5), 0.0005);
        let big = DVec3::new(0.1, 0.1, 0.1);
        p.add(big, 0.01);
        for dir in [
            DVec3::X,
            DVec3::NEG_Y,
            DVec3::new(1.0, 1.0, 1.0).normalize(),
        ] {
            assert!(p.overlaps(big + dir * 0.0109, 0.001), "{dir}");
            assert!(!p.overlaps(big + dir * 0.0111, 0.001), "{dir}");
        }
        // The earlier small sphere is still found after the grid grew.
        assert!(p.overlaps(DVec3::new(0.5, 0.5, 0.5011), 0.001));
        // A placer sized for nothing (a file block's radius is unknown) stays cheap.
        let mut q = Placer::new(0.0);
        for k in 0..1000 {
            q.add(DVec3::new(k as f64, 0.0, 0.0), 0.4);
        }
        assert!(q.overlaps(DVec3::new(10.5, 0.0, 0.0), 0.2));
        assert!(!q.overlaps(DVec3::new(10.5, 0.0, 0.0), 0.05));
    }

    #[test]
    fn a_periodic_placer_sees_spheres_across_periodic_faces() {
        let domain = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::new(1.0, 1.0, 1.0),
            periodic: [true, false, false],
        };
        let mut p = Placer::new(0.05).periodic_in(&domain);
        let mut flat = Placer::new(0.05);
        for q in [&mut p, &mut flat] {
            q.add(DVec3::new(0.98, 0.5, 0.5), 0.05);
        }
        // 0.06 apart across the periodic face x = 0 = 1, less than 0.1.
        let across = DVec3::new(0.04, 0.5, 0.5);
        assert!(p.overlaps(across, 0.05));
        assert!(!flat.overlaps(across, 0.05));
        assert!(!p.overlaps(DVec3::new(0.09, 0.5, 0.5), 0.05));
        // Not across a face that is not periodic.
        p.add(DVec3::new(0.5, 0.98, 0.5), 0.05);
        assert!(!p.overlaps(DVec3::new(0.5, 0.04, 0.5), 0.05));
    }

    #[test]
    fn lattice_counts_whole_spheres() {
        let all = |_| true;
        let p = lattice_positions(DVec3::ZERO, DVec3::new(1.0, 1.0, 0.5), 0.1, 0.2, None, all);
        assert_eq!(p.len(), 5 * 5 * 2);
        assert_eq!(
            lattice_positions(DVec3::ZERO, DVec3::ONE, 0.1, 0.2, Some(7), all).len(),
            7
        );
        // Sites of a sphere region: those whose sphere lies inside it.
        let ball = Region::Sphere {
            center: DVec3::splat(0.5),
            radius: 0.5,
        };
        let q = lattice_positions(DVec3::ZERO, DVec3::ONE, 0.1, 0.2, None, |x| {
            ball.holds_sphere(x, 0.1)
        });
        assert!(!q.is_empty() && q.len() < 125);
        assert!(q.iter().all(|&x| ball.holds_sphere(x, 0.1)));
    }

    #[test]
    fn room_for_a_sphere_above_a_floor() {
        let floor = Wall {
            shape: crate::geometry::walls::WallShape::Plane {
                point: DVec3::new(0.0, 0.0, 0.3),
                normal: DVec3::Z,
            },
            material: 0,
            rigid: crate::geometry::walls::Rigid::REST,
        };
        let region = Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
        };
        // Above the floor, 0.7 of the box's height is left: a sphere of
        // radius 0.3 fits, one of 0.36 does not.
        assert!(has_room(&region, std::slice::from_ref(&floor), 0.3));
        assert!(!has_room(&region, &[floor], 0.36));
    }
}
