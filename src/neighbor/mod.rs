//! Cell list and Verlet neighbour list with a skin.
//!
//! The list is *full*: every owned particle lists all its partners (owned or
//! ghost) within `(R_p + R_q) + pad + skin`, sorted by the partner's global
//! id, so its force can be summed in that fixed order, independent of
//! threads, ranks and local ordering. Each pair is also one *job*, evaluated
//! once per step (see [`NeighborList`]), which holds the pair's one
//! contact-history record; at a rebuild the records are lifted out per
//! particle ([`crate::neighbor::carry::HistoryRows`]), so a particle that migrates
//! takes its records with it.
//!
//! The list stays valid until some particle has moved more than `skin / 2`
//! since the last build (a global decision, see `sim`). Building is O(N):
//! particles are binned into cubic cells of the largest interaction range.

pub mod carry;

use crate::state::particles::Particles;
use glam::{DVec3, DVec4};
use rayon::prelude::*;

/// Owned particles per parallel work block (fixed, so that the work split never depends on the thread count).
pub const BLOCK: usize = 512;

/// How many slabs the neighbour search cuts its cells into along x (see
/// [`CellGrid::rebin`]): rows of `2 + 1/3` cell edges instead of 3, so
/// about a fifth fewer candidate pairs to test.
const SEARCH_SPLIT: usize = 3;

/// [`NeighborList::share_slot`] of a job whose higher-id side is a ghost.
pub const NO_SLOT: u32 = u32::MAX;

