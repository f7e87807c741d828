//! The pair jobs: which entry of a pair evaluates it, and where the other
//! side's share of its force goes; and the share slots themselves.

use super::verlet::{BlockRows, VerletRows};
use super::{Contribution, BLOCK};
use crate::state::particles::Particles;
use crate::state::room::Room;
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
    pub(super) fn assign(&mut self, rows: &VerletRows, p: &Particles, blocks: &mut [BlockRows]) {
        const EVALUATES: u32 = u32::MAX;
        const UNSET: u32 = u32::MAX;
        let n = rows.owned();
        // Per entry: EVALUATES, or the entry of the same pair that does
        // (each block's entries in its `role`).
        blocks.par_iter_mut().enumerate().for_each(|(b, block)| {
            let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            let role = &mut block.role;
            role.clear();
            role.reserve(rows.offsets()[last] - rows.offsets()[first]);
            for k in first..last {
                for e in rows.row(k) {
                    let q = rows.partner(e);
                    // The lower id evaluates; the higher looks for the
                    // pair in the partner's row (present there unless the
                    // rows disagree at the cut-off, then it evaluates too).
                    let mirror = (q < n && rows.partner_id(e, &p.id) < p.id[k])
                        .then(|| rows.entry_of(q, p.id[k], &p.id))
                        .flatten();
                    role.push(mirror.map_or(EVALUATES, |m| m as u32));
                }
            }
        });
        let entries = rows.entries();
        self.offsets.clear();
        self.offsets.room_for(n + 1);
        self.offsets.push(0);
        self.slot_offsets.clear();
        self.slot_offsets.room_for(n + 1);
        self.slot_offsets.push(0);
        for v in [&mut self.partner, &mut self.share_slot] {
            v.clear();
            v.room_for(entries / 2 + 1);
        }
        self.evaluator_lower.clear();
        self.evaluator_lower.room_for(entries / 2 + 1);
        self.owner.clear();
        self.owner.room_for(entries / 2 + 1);
        self.job_of_entry.clear();
        self.job_of_entry.room_for(entries);
        self.job_of_entry.resize(entries, 0);
        // Block b's roles start at entry `offsets[b · BLOCK]`.
        let block_of = |k: usize| &blocks[k / BLOCK];
        let base = |k: usize| rows.offsets()[k / BLOCK * BLOCK];
        for k in 0..n {
            let row = rows.row(k);
            let (roles, row0) = (&block_of(k).role, base(k));
            let lower = rows.below(k, p.id[k], &p.id);
            let slot0 = *self.slot_offsets.last().expect("starts with 0");
            self.slot_offsets.push(slot0 + lower);
            for e in row.clone() {
                if roles[e - row0] == EVALUATES {
                    self.job_of_entry[e] = self.partner.len() as u32;
                    self.partner.push(rows.partner(e) as u32);
                    // A lower-id partner (the row's first `lower` entries):
                    // the share is this particle's own; else the partner's,
                    // placed by its mirror entry below.
                    let own = e < row.start + lower;
                    self.share_slot.push(if own {
                        self.slot_of(k, row.start, e)
                    } else {
                        UNSET
                    });
                    self.evaluator_lower.push(!own);
                    self.owner.push((k % BLOCK) as u16);
                }
            }
            self.offsets.push(self.partner.len());
        }
        for k in 0..n {
            let (roles, row0) = (&block_of(k).role, base(k));
            let row = rows.row(k);
            for e in row.clone() {
                let m = roles[e - row0];
                if m != EVALUATES {
                    let job = self.job_of_entry[m as usize];
                    self.job_of_entry[e] = job;
                    self.share_slot[job as usize] = self.slot_of(k, row.start, e);
                }
            }
        }
        // The jobs no owned entry takes the share of: boundary slots.
        let owned_slots = self.owned_slots();
        let mut next = owned_slots;
        for slot in self.share_slot.iter_mut().filter(|s| **s == UNSET) {
            *slot = next as u32;
            next += 1;
        }
        self.boundary_slots = next - owned_slots;
        self.block_reach = (0..n)
            .flat_map(|k| {
                rows.row_partners(k)
                    .iter()
                    .filter(move |&&q| (q as usize) < n)
                    .map(move |&q| (q as usize / BLOCK).abs_diff(k / BLOCK))
            })
            .max()
            .unwrap_or(0);
    }

    /// The share slot of entry `e`, a lower-id entry of owned particle
    /// `k`'s row, which starts at entry `row_start` (see
    /// [`Self::slot_offsets`]).
    fn slot_of(&self, k: usize, row_start: usize, e: usize) -> u32 {
        (self.slot_offsets[k] + e - row_start) as u32
    }
}

/// The share slots of a neighbour list's owned particles (laid out by
/// [`PairJobs::slot_offsets`]): per slot, the force and torque that the
/// slot's pair gives to the slot's particle, for its lower-id sum `L`
/// (written by the force stage).
///
/// Invariants: one value per slot of the list's [`PairJobs`]; zero wherever
/// the pair is not in contact (a slot is written when its pair touches and
/// cleared when the contact opens), so the sum over a particle's slots
/// needs no test; zero wherever the slot's job is not active (see
/// [`super::PairHistory`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shares {
    values: Vec<Contribution>,
}

impl Shares {
    /// Zero slots, `n_slots` of them.
    pub(super) fn clear(&mut self, n_slots: usize) {
        self.values.clear();
        self.values.room_for(n_slots);
        self.values.resize(n_slots, Contribution::default());
    }

    /// Zero slot `s`.
    pub(super) fn zero(&mut self, s: usize) {
        self.values[s] = Contribution::default();
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every slot's value.
    pub fn values(&self) -> &[Contribution] {
        &self.values
    }

    /// Every slot's value, to write: for the force stage only, which keeps
    /// the type's invariants.
    #[inline(always)]
    pub(crate) fn values_mut(&mut self) -> &mut [Contribution] {
        &mut self.values
    }
}
