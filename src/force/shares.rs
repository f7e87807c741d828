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
    /// `sums[owner[i]]`, in slot order, in flat loops over all of them
    /// (no inner loop per particle, whose varying end the processor cannot
    /// predict). A slot whose pair is not in contact points at entry 0,
    /// `+0` in every component, and is skipped: adding `+0` to a sum that
    /// starts at `+0` never changes its bits (round to nearest never makes
    /// `−0` from a `+0` start), so the sums are those of adding every slot.
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
        // SAFETY: slots `s..e` are in bounds (asserted) and not written
        // meanwhile, by the caller's promise.
        let entries = unsafe { std::slice::from_raw_parts(self.entry.add(s), e - s) };
        // The slots in contact, a chunk at a time: first picked out of
        // the chunk without a branch per slot (most slots point at entry
        // 0, and which do is scattered), then added in slot order.
        let mut live = [0u64; LIVE_CHUNK + 4];
        for (entries, owner) in entries.chunks(LIVE_CHUNK).zip(owner.chunks(LIVE_CHUNK)) {
            let kept = pick_live(entries, owner, &mut live);
            for &slot in &live[..kept] {
                let (at, o) = ((slot as u32) as usize, (slot >> 32) as usize);
                assert!(at < self.entries);
                // SAFETY: in bounds (asserted), and not written meanwhile
                // by the caller's promise.
                sums[o] += unsafe { *self.pool.add(at) };
            }
        }
    }
}

/// How many share slots [`ShareSlots::add_to`] sorts into live and apart
/// at a time (8 B each on the stack).
const LIVE_CHUNK: usize = 256;

/// The slots among `entries` (entry numbers, with their owners `owner`)
/// that point at an entry other than 0, in order, written to the front of
/// `live` as `owner << 32 | entry`; returns how many. `live` has room for
/// four more than `entries` (the AVX2 build stores four at a time).
#[inline(always)]
fn pick_live(entries: &[u32], owner: &[u16], live: &mut [u64]) -> usize {
    assert!(owner.len() == entries.len() && live.len() >= entries.len() + 4);
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { pick_live_avx2(entries, owner, live) };
    }
    pick_live_scalar(entries, owner, live, 0, 0)
}

/// [`pick_live`] from slot `from` on, with `kept` live slots already in
/// `live`, one slot at a time (no branch per slot).
#[inline(always)]
fn pick_live_scalar(
    entries: &[u32],
    owner: &[u16],
    live: &mut [u64],
    from: usize,
    kept: usize,
) -> usize {
    let mut kept = kept;
    for (&at, &o) in entries[from..].iter().zip(&owner[from..]) {
        live[kept] = (o as u64) << 32 | at as u64;
        kept += (at != 0) as usize;
    }
    kept
}

