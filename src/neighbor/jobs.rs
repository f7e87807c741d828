//! The pair jobs: which entry of a pair evaluates it, and where the other
//! side's share of its force goes; and the share slots themselves.

use super::verlet::{BlockRows, VerletRows};
use super::{Contribution, BLOCK};
use crate::state::particles::Particles;
use crate::state::room::{refill, split_chunks, starts_from, Room};
use rayon::prelude::*;
use std::ops::Range;

/// The force stage's layout of the pairs of a neighbour list: each pair is
/// one *job*, evaluated once per step by one owned particle, its
/// *evaluator*: a pair of owned particles that list each other by the
/// lower global id, any other entry (a ghost partner, or a pair the rows
/// disagree on at the cut-off) by its own row's particle.
///
/// Invariants, for the [`VerletRows`] it was made from:
/// - the jobs of owned particle `p` are [`Self::evaluated_by`]`(p)`, in the
///   order of `p`'s row (so by partner id); every entry belongs to exactly
///   one job ([`Self::job_of`]), and a job to one entry, or to two (one in
///   each row) for a pair of owned particles;
/// - owned particle `p` has one *share slot* per entry of its row whose
///   partner has a lower global id (its row's first entries), numbered
///   [`Self::slots_of`]`(p)` in row order; a job whose higher-id side is a
///   ghost (the ghost's owner evaluates the pair too), or an owned particle
///   whose row lacks the pair, has a *boundary slot* instead, numbered after
///   every owned particle's; each job has exactly one slot
///   ([`Self::share_slots`]) and each slot belongs to exactly one job.
///   No pass two reads a boundary slot: it keeps the pair's force for the
///   diagnostics (stress, contact lists), which read every pair's force in
///   its slot after a force stage.
#[derive(Debug, Clone, Default)]
pub struct PairJobs {
    /// The job of each entry of the rows.
    job_of_entry: Vec<u32>,
    /// Row starts of the jobs: owned particle `p` evaluates jobs
    /// `offsets[p]..offsets[p+1]`.
    offsets: Vec<usize>,
    /// The partner (local index) of each job.
    partner: Vec<u32>,
    /// Per job: whether its evaluator has the lower global id of the pair.
    evaluator_lower: Vec<bool>,
    /// Per job: its evaluator's place in its work block (`p mod BLOCK`).
    owner: Vec<u16>,
    /// Per job: the share slot of the higher-id side's entry, or its
    /// boundary slot.
    share_slot: Vec<u32>,
    /// Row starts of the share slots: owned particle `p`'s are
    /// `slot_offsets[p]..slot_offsets[p+1]`.
    slot_offsets: Vec<usize>,
    /// Per share slot of an owned particle: the particle's place in its
    /// work block (`p mod BLOCK`).
    slot_owner: Vec<u16>,
    /// The largest distance, in work blocks, between the two owned
    /// particles of a pair.
    block_reach: usize,
    /// Number of boundary slots (after the owned particles' slots).
    boundary_slots: usize,
}

