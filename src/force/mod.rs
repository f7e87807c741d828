//! The force stage: contact, wall and body forces on every owned particle.
//!
//! Each owned particle sums, in this fixed order, its pair contacts with
//! lower-id partners (`L`, by partner id), plus those with higher-id partners
//! (`U`, by partner id), then its wall contacts (by wall index), then
//! gravity. Each pair is evaluated once, in canonical orientation, so both
//! particles of a contact get the same bits (on one rank or two) and
//! Newton's third law holds exactly; the result does not depend on threads,
//! ranks or local order. See [`compute`] for the two passes.

mod filter;
pub mod near_walls;
mod pairs;
mod shares;
mod stage;
mod walls;

use crate::config::LawTable;
use crate::contact::{BodyInertia, ContactLaw};
use crate::geometry::walls::Wall;
use crate::neighbor::{Contribution, FreshRecords, NeighborList, BLOCK};
use crate::parallel::team::Team;
use crate::rng::PairNoise;
use crate::state::history::WallHistory;
use crate::state::particles::Particles;
use crate::state::room::{refill, split_chunks, starts_from, Room};
use glam::DVec3;
pub use near_walls::NearWalls;
use rayon::prelude::*;
use shares::ShareSlots;
use stage::{BlockParts, ClaimedBlocks, Stage};
use std::ops::Range;
use std::sync::Mutex;

/// Run-constant inputs of the force stage.
#[derive(Debug, Clone, Copy)]
pub struct ForceParams<'a> {
    /// Contact laws.
    pub laws: &'a LawTable,
    /// Walls.
    pub walls: &'a [Wall],
    /// Which owned particles each wall is tested against.
    pub near_walls: &'a NearWalls,
    /// Gravity.
    pub gravity: DVec3,
    /// Time step (for history updates).
    pub dt: f64,
    /// Interaction range beyond `R_i + R_j` of the longest-ranged law (WCA), else 0.
    pub range_pad: f64,
    /// The step whose forces are computed (names the stochastic-friction noise).
    pub step: u64,
    /// Stochastic-friction noise under the run's seed
    /// (`rng::Stream::StochasticFriction`).
    pub noise: PairNoise,
}

/// The work of an owned particle in a force stage (its summing pass and
/// its share of the block's set-up), in units of the work of a pair job
/// that is apart (its filter test): the chute's profile on 2026-11-28
/// (summing pass 17 %, filter 11 % for 3.8 jobs a particle) gives about 6.
const PARTICLE_WORK: usize = 6;

/// The work of a contact, in the same units: the chute's Hooke contacts
/// (30 % of the time for 0.47 contacts a particle) cost about 22 jobs,
/// the dense pack's Hertz–Mindlin contacts with rolling and spinning
/// about 180; below the pack's weight, the cut still follows its
/// contacts, which outweigh its jobs many times.
const CONTACT_WORK: usize = 24;

/// The number of runs a force stage cuts its blocks into: one per thread
/// (a test may ask for more, so that a thread takes other runs' blocks).
fn run_count() -> usize {
    #[cfg(test)]
    if let Some(runs) = tests::FORCED_RUNS.with(std::cell::Cell::get) {
        return runs;
    }
    rayon::current_num_threads()
}

/// `n_blocks` blocks cut into at most `runs` contiguous, non-empty runs
/// `(start, end)` of about equal work, where `work_before(b)` is the work
/// of the blocks before block `b` (non-decreasing, `b` up to `n_blocks`):
/// each cut is the block start nearest its share of the total.
fn runs_of_equal_work(
    n_blocks: usize,
    runs: usize,
    work_before: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    let (runs, total) = (runs.max(1), work_before(n_blocks) - work_before(0));
    let mut cuts = vec![0];
    for r in 1..runs {
        let share = work_before(0) + (total * r).div_ceil(runs);
        // The first block whose start has the share behind it (a binary search).
        let (mut lo, mut hi) = (0, n_blocks);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if work_before(mid) < share {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // Or the block before it, if that start lies nearer the share.
        if lo > 0 && share - work_before(lo - 1) < work_before(lo) - share {
            lo -= 1;
        }
        if lo > cuts[cuts.len() - 1] && lo < n_blocks {
            cuts.push(lo);
        }
    }
    cuts.push(n_blocks);
    cuts.windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(s, e)| s < e)
        .collect()
}

