//! Building the Verlet rows: every owned particle's partners within reach,
//! found through the cell grid, sorted by global id.

use super::cells::CellGrid;
use super::{NeighborList, BLOCK};
use crate::diagnostics::MAX_OVERLAP;
use crate::simd::isa::in_best_build;
use crate::state::particles::Particles;
use crate::state::room::{split_chunks, Room};
use glam::{DVec3, DVec4};
use rayon::prelude::*;
use std::ops::Range;

/// The Verlet rows of a neighbour list: every owned particle's partners
/// (owned or ghost) within `(R_p + R_q) + reach`, in compressed-row form.
///
/// Invariants:
/// - one row per owned particle: [`Self::offsets`] starts at 0, never
///   decreases, and ends at the number of entries;
/// - each row is sorted by partner global id, strictly (no partner twice,
///   never the particle itself); the ids are not stored (they would cost
///   8 B an entry): [`Self::partner_id`] reads the particles' id array;
/// - a pair of owned particles is in both their rows or in neither (the cut
///   is the same bits from either side); two frozen particles are never a
///   pair.
#[derive(Debug, Clone, Default)]
pub struct VerletRows {
    /// Row starts: the partners of owned particle `p` are `offsets[p]..offsets[p+1]`.
    offsets: Vec<usize>,
    /// Local index of each partner (owned or ghost); rows sorted by the
    /// partners' global ids.
    partner: Vec<u32>,
    /// The number of particles (owned and ghosts) the rows were built for.
    particles: usize,
}

/// Whether two spheres overlap, from their packed images (position with
/// any periodic shift, and radius): `|x_b − x_a| < R_a + R_b`, without a
/// branch.
#[inline(always)]
pub fn overlapping(a: DVec4, b: DVec4) -> bool {
    let d = b - a;
    let reach = a.w + b.w;
    d.x * d.x + d.y * d.y + d.z * d.z < reach * reach
}