/// A uniform grid of cells over a set of points: cubes of a given edge, or
/// cut along x into `split` slabs each (see [`Self::rebin`]).
#[derive(Debug, Clone)]
pub struct CellGrid {
    lo: DVec3,
    inv_size: DVec3,
    split: usize,
    dims: [usize; 3],
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Default for CellGrid {
    fn default() -> Self {
        Self {
            lo: DVec3::ZERO,
            inv_size: DVec3::ONE,
            split: 1,
            dims: [1; 3],
            start: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl CellGrid {
    /// Bin `points` into cubic cells of edge at least `size`.
    pub fn new(points: &[DVec3], size: f64) -> Self {
        let mut grid = Self::default();
        grid.rebin(points, size, 1, &mut Vec::new());
        grid
    }

    /// Bin `points` anew into cells of edge at least `size` along y and z
    /// and `size / split` along x, reusing this grid's storage and `cells`
    /// (scratch for each point's cell). [`Self::near_slots`] then reaches
    /// `split` cells each way along x (still at least `size`) and one along
    /// y and z: thinner cells along the axis a row of cells runs along make
    /// the rows shorter (`2 + 1/split` edges instead of 3) at no cost in
    /// rows.
    pub fn rebin(&mut self, points: &[DVec3], size: f64, split: usize, cells: &mut Vec<usize>) {
        let split = split.max(1);
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for &x in points {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if points.is_empty() {
            lo = DVec3::ZERO;
            hi = DVec3::ZERO;
        }
        // Cap the number of cells near 2 · split per point so a stray particle cannot blow up memory.
        let extent = (hi - lo).max(DVec3::splat(size));
        let mut size = size;
        let cap = (2 * split * points.len()).max(64) as f64;
        let edges = |size: f64| DVec3::new(size / split as f64, size, size);
        while (extent / edges(size)).ceil().element_product() > cap {
            size *= 1.26;
        }
        let edge = edges(size);
        let dims = [
            ((extent.x / edge.x) as usize).max(1) + 1,
            ((extent.y / edge.y) as usize).max(1) + 1,
            ((extent.z / edge.z) as usize).max(1) + 1,
        ];
        let n_cells = dims[0] * dims[1] * dims[2];
        self.lo = lo;
        self.inv_size = edge.recip();
        self.split = split;
        self.dims = dims;
        self.start.clear();
        self.start.resize(n_cells + 1, 0);
        self.items.clear();
        self.items.resize(points.len(), 0);
        cells.clear();
        cells.extend(points.iter().map(|&x| self.cell_of(x)));
        for &c in cells.iter() {
            self.start[c + 1] += 1;
        }
        for c in 0..n_cells {
            self.start[c + 1] += self.start[c];
        }
        // Now `start[c + 1]` is where cell `c` ends. Each cell's items go in
        // from its end (so in increasing index order), which moves
        // `start[c + 1]` back to where the cell begins; then the starts
        // move down one place.
        for (k, &c) in cells.iter().enumerate().rev() {
            self.start[c + 1] -= 1;
            self.items[self.start[c + 1] as usize] = k as u32;
        }
        self.start.copy_within(1..=n_cells, 0);
        self.start[n_cells] = points.len() as u32;
    }

    fn coords(&self, x: DVec3) -> [usize; 3] {
        let c = (x - self.lo) * self.inv_size;
        [
            (c.x as usize).min(self.dims[0] - 1),
            (c.y as usize).min(self.dims[1] - 1),
            (c.z as usize).min(self.dims[2] - 1),
        ]
    }

    /// Linear index of the cell holding `x`.
    pub fn cell_of(&self, x: DVec3) -> usize {
        let [i, j, k] = self.coords(x);
        (k * self.dims[1] + j) * self.dims[0] + i
    }

    /// The ranges of [`Self::items`] slots that make up the cells around
    /// `x`, one edge `size` (see [`Self::rebin`]) each way: up to 9 runs of
    /// `2 split + 1` consecutive cells (empty ranges at the edges).
    #[inline]
    pub fn near_slots(&self, x: DVec3) -> [std::ops::Range<usize>; 9] {
        let c = self.coords(x);
        let mut out: [std::ops::Range<usize>; 9] = Default::default();
        let mut r = 0;
        for k in c[2].saturating_sub(1)..=(c[2] + 1).min(self.dims[2] - 1) {
            for j in c[1].saturating_sub(1)..=(c[1] + 1).min(self.dims[1] - 1) {
                let row = (k * self.dims[1] + j) * self.dims[0];
                let i0 = row + c[0].saturating_sub(self.split);
                let i1 = row + (c[0] + self.split).min(self.dims[0] - 1);
                out[r] = self.start[i0] as usize..self.start[i1 + 1] as usize;
                r += 1;
            }
        }
        out
    }

    /// The point indices in cell order (the slots of [`Self::near_slots`]).
    pub fn items(&self) -> &[u32] {
        &self.items
    }
}

/// A force and a torque: what contacts give one particle.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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

/// One work block's part of a build: its rows' lengths, their
/// `(partner id, partner index)` entries and each entry's role in job
/// assignment.
#[derive(Default)]
struct BlockRows {
    counts: Vec<usize>,
    entries: Vec<(u64, u32)>,
    role: Vec<u32>,
}

/// What the rows of a neighbour-list build read: the particles, their
/// images, the cell grid over them and the candidates in cell order
/// (image and radius; id, local index and frozen flag).
struct RowSearch<'a> {
    p: &'a Particles,
    images: &'a [DVec3],
    grid: &'a CellGrid,
    near: &'a [DVec4],
    who: &'a [(u64, u32, bool)],
    reach: f64,
}

impl RowSearch<'_> {
    /// The rows of work block `b`, in the build for the run's instruction
    /// set ([`crate::simd::isa`]).
    fn block(&self, b: usize, rows: &mut BlockRows) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::isa::avx2() {
            // SAFETY: the processor has AVX2 (`isa::avx2`).
            return unsafe { self.block_avx2(b, rows) };
        }
        self.block_body(b, rows)
    }

    /// [`Self::block_body`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn block_avx2(&self, b: usize, rows: &mut BlockRows) {
        self.block_body(b, rows)
    }

    /// The body of [`Self::block`]: each owned particle's partners within
    /// `R_p + R_q + reach`, sorted by id, and the row lengths.
    #[inline(always)]
    fn block_body(&self, b: usize, rows: &mut BlockRows) {
        let RowSearch {
            p,
            images,
            grid,
            near,
            who,
            reach,
        } = *self;
        let n = p.n_owned;
        let BlockRows {
            counts, entries, ..
        } = rows;
        counts.clear();
        entries.clear();
        let first = b * BLOCK;
        let last = (first + BLOCK).min(n);
        for (i, &xi) in images.iter().enumerate().take(last).skip(first) {
            let start = entries.len();
            let (ri, fi) = (p.radius[i], p.frozen[i]);
            let ranges = grid.near_slots(xi);
            // Room for every candidate; the pairs in reach are
            // compacted to the front without a branch per candidate.
            let room: usize = ranges.iter().map(|r| r.len()).sum();
            entries.reserve(room);
            let spare = &mut entries.spare_capacity_mut()[..room];
            let mut kept = 0;
            for range in ranges {
                for (c, &(id, q, fq)) in near[range.clone()].iter().zip(&who[range]) {
                    // (R_i + R_q) + reach: the same bits from either side,
                    // so a pair of owned particles is in both rows or neither.
                    let cut = (ri + c.w) + reach;
                    let d = c.truncate() - xi;
                    let keep = (d.length_squared() < cut * cut) & (q as usize != i) & !(fi & fq);
                    spare[kept].write((id, q));
                    kept += keep as usize;
                }
            }
            // SAFETY: the first `kept` spare slots were written above.
            unsafe { entries.set_len(start + kept) };
            sort_row(&mut entries[start..]);
            counts.push(entries.len() - start);
        }
    }
}

/// Working storage of [`NeighborList::rebuild`], kept between builds so that
/// a rebuild reuses memory the process already has instead of asking the
/// system for fresh pages (which costs about a fifth of a chute rebuild).
#[derive(Default)]
struct BuildScratch {
    images: Vec<DVec3>,
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

/// Full neighbour list in compressed-row form, with one contact-history
/// record per pair.
///
/// Every pair of two owned particles appears in both their rows, and a pair
/// with a ghost in the owned side's row. Each pair is a *job*, evaluated
/// once per step: a pair of owned particles by the lower global id, a pair
/// with a ghost by its owned side (the ghost's owner evaluates it too, with
/// the same bits). Job `j` of particle `p` lies in
/// `job_offsets[p]..job_offsets[p+1]`, in the order of `p`'s row, and holds
/// the pair's history record; [`Self::job_of_entry`] maps both entries of a
/// pair to it.
#[derive(Debug, Clone, Default)]
pub struct NeighborList {
    /// Row starts: the partners of owned particle `p` are `offsets[p]..offsets[p+1]`.
    pub offsets: Vec<usize>,
    /// Local index of each partner (owned or ghost).
    pub partner: Vec<u32>,
    /// Global id of each partner (the sort key and the history key).
    pub partner_id: Vec<u64>,
    /// The job (pair) of each entry.
    pub job_of_entry: Vec<u32>,
    /// Row starts of the jobs: owned particle `p` evaluates jobs
    /// `job_offsets[p]..job_offsets[p+1]`.
    pub job_offsets: Vec<usize>,
    /// The partner (local index) of each job.
    pub jobs: Vec<u32>,
    /// Per job: whether its evaluator has the lower global id of the pair
    /// (always for two owned particles; either way with a ghost), so that
    /// the force loop need not fetch the partner's id.
    pub evaluator_lower: Vec<bool>,
    /// Per job: its evaluator's place in its work block (`p mod BLOCK`), so
    /// that the force stage can run over a block's jobs in one flat loop
    /// (no inner loop of varying length, whose end the processor cannot
    /// predict).
    pub job_owner: Vec<u16>,
    /// Per job: the share slot (see [`Self::slot_offsets`]) of the higher-id
    /// side's entry of the pair, where that side adds its share to its
    /// lower-id sum `L`, or [`NO_SLOT`] where that side is a ghost (its
    /// owner evaluates the pair too).
    pub share_slot: Vec<u32>,
    /// Contact history, `history_len` values per job. Code that writes it
    /// other than through the force stage must call [`Self::refresh_active`].
    pub history: Vec<f64>,
    /// History values per record.
    pub history_len: usize,
    /// Per job: whether its history record may hold a non-zero value or
    /// its share slot a share (false guarantees zeros in both). Lets the
    /// force loop skip the records and slots of the many pairs that are
    /// not in contact.
    pub active: Vec<bool>,
    /// Share slots: owned particle `p` has one per entry whose partner has a
    /// lower global id (the first entries of its sorted row), numbered
    /// `slot_offsets[p]..slot_offsets[p+1]` in row order, so that its `L`
    /// reads a short contiguous run.
    pub slot_offsets: Vec<usize>,
    /// Per share slot: the force and torque that the slot's pair gives to
    /// the slot's particle, for its lower-id sum `L` (written by the force
    /// stage). Zero wherever the pair is not in contact: a slot is written
    /// when its pair touches and cleared when the contact opens, so the
    /// sum over a particle's slots needs no test.
    pub share: Vec<Contribution>,
    /// The largest distance, in work blocks of [`BLOCK`] owned particles,
    /// between two owned particles of one pair.
    pub block_reach: usize,
    scratch: BuildScratch,
}

impl NeighborList {
    /// An empty list for `n` owned particles.
    pub fn empty(n: usize, history_len: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            job_offsets: vec![0; n + 1],
            slot_offsets: vec![0; n + 1],
            history_len,
            ..Default::default()
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.partner.len()
    }

