//! Particle insertion: lattice fill, random non-overlapping fill, pouring at a
//! rate, explicit lists and CSV files.
//!
//! Random draws come from `rand_pcg::Pcg64` streams seeded from
//! `(seed, block index, insertion step)` only, so every rank draws the same
//! candidates and a restarted run continues the same sequence.

use crate::state::particles::ParticleRecord;
use glam::DVec3;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::HashMap;

/// A radius distribution: fixed or uniform in `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadiusRange {
    /// Smallest radius.
    pub min: f64,
    /// Largest radius.
    pub max: f64,
}

impl RadiusRange {
    fn draw(&self, rng: &mut Pcg64) -> f64 {
        if self.min == self.max {
            self.min
        } else {
            self.min + (self.max - self.min) * uniform(rng)
        }
    }
}

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
#[derive(Debug, Clone)]
pub struct Placer {
    cell: f64,
    max_stored: f64,
    grid: HashMap<[i64; 3], Vec<(DVec3, f64)>>,
}

impl Placer {
    /// An empty placer, sized for spheres up to radius `max_radius`.
    pub fn new(max_radius: f64) -> Self {
        Self {
            cell: 2.0 * max_radius.max(f64::MIN_POSITIVE),
            max_stored: 0.0,
            grid: HashMap::new(),
        }
    }

    fn key(&self, x: DVec3) -> [i64; 3] {
        let c = (x / self.cell).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    }

    /// Record a sphere (of any size).
    pub fn add(&mut self, x: DVec3, r: f64) {
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

    /// Whether a sphere at `x` with radius `r` would overlap a recorded one.
    pub fn overlaps(&self, x: DVec3, r: f64) -> bool {
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

/// Positions of a simple cubic lattice of spheres of radius `r` with spacing
/// `spacing` inside `[lo, hi]` (whole spheres), in x-fastest order.
pub fn lattice_positions(
    lo: DVec3,
    hi: DVec3,
    r: f64,
    spacing: f64,
    limit: Option<u64>,
) -> Vec<DVec3> {
    let count = |a: f64, b: f64| (((b - a - 2.0 * r) / spacing).floor() as i64 + 1).max(0) as usize;
    let (nx, ny, nz) = (count(lo.x, hi.x), count(lo.y, hi.y), count(lo.z, hi.z));
    let mut out = Vec::with_capacity(nx * ny * nz);
    'fill: for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                if limit.is_some_and(|l| out.len() as u64 >= l) {
                    break 'fill;
                }
                out.push(lo + DVec3::splat(r) + spacing * DVec3::new(i as f64, j as f64, k as f64));
            }
        }
    }
    out
}

/// Draw up to `count` non-overlapping spheres inside `[lo, hi]` (whole
/// spheres), avoiding those already in `placer` (to which the new ones are
/// added). Gives up after `50 · count + 1000` rejected candidates and returns
/// what it placed.
pub fn random_spheres(
    rng: &mut Pcg64,
    lo: DVec3,
    hi: DVec3,
    radius: RadiusRange,
    count: u64,
    placer: &mut Placer,
) -> Vec<(DVec3, f64)> {
    let mut out = Vec::new();
    let mut rejected = 0u64;
    let budget = 50 * count + 1000;
    while (out.len() as u64) < count && rejected < budget {
        let r = radius.draw(rng);
        let span = (hi - lo - DVec3::splat(2.0 * r)).max(DVec3::ZERO);
        let x = lo
            + DVec3::splat(r)
            + DVec3::new(
                uniform(rng) * span.x,
                uniform(rng) * span.y,
                uniform(rng) * span.z,
            );
        if placer.overlaps(x, r) {
            rejected += 1;
            continue;
        }
        placer.add(x, r);
        out.push((x, r));
    }
    out
}

/// A pouring source: inserts particles at `rate` per second until `until`.
#[derive(Debug, Clone, PartialEq)]
pub struct PourSource {
    /// Index of the config block (part of the random stream key).
    pub block: u64,
    /// Material index.
    pub material: u32,
    /// Density of that material.
    pub density: f64,
    /// Radius distribution.
    pub radius: RadiusRange,
    /// Particles per second.
    pub rate: f64,
    /// Stop time.
    pub until: f64,
    /// Cap on the number inserted.
    pub count: Option<u64>,
    /// Region corners.
    pub lo: DVec3,
    /// Region corners.
    pub hi: DVec3,
    /// Initial velocity.
    pub velocity: DVec3,
    /// Steps between insertion attempts.
    pub interval: u64,
    /// How many this source has inserted so far.
    pub inserted: u64,
}

impl PourSource {
    /// How many particles are owed at time `time` (inserted so far excluded).
    pub fn owed(&self, time: f64) -> u64 {
        let t = time.min(self.until);
        let mut target = (self.rate * t).floor() as u64;
        if let Some(c) = self.count {
            target = target.min(c);
        }
        target.saturating_sub(self.inserted)
    }

