//! Cell list and Verlet neighbour list with a skin.
//!
//! The list is *full*: every owned particle lists all its partners (owned or
//! ghost) within `(R_p + R_q) + pad + skin`, sorted by the partner's global
//! id, so its force can be summed in that fixed order, independent of
//! threads, ranks and local ordering. Each pair is also one *job*, evaluated
//! once per step (see [`NeighborList`]), which holds the pair's one
//! contact-history record; at a rebuild the records are lifted out per
//! particle ([`crate::neighbor::carry::HistoryRows`]), so a particle that migrates
//! takes its records with it.
//!
//! The list stays valid until some particle has moved more than `skin / 2`
//! since the last build (a global decision, see `sim`). Building is O(N):
//! particles are binned into cubic cells of the largest interaction range.

pub mod carry;
pub mod cells;
mod jobs;
mod verlet;

#[cfg(test)]
mod tests;

use glam::DVec3;
use verlet::BuildScratch;

pub use cells::spatial_order;
use rayon::prelude::*;

/// Owned particles per parallel work block (fixed, so that the work split never depends on the thread count).
pub const BLOCK: usize = 512;

/// [`NeighborList::share_slot`] of a job whose higher-id side is a ghost.
pub const NO_SLOT: u32 = u32::MAX;

/// A force and a torque: what contacts give one particle.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Contribution {
    /// Force.
    pub force: DVec3,
    /// Torque.
    pub torque: DVec3,
}

impl std::ops::AddAssign for Contribution {
    #[inline(always)]
    fn add_assign(&mut self, other: Self) {
        self.force += other.force;
        self.torque += other.torque;
    }
}

/// Full neighbour list in compressed-row form, with one contact-history
/// record per pair.
///
/// Every pair of two owned particles appears in both their rows, and a pair
/// with a ghost in the owned side's row. Each pair is a *job*, evaluated
/// once per step: a pair of owned particles by the lower global id, a pair
/// with a ghost by its owned side (the ghost's owner evaluates it too, with
/// the same bits). Job `j` of particle `p` lies in
/// `job_offsets[p]..job_offsets[p+1]`, in the order of `p`'s row, and holds
/// the pair's history record; [`Self::job_of_entry`] maps both entries of a
/// pair to it.
#[derive(Debug, Clone, Default)]
pub struct NeighborList {
    /// Row starts: the partners of owned particle `p` are `offsets[p]..offsets[p+1]`.
    pub offsets: Vec<usize>,
    /// Local index of each partner (owned or ghost).
    pub partner: Vec<u32>,
    /// Global id of each partner (the sort key and the history key).
    pub partner_id: Vec<u64>,
    /// The job (pair) of each entry.
    pub job_of_entry: Vec<u32>,
    /// Row starts of the jobs: owned particle `p` evaluates jobs
    /// `job_offsets[p]..job_offsets[p+1]`.
    pub job_offsets: Vec<usize>,
    /// The partner (local index) of each job.
    pub jobs: Vec<u32>,
    /// Per job: whether its evaluator has the lower global id of the pair
    /// (always for two owned particles; either way with a ghost), so that
    /// the force loop need not fetch the partner's id.
    pub evaluator_lower: Vec<bool>,
    /// Per job: its evaluator's place in its work block (`p mod BLOCK`), so
    /// that the force stage can run over a block's jobs in one flat loop
    /// (no inner loop of varying length, whose end the processor cannot
    /// predict).
    pub job_owner: Vec<u16>,
    /// Per job: the share slot (see [`Self::slot_offsets`]) of the higher-id
    /// side's entry of the pair, where that side adds its share to its
    /// lower-id sum `L`, or [`NO_SLOT`] where that side is a ghost (its
    /// owner evaluates the pair too).
    pub share_slot: Vec<u32>,
    /// Contact history, `history_len` values per job. Code that writes it
    /// other than through the force stage must call [`Self::refresh_active`].
    pub history: Vec<f64>,
    /// History values per record.
    pub history_len: usize,
    /// Per job: whether its history record may hold a non-zero value or
    /// its share slot a share (false guarantees zeros in both). Lets the
    /// force loop skip the records and slots of the many pairs that are
    /// not in contact.
    pub active: Vec<bool>,
    /// Share slots: owned particle `p` has one per entry whose partner has a
    /// lower global id (the first entries of its sorted row), numbered
    /// `slot_offsets[p]..slot_offsets[p+1]` in row order, so that its `L`
    /// reads a short contiguous run.
    pub slot_offsets: Vec<usize>,
    /// Per share slot: the force and torque that the slot's pair gives to
    /// the slot's particle, for its lower-id sum `L` (written by the force
    /// stage). Zero wherever the pair is not in contact: a slot is written
    /// when its pair touches and cleared when the contact opens, so the
    /// sum over a particle's slots needs no test.
    pub share: Vec<Contribution>,
    /// The largest distance, in work blocks of [`BLOCK`] owned particles,
    /// between two owned particles of one pair.
    pub block_reach: usize,
    scratch: BuildScratch,
}