/// The force and torque that each wall gives each owned particle, kept by a
/// force stage asked to ([`compute`]'s `loads`) for the diagnostics (wall
/// forces, stress). Zero where the particle does not touch the wall, or is
/// frozen.
///
/// Held only for the particles the stage tests against the walls
/// ([`NearWalls::any_for`]): one row of a value per wall each, in particle
/// order. The others touch no wall; their loads are zero. A bed on a floor
/// keeps a row for its bottom layer, not for every particle.
#[derive(Debug, Clone, Default)]
pub struct WallLoads {
    /// `walls` values per row.
    values: Vec<Contribution>,
    /// Per owned particle: its row, or [`NO_ROW`].
    row_of: Vec<u32>,
    walls: usize,
    step: Option<u64>,
}

/// [`WallLoads::row_of`] of a particle not tested against the walls.
const NO_ROW: u32 = u32::MAX;

impl WallLoads {
    /// What wall `w` gives owned particle `k`.
    #[inline]
    pub fn get(&self, k: usize, w: usize) -> Contribution {
        match self.row_of[k] {
            NO_ROW => Contribution::default(),
            r => self.values[r as usize * self.walls + w],
        }
    }

    /// Rows for the `n` owned particles that `near` tests against the
    /// walls, zeroed, and the rows before each block (`n_blocks + 1`
    /// entries). Counted by blocks in parallel, numbered in particle order.
    fn lay_out(&mut self, n: usize, near: &NearWalls) -> Vec<usize> {
        let per_block: Vec<usize> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                (b * BLOCK..((b + 1) * BLOCK).min(n))
                    .filter(|&k| near.any_for(k))
                    .count()
            })
            .collect();
        let row_at = starts_from(0, per_block);
        let rows = row_at[row_at.len() - 1];
        assert!(
            rows < NO_ROW as usize,
            "more wall-load rows than a u32 numbers"
        );
        self.row_of.clear();
        self.row_of.room_for(n);
        self.row_of.resize(n, NO_ROW);
        (self.row_of.par_chunks_mut(BLOCK).enumerate()).for_each(|(b, rows)| {
            let mut r = row_at[b];
            for (o, row) in rows.iter_mut().enumerate() {
                if near.any_for(b * BLOCK + o) {
                    *row = r as u32;
                    r += 1;
                }
            }
        });
        refill(&mut self.values, rows * self.walls, Contribution::default());
        row_at
    }

    /// Number of rows held: the particles the force stage tested against
    /// the walls.
    pub fn rows(&self) -> usize {
        self.row_of.iter().filter(|&&r| r != NO_ROW).count()
    }

    /// The step of the force stage that wrote them, if any did.
    pub fn step(&self) -> Option<u64> {
        self.step
    }

    /// Forget them and give their storage back.
    pub fn release(&mut self) {
        if self.values.capacity() > 0 {
            *self = Self::default();
        }
    }
}

/// Results of the pair stage kept between steps so that their storage is
/// reused (see [`compute`]).
#[derive(Debug, Clone, Default)]
pub struct PairResults {
    /// Per particle, owned and ghost, its part of the couples' inertia
    /// (only where a law has rolling or spinning resistance, else empty).
    bodies: Vec<BodyInertia>,
    /// The neighbour-list build `bodies` were found for
    /// ([`NeighborList::build_id`]): they are found again only at a new
    /// build, where the particles can change.
    bodies_of: Option<u64>,
    /// The place in the law table of the one law that every pair of the
    /// materials among the particles (owned and ghost) takes, if one
    /// does, found at the neighbour-list build of the second value.
    one_law_at: (Option<usize>, Option<u64>),
    /// The contacts each work block evaluated in the last force stage: the
    /// next stage weighs its blocks by them when it cuts them into runs
    /// (a contact costs many times a pair that is apart).
    block_contacts: Vec<u32>,
    /// The runs of blocks the last force stage cut, one per thread (first
    /// block, end), which the first half step takes as its own.
    runs: Vec<(usize, usize)>,
}

impl PairResults {
    /// The runs of blocks of the last force stage, one per thread.
    pub fn runs(&self) -> &[(usize, usize)] {
        &self.runs
    }
}

/// The place in `laws` of the one law that every pair of the materials
/// among `materials` takes (a table whose laws agree for them, or
/// particles of one material), or `None` where two of those pairs take
/// different laws (or there are no particles).
fn one_law_among(laws: &LawTable, materials: &[u32]) -> Option<usize> {
    let n = laws.n;
    let present = materials
        .par_iter()
        .fold(
            || vec![false; n],
            |mut seen, &m| {
                seen[m as usize] = true;
                seen
            },
        )
        .reduce(
            || vec![false; n],
            |a, b| a.iter().zip(&b).map(|(x, y)| x | y).collect(),
        );
    let present: Vec<u32> = (0..n as u32).filter(|&m| present[m as usize]).collect();
    let first = present.first().map(|&m| laws.at(m, m))?;
    let agree = present
        .iter()
        .all(|&a| present.iter().all(|&b| *laws.get(a, b) == laws.laws[first]));
    agree.then_some(first)
}