impl VerletRows {
    /// Empty rows for `n` owned particles.
    pub(super) fn empty(n: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            ..Self::default()
        }
    }

    /// Number of rows (the owned particles the rows were built for).
    pub fn owned(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The number of particles, owned and ghosts, the rows were built for:
    /// the length of the id array [`Self::partner_id`] reads.
    pub fn particles(&self) -> usize {
        self.particles
    }

    /// Number of entries, in all rows.
    pub fn entries(&self) -> usize {
        self.partner.len()
    }

    /// The entries of owned particle `p`'s row.
    #[inline(always)]
    pub fn row(&self, p: usize) -> Range<usize> {
        self.offsets[p]..self.offsets[p + 1]
    }

    /// Row starts, one per owned particle and one past the last: the
    /// entries of owned particle `p` are `offsets()[p]..offsets()[p+1]`.
    #[inline(always)]
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The partner (local index, owned or ghost) of entry `e`.
    #[inline(always)]
    pub fn partner(&self, e: usize) -> usize {
        self.partner[e] as usize
    }

    /// The global id of the partner of entry `e`, where `ids` are the
    /// global ids of the particles the rows were built for (owned and
    /// ghosts: [`Particles::id`]).
    #[inline(always)]
    pub fn partner_id(&self, e: usize, ids: &[u64]) -> u64 {
        ids[self.partner[e] as usize]
    }

    /// The partners (local indices) of owned particle `p`, in row order.
    pub fn row_partners(&self, p: usize) -> &[u32] {
        &self.partner[self.row(p)]
    }

    /// How many partners of owned particle `p` overlap it
    /// (`|x_q − x_p| < R_p + R_q`), from the packed images
    /// ([`Particles::packed`]).
    pub fn touching(&self, p: usize, packed: &[DVec4]) -> usize {
        let me = packed[p];
        (self.row_partners(p).iter())
            .map(|&q| usize::from(overlapping(me, packed[q as usize])))
            .sum()
    }

    /// The number of entries of owned particle `p`'s row whose partner's
    /// global id is below `id` (`ids` as for [`Self::partner_id`]).
    pub fn below(&self, p: usize, id: u64, ids: &[u64]) -> usize {
        self.row_partners(p)
            .partition_point(|&q| ids[q as usize] < id)
    }

    /// The entry of owned particle `q`'s row whose partner has global id
    /// `id` (`ids` as for [`Self::partner_id`]).
    pub fn entry_of(&self, q: usize, id: u64, ids: &[u64]) -> Option<usize> {
        let row = self.row(q);
        let start = row.start;
        self.partner[row]
            .binary_search_by_key(&id, |&k| ids[k as usize])
            .ok()
            .map(|i| start + i)
    }

    /// The entry of owned particle `q`'s row whose partner is local index
    /// `k`, if any: [`Self::entry_of`] by the partner's local index (a row
    /// lists each partner once) rather than its id, eight entries at a
    /// time with no branch per entry; the job layout finds the mirror of an
    /// entry of `k`'s row so. A chute row holds about eight entries, so the
    /// loop runs once at most searches; the binary search through the
    /// partners' ids ends in a mispredicted branch at most of its steps,
    /// and a scan entry by entry at its random exit.
    #[inline(always)]
    pub fn entry_with_partner(&self, q: usize, k: u32) -> Option<usize> {
        const GROUP: usize = 8;
        let (row, partners) = (self.row(q), &self.partner);
        let mut s = row.start;
        while s < row.end {
            // The group's entries past the row's end (the next rows', or
            // none at the end of the list) are masked off below.
            let group: [u32; GROUP] = match partners.get(s..s + GROUP) {
                Some(g) => g.try_into().expect("a group of eight"),
                None => {
                    let mut g = [u32::MAX; GROUP];
                    g[..partners.len() - s].copy_from_slice(&partners[s..]);
                    g
                }
            };
            let valid = (1u32 << (row.end - s).min(GROUP)) - 1;
            let hits = group
                .iter()
                .enumerate()
                .fold(0u32, |m, (t, &v)| m | (u32::from(v == k) << t))
                & valid;
            if hits != 0 {
                return Some(s + hits.trailing_zeros() as usize);
            }
            s += GROUP;
        }
        None
    }

    /// Fill the rows of the owned particles of `p` from the work blocks of
    /// a build, in block order.
    fn fill(&mut self, p: &Particles, blocks: &[BlockRows]) {
        let n = p.n_owned;
        self.particles = p.len();
        let total: usize = blocks.iter().map(|b| b.entries.len()).sum();
        self.offsets.clear();
        self.offsets.room_for(n + 1);
        self.offsets.push(0);
        for rows in blocks {
            for &c in &rows.counts {
                self.offsets.push(self.offsets.last().unwrap() + c);
            }
        }
        // The blocks' entries copied side by side, each to its place.
        self.partner.clear();
        self.partner.room_for(total);
        self.partner.resize(total, 0);
        let parts = split_chunks(&mut self.partner, blocks.iter().map(|b| b.entries.len()));
        (parts.into_par_iter().zip(blocks))
            .for_each(|(part, rows)| part.copy_from_slice(&rows.entries));
        assert!(
            self.entries() < u32::MAX as usize,
            "neighbour list of {} entries exceeds the 32-bit entry index",
            self.entries()
        );
    }
}

/// Particle `k`'s image `x + shift` (an owned particle's shift is `+0`),
/// as the search bins and tests it: found where it is read rather than
/// held (24 B a particle fewer at a rebuild).
#[inline(always)]
fn image_of(p: &Particles, k: usize) -> DVec3 {
    p.x[k] + p.shift_of(k)
}

/// How many slabs the neighbour search cuts its cells into along x (see
/// [`CellGrid::rebin`]): rows of `2 + 1/3` cell edges instead of 3, so
/// about a fifth fewer candidate pairs to test.
const SEARCH_SPLIT: usize = 3;

/// One work block's part of a build: its rows' lengths, their entries
/// (partner indices, each row sorted by partner id) and each entry's role
/// in job assignment.
#[derive(Default)]
pub(super) struct BlockRows {
    counts: Vec<usize>,
    /// Per row, how many of its partners have a lower id than its
    /// particle (its first entries, which its share slots follow).
    pub(super) below: Vec<u32>,
    entries: Vec<u32>,
    /// Whether a pair of the block may overlap deeper than
    /// [`MAX_OVERLAP`] ([`NeighborList::may_overlap_deeply`]).
    deep: bool,
    pub(super) role: Vec<u32>,
    /// The row being searched: `(partner id, partner index)`, the id its
    /// sort key.
    found: Vec<(u64, u32)>,
    /// The row's candidates in reach, by their place in the cell order.
    picked: Vec<u32>,
}