impl PairJobs {
    /// No jobs for `n` owned particles.
    pub(super) fn empty(n: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            slot_offsets: vec![0; n + 1],
            ..Self::default()
        }
    }

    /// Number of jobs.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.partner.len()
    }

    /// Whether there are no jobs.
    pub fn is_empty(&self) -> bool {
        self.partner.is_empty()
    }

    /// The jobs that owned particle `p` evaluates.
    #[inline(always)]
    pub fn evaluated_by(&self, p: usize) -> Range<usize> {
        self.offsets[p]..self.offsets[p + 1]
    }

    /// Row starts of the jobs, one per owned particle and one past the
    /// last: owned particle `p` evaluates jobs `offsets()[p]..offsets()[p+1]`.
    #[inline(always)]
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The job of entry `e` of the rows.
    #[inline(always)]
    pub fn job_of(&self, e: usize) -> usize {
        self.job_of_entry[e] as usize
    }

    /// The partner (local index, owned or ghost) of job `j`, as seen from
    /// its evaluator.
    #[inline(always)]
    pub fn partner(&self, j: usize) -> usize {
        self.partner[j] as usize
    }

    /// The partner of every job.
    #[inline(always)]
    pub fn partners(&self) -> &[u32] {
        &self.partner
    }

    /// Per job: whether its evaluator has the lower global id of the pair
    /// (always for two owned particles; either way with a ghost), so that
    /// the force loop need not fetch the partner's id.
    #[inline(always)]
    pub fn evaluator_lower(&self) -> &[bool] {
        &self.evaluator_lower
    }

    /// Per job: its evaluator's place in its work block (`p mod BLOCK`), so
    /// that the force stage can run over a block's jobs in one flat loop
    /// (no inner loop of varying length, whose end the processor cannot
    /// predict).
    #[inline(always)]
    pub fn owners(&self) -> &[u16] {
        &self.owner
    }

    /// Per job: the share slot of the higher-id side's entry of the pair,
    /// where that side adds its share to its lower-id sum `L`, or a
    /// boundary slot (numbered from [`Self::owned_slots`] on) where that
    /// side is a ghost (its owner evaluates the pair too). After a force
    /// stage every job's slot holds the force and torque on the pair's
    /// higher-id side (zero where the pair is apart).
    #[inline(always)]
    pub fn share_slots(&self) -> &[u32] {
        &self.share_slot
    }

    /// Row starts of the share slots, one per owned particle and one past
    /// the last: owned particle `p` has one slot per entry whose partner
    /// has a lower global id (the first entries of its sorted row),
    /// numbered `slot_offsets()[p]..slot_offsets()[p+1]` in row order, so
    /// that its `L` reads a short contiguous run.
    #[inline(always)]
    pub fn slot_offsets(&self) -> &[usize] {
        &self.slot_offsets
    }

    /// Per share slot of an owned particle, the particle's place in its
    /// work block (`p mod BLOCK`), so that the summing pass can run over
    /// a block's slots in one flat loop (as the filter runs over its jobs:
    /// no inner loop of varying length, whose end the processor cannot
    /// predict).
    #[inline(always)]
    pub fn slot_owners(&self) -> &[u16] {
        &self.slot_owner
    }

    /// The share slots of owned particle `p`.
    pub fn slots_of(&self, p: usize) -> Range<usize> {
        self.slot_offsets[p]..self.slot_offsets[p + 1]
    }

    /// Number of share slots of the owned particles (boundary slots follow).
    pub fn owned_slots(&self) -> usize {
        self.slot_offsets.last().copied().unwrap_or(0)
    }

    /// Number of share slots, boundary slots included.
    pub fn slots(&self) -> usize {
        self.owned_slots() + self.boundary_slots
    }

    /// The largest distance, in work blocks of [`BLOCK`] owned particles,
    /// between two owned particles of one pair.
    #[inline(always)]
    pub fn block_reach(&self) -> usize {
        self.block_reach
    }

    /// Make the jobs of `rows` (of the particles `p`): the entry in the row
    /// of the lower global id evaluates a pair of owned particles that list
    /// each other, any other entry its own pair (`blocks` holds the build's
    /// work blocks, for their role scratch).
    ///
    /// Every pass runs block by block in parallel: the blocks' job and slot
    /// counts, summed over the blocks before, give each block the numbers
    /// its jobs and slots start at, so the numbering is the one a single
    /// pass in row order gives.
    pub(super) fn assign(&mut self, rows: &VerletRows, p: &Particles, blocks: &mut [BlockRows]) {
        let n = rows.owned();
        // Per entry: EVALUATES, or the entry of the same pair that does
        // (each block's entries in its `role`); per block, its jobs, its
        // share slots and the reach of its pairs in blocks.
        let counts: Vec<(usize, usize, usize)> = (blocks.par_iter_mut().enumerate())
            .map(|(b, block)| {
                let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
                let role = &mut block.role;
                role.clear();
                role.reserve(rows.offsets()[last] - rows.offsets()[first]);
                let (mut jobs, mut slots, mut reach) = (0, 0, 0);
                for k in first..last {
                    // The row's first `below` partners have lower ids.
                    let below = block.below[k - first] as usize;
                    slots += below;
                    let row = rows.row(k);
                    let upper = row.start + below;
                    // The lower id evaluates; the higher looks for the
                    // pair in the partner's row (present there unless the
                    // rows disagree at the cut-off, then it evaluates too).
                    // A ghost partner's pair is its own row's. Each pair
                    // of owned particles is in the higher id's first
                    // entries, so the reach is measured there alone.
                    for e in row.start..upper {
                        let q = rows.partner(e);
                        let mirror = if q < n {
                            reach = reach.max((q / BLOCK).abs_diff(b));
                            rows.entry_with_partner(q, k as u32)
                        } else {
                            None
                        };
                        role.push(mirror.map_or(EVALUATES, |m| m as u32));
                        jobs += usize::from(mirror.is_none());
                    }
                    role.extend(std::iter::repeat_n(EVALUATES, row.end - upper));
                    jobs += row.end - upper;
                }
                (jobs, slots, reach)
            })
            .collect();
        let job_start = starts_from(0, counts.iter().map(|c| c.0));
        let slot_start = starts_from(0, counts.iter().map(|c| c.1));
        let jobs = *job_start.last().expect("starts with 0");
        let entries = rows.entries();
        self.block_reach = counts.iter().map(|c| c.2).max().unwrap_or(0);
        for v in [&mut self.offsets, &mut self.slot_offsets] {
            v.clear();
            v.room_for(n + 1);
            v.resize(n + 1, 0);
        }
        for v in [&mut self.partner, &mut self.share_slot] {
            v.clear();
            v.room_for(jobs);
            v.resize(jobs, 0);
        }
        self.evaluator_lower.clear();
        self.evaluator_lower.room_for(jobs);
        self.evaluator_lower.resize(jobs, false);
        self.owner.clear();
        self.owner.room_for(jobs);
        self.owner.resize(jobs, 0);
        self.job_of_entry.clear();
        self.job_of_entry.room_for(entries);
        self.job_of_entry.resize(entries, 0);
        // Each block's rows, entries and jobs, as bounds per block.
        let row_bounds: Vec<usize> = (0..=blocks.len()).map(|b| (b * BLOCK).min(n)).collect();
        let entry_bounds: Vec<usize> = row_bounds.iter().map(|&k| rows.offsets()[k]).collect();
        // The evaluating entries: their jobs, partners and own share slots.
        {
            let offsets = split_at_bounds(&mut self.offsets[1..], &row_bounds);
            let slot_offsets = split_at_bounds(&mut self.slot_offsets[1..], &row_bounds);
            let job_of_entry = split_at_bounds(&mut self.job_of_entry, &entry_bounds);
            let partner = split_at_bounds(&mut self.partner, &job_start);
            let share_slot = split_at_bounds(&mut self.share_slot, &job_start);
            let lower = split_at_bounds(&mut self.evaluator_lower, &job_start);
            let owner = split_at_bounds(&mut self.owner, &job_start);
            let parts = (offsets.into_iter().zip(slot_offsets).zip(job_of_entry)).zip(
                partner
                    .into_iter()
                    .zip(share_slot)
                    .zip(lower.into_iter().zip(owner)),
            );
            (parts.enumerate().collect::<Vec<_>>().into_par_iter()).for_each(
                |(
                    b,
                    (
                        ((offsets, slot_offsets), job_of_entry),
                        ((partner, share_slot), (lower, owner)),
                    ),
                )| {
                    let (roles, belows) = (&blocks[b].role, &blocks[b].below);
                    let (row0, job0) = (entry_bounds[b], job_start[b]);
                    let (mut job, mut slot) = (job0, slot_start[b]);
                    for (t, k) in (row_bounds[b]..row_bounds[b + 1]).enumerate() {
                        let row = rows.row(k);
                        let below = belows[t] as usize;
                        debug_assert_eq!(below, rows.below(k, p.id[k], &p.id));
                        let upper = row.start + below;
                        let mut evaluate = |e: usize, share: u32, job: usize| {
                            let j = job - job0;
                            job_of_entry[e - row0] = job as u32;
                            partner[j] = rows.partner(e) as u32;
                            share_slot[j] = share;
                            lower[j] = share == UNSET;
                            owner[j] = (k % BLOCK) as u16;
                        };
                        // A lower-id partner (the row's first `below`
                        // entries) whose row lacks the pair, or a ghost:
                        // the share is this particle's own. Rare, so the
                        // branch is predicted.
                        for e in row.start..upper {
                            if roles[e - row0] == EVALUATES {
                                evaluate(e, (slot + e - row.start) as u32, job);
                                job += 1;
                            }
                        }
                        // A higher-id partner: every entry evaluates, and
                        // the share is the partner's, placed by its
                        // mirror entry (or a boundary slot).
                        for e in upper..row.end {
                            evaluate(e, UNSET, job);
                            job += 1;
                        }
                        slot += below;
                        offsets[t] = job;
                        slot_offsets[t] = slot;
                    }
                },
            );
        }
        // The other entries: the job of their mirror, whose share slot is
        // theirs. Each such job has exactly one mirror entry, so the
        // scattered writes of the share slots never meet.
        {
            let (job_of_entry, slot_offsets) = (&self.job_of_entry, &self.slot_offsets);
            let slots = ScatteredSlots::new(&mut self.share_slot);
            blocks.par_iter_mut().enumerate().for_each(|(b, block)| {
                let row0 = entry_bounds[b];
                let rows_of_block = row_bounds[b]..row_bounds[b + 1];
                let slot_rows = slot_offsets[rows_of_block.clone()].iter();
                for ((k, &slot0), &below) in rows_of_block.zip(slot_rows).zip(&block.below) {
                    // Only the first `below` entries have mirrors.
                    let row = rows.row(k);
                    for e in row.start..row.start + below as usize {
                        let m = block.role[e - row0];
                        if m != EVALUATES {
                            let job = job_of_entry[m as usize];
                            let slot = (slot0 + e - row.start) as u32;
                            // SAFETY: `job` is the job of the mirror of this
                            // pair only (see above); no other thread touches
                            // its slot during this pass.
                            unsafe { slots.put(job as usize, slot) };
                            block.role[e - row0] = job;
                        }
                    }
                }
            });
        }
        {
            let job_of_entry = split_at_bounds(&mut self.job_of_entry, &entry_bounds);
            (job_of_entry.into_par_iter().zip(blocks.par_iter())).for_each(|(jobs, block)| {
                // A select, not a branch: the roles alternate unpredictably.
                for (j, &r) in jobs.iter_mut().zip(&block.role) {
                    *j = if r != EVALUATES { r } else { *j };
                }
            });
        }
        // Each owned slot's particle, by its place in its block.
        let owned_slots = self.owned_slots();
        self.slot_owner.clear();
        self.slot_owner.room_for(owned_slots);
        self.slot_owner.resize(owned_slots, 0);
        {
            let slot_bounds: Vec<usize> =
                row_bounds.iter().map(|&k| self.slot_offsets[k]).collect();
            let slot_offsets = &self.slot_offsets;
            (split_at_bounds(&mut self.slot_owner, &slot_bounds)
                .into_par_iter()
                .enumerate())
            .for_each(|(b, owners)| {
                let first = row_bounds[b];
                let base = slot_offsets[first];
                for k in first..row_bounds[b + 1] {
                    let (s, e) = (slot_offsets[k] - base, slot_offsets[k + 1] - base);
                    owners[s..e].fill((k % BLOCK) as u16);
                }
            });
        }
        // The jobs no owned entry takes the share of: boundary slots,
        // numbered in job order from the last owned slot.
        let unset: Vec<usize> = (split_at_bounds(&mut self.share_slot, &job_start).into_par_iter())
            .map(|s| s.iter().filter(|&&v| v == UNSET).count())
            .collect();
        let next = starts_from(owned_slots, unset);
        self.boundary_slots = next[next.len() - 1] - owned_slots;
        (split_at_bounds(&mut self.share_slot, &job_start).into_par_iter())
            .zip(next)
            .for_each(|(s, mut at)| {
                for v in s.iter_mut().filter(|v| **v == UNSET) {
                    *v = at as u32;
                    at += 1;
                }
            });
    }
}

