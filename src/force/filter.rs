//! The cheap first test of a block's pair jobs on packed image positions:
//! the jobs whose pairs may touch become candidates (a superset of the
//! contacts), the others are apart. Baseline and AVX2 builds.

use super::pairs::Block;
use crate::neighbor::FreshRecords;
#[cfg(target_arch = "x86_64")]
use crate::simd::across;
use crate::simd::prefetch::prefetch_at;
use glam::DVec4;

/// How many jobs ahead the filter asks for its partner's position.
const FILTER_AHEAD: usize = 8;

/// The cheap first test of [`jobs_block`], on the packed image positions,
/// over all the jobs of a block of `n_block` owned particles (one flat
/// loop, each job with its evaluator's place): the jobs whose pairs may
/// touch go to `candidates` (a superset of the contacts, in job order), the
/// others are apart ([`opened`]). A function of its own, so that its loop
/// keeps more of its pointers in registers.
#[inline(never)]
pub(super) fn filter_jobs(
    blk: &Block,
    n_block: usize,
    entry: &mut [u32],
    fresh: &mut FreshRecords,
    candidates: &mut Vec<[u32; 2]>,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { filter_jobs_avx2(blk, n_block, entry, fresh, candidates) };
    }
    filter_jobs_body(blk, n_block, entry, fresh, candidates)
}

/// [`filter_jobs_body`] with AVX2, four jobs at a time: the four tests in
/// the lanes of 256-bit registers, with the scalar test's operations in its
/// order (so the same outcome for every job), and the candidates among the
/// four written to the list in one store, packed by a permutation chosen
/// by the outcome (no branch per job, whose outcome the processor cannot
/// predict: one job in seven is a candidate, scattered). The last jobs
/// (fewer than four) take the scalar test.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn filter_jobs_avx2(
    blk: &Block,
    n_block: usize,
    entry: &mut [u32],
    fresh: &mut FreshRecords,
    candidates: &mut Vec<[u32; 2]>,
) {
    use std::arch::x86_64::*;
    let (packed, pad) = (blk.p.packed, blk.fp.range_pad);
    let packed_block = &packed[blk.first..blk.first + n_block];
    let (jobs, owners) = (blk.jobs, blk.job_owner);
    let m = jobs.len();
    let entry = &mut entry[..m];
    candidates.clear();
    // Each store writes four entries, of which the first `kept` count.
    candidates.reserve(m + 4);
    let out = candidates.spare_capacity_mut();
    assert!(out.len() >= m + 4);
    let load = |x: &DVec4| -> __m256d {
        // SAFETY: a `DVec4` is four `f64` in order (x, y, z, w).
        unsafe { _mm256_loadu_pd((x as *const DVec4).cast()) }
    };
    let (pad4, margin) = (_mm256_set1_pd(pad), _mm256_set1_pd(1.0 + 1e-9));
    let mut kept = 0;
    let groups = m / 4;
    // The jobs `j0..j0 + 4` of the group, each `j << 32` in a 64-bit lane.
    let mut next_jobs = _mm256_setr_epi64x(0, 1 << 32, 2 << 32, 3 << 32);
    let four_jobs = _mm256_set1_epi64x(4 << 32);
    let four = jobs.chunks_exact(4).zip(owners.chunks_exact(4));
    for (g, (q, o)) in four.enumerate() {
        let j0 = 4 * g;
        if let Some(ahead) = jobs.get(j0 + FILTER_AHEAD..j0 + FILTER_AHEAD + 4) {
            for &qn in ahead {
                prefetch_at(packed, qn as usize);
            }
        }
        let pk = [0, 1, 2, 3].map(|t| load(&packed_block[o[t] as usize]));
        let pq = [0, 1, 2, 3].map(|t| load(&packed[q[t] as usize]));
        // dd = pq − pk per job, then across the four jobs: their squared
        // lengths and radius sums pk.w + pq.w.
        let dd = [0, 1, 2, 3].map(|t| _mm256_sub_pd(pq[t], pk[t]));
        let sum = [0, 1, 2, 3].map(|t| _mm256_add_pd(pk[t], pq[t]));
        let radii = across::fourth_values(sum);
        // As the scalar test: dd.x² + dd.y² + dd.z² < ((w_k + w_q + pad)(1 + 1e-9))².
        let dist2 = across::squared_lengths(dd);
        let reach = _mm256_mul_pd(_mm256_add_pd(radii, pad4), margin);
        let near = _mm256_cmp_pd::<_CMP_LT_OQ>(dist2, _mm256_mul_pd(reach, reach));
        let mask = _mm256_movemask_pd(near) as usize & 0xF;
        // The four entries [o, j] (each `j << 32 | o`), the near ones
        // first, in job order.
        // SAFETY: `j0 + 4 ≤ m`: the four `u16` (8 bytes) are in `owners`.
        let o4 = unsafe { _mm_loadl_epi64(owners.as_ptr().add(j0).cast()) };
        let entries = _mm256_or_si256(_mm256_cvtepu16_epi64(o4), next_jobs);
        next_jobs = _mm256_add_epi64(next_jobs, four_jobs);
        // SAFETY: a row of `KEPT_FIRST_64` is eight `u32`, the 32 bytes read.
        let order = unsafe { _mm256_loadu_si256(across::KEPT_FIRST_64[mask].as_ptr().cast()) };
        let packed_entries = _mm256_permutevar8x32_epi32(entries, order);
        debug_assert!(kept + 4 <= out.len());
        // SAFETY: `kept ≤ j0` and `j0 + 4 ≤ m`, so the four entries from
        // `kept` (8 bytes each) lie within the `m + 4` spare ones.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(kept).cast(), packed_entries) };
        kept += mask.count_ones() as usize;
        // Apart and in contact at the last step (rare): opened. The four
        // entry numbers compared with 0 at once, the outcomes' sign bits
        // gathered into four bits (set: no entry).
        // SAFETY: `j0 + 4 ≤ m`: the four `u32` (16 bytes) are in `entry`.
        let four = unsafe { _mm_loadu_si128(entry.as_ptr().add(j0).cast()) };
        let none = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(four, _mm_setzero_si128())));
        let was = !(none as usize) & 0xF;
        let mut apart = was & !mask;
        while apart != 0 {
            opened(blk, entry, fresh, j0 + apart.trailing_zeros() as usize);
            apart &= apart - 1;
        }
    }
    // SAFETY: the first `kept` entries were written above (each store wrote
    // its near entries first).
    unsafe { candidates.set_len(kept) };
    for j in 4 * groups..m {
        let (q, o) = (jobs[j] as usize, owners[j] as usize);
        if job_in_reach(packed_block[o], packed[q], pad) {
            candidates.push([o as u32, j as u32]);
        } else {
            opened(blk, entry, fresh, j);
        }
    }
}