    /// Whether the list has no entries.
    pub fn is_empty(&self) -> bool {
        self.partner.is_empty()
    }

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
            images,
            grid,
            cells,
            near,
            who,
            blocks,
        } = &mut scratch;
        images.clear();
        images.extend(p.x.iter().zip(&p.shift).map(|(&x, &s)| x + s));
        // A hair more than the longest cut, so that a pair just within it is
        // never split across more cells than the stencil reaches by the
        // rounding of the cell coordinates.
        let cell = (2.0 * p.max_radius() + reach) * (1.0 + 1e-9);
        grid.rebin(images, cell.max(f64::MIN_POSITIVE), SEARCH_SPLIT, cells);
        // The candidates in cell order, so that each cell's are read in sequence:
        // image position and radius, and (local index, frozen).
        let slots = grid.items();
        near.clear();
        near.extend(
            slots
                .iter()
                .map(|&q| images[q as usize].extend(p.radius[q as usize])),
        );
        who.clear();
        who.extend(
            slots
                .iter()
                .map(|&q| (p.id[q as usize], q, p.frozen[q as usize])),
        );
        let n = p.n_owned;
        blocks.resize_with(n.div_ceil(BLOCK), BlockRows::default);
        let (images, grid, near, who) = (&*images, &*grid, &*near, &*who);
        let search = RowSearch {
            p,
            images,
            grid,
            near,
            who,
            reach,
        };
        blocks
            .par_iter_mut()
            .enumerate()
            .for_each(|(b, rows)| search.block(b, rows));
        let total: usize = blocks.iter().map(|b| b.entries.len()).sum();
        self.offsets.clear();
        self.offsets.reserve(n + 1);
        self.offsets.push(0);
        self.partner_id.clear();
        self.partner_id.reserve(total);
        self.partner.clear();
        self.partner.reserve(total);
        for rows in blocks.iter() {
            for &c in &rows.counts {
                self.offsets.push(self.offsets.last().unwrap() + c);
            }
            self.partner_id.extend(rows.entries.iter().map(|e| e.0));
            self.partner.extend(rows.entries.iter().map(|e| e.1));
        }
        assert!(
            self.len() < u32::MAX as usize,
            "neighbour list of {} entries exceeds the 32-bit entry index",
            self.len()
        );
        self.assign_jobs(p, blocks);
        self.history_len = history_len;
        self.history.clear();
        self.history.resize(self.jobs.len() * history_len, 0.0);
        self.active.clear();
        self.active.resize(self.jobs.len(), false);
        self.clear_shares();
        self.scratch = scratch;
    }

