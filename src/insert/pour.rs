//! Pouring sources: particles inserted at a rate, placed cell by cell, the
//! same particles on any number of ranks.
//!
//! # The rule
//!
//! A source owes `⌊rate · min(t, until)⌋` particles at time `t` (at most
//! `count`). Its particle number `i` (from 0) draws its radius from its
//! own stream, keyed by `(seed, block, i)`, and keeps it however long it
//! waits for room ([`PourSource::radius_of`]).
//!
//! Every `interval` steps the source pours a *batch*: the particles that
//! wait (drawn earlier, no room found), in number order, then fresh
//! numbers up to what is owed. The batch is placed on a grid of cells as
//! a `random` fill is ([`super::cells`]): the cells' quotas follow the
//! volume left to centres, and the cells are placed in 8 phases by the
//! parities of their indices, so a cell depends only on its neighbours
//! of earlier phases. A cell places its spheres in batch order, each
//! trying up to [`POUR_ATTEMPTS`] uniform points of the cell (a stream
//! keyed by the seed, the source, the step and the cell) that lie in the
//! region shrunk by its radius, clear of the walls, of the particles
//! present and of the spheres its neighbours placed. The first sphere
//! that finds no room ends its cell: it and the cell's later spheres
//! wait, with their numbers and radii, for the next batch. The placed
//! spheres get ids upwards from the run's next free id, in batch order.
//!
//! The cells are sized for about [`SPHERES_PER_CELL`] spheres of the
//! batch (at least one largest diameter, and never smaller than a region
//! packed with the largest spheres at a simple cubic spacing would ask
//! for); a batch of a few hundred or fewer is one cell, placed in order
//! as one sequential addition over the whole region.
//!
//! # On many ranks
//!
//! A rank places the cells near its subdomain and the cells they depend
//! on (at most 1 cell beyond it along x, 3 along y, 7 along z), against
//! the particles present near them, which the ranks owning them send it;
//! it keeps the spheres whose centres it owns. Every cell's outcome is
//! the same wherever it is placed, so the ranks then need only share the
//! cells that ended early (three numbers each: where the cell's spheres
//! start and end in the batch, and how many it placed), from which each
//! computes the same ids, the same waiting list and the same count. No
//! rank holds the particles present, or the spheres poured, beyond the
//! cells near it.

use std::ops::Range;

use glam::DVec3;

use super::cells::{Cell, CellPlan, CellSpheres, SPHERES_PER_CELL};
use super::radius::RadiusDist;
use super::{stream, Placer};
use crate::geometry::domain::Domain;
use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use crate::state::particles::ParticleRecord;

/// The candidates a poured particle tries per interval before it waits
/// for the next one.
pub const POUR_ATTEMPTS: u64 = 1_000;

/// Mixed into the seed of the poured radii's streams, so that they are
/// independent of the position streams.
const POUR_RADIUS_SALT: u64 = 0x7261_6469_7573_0001;

/// Mixed into the seed of the cells' position streams.
const POUR_CELL_SALT: u64 = 0x706f_7572_6365_6c6c;

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
    pub radius: RadiusDist,
    /// Particles per second.
    pub rate: f64,
    /// Stop time.
    pub until: f64,
    /// Cap on the number inserted.
    pub count: Option<u64>,
    /// The region particles appear in (whole spheres).
    pub region: Region,
    /// Initial velocity.
    pub velocity: DVec3,
    /// Steps between insertion attempts.
    pub interval: u64,
    /// How many this source has inserted so far.
    pub inserted: u64,
    /// The numbers of the particles drawn that wait for room, as runs in
    /// number order. Every number below `inserted + ` their count has
    /// been drawn.
    pub waiting: Vec<Range<u64>>,
}

/// A cell of a batch that ended early: its spheres are the batch's
/// positions `start..end`, of which it placed the first `placed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ShortCell {
    /// The cell's first position in the batch.
    pub start: u64,
    /// One past its last.
    pub end: u64,
    /// How many it placed.
    pub placed: u64,
}