/// The filter's test of one job: whether the packed images `pk` (the
/// block particle) and `pq` (the partner) may touch, with the margin that
/// keeps every contact in (a superset of the contacts).
#[inline(always)]
fn job_in_reach(pk: DVec4, pq: DVec4, pad: f64) -> bool {
    let reach = (pk.w + pq.w + pad) * (1.0 + 1e-9);
    let dd = pq - pk;
    dd.x * dd.x + dd.y * dd.y + dd.z * dd.z < reach * reach
}

/// The body of [`filter_jobs`] (the baseline build).
#[inline(always)]
fn filter_jobs_body(
    blk: &Block,
    n_block: usize,
    entry: &mut [u32],
    fresh: &mut FreshRecords,
    candidates: &mut Vec<[u32; 2]>,
) {
    let (packed, pad) = (blk.p.packed, blk.fp.range_pad);
    let packed_block = &packed[blk.first..blk.first + n_block];
    let (jobs, owners) = (blk.jobs, blk.job_owner);
    // The test of job `j`, of the block's particle `o`, with partner `q`.
    macro_rules! test {
        ($j:expr, $q:expr, $o:expr) => {{
            let (j, o) = ($j, $o as usize);
            if job_in_reach(packed_block[o], packed[$q as usize], pad) {
                candidates.push([o as u32, j as u32]);
            } else {
                opened(blk, entry, fresh, j);
            }
        }};
    }
    // Asking for the position of the partner FILTER_AHEAD jobs on while
    // this one is tested, then the last jobs without.
    let body = jobs.len().saturating_sub(FILTER_AHEAD);
    let ahead = jobs.get(FILTER_AHEAD..).unwrap_or_default();
    for (j, ((&q, &o), &qn)) in jobs.iter().zip(owners).zip(ahead).enumerate() {
        prefetch_at(packed, qn as usize);
        test!(j, q, o);
    }
    for (j, (&q, &o)) in jobs.iter().zip(owners).enumerate().skip(body) {
        test!(j, q, o);
    }
}

/// Job `j` of the block (`entry` holds the block's jobs' entry numbers)
/// is apart: its contact, if any, has opened, so its record's entry is
/// freed (the job's record is zero again) and its share slot points at
/// zero.
#[inline(always)]
pub(super) fn opened(blk: &Block, entry: &mut [u32], fresh: &mut FreshRecords, j: usize) {
    let e = std::mem::take(&mut entry[j]);
    if e != 0 {
        fresh.free(e);
        // SAFETY: this job is the slot's only writer, and its reader
        // runs after this block's pass one.
        unsafe { blk.slots.close(blk.share_slot[j] as usize) };
    }
}