    /// Make the jobs: the entry in the row of the lower global id evaluates
    /// a pair of owned particles that list each other, any other entry its
    /// own pair. Fills [`Self::jobs`], [`Self::job_offsets`],
    /// [`Self::job_of_entry`], [`Self::share_slot`] and [`Self::slot_offsets`]
    /// (`blocks` holds the build's work blocks, for their role scratch).
    fn assign_jobs(&mut self, p: &Particles, blocks: &mut [BlockRows]) {
        const EVALUATES: u32 = u32::MAX;
        let n = self.offsets.len() - 1;
        let list = &*self;
        // Per entry: EVALUATES, or the entry of the same pair that does
        // (each block's entries in its `role`).
        blocks.par_iter_mut().enumerate().for_each(|(b, rows)| {
            let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            let role = &mut rows.role;
            role.clear();
            role.reserve(list.offsets[last] - list.offsets[first]);
            for k in first..last {
                for e in list.offsets[k]..list.offsets[k + 1] {
                    let q = list.partner[e] as usize;
                    // The lower id evaluates; the higher looks for the
                    // pair in the partner's row (present there unless the
                    // rows disagree at the cut-off, then it evaluates too).
                    let mirror = (q < n && list.partner_id[e] < p.id[k])
                        .then(|| list.entry_of(q, p.id[k]))
                        .flatten();
                    role.push(mirror.map_or(EVALUATES, |m| m as u32));
                }
            }
        });
        self.job_offsets.clear();
        self.job_offsets.reserve(n + 1);
        self.job_offsets.push(0);
        self.slot_offsets.clear();
        self.slot_offsets.reserve(n + 1);
        self.slot_offsets.push(0);
        for v in [&mut self.jobs, &mut self.share_slot] {
            v.clear();
            v.reserve(self.partner.len() / 2 + 1);
        }
        self.evaluator_lower.clear();
        self.evaluator_lower.reserve(self.partner.len() / 2 + 1);
        self.job_owner.clear();
        self.job_owner.reserve(self.partner.len() / 2 + 1);
        self.job_of_entry.clear();
        self.job_of_entry.resize(self.partner.len(), 0);
        // Block b's roles start at entry `offsets[b · BLOCK]`.
        let block_of = |k: usize| &blocks[k / BLOCK];
        let base = |k: usize| self.offsets[k / BLOCK * BLOCK];
        for k in 0..n {
            let row = self.offsets[k]..self.offsets[k + 1];
            let (roles, row0) = (&block_of(k).role, base(k));
            let lower = self.partner_id[row.clone()].partition_point(|&id| id < p.id[k]);
            let slot0 = *self.slot_offsets.last().expect("starts with 0");
            self.slot_offsets.push(slot0 + lower);
            for e in row.clone() {
                if roles[e - row0] == EVALUATES {
                    self.job_of_entry[e] = self.jobs.len() as u32;
                    self.jobs.push(self.partner[e]);
                    // A lower-id partner (the row's first `lower` entries):
                    // the share is this particle's own; else the partner's,
                    // placed by its mirror entry below.
                    let own = e < row.start + lower;
                    self.share_slot
                        .push(if own { self.slot_of(k, e) } else { NO_SLOT });
                    self.evaluator_lower.push(!own);
                    self.job_owner.push((k % BLOCK) as u16);
                }
            }
            self.job_offsets.push(self.jobs.len());
        }
        for k in 0..n {
            let (roles, row0) = (&block_of(k).role, base(k));
            for e in self.offsets[k]..self.offsets[k + 1] {
                let m = roles[e - row0];
                if m != EVALUATES {
                    let job = self.job_of_entry[m as usize];
                    self.job_of_entry[e] = job;
                    self.share_slot[job as usize] = self.slot_of(k, e);
                }
            }
        }
        self.block_reach = (0..n)
            .flat_map(|k| {
                let list = &*self;
                list.partner[list.offsets[k]..list.offsets[k + 1]]
                    .iter()
                    .filter(move |&&q| (q as usize) < n)
                    .map(move |&q| (q as usize / BLOCK).abs_diff(k / BLOCK))
            })
            .max()
            .unwrap_or(0);
    }