impl ShortCell {
    /// The three numbers, for sending.
    #[must_use]
    pub fn to_array(self) -> [u64; 3] {
        [self.start, self.end, self.placed]
    }

    /// From [`Self::to_array`].
    #[must_use]
    pub fn from_array(a: [u64; 3]) -> Self {
        ShortCell {
            start: a[0],
            end: a[1],
            placed: a[2],
        }
    }

    fn lost(&self) -> u64 {
        self.end - self.start - self.placed
    }
}

/// One interval's batch of a source: its particles by position (waiting
/// ones first) and the cells they are placed in.
#[derive(Debug, Clone)]
pub struct PourBatch {
    seed: u64,
    block: u64,
    step: u64,
    dist: RadiusDist,
    /// The source's numbers of the batch's particles, as runs in batch
    /// order, and the position each run starts at.
    runs: Vec<(u64, Range<u64>)>,
    plan: CellPlan,
}

/// What placing a batch's cells near a box gave.
#[derive(Debug, Clone, Default)]
pub struct Placed {
    /// The spheres of the cells near the box: `(position, centre, radius)`
    /// in position order.
    pub spheres: CellSpheres,
    /// Every cell placed (near the box or depended on) that ended early.
    pub short: Vec<ShortCell>,
}

/// A batch's outcome over all its cells: the cells that ended early, in
/// batch order, each once.
#[derive(Debug, Clone)]
pub struct Outcome {
    short: Vec<ShortCell>,
    /// `lost_before[k]`: the spheres lost by `short[..k]`.
    lost_before: Vec<u64>,
}

impl Outcome {
    /// From the short cells every rank reported (in any order, repeats
    /// allowed: a cell placed by several ranks is reported by each, the
    /// same).
    #[must_use]
    pub fn new(mut short: Vec<ShortCell>) -> Self {
        short.sort_unstable();
        short.dedup();
        let mut lost_before = Vec::with_capacity(short.len() + 1);
        let mut sum = 0;
        lost_before.push(0);
        for c in &short {
            sum += c.lost();
            lost_before.push(sum);
        }
        Outcome { short, lost_before }
    }

    /// The number, among the batch's placed spheres in batch order, of the
    /// placed sphere at `position` (its id less the first id).
    #[must_use]
    pub fn ordinal(&self, position: u64) -> u64 {
        let k = self.short.partition_point(|c| c.end <= position);
        position - self.lost_before[k]
    }

    /// How many of a batch of `len` were placed.
    #[must_use]
    pub fn placed(&self, len: u64) -> u64 {
        len - self.lost_before.last().copied().unwrap_or(0)
    }
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

    /// The radius of the source's particle number `index` (from 0): drawn
    /// from its own stream, so a particle that waits keeps its radius, and
    /// a restart (which knows how many were inserted) draws the same ones.
    pub fn radius_of(&self, seed: u64, index: u64) -> f64 {
        radius_of(&self.radius, seed, self.block, index)
    }

    /// How many particles wait for room.
    #[must_use]
    pub fn waiting_count(&self) -> u64 {
        self.waiting.iter().map(|r| r.end - r.start).sum()
    }

    /// The batch due at `step` (time `time`), if the source pours then
    /// and owes particles, placed in the region clear of `walls` across
    /// the periodic faces of `domain`.
    #[must_use]
    pub fn batch(
        &self,
        seed: u64,
        step: u64,
        time: f64,
        walls: &[Wall],
        domain: &Domain,
    ) -> Option<PourBatch> {
        if !step.is_multiple_of(self.interval) {
            return None;
        }
        let owed = self.owed(time);
        if owed == 0 {
            return None;
        }
        let mut runs = Vec::new();
        let mut len = 0;
        for r in &self.waiting {
            runs.push((len, r.clone()));
            len += r.end - r.start;
        }
        let drawn = self.inserted + len;
        let fresh = owed.saturating_sub(len);
        if fresh > 0 {
            runs.push((len, drawn..drawn + fresh));
            len += fresh;
        }
        let r_max = self.radius.max();
        // Never cells smaller than a simple cubic packing of the largest
        // spheres asks for, however long the queue.
        let room = (self.region.volume() / (2.0 * r_max).powi(3)).ceil();
        let sized_for = (len as f64).min(room.max(1.0)) as u64;
        let plan = CellPlan::new(
            len,
            sized_for,
            self.region,
            r_max,
            walls,
            domain,
            SPHERES_PER_CELL,
            None,
        );
        Some(PourBatch {
            seed,
            block: self.block,
            step,
            dist: self.radius.clone(),
            runs,
            plan,
        })
    }