/// The role of an entry that evaluates its pair (otherwise its role is
/// the entry that does).
const EVALUATES: u32 = u32::MAX;

/// A share slot not yet placed.
const UNSET: u32 = u32::MAX;

/// `v` cut at `bounds` (ascending, from 0 or the first cut): the slices
/// `bounds[b]..bounds[b + 1]`, relative to the first bound.
fn split_at_bounds<'a, T>(v: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    split_chunks(v, bounds.windows(2).map(|w| w[1] - w[0]))
}

/// The share slots of the jobs, written at scattered jobs by the threads
/// of one pass of [`PairJobs::assign`], each job by one thread only.
struct ScatteredSlots {
    slots: *mut u32,
    len: usize,
}

// SAFETY: threads write disjoint jobs' slots (see the type's docs).
unsafe impl Sync for ScatteredSlots {}

impl ScatteredSlots {
    fn new(slots: &mut [u32]) -> Self {
        Self {
            slots: slots.as_mut_ptr(),
            len: slots.len(),
        }
    }

    /// Set job `j`'s share slot.
    ///
    /// # Safety
    /// No other thread reads or writes job `j`'s slot during the pass.
    unsafe fn put(&self, j: usize, slot: u32) {
        assert!(j < self.len);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe { *self.slots.add(j) = slot };
    }
}

