//! The share slots as seen by the threads of one force stage.

use crate::neighbor::Contribution;
use crate::simd::prefetch::prefetch_ptr;

/// The share slots ([`crate::neighbor::Shares`]) as seen by the threads of one
/// force stage. Each slot is written by exactly one job in pass one and
/// read by pass two of the slot's particle, after that job (the wavefront
/// in [`compute`] orders them), so no slot is ever touched by two threads
/// at once, though the writes of one run of blocks land in another's rows.
pub(super) struct ShareSlots {
    share: *mut Contribution,
    len: usize,
}

// SAFETY: threads access disjoint slots (see the type's docs).
unsafe impl Sync for ShareSlots {}

impl ShareSlots {
    pub(super) fn new(share: &mut [Contribution]) -> Self {
        Self {
            share: share.as_mut_ptr(),
            len: share.len(),
        }
    }

    /// Store the share of slot `e`.
    ///
    /// # Safety
    /// No other thread reads or writes slot `e` during the call.
    #[inline(always)]
    pub(super) unsafe fn put(&self, e: usize, c: Contribution) {
        assert!(e < self.len);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe { *self.share.add(e) = c };
    }

    /// Hint the cache to load slot `e` (if any) soon.
    #[inline(always)]
    pub(super) fn prefetch(&self, e: u32) {
        if (e as usize) < self.len {
            // The hint neither reads nor writes the slot.
            prefetch_ptr(self.share.wrapping_add(e as usize));
        }
    }

    /// The shares of slots `s..e`: this step's, or `+0` in every component
    /// where the pair is not in contact. Adding `+0` to a sum that starts
    /// at `+0` never changes its bits (round to nearest never makes `−0`
    /// from a `+0` start), so the sum needs no test.
    ///
    /// # Safety
    /// No other thread writes any of the slots while the slice lives.
    #[inline(always)]
    pub(super) unsafe fn range(&self, s: usize, e: usize) -> &[Contribution] {
        assert!(s <= e && e <= self.len);
        // SAFETY: in bounds, and not written meanwhile by the caller's promise.
        unsafe { std::slice::from_raw_parts(self.share.add(s), e - s) }
    }
}
