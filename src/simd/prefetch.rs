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

/// Hint the cache to take the line holding `x` for writing soon
/// (`prefetchw`): a copy another core holds is invalidated now, while
/// the loop works on earlier items, instead of when the store reaches the
/// line. x86-64 only (a no-op elsewhere, and on the few x86-64 processors
/// that decode `prefetchw` as a no-op).
#[inline(always)]
pub fn prefetch_write_ptr<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetchw` never faults, and changes neither memory, nor
    // registers, nor flags (its `_mm_prefetch` hint needs a target
    // feature that stable Rust does not name).
    unsafe {
        std::arch::asm!(
            "prefetchw [{0}]",
            in(reg) x,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