    /// The share slot of entry `e`, a lower-id entry of owned particle
    /// `k`'s row (see [`Self::slot_offsets`]).
    fn slot_of(&self, k: usize, e: usize) -> u32 {
        (self.slot_offsets[k] + e - self.offsets[k]) as u32
    }

    /// The record of job `j` if it holds anything: skipped unread when the
    /// job is marked inactive (it holds zeros), else returned when any
    /// value is non-zero (an all-zero record is the same as none).
    pub fn held_record(&self, j: usize) -> Option<&[f64]> {
        let h = self.history_len;
        let known = self.active.len() == self.jobs.len();
        if h == 0 || known && !self.active[j] {
            return None;
        }
        let rec = &self.history[j * h..(j + 1) * h];
        rec.iter().any(|&v| v != 0.0).then_some(rec)
    }

    /// The history record of the pair of entry `e`.
    pub fn record(&self, e: usize) -> &[f64] {
        let (j, h) = (self.job_of_entry[e] as usize, self.history_len);
        &self.history[j * h..(j + 1) * h]
    }

    /// The history record of the pair of entry `e`, to write (then call
    /// [`Self::refresh_active`]).
    pub fn record_mut(&mut self, e: usize) -> &mut [f64] {
        let (j, h) = (self.job_of_entry[e] as usize, self.history_len);
        &mut self.history[j * h..(j + 1) * h]
    }

    /// The entry of owned particle `q`'s row whose partner has global id `id`.
    pub fn entry_of(&self, q: usize, id: u64) -> Option<usize> {
        let (s, e) = (self.offsets[q], self.offsets[q + 1]);
        self.partner_id[s..e].binary_search(&id).ok().map(|i| s + i)
    }

    /// Zero every share slot ([`Self::share`]), one per slot of
    /// [`Self::slot_offsets`].
    fn clear_shares(&mut self) {
        let n_slots = self.slot_offsets.last().copied().unwrap_or(0);
        self.share.clear();
        self.share.resize(n_slots, Contribution::default());
    }

    /// Recompute [`Self::active`] from the history records (call after
    /// changing [`Self::history`] other than through the force stage), and
    /// clear the share slots.
    pub fn refresh_active(&mut self) {
        self.clear_shares();
        self.mark_active_from_history();
    }

    /// [`Self::refresh_active`] for a list whose share slots are all zero
    /// already (freshly built), without clearing them again (a rebuild's
    /// largest memory write).
    pub(crate) fn mark_active_from_history(&mut self) {
        debug_assert!(self.share.iter().all(|c| *c == Contribution::default()));
        let h = self.history_len;
        self.active = if h == 0 {
            vec![false; self.jobs.len()]
        } else {
            self.history
                .chunks_exact(h)
                .map(|rec| rec.iter().any(|&v| v != 0.0))
                .collect()
        };
    }
}

/// Sort a row's `(partner id, partner index)` entries by id (ids are unique,
/// so that is the full order). A short row, the common case, is placed by
/// rank (each entry goes where the number of smaller ids says) without a
/// data-dependent branch; a long one is sorted.
#[inline]
fn sort_row(row: &mut [(u64, u32)]) {
    const SHORT: usize = 16;
    if row.len() > SHORT {
        return row.sort_unstable_by_key(|e| e.0);
    }
    let mut copy = [(0u64, 0u32); SHORT];
    copy[..row.len()].copy_from_slice(row);
    let copy = &copy[..row.len()];
    for &(id, q) in copy {
        let rank: usize = copy.iter().map(|e| (e.0 < id) as usize).sum();
        row[rank] = (id, q);
    }
}

/// Run `f(p, row)` in parallel for every owned particle `p`, where `row` is
/// `p`'s slice of a per-entry array with `stride` values per entry.
pub fn for_each_row_mut<T: Send>(
    data: &mut [T],
    offsets: &[usize],
    stride: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let n = offsets.len().saturating_sub(1);
    let mut chunks: Vec<(usize, &mut [T])> = Vec::with_capacity(n.div_ceil(BLOCK));
    let mut rest = data;
    for b in 0..n.div_ceil(BLOCK) {
        let (s, e) = (offsets[b * BLOCK], offsets[((b + 1) * BLOCK).min(n)]);
        let (head, tail) = rest.split_at_mut((e - s) * stride);
        chunks.push((b * BLOCK, head));
        rest = tail;
    }
    chunks.into_par_iter().for_each(|(first, chunk)| {
        let base = offsets[first];
        for p in first..(first + BLOCK).min(n) {
            let (s, e) = (
                (offsets[p] - base) * stride,
                (offsets[p + 1] - base) * stride,
            );
            f(p, &mut chunk[s..e]);
        }
    });
}