    /// Take a batch's outcome: count the placed, keep the rest waiting.
    fn settle(&mut self, batch: &PourBatch, outcome: &Outcome) {
        self.inserted += outcome.placed(batch.len());
        let mut waiting: Vec<Range<u64>> = Vec::new();
        for c in &outcome.short {
            batch.numbers_in(c.start + c.placed..c.end, |run| match waiting.last_mut() {
                Some(last) if last.end == run.start => last.end = run.end,
                _ => waiting.push(run),
            });
        }
        self.waiting = waiting;
    }

    /// Take a batch's `outcome` over all its cells: of the placed
    /// `spheres` (`(position, centre, radius)`, some or all of the batch's),
    /// those whose centre `keep` takes, as particles with ids from
    /// `next_id` in batch order and their numbers in the source; the count
    /// and the waiting list settled; `next_id` moved past every particle
    /// the batch placed.
    pub fn take(
        &mut self,
        batch: &PourBatch,
        outcome: &Outcome,
        spheres: &CellSpheres,
        keep: impl Fn(DVec3) -> bool,
        next_id: &mut u64,
    ) -> Vec<(u64, ParticleRecord)> {
        let out = (spheres.iter())
            .filter(|s| keep(s.1))
            .map(|&(pos, x, r)| {
                let id = *next_id + outcome.ordinal(pos);
                (batch.number_at(pos), self.record(id, x, r))
            })
            .collect();
        *next_id += outcome.placed(batch.len());
        self.settle(batch, outcome);
        out
    }

    /// The record of a particle poured at `x` with radius `r` and id `id`.
    #[must_use]
    pub fn record(&self, id: u64, x: DVec3, r: f64) -> ParticleRecord {
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
    }

    /// Pour `batch` (from [`Self::batch`]) in one process: every cell,
    /// clear of the spheres in `placer` (to which the poured ones are
    /// added); new particles get ids from `next_id` upwards. Returns the
    /// particles and their numbers in the source.
    pub fn insert(
        &mut self,
        batch: &PourBatch,
        placer: &mut Placer,
        next_id: &mut u64,
    ) -> Vec<(u64, ParticleRecord)> {
        let placed = batch.place_all(placer);
        let outcome = Outcome::new(placed.short);
        self.take(batch, &outcome, &placed.spheres, |_| true, next_id)
    }
}

/// The radius of particle `index` of the source of block `block`.
fn radius_of(dist: &RadiusDist, seed: u64, block: u64, index: u64) -> f64 {
    dist.draw(&mut stream(seed ^ POUR_RADIUS_SALT, block, index))
}