impl BlockRows {
    /// Give back the entries, roles and row scratch (the counts, one per
    /// particle, stay).
    fn release(&mut self) {
        self.entries = Vec::new();
        self.role = Vec::new();
        self.found = Vec::new();
        self.picked = Vec::new();
    }
}

/// What the rows of a neighbour-list build read: the particles, their
/// the cell grid over their images and the candidates in cell order
/// (image and radius; id, local index and frozen flag).
struct RowSearch<'a> {
    p: &'a Particles,
    grid: &'a CellGrid,
    near: &'a [DVec4],
    who: &'a [(u64, u32, bool)],
    reach: f64,
    /// The test for pairs that may overlap deeply ([`DeepTest`]).
    deep: DeepTest,
}

/// A superset of the pairs deeper than [`MAX_OVERLAP`]: those whose centre
/// distance `d` is below `(R_i + R_q − cut)(1 + 10⁻⁹) + slack`, with `cut
/// = MAX_OVERLAP · R_min / 2` over the particles searched. A deep pair has
/// `d < R_i + R_q − MAX_OVERLAP · R*`, and `R* ≥ min(R_i, R_q)/2 ≥ R_min/2`;
/// `slack`, 64 ulps of the largest coordinate searched, covers the
/// rounding by which the search's separation (of images) may differ from
/// the one the diagnostics measure (of positions and shifts).
#[derive(Clone, Copy)]
struct DeepTest {
    cut: f64,
    slack: f64,
}

