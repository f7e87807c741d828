//! The process's memory allocator: the system's for small blocks; large
//! blocks mapped directly, in whole huge pages, with the kernel advised to
//! back them by transparent huge pages.
//!
//! A step reads tens of megabytes of arrays already for the 32,000 spheres
//! of the chute benchmark (positions, velocities, contact history, share
//! slots), partly in streams and partly at scattered places; in 4 KiB
//! pages that means many address translations, and hardware prefetch
//! streams that stop at every page boundary. Under the usual `madvise`
//! setting of Linux's transparent huge pages, only advised memory gets
//! 2 MiB pages, and only in whole aligned 2 MiB extents, which blocks from
//! `malloc` rarely are (`docs/performance.md` has what 2 MiB pages change
//! on the chute).
//! The binary installs this allocator (`#[global_allocator]`); the library
//! leaves the choice to its user.
//!
//! The price is memory: a large block's last huge page is whole, up to
//! 2 MiB more than asked for (blocks from 1 MiB on are mapped this way, so
//! at most twice their size), and up to [`CACHED_BLOCKS`] freed large blocks
//! ([`CACHED_BYTES`] in all) stay mapped for reuse, so a run's memory does
//! not shrink back after a peak.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;

/// Blocks from this size on are mapped directly.
const LARGE: usize = 1 << 20;

/// The size (and alignment) of a transparent huge page on Linux with 4 KiB
/// base pages (x86-64; aarch64 in its usual configuration).
const HUGE_PAGE: usize = 2 << 20;

/// How many freed large blocks stay mapped for reuse: a neighbour-list
/// rebuild frees and takes again blocks of the same sizes, which would
/// otherwise be mapped (and zeroed by the kernel, a huge page at a time)
/// anew, making the rebuild slower than with `malloc`.
pub const CACHED_BLOCKS: usize = 32;

/// The most bytes the freed blocks kept for reuse hold.
pub const CACHED_BYTES: usize = 1 << 30;

/// Freed large blocks: `(address, mapped length)`, the most recent last.
static CACHE: Mutex<Cache> = Mutex::new(Cache {
    blocks: [(0, 0); CACHED_BLOCKS],
    len: 0,
});

struct Cache {
    blocks: [(usize, usize); CACHED_BLOCKS],
    len: usize,
}

impl Cache {
    /// Take a cached block of exactly this mapped length.
    fn take(&mut self, len: usize) -> Option<*mut u8> {
        let i = (0..self.len).rev().find(|&i| self.blocks[i].1 == len)?;
        let (ptr, _) = self.blocks[i];
        self.blocks.copy_within(i + 1..self.len, i);
        self.len -= 1;
        Some(ptr as *mut u8)
    }

    /// Keep a freed block, making room by giving up the oldest ones; returns
    /// the blocks given up (to unmap), the first `n` of the array.
    fn keep(&mut self, ptr: *mut u8, len: usize) -> ([(usize, usize); CACHED_BLOCKS + 1], usize) {
        let mut out = [(0, 0); CACHED_BLOCKS + 1];
        if len > CACHED_BYTES {
            out[0] = (ptr as usize, len);
            return (out, 1);
        }
        let mut n = 0;
        while self.len == CACHED_BLOCKS || self.bytes() + len > CACHED_BYTES {
            out[n] = self.blocks[0];
            n += 1;
            self.blocks.copy_within(1..self.len, 0);
            self.len -= 1;
        }
        self.blocks[self.len] = (ptr as usize, len);
        self.len += 1;
        (out, n)
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        self.blocks[..self.len].iter().map(|b| b.1).sum()
    }
}

/// The allocator (see the module docs).
pub struct HugePages;

impl HugePages {
    /// Whether a block of this layout is mapped directly.
    fn is_large(layout: Layout) -> bool {
        cfg!(target_os = "linux") && layout.size() >= LARGE && layout.align() <= HUGE_PAGE
    }

    /// The length mapped for a large block: whole huge pages.
    fn mapped_len(size: usize) -> usize {
        size.div_ceil(HUGE_PAGE) * HUGE_PAGE
    }
}

#[cfg(target_os = "linux")]
unsafe fn map_huge(len: usize) -> *mut u8 {
    // Map a huge page more than needed, keep the aligned part, unmap the rest.
    let span = len + HUGE_PAGE;
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: an anonymous private mapping of fresh memory.
    let raw = unsafe { libc::mmap(std::ptr::null_mut(), span, prot, flags, -1, 0) };
    if raw == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    // SAFETY: both cuts lie within the mapping just made, outside the kept part.
    unsafe {
        if aligned > start {
            libc::munmap(raw, aligned - start);
        }
        let tail = start + span - (aligned + len);
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    aligned as *mut u8
}

#[cfg(not(target_os = "linux"))]
unsafe fn map_huge(_: usize) -> *mut u8 {
    unreachable!("large blocks are mapped directly on Linux only")
}

#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: *mut u8, len: usize) {
    // SAFETY: `ptr..ptr + len` is a mapping made by `map_huge`.
    unsafe { libc::munmap(ptr.cast(), len) };
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_: *mut u8, _: usize) {
    unreachable!("large blocks are mapped directly on Linux only")
}