impl PourBatch {
    /// How many particles the batch holds.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.plan.count()
    }

    /// Whether the batch holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The source's number of the particle at `position`.
    #[must_use]
    pub fn number_at(&self, position: u64) -> u64 {
        let k = self.runs.partition_point(|(at, _)| *at <= position) - 1;
        let (at, run) = &self.runs[k];
        run.start + (position - at)
    }

    /// Call `f` with the source's numbers of the positions `span`, as runs
    /// in order.
    fn numbers_in(&self, span: Range<u64>, mut f: impl FnMut(Range<u64>)) {
        for (at, run) in &self.runs {
            let (a, b) = (
                span.start.max(*at),
                span.end.min(at + (run.end - run.start)),
            );
            if a < b {
                f(run.start + (a - at)..run.start + (b - at));
            }
        }
    }

    /// The box holding every particle of radius up to `reach` less the
    /// batch's largest radius that a sphere of the cells near the box
    /// `lo..=hi` (or of the cells they depend on) could touch. Along a
    /// periodic axis it may run past the domain.
    #[must_use]
    pub fn reach_of(&self, lo: DVec3, hi: DVec3, reach: f64) -> (DVec3, DVec3) {
        self.plan.reach_of(lo, hi, reach)
    }

    /// Place the cells near the box `lo..=hi` and the cells they depend
    /// on, clear of the spheres in `placer` (to which the placed ones are
    /// added): it must hold every particle present in
    /// [`Self::reach_of`] that box.
    #[must_use]
    pub fn place_near(&self, lo: DVec3, hi: DVec3, placer: &mut Placer) -> Placed {
        let mut short = Vec::new();
        let spheres = self
            .plan
            .place_near(lo, hi, placer, |cell, placer| {
                Ok::<_, std::convert::Infallible>(self.place_cell(cell, placer, &mut short))
            })
            .unwrap_or_else(|e| match e {});
        Placed { spheres, short }
    }

    /// [`Self::place_near`] over every cell.
    #[must_use]
    pub fn place_all(&self, placer: &mut Placer) -> Placed {
        let mut short = Vec::new();
        let spheres = self
            .plan
            .place_all(placer, |cell, placer| {
                Ok::<_, std::convert::Infallible>(self.place_cell(cell, placer, &mut short))
            })
            .unwrap_or_else(|e| match e {});
        Placed { spheres, short }
    }

    /// Place `cell`'s spheres in batch order until one finds no room,
    /// adding them to `placer`; report the cell in `short` if it ended
    /// early.
    fn place_cell(
        &self,
        cell: &Cell,
        placer: &mut Placer,
        short: &mut Vec<ShortCell>,
    ) -> CellSpheres {
        let step_key = self.step.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut rng = stream(
            self.seed ^ POUR_CELL_SALT ^ step_key,
            self.block,
            cell.linear,
        );
        let mut out = Vec::with_capacity((cell.numbers.end - cell.numbers.start) as usize);
        for pos in cell.numbers.clone() {
            let r = radius_of(&self.dist, self.seed, self.block, self.number_at(pos));
            let Some(x) = self
                .plan
                .try_centre(cell, r, POUR_ATTEMPTS, &mut rng, placer)
            else {
                short.push(ShortCell {
                    start: cell.numbers.start,
                    end: cell.numbers.end,
                    placed: pos - cell.numbers.start,
                });
                break;
            };
            placer.add(x, r);
            out.push((pos, x, r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(count: u64) -> PourSource {
        PourSource {
            block: 2,
            material: 0,
            density: 2500.0,
            radius: RadiusDist::Uniform {
                min: 0.01,
                max: 0.02,
            },
            rate: 1e9,
            until: 1.0,
            count: Some(count),
            region: Region::Box {
                lo: DVec3::ZERO,
                hi: DVec3::new(1.0, 0.6, 0.4),
            },
            velocity: DVec3::ZERO,
            interval: 1,
            inserted: 0,
            waiting: Vec::new(),
        }
    }

    fn domain(periodic: [bool; 3]) -> Domain {
        Domain {
            lo: DVec3::ZERO,
            hi: DVec3::new(1.0, 0.6, 0.8),
            periodic,
        }
    }

    #[test]
    fn outcome_numbers_the_placed_and_keeps_the_rest_waiting() {
        let src = source(20);
        let b = src.batch(1, 1, 1.0, &[], &domain([false; 3])).unwrap();
        assert_eq!(b.len(), 20);
        // Cells 0..8 (placed 5), 8..14 (placed all), 14..20 (placed 0).
        let o = Outcome::new(vec![
            ShortCell::from_array([14, 20, 0]),
            ShortCell::from_array([0, 8, 5]),
            ShortCell::from_array([0, 8, 5]),
        ]);
        assert_eq!(o.placed(20), 11);
        assert_eq!([0, 4, 8, 13].map(|p| o.ordinal(p)), [0, 4, 5, 10]);
        let mut s = src.clone();
        s.settle(&b, &o);
        assert_eq!(s.inserted, 11);
        assert_eq!(s.waiting, vec![5..8, 14..20]);
        // The next batch: the waiting first, then fresh numbers.
        let mut more = s.clone();
        more.count = Some(30);
        let b2 = more.batch(1, 2, 1.0, &[], &domain([false; 3])).unwrap();
        assert_eq!(b2.len(), 19);
        let numbers: Vec<u64> = (0..19).map(|p| b2.number_at(p)).collect();
        let want: Vec<u64> = (5..8).chain(14..20).chain(20..30).collect();
        assert_eq!(numbers, want);
    }

    #[test]
    fn any_box_of_cells_pours_what_one_process_pours() {
        for periodic in [[false; 3], [true, false, true]] {
            let d = domain(periodic);
            let mut src = source(2500);
            // Present particles: a bed in the lower part of the region.
            let mut bed = Vec::new();
            for i in 0..40 {
                for j in 0..24 {
                    for k in 0..3 {
                        let x = DVec3::new(
                            0.0125 + 0.025 * i as f64,
                            0.0125 + 0.025 * j as f64,
                            0.0125 + 0.025 * k as f64,
                        );
                        bed.push((x, 0.0125));
                    }
                }
            }
            let fresh = |bed: &[(DVec3, f64)]| {
                let mut p = Placer::new(0.02).periodic_in(&d);
                bed.iter().for_each(|&(x, r)| p.add(x, r));
                p
            };
            for step in 1..=2 {
                // The second batch: the waiting ones and 1,000 fresh.
                src.count = Some(2300 + 1000 * step);
                let b = src.batch(9, step, 1.0, &[], &d).unwrap();
                let whole = b.place_all(&mut fresh(&bed));
                let o = Outcome::new(whole.short.clone());
                // The first batch places most; the second, the waiting
                // ones, finds the region nearly full.
                let want = if step == 1 { 2900 } else { 20 };
                assert!(o.placed(b.len()) >= want, "{}", o.placed(b.len()));
                assert!(o.placed(b.len()) < b.len(), "some cells end early");
                for a in 0..3 {
                    for parts in [2, 3] {
                        let mut got = Vec::new();
                        let mut short = Vec::new();
                        for p in 0..parts {
                            let mut lo = d.lo;
                            let mut hi = d.hi;
                            let w = (d.hi[a] - d.lo[a]) / parts as f64;
                            lo[a] = d.lo[a] + p as f64 * w;
                            hi[a] = d.lo[a] + (p + 1) as f64 * w;
                            let (rlo, rhi) = b.reach_of(lo, hi, 0.04);
                            let near: Vec<_> = bed
                                .iter()
                                .copied()
                                .filter(|(x, _)| d.in_box_periodic(*x, rlo, rhi))
                                .collect();
                            let placed = b.place_near(lo, hi, &mut fresh(&near));
                            let inside = |x: DVec3| {
                                x[a] >= lo[a] && (x[a] < hi[a] || (p + 1 == parts && x[a] <= hi[a]))
                            };
                            got.extend(placed.spheres.into_iter().filter(|s| inside(s.1)));
                            short.extend(placed.short);
                        }
                        got.sort_by_key(|s| s.0);
                        assert_eq!(got, whole.spheres, "cut {parts} along {a}");
                        let o2 = Outcome::new(short);
                        assert_eq!(o2.short, o.short);
                    }
                }
                for &(pos, x, r) in &whole.spheres {
                    assert_eq!(r, src.radius_of(9, b.number_at(pos)));
                    assert!(src.region.holds_sphere(x, r));
                }
                src.settle(&b, &o);
                bed.extend(whole.spheres.iter().map(|s| (s.1, s.2)));
            }
        }
    }
}