/// Compute `force` and `torque` of every owned particle, updating the contact
/// history in `nl` and the wall-contact history `wall_history` (a row per
/// owned particle, a record per wall of `fp`). The packed images
/// ([`Particles::packed`]) must be those of the current positions.
///
/// Each particle's force is `L + U` plus its wall contacts and gravity,
/// where `L` sums its contacts with lower-id partners and `U` those with
/// higher-id partners, each in partner-id order: a split by global id, so
/// the bits do not depend on ranks, threads or local order.
///
/// Two passes. First every pair is evaluated once, by its job (see
/// [`crate::neighbor::PairJobs`]), in canonical orientation, which gives
/// both sides the same bits: the lower-id side adds its share to its `U`
/// directly (its jobs run in partner-id order) and the higher-id side's
/// share is stored in that side's share slot for the pair. Then each owned
/// particle sums its share slots (one per lower-id entry of its row), in
/// row order.
///
/// With `loads`, the stage also keeps what each wall gives each owned
/// particle there (see [`WallLoads`]). Every pair's force is in its share
/// slot after any force stage (see [`crate::neighbor::PairJobs::share_slots`]).
///
/// # Panics
/// If `wall_history` does not hold a record of the list's length per
/// (owned particle, wall of `fp`), or the list is not of these particles.
pub fn compute(
    p: &mut Particles,
    nl: &mut NeighborList,
    wall_history: &mut WallHistory,
    results: &mut PairResults,
    fp: &ForceParams,
    loads: Option<&mut WallLoads>,
) {
    let n = p.n_owned;
    debug_assert!(
        (0..p.len()).all(|k| p.packed[k].to_array().map(f64::to_bits)
            == p.packed_image(k).to_array().map(f64::to_bits)),
        "packed images are not those of the current positions"
    );
    let (parts, force, torque) = p.split_loads();
    let nl_build = nl.build_id();
    let (jobs, history, shares) = nl.force_parts();
    let h = history.record_len();
    assert_eq!(jobs.offsets().len(), n + 1, "a list of other particles");
    assert_eq!(shares.len(), jobs.slots(), "share slots of another list");
    let records: usize = fp.walls.iter().map(|w| w.history_records(h)).sum();
    let wh = records * h;
    assert!(
        wall_history.walls() == records
            && (wh == 0 || wall_history.history_len() == h && wall_history.particles() == n),
        "wall history of other walls, laws or particles"
    );
    let (entry, pool) = shares.parts_mut();
    let slots = ShareSlots::new(entry, pool);
    let (entries, records, fresh_start) = history.stage_parts();
    let needs_inertia = fp.laws.laws.iter().any(ContactLaw::needs_inertia);
    if !needs_inertia {
        results.bodies.clear();
        results.bodies_of = None;
    } else if results.bodies_of != Some(nl_build) {
        results.bodies.clear();
        results.bodies.room_for(parts.id.len());
        (results.bodies).par_extend(
            (0..parts.id.len())
                .into_par_iter()
                .map(|k| BodyInertia::of(parts.inv_inertia[k], parts.inv_mass[k], parts.radius[k])),
        );
        results.bodies_of = Some(nl_build);
    }
    debug_assert!(
        !needs_inertia
            || (0..parts.id.len()).all(|k| results.bodies[k]
                == BodyInertia::of(parts.inv_inertia[k], parts.inv_mass[k], parts.radius[k])),
        "the couples' inertia of another set of particles"
    );
    // The law of every pair, where there is one: the table's only law, or
    // one that every pair of the particles' materials takes.
    if fp.laws.n > 1 && results.one_law_at.1 != Some(nl_build) {
        results.one_law_at = (one_law_among(fp.laws, parts.material), Some(nl_build));
    }
    debug_assert!(
        fp.laws.n == 1 || results.one_law_at.0 == one_law_among(fp.laws, parts.material),
        "the one law of another set of particles"
    );
    let one_law = if fp.laws.n == 1 {
        Some(&fp.laws.laws[0])
    } else {
        results.one_law_at.0.map(|at| &fp.laws.laws[at])
    };
    let n_blocks = n.div_ceil(BLOCK);
    // The wall loads, `walls` per row of a particle tested against the
    // walls, or none (`lw = 0`), with the rows before each block.
    let mut no_loads = Vec::new();
    let (load_values, lw, load_rows) = match loads {
        Some(loads) => {
            loads.walls = fp.walls.len();
            loads.step = Some(fp.step);
            let row_at = loads.lay_out(n, fp.near_walls);
            (&mut loads.values, loads.walls, row_at)
        }
        None => (&mut no_loads, 0, vec![0; n_blocks + 1]),
    };
    let ctx = Stage {
        p: &parts,
        bodies: &results.bodies,
        jobs,
        fp,
        n_blocks,
        h,
        wh,
        lw,
        slots: &slots,
        records: &records,
        one_law,
    };
    // Where block `b` starts (`b` may be `n_blocks`: the end).
    let particle_at = |b: usize| ctx.block(b).0;
    let job_at = |b: usize| jobs.offsets()[particle_at(b)];
    // The blocks in as many contiguous runs as there are threads, of about
    // equal work (pair jobs, particles and the last stage's contacts: a
    // bed's dense bottom and dilute top differ by several times; cut by
    // jobs and particles alone, the chute's bottom run took 1.3 times the
    // top's). Each thread takes its run's blocks from the front, and then
    // the other runs' blocks from their backs, so that a thread on a
    // faster core (or with lighter blocks) takes over part of a slower
    // one's run (`Stage::claim_blocks`). Within its stretch of a run, pass
    // two of a block follows pass one of the blocks its pairs reach
    // (`PairJobs::block_reach`) while their results are still in cache;
    // blocks whose pairs reach beyond it wait for the end of pass one
    // everywhere. The result does not depend on who did which block.
    results.block_contacts.resize(n_blocks, 0);
    let contacts_at = starts_from(0, results.block_contacts.iter().map(|&c| c as usize));
    let runs = runs_of_equal_work(n_blocks, run_count(), |b| {
        job_at(b) + PARTICLE_WORK * particle_at(b) + CONTACT_WORK * contacts_at[b]
    });
    // Each block's parts of what the stage writes, claimed by one thread.
    let sizes = |at: &dyn Fn(usize) -> usize, per: usize| {
        (0..n_blocks)
            .map(|b| (at(b + 1) - at(b)) * per)
            .collect::<Vec<_>>()
    };
    let load_row_at = |b: usize| load_rows[b];
    let particle_lens = sizes(&particle_at, 1);
    let wall_rows = wall_history.rows_mut();
    let parts: Vec<Mutex<Option<BlockParts>>> =
        split_chunks(entries, sizes(&job_at, 1).into_iter())
            .into_iter()
            .zip(results.block_contacts.chunks_mut(1))
            .zip(split_chunks(force, particle_lens.iter().copied()))
            .zip(split_chunks(torque, particle_lens.iter().copied()))
            .zip(split_chunks(wall_rows, sizes(&particle_at, wh).into_iter()))
            .zip(split_chunks(
                load_values,
                sizes(&load_row_at, lw).into_iter(),
            ))
            .map(|(((((entry, contacts), fo), to), wrow), lrow)| {
                Mutex::new(Some(BlockParts {
                    entry,
                    contacts,
                    force: fo,
                    torque: to,
                    wall_history: wrow,
                    wall_loads: lrow,
                }))
            })
            .collect();
    results.runs.clone_from(&runs);
    let run_locks: Vec<Mutex<Range<usize>>> = runs.iter().map(|&(s, e)| Mutex::new(s..e)).collect();
    let team = Team::new(run_locks.len());
    let claimed: Vec<ClaimedBlocks> = (0..run_locks.len())
        .into_par_iter()
        .map(|r| team.task(|| ctx.claim_blocks(r, &run_locks, &parts, fresh_start)))
        .collect();
    let mut fresh: Vec<(usize, FreshRecords)> = Vec::with_capacity(n_blocks);
    let mut waiting = Vec::new();
    for c in claimed {
        fresh.extend(c.fresh);
        waiting.extend(c.waiting);
    }
    // Pass two of the blocks left waiting, each run's in one task: the
    // pool hands out the tasks in the order it handed out the runs, so a
    // block's pass two mostly runs on the core that did its pass one.
    let mut by_run: Vec<Vec<(usize, BlockParts)>> = runs.iter().map(|_| Vec::new()).collect();
    for (b, out) in waiting {
        let r = runs.partition_point(|&(_, e)| e <= b);
        by_run[r].push((b, out));
    }
    let team = Team::new(by_run.len());
    by_run.into_par_iter().for_each(|blocks| {
        team.task(|| {
            for (b, mut out) in blocks {
                ctx.pass_two_of(b, &mut out);
            }
        })
    });
    debug_assert!(
        parts.iter().all(|p| p.lock().is_ok_and(|p| p.is_none())),
        "every block done"
    );
    // In block order. Where in the pool the records settle depends on who
    // did which block (as it depended on the threads before); what they
    // hold does not.
    fresh.sort_unstable_by_key(|f| f.0);
    let mut fresh: Vec<FreshRecords> = fresh.into_iter().map(|f| f.1).collect();
    // The records of the contacts that formed go among the settled ones.
    history.settle(&mut fresh);
}

#[cfg(test)]
mod tests;