    /// Insert what is owed at `step` (time `time`), avoiding the spheres in
    /// `placer`; new particles get ids from `next_id` upwards.
    pub fn insert(
        &mut self,
        seed: u64,
        step: u64,
        time: f64,
        placer: &mut Placer,
        next_id: &mut u64,
    ) -> Vec<ParticleRecord> {
        if step % self.interval != 0 {
            return Vec::new();
        }
        let owed = self.owed(time);
        if owed == 0 {
            return Vec::new();
        }
        let mut rng = stream(seed, self.block, step);
        let placed = random_spheres(&mut rng, self.lo, self.hi, self.radius, owed, placer);
        self.inserted += placed.len() as u64;
        placed
            .into_iter()
            .map(|(x, r)| {
                let id = *next_id;
                *next_id += 1;
                ParticleRecord {
                    id,
                    x,
                    v: self.velocity,
                    omega: DVec3::ZERO,
                    radius: r,
                    mass: ParticleRecord::sphere_mass(r, self.density),
                    material: self.material,
                    frozen: false,
                }
            })
            .collect()
    }
}

/// The columns a particle CSV file must have, in this order.
pub const CSV_COLUMNS: [&str; 13] = [
    "id", "frozen", "x", "y", "z", "radius", "density", "vx", "vy", "vz", "wx", "wy", "wz",
];

/// Parse a particle CSV (header [`CSV_COLUMNS`]); errors name the line and column.
pub fn parse_csv(text: &str, material: u32) -> Result<Vec<ParticleRecord>, String> {
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = match lines.next() {
        Some((_, h)) => h.split(',').map(str::trim).collect(),
        None => return Err("line 1: empty file, expected a header".into()),
    };
    if header != CSV_COLUMNS {
        return Err(format!(
            "line 1: header must be `{}`, got `{}`",
            CSV_COLUMNS.join(","),
            header.join(",")
        ));
    }
    let mut out = Vec::new();
    for (k, line) in lines {
        let line_no = k + 1;
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != CSV_COLUMNS.len() {
            return Err(format!(
                "line {line_no}: expected {} columns, got {}",
                CSV_COLUMNS.len(),
                cells.len()
            ));
        }
        let num = |c: usize| -> Result<f64, String> {
            cells[c]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    format!(
                        "line {line_no}, column `{}`: `{}` is not a finite number",
                        CSV_COLUMNS[c], cells[c]
                    )
                })
        };
        let id = cells[0].parse::<u64>().map_err(|_| {
            format!(
                "line {line_no}, column `id`: `{}` is not a non-negative integer",
                cells[0]
            )
        })?;
        let frozen = match cells[1] {
            "0" => false,
            "1" => true,
            other => {
                return Err(format!(
                    "line {line_no}, column `frozen`: `{other}` must be 0 or 1"
                ))
            }
        };
        let v3 = |a: usize| -> Result<DVec3, String> {
            Ok(DVec3::new(num(a)?, num(a + 1)?, num(a + 2)?))
        };
        let radius = num(5)?;
        let density = num(6)?;
        if radius <= 0.0 || density <= 0.0 {
            return Err(format!(
                "line {line_no}: radius and density must be > 0, got {radius} and {density}"
            ));
        }
        out.push(ParticleRecord {
            id,
            x: v3(2)?,
            v: v3(7)?,
            omega: v3(10)?,
            radius,
            mass: ParticleRecord::sphere_mass(radius, density),
            material,
            frozen,
        });
    }
    Ok(out)
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
    fn lattice_counts_whole_spheres() {
        let p = lattice_positions(DVec3::ZERO, DVec3::new(1.0, 1.0, 0.5), 0.1, 0.2, None);
        assert_eq!(p.len(), 5 * 5 * 2);
        assert_eq!(
            lattice_positions(DVec3::ZERO, DVec3::ONE, 0.1, 0.2, Some(7)).len(),
            7
        );
    }

    #[test]
    fn random_spheres_do_not_overlap_and_are_reproducible() {
        let draw = || {
            let mut placer = Placer::new(0.06);
            random_spheres(
                &mut stream(3, 0, 0),
                DVec3::ZERO,
                DVec3::ONE,
                RadiusRange {
                    min: 0.02,
                    max: 0.06,
                },
                200,
                &mut placer,
            )
        };
        let a = draw();
        assert_eq!(a.len(), 200);
        assert_eq!(a, draw());
        for (k, &(x, r)) in a.iter().enumerate() {
            for &(y, s) in &a[..k] {
                assert!((x - y).length() >= r + s);
            }
        }
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        let head = CSV_COLUMNS.join(",");
        let e = parse_csv(&format!("{head}\n1,0,1,2,3,0.5,1,0,0,0,0,0\n"), 0).unwrap_err();
        assert!(e.contains("line 2") && e.contains("13 columns"), "{e}");
        let e = parse_csv(&format!("{head}\n1,0,1,2,x,0.5,1,0,0,0,0,0,0\n"), 0).unwrap_err();
        assert!(e.contains("line 2") && e.contains("`z`"), "{e}");
        let ok = parse_csv(&format!("{head}\n7,1,1,2,3,0.5,1,0,0,0,0,0,0\n"), 2).unwrap();
        assert!(ok[0].frozen && ok[0].id == 7 && ok[0].material == 2);
    }
}
