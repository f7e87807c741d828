//! Cell list and Verlet neighbour list with a skin.
//!
//! The list is *full*: every owned particle lists all its partners (owned or
//! ghost) within `(R_p + R_q) + pad + skin`, sorted by the partner's global
//! id, so its force can be summed in that fixed order, independent of
//! threads, ranks and local ordering. Each pair is also one *job*, evaluated
//! once per step, which holds the pair's one contact-history record (see
//! [`NeighborList`] and its parts: [`VerletRows`], [`PairJobs`],
//! [`PairHistory`], [`Shares`]); at a rebuild the records are lifted out per
//! particle ([`crate::neighbor::carry::HistoryRows`]), so a particle that
//! migrates takes its records with it.
//!
//! The list stays valid until the particles have moved, relative to each
//! other (beyond what the bed's fitted flow foresees, [`flow`]) or to what
//! is fixed in space, as far as the skin allows since the last build
//! ([`trigger`]: a global decision, see `sim`). Building is O(N):
//! particles are binned into cubic cells of the largest interaction range.

pub mod carry;
pub mod cells;
pub mod flow;
mod history;
mod jobs;
pub mod trigger;
mod verlet;

#[cfg(test)]
mod tests;

use glam::{DVec3, DVec4};
use verlet::BuildScratch;

pub use cells::spatial_order;
pub use history::PairHistory;
pub(crate) use history::{FreshRecords, RecordPool};
pub use jobs::{PairJobs, ShareRoom, Shares};
pub use verlet::VerletRows;

/// Owned particles per parallel work block (fixed, so that the work split never depends on the thread count).
pub const BLOCK: usize = 512;

/// Whether `runs` of work blocks (first block, end: the force stage's, one
/// per thread, [`crate::force::PairResults::runs`]) are at least two and
/// cut the blocks of `n` owned particles one after another, as the loops
/// that follow them need (a rebuild may have changed the particles since).
pub fn runs_cover(runs: &[(usize, usize)], n: usize) -> bool {
    runs.len() > 1
        && runs.first().is_some_and(|r| r.0 == 0)
        && runs.last().is_some_and(|r| r.1 == n.div_ceil(BLOCK))
        && runs.iter().all(|r| r.0 < r.1)
        && runs.windows(2).all(|w| w[0].1 == w[1].0)
}

/// A force and a torque: what contacts give one particle.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
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
/// record per pair, in four typed parts:
///
/// - [`VerletRows`]: every owned particle's partners within reach, by id;
/// - [`PairJobs`]: the force stage's layout of the pairs: each pair is a
///   *job*, evaluated once per step (a pair of owned particles by the lower
///   global id, a pair with a ghost by its owned side; the ghost's owner
///   evaluates it too, with the same bits), and the share slots where the
///   other side's part of its force goes;
/// - [`PairHistory`]: one contact-history record per job, with the flags
///   that let the force stage skip the pairs not in contact;
/// - [`Shares`]: the share slots' values.
///
/// A list is made whole by [`Self::build`] or [`Self::rebuild`] and the
/// parts change only together: the four always describe the same pairs.
/// Outside the neighbour list, the records are written only through
/// methods that keep [`PairHistory`]'s invariant, and the force stage
/// borrows the parts it writes side by side (`force_parts`).
#[derive(Debug, Clone, Default)]
pub struct NeighborList {
    rows: VerletRows,
    jobs: PairJobs,
    history: PairHistory,
    shares: Shares,
    scratch: BuildScratch,
    /// This build's number (see [`Self::build_id`]).
    build: u64,
    /// Whether the build saw a pair that may overlap deeper than the bound
    /// ([`Self::may_overlap_deeply`]).
    deep_pairs: bool,
}