impl DeepTest {
    /// The test for the particles searched, by their images and radii
    /// `near` (`R_min` and the largest coordinate found in one pass).
    fn of(near: &[DVec4]) -> Self {
        let (r_min, span) = near
            .par_iter()
            .map(|c| (c.w, c.truncate().abs().max_element()))
            .reduce(|| (f64::INFINITY, 0.0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        Self {
            cut: 0.5 * MAX_OVERLAP * r_min,
            slack: 64.0 * f64::EPSILON * span,
        }
    }

    /// Whether a pair of radius sum `sum` at squared distance `d2` may be
    /// deeper than the bound.
    #[inline(always)]
    fn may_be_deep(self, sum: f64, d2: f64) -> bool {
        let t = (sum - self.cut) * (1.0 + 1e-9) + self.slack;
        d2 < t * t
    }
}

/// Whether a candidate (image and radius `c`) is within `(R_i + R_c) +
/// reach` of particle `i` (image `xi`, radius `ri`): the same bits from
/// either side, so a pair of owned particles is in both rows or neither.
#[inline(always)]
fn in_reach(ri: f64, xi: DVec3, c: &DVec4, reach: f64) -> bool {
    let cut = (ri + c.w) + reach;
    separation2(xi, c) < cut * cut
}

/// The squared distance from image `xi` to a candidate's image (`c`'s
/// first three values), as the search tests it.
#[inline(always)]
fn separation2(xi: DVec3, c: &DVec4) -> f64 {
    (c.truncate() - xi).length_squared()
}

/// The slots of `ranges` (of the candidates `near`, in cell order) whose
/// candidate is within reach of particle `i` (image and radius, as
/// [`in_reach`] tests), in order, into `picked`: each candidate kept
/// without a branch of its own, by its place in the cell order alone (4 B
/// each: the test reads nothing else). In the AVX2 build four candidates
/// at a time ([`pick_in_reach_avx2`]), which `near` must allow:
/// [`NEAR_PAD`] entries past its last candidate.
#[inline(always)]
fn pick_in_reach(near: &[DVec4], ranges: &[Range<usize>; 9], at: Around, picked: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { pick_in_reach_avx2(near, ranges, at, picked) };
    }
    pick_in_reach_one_by_one(near, ranges, at, picked);
}

/// What [`pick_in_reach`] tests the candidates against: particle `i`'s
/// image and radius, and the reach beyond the radii's sum.
#[derive(Debug, Clone, Copy)]
pub(super) struct Around {
    pub(super) xi: DVec3,
    pub(super) ri: f64,
    pub(super) reach: f64,
}

/// The candidates of `ranges`, all of which [`pick_in_reach`] may keep.
#[inline(always)]
fn room_of(ranges: &[Range<usize>; 9]) -> usize {
    ranges.iter().map(|r| r.len()).sum()
}

/// [`pick_in_reach`] one candidate at a time (the baseline build).
#[inline(always)]
pub(super) fn pick_in_reach_one_by_one(
    near: &[DVec4],
    ranges: &[Range<usize>; 9],
    Around { xi, ri, reach }: Around,
    picked: &mut Vec<u32>,
) {
    let room = room_of(ranges);
    picked.clear();
    picked.reserve(room);
    let spare = &mut picked.spare_capacity_mut()[..room];
    let mut kept = 0;
    for range in ranges {
        for (c, s) in near[range.clone()].iter().zip(range.clone()) {
            spare[kept].write(s as u32);
            kept += in_reach(ri, xi, c, reach) as usize;
        }
    }
    // SAFETY: the first `kept` spare slots were written above.
    unsafe { picked.set_len(kept) };
}

/// Entries of the candidates' images past the last candidate, so that
/// [`pick_in_reach_avx2`] may read four from the start of any group.
pub(super) const NEAR_PAD: usize = 3;

/// [`pick_in_reach`] with AVX2: each range's candidates four at a time,
/// the four tests in the lanes of 256-bit registers with [`in_reach`]'s
/// operations in its order (so the same outcome for every candidate), the
/// lanes past the range's end masked off, and the slots in reach among the
/// four written in one store, packed by a permutation the outcome picks.
/// A range holds about three candidates (the chute's), so its loop runs
/// once or twice instead of once per candidate, and ends mispredicted less
/// often: the chute's row search took 3.8 instead of 4.9 ms a rebuild
/// (2026-12-03).
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn pick_in_reach_avx2(
    near: &[DVec4],
    ranges: &[Range<usize>; 9],
    at: Around,
    picked: &mut Vec<u32>,
) {
    use crate::simd::across;
    use std::arch::x86_64::*;
    picked.clear();
    // Each store writes four slots, of which the first few count.
    picked.reserve(room_of(ranges) + 4);
    let (xi, ri, reach) = (at.xi, at.ri, at.reach);
    let out = picked.spare_capacity_mut();
    let xi4 = _mm256_setr_pd(xi.x, xi.y, xi.z, 0.0);
    let (ri4, reach4) = (_mm256_set1_pd(ri), _mm256_set1_pd(reach));
    let lanes = _mm_setr_epi32(0, 1, 2, 3);
    let mut kept = 0;
    for range in ranges {
        let mut s = range.start;
        while s < range.end {
            assert!(s + 4 <= near.len());
            let c = [0, 1, 2, 3].map(|t| {
                // SAFETY: `s + t < near.len()` (asserted above); a `DVec4`
                // is four `f64` in order (x, y, z, w).
                unsafe { _mm256_loadu_pd(near.as_ptr().add(s + t).cast()) }
            });
            // dd = c − xi per candidate, then across the four: their
            // squared lengths and radii. As `in_reach`: (x² + y²) + z² <
            // ((R_i + R_c) + reach)².
            let dist2 = across::squared_lengths(c.map(|c| _mm256_sub_pd(c, xi4)));
            let radii = across::fourth_values(c);
            let cut = _mm256_add_pd(_mm256_add_pd(ri4, radii), reach4);
            let near4 = _mm256_cmp_pd::<_CMP_LT_OQ>(dist2, _mm256_mul_pd(cut, cut));
            let valid = (1usize << (range.end - s).min(4)) - 1;
            let mask = _mm256_movemask_pd(near4) as usize & valid;
            let slots = _mm_add_epi32(_mm_set1_epi32(s as i32), lanes);
            // SAFETY: a row of `KEPT_FIRST` is four `u32`, the 16 bytes read.
            let order = unsafe { _mm_loadu_si128(across::KEPT_FIRST[mask].as_ptr().cast()) };
            let packed = _mm_castps_si128(_mm_permutevar_ps(_mm_castsi128_ps(slots), order));
            assert!(kept + 4 <= out.len());
            // SAFETY: the four slots from `kept` are spare (asserted above).
            unsafe { _mm_storeu_si128(out.as_mut_ptr().add(kept).cast(), packed) };
            kept += mask.count_ones() as usize;
            s += 4;
        }
    }
    // SAFETY: the first `kept` spare slots were written above (each store
    // wrote its kept slots first).
    unsafe { picked.set_len(kept) };
}

impl RowSearch<'_> {
    /// The rows of work block `b`, in the build for the run's instruction
    /// set ([`crate::simd::isa`]).
    fn block(&self, b: usize, rows: &mut BlockRows) {
        in_best_build!(block_avx2, block_avx512, || self.block_body(b, rows))
    }