/// The share slots of a neighbour list's owned particles (laid out by
/// [`PairJobs::slot_offsets`]): per slot, the force and torque that the
/// slot's pair gives to the slot's particle, for its lower-id sum `L`
/// (written by the force stage).
///
/// Only the pairs in contact hold a value, so a slot is a reference: per
/// slot the number of its *entry* in a pool of values, where entry 0 is
/// zero and is never written. Each force stage writes the shares of the
/// pairs in contact to fresh entries, each run of blocks into its own
/// part of the pool (one entry per job of the run at most) from its
/// start, and points their slots at them; a slot whose pair is apart points
/// at entry 0. The pool has room for one entry per job, but only the
/// entries a force stage writes take memory: the pool is mapped fresh,
/// zero and untouched, at each rebuild, and a run's entries fill its
/// part from the front. The chute's pairs within reach of each other are
/// eight times its contacts.
///
/// Invariants: one entry number per slot of the list's [`PairJobs`];
/// entry 0 is zero; a slot whose pair is not in contact, or whose job is
/// not active (see [`super::PairHistory`]), points at entry 0, so the sum
/// over a particle's slots needs no test.
///
/// Between two force stages the values mean nothing to a rebuild, which
/// points every slot at entry 0: a rebuild may borrow the pool's storage
/// ([`ShareRoom`]) for the history it carries, so that the carried records
/// need no memory of their own.
#[derive(Clone, Default)]
pub struct Shares {
    /// Per slot: its entry in `pool`.
    entry: Vec<u32>,
    /// Six values per entry: a [`Contribution`]'s force and torque. Entry 0
    /// is zero.
    pool: Vec<f64>,
    /// Whether the pool's storage is lent out ([`Self::lend_room`]).
    lent: bool,
}