// SAFETY: small blocks are the system allocator's; a large block is a fresh
// anonymous mapping of at least its size, aligned to a huge page (so to any
// alignment up to it), unmapped exactly once by `dealloc`.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::is_large(layout) {
            // SAFETY: the caller's layout, handed on to the system allocator.
            return unsafe { System.alloc(layout) };
        }
        let len = Self::mapped_len(layout.size());
        let cached = CACHE.lock().ok().and_then(|mut c| c.take(len));
        // SAFETY: `map_huge` has no precondition beyond a length, which is
        // whole huge pages here.
        cached.unwrap_or_else(|| unsafe { map_huge(len) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::is_large(layout) {
            // SAFETY: the caller's layout, handed on to the system allocator.
            return unsafe { System.alloc_zeroed(layout) };
        }
        let len = Self::mapped_len(layout.size());
        match CACHE.lock().ok().and_then(|mut c| c.take(len)) {
            Some(ptr) => {
                // SAFETY: the cached block is mapped for `len ≥ size` bytes.
                unsafe { ptr.write_bytes(0, layout.size()) };
                ptr
            }
            // Fresh anonymous pages read as zero.
            // SAFETY: as in `alloc`.
            None => unsafe { map_huge(len) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !Self::is_large(layout) {
            // SAFETY: a small block came from the system allocator with this
            // layout (the caller's promise).
            return unsafe { System.dealloc(ptr, layout) };
        }
        let len = Self::mapped_len(layout.size());
        let (given_up, n) = match CACHE.lock() {
            Ok(mut c) => c.keep(ptr, len),
            Err(_) => {
                // SAFETY: a large block is a mapping of `len` bytes made by
                // `map_huge`, freed once (the caller's promise).
                unsafe { unmap(ptr, len) };
                return;
            }
        };
        for &(ptr, len) in &given_up[..n] {
            // SAFETY: the cache gives up blocks it held, each a mapping of
            // `len` bytes no longer in use, once.
            unsafe { unmap(ptr as *mut u8, len) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        match (Self::is_large(layout), Self::is_large(new_layout)) {
            // SAFETY: a small block of the system allocator, with its layout.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // Still within the pages already mapped.
            (true, true) if Self::mapped_len(new_size) == Self::mapped_len(layout.size()) => ptr,
            _ => {
                // SAFETY: a valid layout of non-zero size (`realloc`'s contract).
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks hold at least the smaller size, do
                    // not overlap, and the old one is freed once with its layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::undocumented_unsafe_blocks)] // the tests exercise the allocator's contract directly
mod tests {
    use super::*;

    /// A block of `size` bytes from the allocator, filled with `byte`.
    fn filled(size: usize, byte: u8) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, 8).unwrap();
        let ptr = unsafe { HugePages.alloc(layout) };
        assert!(!ptr.is_null());
        unsafe { ptr.write_bytes(byte, size) };
        (ptr, layout)
    }

    #[test]
    fn large_blocks_are_huge_page_aligned_and_small_ones_the_systems() {
        let (large, large_layout) = filled(LARGE, 1);
        assert_eq!(large as usize % HUGE_PAGE, 0);
        let (small, small_layout) = filled(LARGE - 1, 2);
        assert!(HugePages::is_large(large_layout));
        assert!(!HugePages::is_large(small_layout));
        unsafe {
            assert_eq!(*large.add(LARGE - 1), 1);
            assert_eq!(*small.add(LARGE - 2), 2);
            HugePages.dealloc(large, large_layout);
            HugePages.dealloc(small, small_layout);
        }
    }

    #[test]
    fn a_reused_block_comes_back_zeroed_when_asked() {
        // Sizes of their own (other tests' blocks have other mapped lengths).
        let size = 3 * HUGE_PAGE + 12_345;
        let (dirty, layout) = filled(size, 0xAB);
        unsafe { HugePages.dealloc(dirty, layout) };
        let zeroed = unsafe { HugePages.alloc_zeroed(layout) };
        assert_eq!(zeroed, dirty, "the freed block is taken again");
        let bytes = unsafe { std::slice::from_raw_parts(zeroed, size) };
        assert!(bytes.iter().all(|&b| b == 0));
        unsafe { HugePages.dealloc(zeroed, layout) };
    }

    #[test]
    fn realloc_keeps_the_contents_across_small_and_large_blocks() {
        let (mut ptr, mut layout) = filled(1000, 0);
        for k in 0..1000 {
            unsafe { *ptr.add(k) = (k % 251) as u8 };
        }
        // Small to large, within the same huge pages, to more pages, back to small.
        for size in [LARGE + 10, LARGE + 20, 5 * HUGE_PAGE, 900] {
            ptr = unsafe { HugePages.realloc(ptr, layout, size) };
            assert!(!ptr.is_null());
            layout = Layout::from_size_align(size, 8).unwrap();
            for k in 0..900 {
                assert_eq!(unsafe { *ptr.add(k) }, (k % 251) as u8, "size {size}");
            }
        }
        unsafe { HugePages.dealloc(ptr, layout) };
    }

    #[test]
    fn the_cache_gives_up_its_oldest_blocks_beyond_its_bounds() {
        let mut cache = Cache {
            blocks: [(0, 0); CACHED_BLOCKS],
            len: 0,
        };
        for k in 0..CACHED_BLOCKS {
            let (_, n) = cache.keep((k + 1) as *mut u8, HUGE_PAGE);
            assert_eq!(n, 0);
        }
        let (out, n) = cache.keep(1000 as *mut u8, HUGE_PAGE);
        assert_eq!(out[..n], [(1, HUGE_PAGE)]);
        let (out, n) = cache.keep(2000 as *mut u8, CACHED_BYTES);
        assert_eq!(n, CACHED_BLOCKS);
        assert_eq!(out[0], (2, HUGE_PAGE));
        assert_eq!((cache.len, cache.bytes()), (1, CACHED_BYTES));
        assert_eq!(cache.take(HUGE_PAGE), None);
        assert_eq!(cache.take(CACHED_BYTES), Some(2000 as *mut u8));
        let (out, n) = cache.keep(3000 as *mut u8, CACHED_BYTES + HUGE_PAGE);
        assert_eq!(out[..n], [(3000, CACHED_BYTES + HUGE_PAGE)]);
    }
}