/// A permutation of the owned particles that sorts them by cell (for cache
/// locality); ties keep id order so the result is deterministic. The grid
/// bins them in cell order already; only each cell's few particles are
/// sorted, by id.
pub fn spatial_order(p: &Particles, cell: f64) -> Vec<usize> {
    let pts = &p.x[..p.n_owned];
    let grid = CellGrid::new(pts, cell.max(f64::MIN_POSITIVE));
    let mut order: Vec<usize> = grid.items.iter().map(|&k| k as usize).collect();
    for bounds in grid.start.windows(2) {
        let cell = &mut order[bounds[0] as usize..bounds[1] as usize];
        if cell.len() > 1 {
            cell.sort_unstable_by_key(|&k| p.id[k]);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::particles::ParticleRecord;

    /// 125 polydisperse spheres (radii 1:3) with scrambled ids, some frozen,
    /// plus 30 ghosts (images of some of them shifted by 5.5 along x).
    fn spheres() -> Particles {
        let mut p = Particles::default();
        let record = |k: u64| {
            let (a, b, c) = ((k % 5) as f64, ((k / 5) % 5) as f64, (k / 25) as f64);
            let radius = 0.25 + 0.5 * ((k * 37 % 11) as f64 / 10.0);
            ParticleRecord {
                id: (k * 53) % 125,
                x: DVec3::new(a, b, c) * 1.1 + DVec3::splat(0.01 * (k % 3) as f64),
                v: DVec3::ZERO,
                omega: DVec3::ZERO,
                radius,
                mass: 1.0,
                material: 0,
                frozen: k % 9 == 4,
            }
        };
        for k in 0..125 {
            p.push_owned(&record(k));
        }
        for k in 0..30 {
            p.push_ghost(&record(k * 4), DVec3::new(5.5, 0.0, 0.0));
        }
        p
    }

    /// The spatial order is the order by (cell, id), as a full sort of
    /// those keys gives it, for cells holding one or several particles.
    #[test]
    fn spatial_order_sorts_by_cell_then_id() {
        let p = spheres();
        for cell in [0.5, 1.3, 2.9] {
            let grid = CellGrid::new(&p.x[..p.n_owned], cell);
            let mut keys: Vec<(usize, u64, usize)> = (0..p.n_owned)
                .map(|k| (grid.cell_of(p.x[k]), p.id[k], k))
                .collect();
            keys.sort_unstable();
            let expected: Vec<usize> = keys.iter().map(|e| e.2).collect();
            assert_eq!(spatial_order(&p, cell), expected, "cell {cell}");
            let shared = keys.windows(2).any(|w| w[0].0 == w[1].0);
            assert_eq!(
                shared,
                cell > 1.2,
                "cells shared by several particles at {cell}"
            );
        }
    }

    /// The fields of two lists, for comparison.
    fn fields(nl: &NeighborList) -> String {
        format!(
            "{:?}",
            (
                (&nl.offsets, &nl.partner, &nl.partner_id, &nl.job_of_entry),
                (
                    &nl.job_offsets,
                    &nl.jobs,
                    &nl.evaluator_lower,
                    &nl.share_slot,
                    &nl.job_owner
                ),
                (&nl.history, nl.history_len, &nl.active, &nl.slot_offsets),
                (&nl.share, nl.block_reach),
            )
        )
    }

    /// A list rebuilt in place, over the storage of a list of other
    /// particles (more of them, with history written), is the list built
    /// afresh.
    #[test]
    fn a_list_rebuilt_in_place_is_the_list_built_afresh() {
        let p = spheres();
        let mut big = spheres();
        for k in 0..big.n_owned {
            big.x[k] *= 0.8;
        }
        big.refresh_packed();
        let mut list = NeighborList::build(&big, 0.3, 3);
        assert!(list.len() > NeighborList::build(&p, 0.2, 3).len());
        list.history.fill(0.5);
        list.active.fill(true);
        list.rebuild(&p, 0.2, 3);
        assert_eq!(fields(&list), fields(&NeighborList::build(&p, 0.2, 3)));
        list.rebuild(&big, 0.3, 0);
        assert_eq!(fields(&list), fields(&NeighborList::build(&big, 0.3, 0)));
    }

    /// [`spheres`] with its owned particles reordered by `perm` (new index
    /// `k` is old `perm[k]`) and the same 30 images (ghost `g` copies the
    /// particle that was owned index `4 g`); also returns the images' sources.
    fn permuted_spheres(perm: &[usize]) -> (Particles, Vec<u32>) {
        let mut p = spheres();
        p.truncate_ghosts();
        p.permute_owned(perm);
        let mut new_of_old = vec![0; perm.len()];
        for (new, &old) in perm.iter().enumerate() {
            new_of_old[old] = new;
        }
        let sources: Vec<u32> = (0..30).map(|g| new_of_old[4 * g] as u32).collect();
        for &k in &sources {
            let r = p.record(k as usize);
            p.push_ghost(&r, DVec3::new(5.5, 0.0, 0.0));
        }
        p.refresh_packed();
        (p, sources)
    }

    /// The records carried through a single-rank rebuild by pair
    /// ([`PairRecords`]) fill the new list exactly as the per-particle rows
    /// ([`HistoryRows`], the path with migration) do, including pairs that
    /// meet through periodic images (evaluated on both sides).
    #[test]
    fn pair_records_fill_a_rebuilt_list_as_history_rows_do() {
        use crate::neighbor::carry::{HistoryRows, PairRecords};
        let identity: Vec<usize> = (0..125).collect();
        let (p, sources) = permuted_spheres(&identity);
        let mut old = NeighborList::build(&p, 0.2, 3);
        // Every third pair has a record, the same on both of its jobs.
        for k in 0..p.n_owned {
            for e in old.offsets[k]..old.offsets[k + 1] {
                let (a, b) = (p.id[k], old.partner_id[e]);
                let (lo, hi) = (a.min(b), a.max(b));
                if (lo + hi) % 3 == 0 {
                    let v = lo as f64 + 0.001 * hi as f64;
                    old.record_mut(e).copy_from_slice(&[v, -v, 0.5]);
                }
            }
        }
        old.refresh_active();
        let perm: Vec<usize> = (0..125).map(|k| (k * 7 + 3) % 125).collect();
        let (q, _) = permuted_spheres(&perm);
        let mut by_rows = NeighborList::build(&q, 0.2, 3);
        HistoryRows::from_list(&old, 125)
            .select(&perm)
            .fill_list(&mut by_rows);
        let records = PairRecords::from_list(&old, &sources);
        let mut by_pairs = NeighborList::build(&q, 0.2, 3);
        records.fill_list(&mut by_pairs, &perm, &q.id);
        assert_eq!(fields(&by_pairs), fields(&by_rows));
        let ghost_jobs = (0..by_pairs.jobs.len())
            .filter(|&j| by_pairs.active[j] && by_pairs.jobs[j] as usize >= q.n_owned)
            .count();
        assert!(
            records.records() > 20 && ghost_jobs > 0,
            "{ghost_jobs} ghost jobs"
        );
    }

    /// A contact between two owned particles that meet through periodic
    /// images after the rebuild (one wrapped across the boundary) has a
    /// job on each side; both get the record, by pairs as by rows.
    #[test]
    fn a_contact_that_comes_to_meet_through_images_keeps_its_record_on_both_sides() {
        use crate::neighbor::carry::{HistoryRows, PairRecords};
        let sphere = |id: u64, x: f64| ParticleRecord {
            id,
            x: DVec3::new(x, 1.0, 1.0),
            v: DVec3::ZERO,
            omega: DVec3::ZERO,
            radius: 0.4,
            mass: 1.0,
            material: 0,
            frozen: false,
        };
        let mut before = Particles::default();
        before.push_owned(&sphere(1, 0.2));
        before.push_owned(&sphere(2, 0.9));
        before.refresh_packed();
        let mut old = NeighborList::build(&before, 0.2, 3);
        assert_eq!(old.jobs.len(), 1);
        old.history.copy_from_slice(&[1e-3, -2e-3, 3e-3]);
        old.refresh_active();
        // Particle 2 crossed x = 0 and was wrapped to the far side of a box
        // of length 5.5; each particle now meets the other's image.
        let mut after = Particles::default();
        after.push_owned(&sphere(1, 0.2));
        after.push_owned(&sphere(2, 5.45));
        after.push_ghost(&sphere(1, 0.2), DVec3::new(5.5, 0.0, 0.0));
        after.push_ghost(&sphere(2, 5.45), DVec3::new(-5.5, 0.0, 0.0));
        after.refresh_packed();
        let mut by_rows = NeighborList::build(&after, 0.2, 3);
        HistoryRows::from_list(&old, 2)
            .select(&[0, 1])
            .fill_list(&mut by_rows);
        let mut by_pairs = NeighborList::build(&after, 0.2, 3);
        PairRecords::from_list(&old, &[]).fill_list(&mut by_pairs, &[0, 1], &after.id);
        assert_eq!(fields(&by_pairs), fields(&by_rows));
        assert_eq!(by_pairs.jobs.len(), 2);
        assert_eq!(by_pairs.history, [[1e-3, -2e-3, 3e-3]; 2].concat());
        assert_eq!(by_pairs.active, [true, true]);
    }

    #[test]
    fn every_pair_has_one_job_held_by_its_evaluator() {
        let p = spheres();
        let nl = NeighborList::build(&p, 0.2, 3);
        let n = p.n_owned;
        let evaluator_of = |j: usize| nl.job_offsets.partition_point(|&o| o <= j) - 1;
        let mut entries_of_job = vec![0; nl.jobs.len()];
        let mut ghost_pairs = 0;
        for k in 0..n {
            let row = &nl.partner_id[nl.offsets[k]..nl.offsets[k + 1]];
            assert!(row.windows(2).all(|w| w[0] < w[1]), "row {k} sorted");
            let lower = row.iter().filter(|&&id| id < p.id[k]).count();
            assert_eq!(nl.slot_offsets[k + 1] - nl.slot_offsets[k], lower);
            let own = nl.job_offsets[k]..nl.job_offsets[k + 1];
            let mut previous = None;
            for e in nl.offsets[k]..nl.offsets[k + 1] {
                let q = nl.partner[e] as usize;
                let j = nl.job_of_entry[e] as usize;
                entries_of_job[j] += 1;
                if q >= n || p.id[k] < p.id[q] {
                    assert!(own.contains(&j), "entry {e} of {k} evaluates its pair");
                    assert_eq!(nl.evaluator_lower[j], p.id[k] < p.id[q], "job {j}");
                    assert_eq!(nl.jobs[j] as usize, q);
                    assert!(previous < Some(j), "jobs in row order");
                    previous = Some(j);
                    ghost_pairs += (q >= n) as usize;
                } else {
                    assert_eq!(evaluator_of(j), q, "the lower id {} evaluates", p.id[q]);
                    assert_eq!(nl.jobs[j] as usize, k);
                    assert!(nl.entry_of(q, p.id[k]).is_some(), "symmetric rows");
                }
            }
        }
        for (j, &c) in entries_of_job.iter().enumerate() {
            let ghost = nl.jobs[j] as usize >= n;
            assert_eq!(c, if ghost { 1 } else { 2 }, "job {j}");
        }
        assert!(ghost_pairs > 0 && nl.jobs.len() > 100);
        // Each job's share goes to the higher-id side's entry of the pair,
        // unless that side is a ghost; no entry takes two shares.
        let mut taken = vec![false; nl.slot_offsets[n]];
        for (j, &slot) in nl.share_slot.iter().enumerate() {
            let (k, q) = (evaluator_of(j), nl.jobs[j] as usize);
            let higher = if p.id[k] < p.id[q] { q } else { k };
            if higher >= n {
                assert_eq!(slot, NO_SLOT, "job {j}: the ghost's owner keeps its share");
                continue;
            }
            let (s, s0) = (slot as usize, nl.slot_offsets[higher]);
            assert!((s0..nl.slot_offsets[higher + 1]).contains(&s), "job {j}");
            let e = nl.offsets[higher] + (s - s0);
            assert_eq!(
                nl.job_of_entry[e] as usize, j,
                "slot of job {j} is its entry"
            );
            assert!(
                !std::mem::replace(&mut taken[s], true),
                "slot {s} taken twice"
            );
        }
    }

    /// Every owned particle's row holds exactly the partners (owned or
    /// ghost) within `(R_i + R_q) + reach` of it, but itself and frozen
    /// pairs, by id: the cell search against all pairs, on a polydisperse
    /// cloud (radii 1:3) spread over many cells with images along x.
    #[test]
    fn the_rows_hold_exactly_the_pairs_within_reach() {
        let mut p = Particles::default();
        // Positions and radii from the project's counter-based generator.
        let records: Vec<ParticleRecord> = (0..1500u64)
            .map(|k| {
                let u = crate::rng::particle_uniforms(7, 0, crate::rng::Stream::RandomInsertion, k);
                ParticleRecord {
                    id: (k * 389) % 1500,
                    x: DVec3::new(12.0 * u[0], 4.0 * u[1], 4.0 * u[2]),
                    v: DVec3::ZERO,
                    omega: DVec3::ZERO,
                    radius: 0.1 + 0.2 * u[3],
                    mass: 1.0,
                    material: 0,
                    frozen: k % 11 == 3,
                }
            })
            .collect();
        for r in &records {
            p.push_owned(r);
        }
        // Images of the particles near x = 0, shifted past x = 12.
        for r in records.iter().filter(|r| r.x.x < 1.0) {
            p.push_ghost(r, DVec3::new(12.0, 0.0, 0.0));
        }
        let reach = 0.15;
        let nl = NeighborList::build(&p, reach, 0);
        let image = |k: usize| p.x[k] + p.shift[k];
        let n = p.n_owned;
        let mut pairs = 0;
        for i in 0..n {
            let mut expected: Vec<u64> = (0..p.len())
                .filter(|&q| q != i && !(p.frozen[i] && p.frozen[q]))
                .filter(|&q| {
                    let cut = (p.radius[i] + p.radius[q]) + reach;
                    (image(q) - image(i)).length_squared() < cut * cut
                })
                .map(|q| p.id[q])
                .collect();
            expected.sort_unstable();
            let row = &nl.partner_id[nl.offsets[i]..nl.offsets[i + 1]];
            assert_eq!(row, expected, "row of particle {i} (id {})", p.id[i]);
            for e in nl.offsets[i]..nl.offsets[i + 1] {
                assert_eq!(p.id[nl.partner[e] as usize], nl.partner_id[e]);
            }
            pairs += row.len();
        }
        assert!(
            pairs > 2 * n,
            "{pairs} entries: a cloud dense enough to test"
        );
    }

    /// A row sorted by rank is the row sorted, short or long.
    #[test]
    fn rows_sort_by_id_at_any_length() {
        let mut state = 12345u64;
        for len in 0..40 {
            let mut row: Vec<(u64, u32)> = (0..len)
                .map(|k| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Unique ids: a random high part, the index below.
                    ((state >> 40) << 8 | k as u64, k as u32)
                })
                .collect();
            let mut expected = row.clone();
            expected.sort_unstable_by_key(|e| e.0);
            sort_row(&mut row);
            assert_eq!(row, expected, "length {len}");
        }
    }
}