    /// The body of [`Self::block`]: each owned particle's partners within
    /// `R_p + R_q + reach`, sorted by id, and the row lengths.
    #[inline(always)]
    fn block_body(&self, b: usize, rows: &mut BlockRows) {
        let RowSearch {
            p,
            grid,
            near,
            who,
            reach,
            deep,
        } = *self;
        let n = p.n_owned;
        let BlockRows {
            counts,
            below,
            entries,
            found,
            picked,
            deep: block_deep,
            ..
        } = rows;
        counts.clear();
        below.clear();
        entries.clear();
        let mut any_deep = false;
        let first = b * BLOCK;
        let last = (first + BLOCK).min(n);
        for i in first..last {
            // The owned particle's image, `x + (+0)` as the grid's.
            let xi = image_of(p, i);
            let (ri, fi, id_i) = (p.radius[i], p.frozen[i], p.id[i]);
            let ranges = grid.near_slots(xi);
            pick_in_reach(near, &ranges, Around { xi, ri, reach }, picked);
            let kept = picked.len();
            // Of those (a few per particle), the partners: not the
            // particle itself, and not two frozen ones; again without a
            // branch per candidate.
            found.clear();
            found.reserve(kept);
            let spare = &mut found.spare_capacity_mut()[..kept];
            let (mut partners, mut lower) = (0, 0);
            for &s in picked.iter() {
                let (id, q, fq) = who[s as usize];
                let keep = (q as usize != i) & !(fi & fq);
                spare[partners].write((id, q));
                partners += keep as usize;
                lower += (keep & (id < id_i)) as u32;
                let c = &near[s as usize];
                any_deep |= keep & deep.may_be_deep(ri + c.w, separation2(xi, c));
            }
            // SAFETY: the first `partners` spare slots were written above.
            unsafe { found.set_len(partners) };
            sort_row(found);
            entries.extend(found.iter().map(|e| e.1));
            counts.push(partners);
            below.push(lower);
        }
        *block_deep = any_deep;
    }
}

/// Working storage of [`NeighborList::rebuild`], kept between builds so that
/// a rebuild reuses memory the process already has instead of asking the
/// system for fresh pages (which costs about a fifth of a chute rebuild).
#[derive(Default)]
pub(super) struct BuildScratch {
    grid: CellGrid,
    cells: Vec<usize>,
    near: Vec<DVec4>,
    who: Vec<(u64, u32, bool)>,
    blocks: Vec<BlockRows>,
}

impl std::fmt::Debug for BuildScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuildScratch")
    }
}

/// A copy of a list starts with no scratch of its own.
impl Clone for BuildScratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl NeighborList {
    /// Build the list for the owned particles of `p` (ghosts included as
    /// partners). `reach` is added to `R_p + R_q` (the skin plus any extra
    /// interaction range). Pairs of two frozen particles are skipped.
    ///
    /// The history starts at zero; [`crate::neighbor::carry::HistoryRows::fill_list`]
    /// (or [`crate::neighbor::carry::PairRecords::fill_list`]) puts the records
    /// carried through the rebuild back.
    pub fn build(p: &Particles, reach: f64, history_len: usize) -> Self {
        let mut list = Self::default();
        list.rebuild(p, reach, history_len);
        list
    }