/// Values of a [`Contribution`]: its force and its torque.
const PER_SLOT: usize = 6;

// A `Contribution` is `repr(C)` of two `DVec3` (each `repr(C)` of three
// `f64`): six `f64` in order, with no padding, aligned as an `f64`. The
// pool views below rely on it.
const _: () = assert!(std::mem::size_of::<Contribution>() == PER_SLOT * 8);
const _: () = assert!(std::mem::align_of::<Contribution>() == std::mem::align_of::<f64>());

/// The storage of a list's share pool, lent to a rebuild
/// ([`super::NeighborList::lend_share_room`]) until it is given back
/// ([`super::NeighborList::return_share_room`]): room for `f64` values,
/// holding none.
#[derive(Debug, Default)]
pub struct ShareRoom(pub Vec<f64>);

impl Shares {
    /// `n_slots` slots, each pointing at entry 0, and a fresh pool of room
    /// for as many entries and entry 0 (unless the pool is lent: it is
    /// made when the room comes back).
    pub(super) fn clear(&mut self, n_slots: usize) {
        assert!(
            n_slots < u32::MAX as usize,
            "more share slots than a u32 numbers"
        );
        refill(&mut self.entry, n_slots, 0);
        if !self.lent {
            self.fresh_pool();
        }
    }