/// The number of the next neighbour-list build in this process.
static NEXT_BUILD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A number no earlier build in this process took.
fn next_build() -> u64 {
    NEXT_BUILD.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl NeighborList {
    /// An empty list for `n` owned particles.
    pub fn empty(n: usize, history_len: usize) -> Self {
        Self {
            rows: VerletRows::empty(n),
            jobs: PairJobs::empty(n),
            history: PairHistory::empty(history_len),
            build: next_build(),
            ..Default::default()
        }
    }

    /// A number that identifies this build of the list in the process (a
    /// clone keeps it). The particles a list was built for, ghosts
    /// included, keep their order, radii, masses and inertia until the
    /// next build (only positions and velocities change between builds),
    /// so what the force stage derives from those can be kept per build.
    pub fn build_id(&self) -> u64 {
        self.build
    }

    /// Whether a pair of the list may overlap deeper than
    /// [`crate::diagnostics::MAX_OVERLAP`] times its `R*` at the positions
    /// it was built for: the search flags a superset of such pairs on its
    /// way (by their centre distance against `R_i + R_q − MAX_OVERLAP ·
    /// R_min/2`, with a margin for rounding), so that where it flags none
    /// the overlap bound need not walk the pairs (`sim`'s check at a
    /// rebuild). A list made without a search ([`Self::empty`]) has none.
    pub fn may_overlap_deeply(&self) -> bool {
        self.deep_pairs
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.rows.entries()
    }

    /// Whether the list has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Verlet rows.
    #[inline(always)]
    pub fn rows(&self) -> &VerletRows {
        &self.rows
    }

    /// The pair jobs and the share-slot layout.
    #[inline(always)]
    pub fn jobs(&self) -> &PairJobs {
        &self.jobs
    }

    /// The partners in contact summed over the owned particles' rows (the
    /// sum of [`VerletRows::touching`]), in one flat pass over the pair
    /// jobs a block at a time, with no loop per row: a job whose spheres
    /// overlap counts for its evaluator, and again for its partner where
    /// that is owned (its row lists the pair too).
    pub fn touching(&self, packed: &[DVec4]) -> usize {
        let n = self.rows.owned();
        let offsets = self.jobs.offsets();
        let (partners, owners) = (self.jobs.partners(), self.jobs.owners());
        let mut count = 0;
        for first in (0..n).step_by(BLOCK) {
            for j in offsets[first]..offsets[(first + BLOCK).min(n)] {
                let q = partners[j] as usize;
                let me = packed[first + owners[j] as usize];
                let sides = 1 + usize::from(q < n);
                count += sides * usize::from(verlet::overlapping(me, packed[q]));
            }
        }
        count
    }

    /// The contact history, one record per job.
    #[inline(always)]
    pub fn history(&self) -> &PairHistory {
        &self.history
    }

    /// The share slots.
    #[inline(always)]
    pub fn shares(&self) -> &Shares {
        &self.shares
    }

    /// History values per record.
    pub fn history_len(&self) -> usize {
        self.history.record_len()
    }

    /// The history record of the pair of entry `e`.
    pub fn record(&self, e: usize) -> &[f64] {
        self.history.record(self.jobs.job_of(e))
    }

    /// The history record of the pair of entry `e`, to write (the job is
    /// marked active: see [`PairHistory::record_mut`]).
    pub fn record_mut(&mut self, e: usize) -> &mut [f64] {
        self.history.record_mut(self.jobs.job_of(e))
    }

    /// The history record of job `j`, to write (the job is marked active:
    /// see [`PairHistory::record_mut`]).
    pub fn job_record_mut(&mut self, j: usize) -> &mut [f64] {
        self.history.record_mut(j)
    }

    /// The entry of owned particle `q`'s row whose partner has global id
    /// `id`, where `ids` are the global ids of the particles the list was
    /// built for ([`crate::state::particles::Particles::id`]).
    pub fn entry_of(&self, q: usize, id: u64, ids: &[u64]) -> Option<usize> {
        self.rows.entry_of(q, id, ids)
    }

    /// Forget every contact: zero every history record and share slot and
    /// mark every job inactive (only the active jobs hold anything).
    pub fn clear_history(&mut self) {
        let (slots, shares) = (self.jobs.share_slots(), &mut self.shares);
        self.history
            .clear_active(|j| shares.zero(slots[j] as usize));
    }

    /// The share slots' storage, for a rebuild to hold the history it
    /// carries in ([`carry::PairRecords::from_list_in`]): the slots' values
    /// mean nothing between a force stage and the next rebuild, which
    /// zeroes them. The list has no share slots until
    /// [`Self::return_share_room`] (a force stage would stop at its check
    /// of their number); a rebuild meanwhile only counts them.
    pub fn lend_share_room(&mut self) -> ShareRoom {
        self.shares.lend_room()
    }

    /// Take back the storage [`Self::lend_share_room`] lent, and zero the
    /// share slots in it.
    pub fn return_share_room(&mut self, room: ShareRoom) {
        self.shares.return_room(room)
    }

    /// The parts the force stage reads (the jobs) and writes (the history
    /// and the share slots), borrowed side by side. The force stage keeps
    /// both invariants of the two it writes: a job it marks inactive gets a
    /// zero record and a zero share slot.
    #[inline(always)]
    pub(crate) fn force_parts(&mut self) -> (&PairJobs, &mut PairHistory, &mut Shares) {
        (&self.jobs, &mut self.history, &mut self.shares)
    }
}