    /// [`Self::build`] in place, reusing this list's storage. Its history
    /// is dropped: lift it out first ([`crate::neighbor::carry::HistoryRows::from_list`]
    /// or, on a single rank, [`crate::neighbor::carry::PairRecords::from_list`]).
    pub fn rebuild(&mut self, p: &Particles, reach: f64, history_len: usize) {
        let mut scratch = std::mem::take(&mut self.scratch);
        let BuildScratch {
            grid,
            cells,
            near,
            who,
            blocks,
        } = &mut scratch;
        // A hair more than the longest cut, so that a pair just within it is
        // never split across more cells than the stencil reaches by the
        // rounding of the cell coordinates.
        let cell = (2.0 * p.max_radius() + reach) * (1.0 + 1e-9);
        let image = |k: usize| image_of(p, k);
        grid.rebin(
            p.len(),
            image,
            cell.max(f64::MIN_POSITIVE),
            SEARCH_SPLIT,
            cells,
        );
        // The candidates in cell order, so that each cell's are read in sequence:
        // image position and radius, and (local index, frozen).
        let slots = grid.items();
        near.clear();
        near.par_extend(
            slots
                .par_iter()
                .map(|&q| image(q as usize).extend(p.radius[q as usize])),
        );
        who.clear();
        who.par_extend(
            slots
                .par_iter()
                .map(|&q| (p.id[q as usize], q, p.frozen[q as usize])),
        );
        let n = p.n_owned;
        blocks.resize_with(n.div_ceil(BLOCK), BlockRows::default);
        let deep = DeepTest::of(near);
        // Room for the AVX2 search's groups of four past the last candidate
        // (never kept: masked off).
        near.extend([DVec4::ZERO; NEAR_PAD]);
        let (grid, near, who) = (&*grid, &*near, &*who);
        let search = RowSearch {
            p,
            grid,
            near,
            who,
            reach,
            deep,
        };
        blocks
            .par_iter_mut()
            .enumerate()
            .for_each(|(b, rows)| search.block(b, rows));
        // The candidates' images and ids (48 B a particle) are given back
        // before the rows and jobs are laid out; the cell grid stays.
        scratch.near = Vec::new();
        scratch.who = Vec::new();
        let blocks = &mut scratch.blocks;
        self.deep_pairs = blocks.iter().any(|b| b.deep);
        self.rows.fill(p, blocks);
        self.jobs.assign(&self.rows, p, blocks);
        // The blocks' entries are in the rows now: their copies would hold
        // as much again between rebuilds.
        blocks.iter_mut().for_each(BlockRows::release);
        self.history.reset(self.jobs.len(), history_len);
        self.shares.clear(self.jobs.slots());
        self.scratch = scratch;
        self.build = super::next_build();
    }
}

/// Sort a row's `(partner id, partner index)` entries by id (ids are unique,
/// so that is the full order). A short row, the common case, is placed by
/// rank (each entry goes where the number of smaller ids says) without a
/// data-dependent branch; a long one is sorted.
#[inline(always)]
pub(super) fn sort_row(row: &mut [(u64, u32)]) {
    match row.len() {
        0..=8 => place_by_rank::<8>(row),
        9..=16 => place_by_rank::<16>(row),
        _ => row.sort_unstable_by_key(|e| e.0),
    }
}

/// [`sort_row`] for a row of at most `N` entries: each entry's rank counted
/// over `N` ids, the row's and `u64::MAX` after them (never below an id),
/// so that the count runs over a fixed length, which the compiler turns
/// into a few vector compares.
#[inline(always)]
fn place_by_rank<const N: usize>(row: &mut [(u64, u32)]) {
    let mut ids = [u64::MAX; N];
    let mut copy = [(0u64, 0u32); N];
    for (k, &e) in row.iter().enumerate() {
        (ids[k], copy[k]) = (e.0, e);
    }
    for &(id, q) in &copy[..row.len()] {
        let rank = ids.iter().filter(|&&x| x < id).count();
        row[rank] = (id, q);
    }
}