impl NeighborList {
    /// An empty list for `n` owned particles.
    pub fn empty(n: usize, history_len: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            job_offsets: vec![0; n + 1],
            slot_offsets: vec![0; n + 1],
            history_len,
            ..Default::default()
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.partner.len()
    }

    /// Whether the list has no entries.
    pub fn is_empty(&self) -> bool {
        self.partner.is_empty()
    }

    /// The record of job `j` if it holds anything: skipped unread when the
    /// job is marked inactive (it holds zeros), else returned when any
    /// value is non-zero (an all-zero record is the same as none).
    pub fn held_record(&self, j: usize) -> Option<&[f64]> {
        let h = self.history_len;
        let known = self.active.len() == self.jobs.len();
        if h == 0 || known && !self.active[j] {
            return None;
        }
        let rec = &self.history[j * h..(j + 1) * h];
        rec.iter().any(|&v| v != 0.0).then_some(rec)
    }

    /// The history record of the pair of entry `e`.
    pub fn record(&self, e: usize) -> &[f64] {
        let (j, h) = (self.job_of_entry[e] as usize, self.history_len);
        &self.history[j * h..(j + 1) * h]
    }

    /// The history record of the pair of entry `e`, to write (then call
    /// [`Self::refresh_active`]).
    pub fn record_mut(&mut self, e: usize) -> &mut [f64] {
        let (j, h) = (self.job_of_entry[e] as usize, self.history_len);
        &mut self.history[j * h..(j + 1) * h]
    }

    /// The entry of owned particle `q`'s row whose partner has global id `id`.
    pub fn entry_of(&self, q: usize, id: u64) -> Option<usize> {
        let (s, e) = (self.offsets[q], self.offsets[q + 1]);
        self.partner_id[s..e].binary_search(&id).ok().map(|i| s + i)
    }

    /// Zero every share slot ([`Self::share`]), one per slot of
    /// [`Self::slot_offsets`].
    fn clear_shares(&mut self) {
        let n_slots = self.slot_offsets.last().copied().unwrap_or(0);
        self.share.clear();
        self.share.resize(n_slots, Contribution::default());
    }

    /// Recompute [`Self::active`] from the history records (call after
    /// changing [`Self::history`] other than through the force stage), and
    /// clear the share slots.
    pub fn refresh_active(&mut self) {
        self.clear_shares();
        self.mark_active_from_history();
    }

    /// [`Self::refresh_active`] for a list whose share slots are all zero
    /// already (freshly built), without clearing them again (a rebuild's
    /// largest memory write).
    pub(crate) fn mark_active_from_history(&mut self) {
        debug_assert!(self.share.iter().all(|c| *c == Contribution::default()));
        let h = self.history_len;
        self.active = if h == 0 {
            vec![false; self.jobs.len()]
        } else {
            self.history
                .chunks_exact(h)
                .map(|rec| rec.iter().any(|&v| v != 0.0))
                .collect()
        };
    }
}

/// Run `f(p, row)` in parallel for every owned particle `p`, where `row` is
/// `p`'s slice of a per-entry array with `stride` values per entry.
pub fn for_each_row_mut<T: Send>(
    data: &mut [T],
    offsets: &[usize],
    stride: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let n = offsets.len().saturating_sub(1);
    let mut chunks: Vec<(usize, &mut [T])> = Vec::with_capacity(n.div_ceil(BLOCK));
    let mut rest = data;
    for b in 0..n.div_ceil(BLOCK) {
        let (s, e) = (offsets[b * BLOCK], offsets[((b + 1) * BLOCK).min(n)]);
        let (head, tail) = rest.split_at_mut((e - s) * stride);
        chunks.push((b * BLOCK, head));
        rest = tail;
    }
    chunks.into_par_iter().for_each(|(first, chunk)| {
        let base = offsets[first];
        for p in first..(first + BLOCK).min(n) {
            let (s, e) = (
                (offsets[p] - base) * stride,
                (offsets[p + 1] - base) * stride,
            );
            f(p, &mut chunk[s..e]);
        }
    });
}