    /// A pool of zeros for entry 0 and one entry per slot, mapped afresh:
    /// the old one is given back first, and the new one's pages take memory
    /// only where a force stage writes.
    fn fresh_pool(&mut self) {
        self.pool = Vec::new();
        // `vec!` of zeros asks the allocator for zeroed memory, which a
        // fresh mapping is without being written.
        self.pool = vec![0.0; (self.entry.len() + 1) * PER_SLOT];
    }

    /// The pool's storage, emptied, for a rebuild to use until
    /// [`Self::return_room`]; the slots are absent meanwhile.
    pub(super) fn lend_room(&mut self) -> ShareRoom {
        assert!(!self.lent, "share slots lent twice");
        self.lent = true;
        let mut room = std::mem::take(&mut self.pool);
        room.clear();
        ShareRoom(room)
    }

    /// Take the storage back (it is given back to the system) and make a
    /// fresh pool, every slot pointing at entry 0.
    pub(super) fn return_room(&mut self, room: ShareRoom) {
        assert!(self.lent, "share slots returned but not lent");
        self.lent = false;
        drop(room);
        self.entry.fill(0);
        self.fresh_pool();
    }

    /// Point slot `s` at entry 0.
    pub(super) fn zero(&mut self, s: usize) {
        self.entry[s] = 0;
    }

    /// Number of slots present (none while the pool is lent).
    pub fn len(&self) -> usize {
        if self.lent {
            0
        } else {
            self.entry.len()
        }
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of slot `s`.
    pub fn get(&self, s: usize) -> Contribution {
        self.pool_values()[self.entry[s] as usize]
    }

    /// Whether slot `s` holds a share (points at an entry other than 0;
    /// a slot that does not holds zeros).
    pub fn holds(&self, s: usize) -> bool {
        self.entry[s] != 0
    }

    /// Every slot's value, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = Contribution> + '_ {
        let pool = self.pool_values();
        self.entry[..self.len()]
            .iter()
            .map(move |&e| pool[e as usize])
    }

    /// Every slot's entry number (for the tests of the force stage, which
    /// checks that the pool fills from the front).
    #[cfg(test)]
    pub(crate) fn entry_numbers(&self) -> &[u32] {
        &self.entry
    }

    /// The pool's entries.
    fn pool_values(&self) -> &[Contribution] {
        // SAFETY: `pool` holds `PER_SLOT` `f64` per entry, which is the
        // layout of a `Contribution` (asserted above), at an `f64`'s
        // alignment, which is a `Contribution`'s; every bit pattern is a
        // valid `f64`.
        unsafe { std::slice::from_raw_parts(self.pool.as_ptr().cast(), self.pool.len() / PER_SLOT) }
    }

    /// Every slot's entry number and the pool, to write: for the force
    /// stage only, which keeps the type's invariants.
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self) -> (&mut [u32], &mut [Contribution]) {
        assert!(!self.lent, "share slots used while lent");
        assert!(
            self.pool.len() >= (self.entry.len() + 1) * PER_SLOT,
            "a share pool without room for every slot"
        );
        let entries = self.pool.len() / PER_SLOT;
        // SAFETY: as in `pool_values`, and the borrow is exclusive.
        let pool =
            unsafe { std::slice::from_raw_parts_mut(self.pool.as_mut_ptr().cast(), entries) };
        (&mut self.entry, pool)
    }
}

/// Lists compare and print by their slots' values, not by where in the
/// pool a force stage happened to put them (which depends on the threads).
impl PartialEq for Shares {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for Shares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