/// [`pick_live`] with AVX2, four slots at a time: each slot widened to
/// `owner << 32 | entry` in a 64-bit lane, the lanes whose entry is not 0
/// moved to the front by the permutation
/// [`crate::simd::across::KEPT_FIRST_64`] picks for them, and the four
/// stored at once; the last slots (fewer than four) one at a time.
///
/// # Safety
/// The processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pick_live_avx2(entries: &[u32], owner: &[u16], live: &mut [u64]) -> usize {
    use std::arch::x86_64::*;
    assert!(owner.len() == entries.len() && live.len() >= entries.len() + 4);
    let groups = entries.len() / 4;
    let mut kept = 0;
    for g in 0..groups {
        // SAFETY: slots `4g..4g + 4` are in both slices (16 and 8 bytes
        // read); `kept ≤ 4g`, so the four stored lie within `live`, which
        // has four more than `entries`.
        unsafe {
            let at = _mm256_cvtepu32_epi64(_mm_loadu_si128(entries.as_ptr().add(4 * g).cast()));
            let o = _mm256_cvtepu16_epi64(_mm_loadl_epi64(owner.as_ptr().add(4 * g).cast()));
            let slot = _mm256_or_si256(at, _mm256_slli_epi64::<32>(o));
            let apart = _mm256_cmpeq_epi64(at, _mm256_setzero_si256());
            let mask = !_mm256_movemask_pd(_mm256_castsi256_pd(apart)) as usize & 0xF;
            let order =
                _mm256_loadu_si256(crate::simd::across::KEPT_FIRST_64[mask].as_ptr().cast());
            let packed = _mm256_permutevar8x32_epi32(slot, order);
            _mm256_storeu_si256(live.as_mut_ptr().add(kept).cast(), packed);
            kept += mask.count_ones() as usize;
        }
    }
    pick_live_scalar(entries, owner, live, 4 * groups, kept)
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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    /// Entry numbers of `n` slots, about one in `every` live (not 0), from a
    /// fixed xorshift sequence, and owners that step up now and then as a
    /// block's do.
    fn slots(n: usize, every: u64) -> (Vec<u32>, Vec<u16>) {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let entries = (0..n)
            .map(|_| {
                if next() % every == 0 {
                    1 + (next() % 1000) as u32
                } else {
                    0
                }
            })
            .collect();
        let mut o = 0u16;
        let owner = (0..n)
            .map(|_| {
                o += (next() % 3 == 0) as u16;
                o
            })
            .collect();
        (entries, owner)
    }

    /// The live slots picked, in order, for every length up to two
    /// chunks and sparse, dense, empty and full choices, in both builds:
    /// the AVX2 one (four at a time) and the scalar one.
    #[test]
    fn the_live_slots_are_picked_in_order() {
        for every in [1, 2, 7, u64::MAX] {
            for n in (0..=2 * LIVE_CHUNK)
                .step_by(37)
                .chain([3, 4, 5, 8, LIVE_CHUNK])
            {
                let (entries, owner) = slots(n, every);
                let want: Vec<u64> = entries
                    .iter()
                    .zip(&owner)
                    .filter(|(&at, _)| at != 0)
                    .map(|(&at, &o)| (o as u64) << 32 | at as u64)
                    .collect();
                let mut live = vec![0u64; n + 4];
                let kept = pick_live_scalar(&entries, &owner, &mut live, 0, 0);
                assert_eq!(live[..kept], want[..], "scalar, {n} slots, 1 in {every}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    live.fill(u64::MAX);
                    // SAFETY: the processor has AVX2.
                    let kept = unsafe { pick_live_avx2(&entries, &owner, &mut live) };
                    assert_eq!(live[..kept], want[..], "AVX2, {n} slots, 1 in {every}");
                }
            }
        }
    }

    /// `add_to` gives each particle the bits of adding all its slots in
    /// order, the apart ones (`+0`) included, across chunk boundaries.
    #[test]
    fn the_sums_are_those_of_every_slot() {
        let n = 3 * LIVE_CHUNK + 11;
        let (entries, owner) = slots(n, 5);
        let mut pool: Vec<Contribution> = (0..1001)
            .map(|e| {
                let v = e as f64;
                Contribution {
                    force: DVec3::new(v.sin(), 1e-3 * v, -v.sqrt()),
                    torque: DVec3::new(v.cos(), -1e5 / (1.0 + v), 0.1 * v),
                }
            })
            .collect();
        pool[0] = Contribution::default();
        let mut entry = entries.clone();
        let slots = ShareSlots::new(&mut entry, &mut pool);
        let particles = *owner.last().unwrap() as usize + 1;
        let mut sums = vec![Contribution::default(); particles];
        // SAFETY: no other thread touches the slots or the pool.
        unsafe { slots.add_to(0, n, &owner, &mut sums) };
        let mut want = vec![Contribution::default(); particles];
        for (&at, &o) in entries.iter().zip(&owner) {
            want[o as usize] += pool[at as usize];
        }
        let bits = |c: &Contribution| c.force.to_array().map(f64::to_bits);
        let tbits = |c: &Contribution| c.torque.to_array().map(f64::to_bits);
        for (k, (got, want)) in sums.iter().zip(&want).enumerate() {
            assert_eq!(bits(got), bits(want), "force of particle {k}");
            assert_eq!(tbits(got), tbits(want), "torque of particle {k}");
        }
        assert!(want.iter().any(|c| c.force != DVec3::ZERO));
    }
}
