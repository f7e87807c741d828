//! Cache hints: the hot loops ask for a later item's data while they work on
//! this one (the partners of a block are scattered over its neighbourhood).

/// Hint the cache to load `data[i]` soon (no bound test: the hint never
/// faults, so `i` may lie past the end).
#[inline(always)]
pub fn prefetch_at<T>(data: &[T], i: usize) {
    prefetch_ptr(data.as_ptr().wrapping_add(i));
}

/// Hint the cache to load the value at `x` soon (any address: the hint
/// never faults, reads or writes).
#[inline(always)]
pub fn prefetch_ptr<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect on program state.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(x.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
