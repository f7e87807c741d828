//! The cheap first test of a block's pair jobs on packed image positions:
//! the jobs whose pairs may touch become candidates (a superset of the
//! contacts), the others are apart. Baseline, AVX2 and AVX-512 builds.

use super::pairs::Block;
use crate::neighbor::FreshRecords;
#[cfg(target_arch = "x86_64")]
use crate::simd::across;
use crate::simd::prefetch::prefetch_at;
use glam::DVec4;

/// How many jobs ahead the filter asks for its partner's position.
const FILTER_AHEAD: usize = 8;

/// [`FILTER_AHEAD`] for the AVX-512 build, eight jobs at a time.
#[cfg(target_arch = "x86_64")]
const FILTER_AHEAD_EIGHTS: usize = 16;

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
    let input = FilterInput {
        packed_block: &blk.p.packed[blk.first..blk.first + n_block],
        packed: blk.p.packed,
        jobs: blk.jobs,
        owners: blk.job_owner,
        pad: blk.fp.range_pad,
    };
    let apart = |entry: &mut [u32], j: usize| opened(blk, entry, fresh, j);
    in_widest_build(&input, entry, candidates, apart);
}

/// What the filter reads of a block: the packed images of its particles
/// and of all particles, its jobs' partners and evaluators (their places
/// in the block), and the pad added to the radii's sum.
pub(super) struct FilterInput<'a> {
    pub(super) packed_block: &'a [DVec4],
    pub(super) packed: &'a [DVec4],
    pub(super) jobs: &'a [u32],
    pub(super) owners: &'a [u16],
    pub(super) pad: f64,
}

