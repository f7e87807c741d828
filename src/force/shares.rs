//! The share slots as seen by the threads of one force stage.

use crate::neighbor::Contribution;
use crate::simd::prefetch::prefetch_ptr;

/// The share slots ([`crate::neighbor::Shares`]) as seen by the threads of
/// one force stage: per slot its entry number, and the pool of entries.
///
/// Each slot is written by exactly one job in pass one and read by pass
/// two of the slot's particle, after that job (the wavefront in
/// [`super::compute`] orders them), so no slot is ever touched by two
/// threads at once, though the writes of one run of blocks land in
/// another's rows. Each run of blocks (the stretch a thread does from a
/// run's front, or a block another thread takes from its back) writes the
/// entries of its own part of the pool ([`super::RunEntries`]), one per
/// job at most, and an entry
/// is read only through the slot that points at it, after it is written.
pub(super) struct ShareSlots {
    entry: *mut u32,
    slots: usize,
    pool: *mut Contribution,
    entries: usize,
}

// SAFETY: threads access disjoint slots and entries (see the type's docs).
unsafe impl Sync for ShareSlots {}

impl ShareSlots {
    pub(super) fn new(entry: &mut [u32], pool: &mut [Contribution]) -> Self {
        assert!(
            pool.len() > entry.len(),
            "a pool without room for every slot"
        );
        Self {
            entry: entry.as_mut_ptr(),
            slots: entry.len(),
            pool: pool.as_mut_ptr(),
            entries: pool.len(),
        }
    }

    /// Store the share `c` of slot `s` in entry `at` (a fresh entry of the
    /// caller's run: see [`super::RunEntries`]) and point the slot at it.
    ///
    /// # Safety
    /// No other thread reads or writes slot `s` or entry `at` during the call.
    #[inline(always)]
    pub(super) unsafe fn put(&self, s: usize, at: usize, c: Contribution) {
        assert!(s < self.slots && at > 0 && at < self.entries);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe {
            *self.pool.add(at) = c;
            *self.entry.add(s) = at as u32;
        }
    }

    /// Point slot `s` at entry 0 (zero): its pair is apart.
    ///
    /// # Safety
    /// No other thread reads or writes slot `s` during the call.
    #[inline(always)]
    pub(super) unsafe fn close(&self, s: usize) {
        assert!(s < self.slots);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe { *self.entry.add(s) = 0 };
    }

    /// Hint the cache to load slot `s`'s entry number (if any) soon.
    #[inline(always)]
    pub(super) fn prefetch(&self, s: u32) {
        if (s as usize) < self.slots {
            // The hint neither reads nor writes the slot.
            prefetch_ptr(self.entry.wrapping_add(s as usize));
        }
    }

    /// Add the shares of slots `s..e` to the sums `sums`, slot `s + i` to
    /// `sums[owner[i]]`, in slot order, in one flat loop over all of them
    /// (no inner loop per particle, whose varying end the processor cannot
    /// predict). Each share is this step's, or `+0` in every component
    /// where the pair is not in contact: adding `+0` to a sum that starts
    /// at `+0` never changes its bits (round to nearest never makes `−0`
    /// from a `+0` start), so the sums need no test.
    ///
    /// # Safety
    /// No other thread writes any of the slots, or the entries they point
    /// at, during the call.
    #[inline(always)]
    pub(super) unsafe fn add_to(
        &self,
        s: usize,
        e: usize,
        owner: &[u16],
        sums: &mut [Contribution],
    ) {
        assert!(s <= e && e <= self.slots && owner.len() == e - s);
        for (k, &o) in (s..e).zip(owner) {
            // SAFETY: in bounds (every entry number is below `entries`,
            // `put` asserts it), and not written meanwhile by the caller's
            // promise.
            sums[o as usize] += unsafe {
                let at = *self.entry.add(k) as usize;
                debug_assert!(at < self.entries);
                *self.pool.add(at)
            };
        }
    }
}

/// The pool entries that one run of blocks writes its shares to in one
/// force stage: its own part of the pool, one entry per job of the run
/// (each job writes at most one share a stage), taken from the front, so
/// that the pool's memory follows the contacts, not the pairs in reach.
pub(super) struct RunEntries {
    next: usize,
    end: usize,
}

impl RunEntries {
    /// The part of the pool of the run whose jobs are `jobs` (entry 0,
    /// zero, comes before every job's).
    pub(super) fn of(jobs: std::ops::Range<usize>) -> Self {
        Self {
            next: jobs.start + 1,
            end: jobs.end + 1,
        }
    }

    /// A fresh entry of the run.
    #[inline(always)]
    pub(super) fn take(&mut self) -> usize {
        assert!(self.next < self.end, "more shares than jobs in a run");
        self.next += 1;
        self.next - 1
    }
}