/// The filter in the widest build the run may take
/// ([`crate::simd::isa`]): the candidates `[owner, job]` into
/// `candidates` (cleared first: it is the thread's storage, reused from
/// block to block), in job order, and `apart(entry, j)` for each job `j`
/// whose pair may not touch, or at least for each such job whose entry
/// number (in `entry`) is not 0: `apart` must leave the others as they
/// are (as [`opened`] does).
#[inline(always)]
pub(super) fn in_widest_build(
    input: &FilterInput,
    entry: &mut [u32],
    candidates: &mut Vec<[u32; 2]>,
    apart: impl FnMut(&mut [u32], usize),
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx512() {
        // SAFETY: the processor has AVX-512 (`isa::avx512`).
        return unsafe { filter_jobs_avx512(input, entry, candidates, apart) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { filter_jobs_avx2(input, entry, candidates, apart) };
    }
    filter_jobs_body(input, entry, candidates, apart)
}

/// [`filter_jobs_avx2`] with AVX-512, eight jobs at a time: two jobs'
/// images per 512-bit register, loaded as they lie (a gather of each value
/// was slower, 2026-12-03), read across the registers in job order
/// ([`across::squared_lengths_of_eight`]) with the scalar test's operations
/// in its order, so the same outcome for every job; the candidates among
/// the eight packed by one compress and written in one store. The last
/// jobs (fewer than eight) take the scalar test.
///
/// # Safety
/// The processor must have AVX-512 ([`crate::simd::isa::avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
pub(super) unsafe fn filter_jobs_avx512(
    input: &FilterInput,
    entry: &mut [u32],
    candidates: &mut Vec<[u32; 2]>,
    mut apart: impl FnMut(&mut [u32], usize),
) {
    use std::arch::x86_64::*;
    let FilterInput {
        packed_block,
        packed,
        jobs,
        owners,
        pad,
    } = *input;
    let m = jobs.len();
    let entry = &mut entry[..m];
    let out = room_for_stores(candidates, m, 8);
    let (pad8, margin) = (_mm512_set1_pd(pad), _mm512_set1_pd(1.0 + 1e-9));
    let mut kept = 0;
    let groups = m / 8;
    // The jobs `j0..j0 + 8` of the group, each `j << 32` in a 64-bit lane.
    let mut next_jobs = _mm512_setr_epi64(
        0,
        1 << 32,
        2 << 32,
        3 << 32,
        4 << 32,
        5 << 32,
        6 << 32,
        7 << 32,
    );
    let eight_jobs = _mm512_set1_epi64(8 << 32);
    for g in 0..groups {
        let j0 = 8 * g;
        if let Some(ahead) = jobs.get(j0 + FILTER_AHEAD_EIGHTS..j0 + FILTER_AHEAD_EIGHTS + 8) {
            for &qn in ahead {
                prefetch_at(packed, qn as usize);
            }
        }
        let (q, o) = (&jobs[j0..j0 + 8], &owners[j0..j0 + 8]);
        let [[a0, b0], [a1, b1], [a2, b2], [a3, b3]] = across::EIGHT_ORDER;
        let pk = [
            across::two(&packed_block[o[a0] as usize], &packed_block[o[b0] as usize]),
            across::two(&packed_block[o[a1] as usize], &packed_block[o[b1] as usize]),
            across::two(&packed_block[o[a2] as usize], &packed_block[o[b2] as usize]),
            across::two(&packed_block[o[a3] as usize], &packed_block[o[b3] as usize]),
        ];
        let pq = [
            across::two(&packed[q[a0] as usize], &packed[q[b0] as usize]),
            across::two(&packed[q[a1] as usize], &packed[q[b1] as usize]),
            across::two(&packed[q[a2] as usize], &packed[q[b2] as usize]),
            across::two(&packed[q[a3] as usize], &packed[q[b3] as usize]),
        ];
        // dd = pq − pk per job, then across the eight jobs: their squared
        // lengths and radius sums pk.w + pq.w.
        let dd = [
            _mm512_sub_pd(pq[0], pk[0]),
            _mm512_sub_pd(pq[1], pk[1]),
            _mm512_sub_pd(pq[2], pk[2]),
            _mm512_sub_pd(pq[3], pk[3]),
        ];
        let sum = [
            _mm512_add_pd(pk[0], pq[0]),
            _mm512_add_pd(pk[1], pq[1]),
            _mm512_add_pd(pk[2], pq[2]),
            _mm512_add_pd(pk[3], pq[3]),
        ];
        let radii = across::fourth_values_of_eight(sum);
        // As the scalar test: dd.x² + dd.y² + dd.z² < ((w_k + w_q + pad)(1 + 1e-9))².
        let dist2 = across::squared_lengths_of_eight(dd);
        let reach = _mm512_mul_pd(_mm512_add_pd(radii, pad8), margin);
        let mask = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(dist2, _mm512_mul_pd(reach, reach));
        // The eight entries [o, j] (each `j << 32 | o`), the near ones
        // first, in job order.
        // SAFETY: `j0 + 8 ≤ m`: the eight `u16` (16 bytes) are in `owners`.
        let o8 = unsafe { _mm_loadu_si128(owners.as_ptr().add(j0).cast()) };
        let entries = _mm512_or_si512(_mm512_cvtepu16_epi64(o8), next_jobs);
        next_jobs = _mm512_add_epi64(next_jobs, eight_jobs);
        let packed_entries = _mm512_maskz_compress_epi64(mask, entries);
        debug_assert!(kept + 8 <= out.len());
        // SAFETY: `kept ≤ j0` and `j0 + 8 ≤ m`, so the eight entries from
        // `kept` (8 bytes each) lie within the `m + 8` spare ones.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(kept).cast(), packed_entries) };
        kept += mask.count_ones() as usize;
        // Apart and in contact at the last step (rare): opened. The eight
        // entry numbers compared with 0 at once (set: no entry).
        // SAFETY: `j0 + 8 ≤ m`: the eight `u32` (32 bytes) are in `entry`.
        let eight = unsafe { _mm256_loadu_si256(entry.as_ptr().add(j0).cast()) };
        let none = _mm256_cmpeq_epi32_mask(eight, _mm256_setzero_si256());
        let mut gone = usize::from(!none & !mask);
        while gone != 0 {
            apart(entry, j0 + gone.trailing_zeros() as usize);
            gone &= gone - 1;
        }
    }
    // SAFETY: the first `kept` entries were written above (each store wrote
    // its near entries first).
    unsafe { candidates.set_len(kept) };
    for j in 8 * groups..m {
        test_job(input, entry, candidates, &mut apart, j);
    }
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
pub(super) unsafe fn filter_jobs_avx2(
    input: &FilterInput,
    entry: &mut [u32],
    candidates: &mut Vec<[u32; 2]>,
    mut apart: impl FnMut(&mut [u32], usize),
) {
    use std::arch::x86_64::*;
    let FilterInput {
        packed_block,
        packed,
        jobs,
        owners,
        pad,
    } = *input;
    let m = jobs.len();
    let entry = &mut entry[..m];
    let out = room_for_stores(candidates, m, 4);
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
        let mut gone = was & !mask;
        while gone != 0 {
            apart(entry, j0 + gone.trailing_zeros() as usize);
            gone &= gone - 1;
        }
    }
    // SAFETY: the first `kept` entries were written above (each store wrote
    // its near entries first).
    unsafe { candidates.set_len(kept) };
    for j in 4 * groups..m {
        test_job(input, entry, candidates, &mut apart, j);
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
pub(super) fn filter_jobs_body(
    input: &FilterInput,
    entry: &mut [u32],
    candidates: &mut Vec<[u32; 2]>,
    mut apart: impl FnMut(&mut [u32], usize),
) {
    let (packed, jobs) = (input.packed, input.jobs);
    candidates.clear();
    // Asking for the position of the partner FILTER_AHEAD jobs on while
    // this one is tested, then the last jobs without.
    let body = jobs.len().saturating_sub(FILTER_AHEAD);
    for (j, &qn) in jobs.iter().skip(FILTER_AHEAD).enumerate() {
        prefetch_at(packed, qn as usize);
        test_job(input, entry, candidates, &mut apart, j);
    }
    for j in body..jobs.len() {
        test_job(input, entry, candidates, &mut apart, j);
    }
}

/// The scalar test of job `j`: a candidate `[owner, j]` if its pair may
/// touch, else `apart(entry, j)`.
#[inline(always)]
fn test_job(
    input: &FilterInput,
    entry: &mut [u32],
    candidates: &mut Vec<[u32; 2]>,
    apart: &mut impl FnMut(&mut [u32], usize),
    j: usize,
) {
    let (q, o) = (input.jobs[j] as usize, input.owners[j] as usize);
    if job_in_reach(input.packed_block[o], input.packed[q], input.pad) {
        candidates.push([o as u32, j as u32]);
    } else {
        apart(entry, j);
    }
}

/// `candidates` cleared, with room for the block's `m` jobs and `width`
/// more: each store of a group of `width` jobs writes `width` entries,
/// of which only the kept count. Returns the spare room.
#[inline(always)]
fn room_for_stores(
    candidates: &mut Vec<[u32; 2]>,
    m: usize,
    width: usize,
) -> &mut [std::mem::MaybeUninit<[u32; 2]>] {
    candidates.clear();
    candidates.reserve(m + width);
    let out = candidates.spare_capacity_mut();
    assert!(out.len() >= m + width);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A block's filter input: `n_block` particles of the block among `n`
    /// (the block's first), and `m` jobs with random partners and
    /// evaluators, a third of them near enough to touch, some of them
    /// just at the edge of reach; every third job holds an entry.
    fn input(
        n: usize,
        n_block: usize,
        m: usize,
        seed: u64,
    ) -> (Vec<DVec4>, Vec<u32>, Vec<u16>, Vec<u32>) {
        let mut state = seed;
        let mut unit = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut packed: Vec<DVec4> = (0..n)
            .map(|_| DVec4::new(unit() * 2.5, unit() * 2.5, unit() * 2.5, 0.4 + 0.2 * unit()))
            .collect();
        let mut jobs = Vec::new();
        let mut owners = Vec::new();
        for j in 0..m {
            let o = (unit() * n_block as f64) as usize;
            let q = (unit() * n as f64) as usize;
            if j % 5 == 2 && q >= n_block {
                // Exactly at the scalar test's reach along x, or just within.
                let reach = (packed[o].w + packed[q].w) * (1.0 + 1e-9);
                let x = packed[o].x + if j % 2 == 0 { reach } else { 0.999 * reach };
                packed[q] = DVec4::new(x, packed[o].y, packed[o].z, packed[q].w);
            }
            jobs.push(q as u32);
            owners.push(o as u16);
        }
        let entry = (0..m as u32)
            .map(|j| if j % 3 == 0 { j + 1 } else { 0 })
            .collect();
        (packed, jobs, owners, entry)
    }

    /// One build's outcome: the candidates, the entries left and the jobs
    /// found apart with an entry, in order.
    type Outcome = (Vec<[u32; 2]>, Vec<u32>, Vec<usize>);

    fn run(
        build: impl Fn(&FilterInput, &mut [u32], &mut Vec<[u32; 2]>, &mut dyn FnMut(&mut [u32], usize)),
        input: &FilterInput,
        entry: &[u32],
    ) -> Outcome {
        // The list holds a last block's candidates, as the thread's reused
        // storage does: each build must clear it.
        let mut candidates = vec![[7, 7]; 40];
        let (mut entry, mut gone) = (entry.to_vec(), Vec::new());
        let mut apart = |entry: &mut [u32], j: usize| {
            if std::mem::take(&mut entry[j]) != 0 {
                gone.push(j);
            }
        };
        build(input, &mut entry, &mut candidates, &mut apart);
        (candidates, entry, gone)
    }

    /// The AVX2 and AVX-512 builds keep the candidates the baseline build
    /// keeps, in its order, and find the same jobs apart, whatever the
    /// number of jobs past the last whole group, with a pad or without.
    #[test]
    fn every_build_keeps_the_candidates_of_the_baseline_build() {
        let (n, n_block) = (64, 24);
        for m in 0..40 {
            for pad in [0.0, 0.3] {
                let (packed, jobs, owners, entry) = input(n, n_block, m, 11 + m as u64);
                let input = FilterInput {
                    packed_block: &packed[..n_block],
                    packed: &packed,
                    jobs: &jobs,
                    owners: &owners,
                    pad,
                };
                let base = run(|i, e, c, a| filter_jobs_body(i, e, c, a), &input, &entry);
                assert!(m < 16 || !base.0.is_empty(), "{m} jobs: no candidate");
                assert!(
                    m < 16 || base.0.len() < m,
                    "{m} jobs: every one a candidate"
                );
                #[cfg(target_arch = "x86_64")]
                {
                    use crate::simd::isa::{processor_best, Isa};
                    if processor_best() >= Isa::Avx2 {
                        // SAFETY: the processor has AVX2.
                        let avx2 = run(
                            |i, e, c, a| unsafe { filter_jobs_avx2(i, e, c, a) },
                            &input,
                            &entry,
                        );
                        assert_eq!(avx2, base, "AVX2, {m} jobs, pad {pad}");
                    }
                    if processor_best() >= Isa::Avx512 {
                        // SAFETY: the processor has AVX-512.
                        let avx512 = run(
                            |i, e, c, a| unsafe { filter_jobs_avx512(i, e, c, a) },
                            &input,
                            &entry,
                        );
                        assert_eq!(avx512, base, "AVX-512, {m} jobs, pad {pad}");
                    }
                }
            }
        }
    }
}
