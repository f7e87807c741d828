//! Cell list and Verlet neighbour list with a skin.
//!
//! The list is *full*: every owned particle lists all its partners (owned or
//! ghost) within `R_p + R_q + pad + skin`, sorted by the partner's global id.
//! Each owned particle then sums its contact forces in that fixed order, so
//! the total is independent of threads, ranks and local ordering. Each
//! entry carries its own copy of the contact history; the two copies of a
//! pair are updated from bit-identical inputs and so stay identical, and a
//! particle that migrates takes its records with it.
//!
//! The list stays valid until some particle has moved more than `skin / 2`
//! since the last build (a global decision, see `sim`). Building is O(N):
//! particles are binned into cubic cells of the largest interaction range.

use crate::particles::Particles;
use glam::DVec3;
use rayon::prelude::*;

/// Owned particles per parallel work block (fixed, so that the work split never depends on the thread count).
pub const BLOCK: usize = 512;

/// A uniform grid of cubic cells over a set of points.
#[derive(Debug, Clone)]
pub struct CellGrid {
    lo: DVec3,
    inv_size: f64,
    dims: [usize; 3],
    start: Vec<u32>,
    items: Vec<u32>,
}

impl CellGrid {
    /// Bin `points` into cells of edge at least `size`.
    pub fn new(points: &[DVec3], size: f64) -> Self {
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for &x in points {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if points.is_empty() {
            lo = DVec3::ZERO;
            hi = DVec3::ZERO;
        }
        // Cap the number of cells near 2 per point so a stray particle cannot blow up memory.
        let extent = (hi - lo).max(DVec3::splat(size));
        let mut size = size;
        let cap = (2 * points.len()).max(64) as f64;
        while (extent.x / size).ceil() * (extent.y / size).ceil() * (extent.z / size).ceil() > cap {
            size *= 1.26;
        }
        let dims = [
            ((extent.x / size) as usize).max(1) + 1,
            ((extent.y / size) as usize).max(1) + 1,
            ((extent.z / size) as usize).max(1) + 1,
        ];
        let inv_size = 1.0 / size;
        let n_cells = dims[0] * dims[1] * dims[2];
        let mut grid = Self {
            lo,
            inv_size,
            dims,
            start: vec![0; n_cells + 1],
            items: vec![0; points.len()],
        };
        let cells: Vec<usize> = points.iter().map(|&x| grid.cell_of(x)).collect();
        for &c in &cells {
            grid.start[c + 1] += 1;
        }
        for c in 0..n_cells {
            grid.start[c + 1] += grid.start[c];
        }
        let mut fill = grid.start.clone();
        for (k, &c) in cells.iter().enumerate() {
            grid.items[fill[c] as usize] = k as u32;
            fill[c] += 1;
        }
        grid
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

    /// Call `f` for every point index in the 27 cells around `x`.
    #[inline]
    pub fn for_each_near(&self, x: DVec3, mut f: impl FnMut(usize)) {
        let c = self.coords(x);
        for k in c[2].saturating_sub(1)..=(c[2] + 1).min(self.dims[2] - 1) {
            for j in c[1].saturating_sub(1)..=(c[1] + 1).min(self.dims[1] - 1) {
                let row = (k * self.dims[1] + j) * self.dims[0];
                let i0 = row + c[0].saturating_sub(1);
                let i1 = row + (c[0] + 1).min(self.dims[0] - 1);
                for &q in &self.items[self.start[i0] as usize..self.start[i1 + 1] as usize] {
                    f(q as usize);
                }
            }
        }
    }
}

/// One block's row lengths and `(partner id, partner index)` entries.
type BlockRows = (Vec<usize>, Vec<(u64, u32)>);

/// Full neighbour list in compressed-row form, with per-entry contact history.
#[derive(Debug, Clone, Default)]
pub struct NeighborList {
    /// Row starts: the partners of owned particle `p` are `offsets[p]..offsets[p+1]`.
    pub offsets: Vec<usize>,
    /// Local index of each partner (owned or ghost).
    pub partner: Vec<u32>,
    /// Global id of each partner (the sort key and the history key).
    pub partner_id: Vec<u64>,
    /// Contact history, `history_len` values per entry. Code that writes it
    /// other than through the force stage must call [`Self::refresh_active`].
    pub history: Vec<f64>,
    /// History values per entry.
    pub history_len: usize,
    /// Per entry: whether its history record may hold a non-zero value
    /// (false guarantees all zeros). Lets the force loop skip reading the
    /// records of the many entries that are not in contact.
    pub active: Vec<bool>,
}

impl NeighborList {
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
    /// The history starts at zero; [`crate::history::HistoryRows::fill_list`]
    /// puts the records carried through the rebuild back by partner id.
    pub fn build(p: &Particles, reach: f64, history_len: usize) -> Self {
        let images: Vec<DVec3> = p.x.iter().zip(&p.shift).map(|(&x, &s)| x + s).collect();
        let cell = 2.0 * p.max_radius() + reach;
        let grid = CellGrid::new(&images, cell.max(f64::MIN_POSITIVE));
        let n = p.n_owned;
        let blocks: Vec<BlockRows> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let mut counts = Vec::with_capacity(BLOCK);
                let mut entries = Vec::new();
                for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
                    let start = entries.len();
                    let xi = images[i];
                    let ri = p.radius[i] + reach;
                    let fi = p.frozen[i];
                    grid.for_each_near(xi, |q| {
                        if q == i || (fi && p.frozen[q]) {
                            return;
                        }
                        let cut = ri + p.radius[q];
                        if (images[q] - xi).length_squared() < cut * cut {
                            entries.push((p.id[q], q as u32));
                        }
                    });
                    entries[start..].sort_unstable();
                    counts.push(entries.len() - start);
                }
                (counts, entries)
            })
            .collect();
        let mut list = NeighborList {
            offsets: Vec::with_capacity(n + 1),
            history_len,
            ..Default::default()
        };
        list.offsets.push(0);
        for (counts, entries) in &blocks {
            for &c in counts {
                list.offsets.push(list.offsets.last().unwrap() + c);
            }
            list.partner_id.extend(entries.iter().map(|e| e.0));
            list.partner.extend(entries.iter().map(|e| e.1));
        }
        list.history = vec![0.0; list.len() * history_len];
        list.refresh_active();
        list
    }

    /// Recompute [`Self::active`] from the history records (call after
    /// changing [`Self::history`] other than through the force stage).
    pub fn refresh_active(&mut self) {
        let h = self.history_len;
        self.active = if h == 0 {
            vec![false; self.len()]
        } else {
            self.history
                .chunks_exact(h)
                .map(|rec| rec.iter().any(|&v| v != 0.0))
                .collect()
        };
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
/// locality); ties keep id order so the result is deterministic.
pub fn spatial_order(p: &Particles, cell: f64) -> Vec<usize> {
    let pts = &p.x[..p.n_owned];
    let grid = CellGrid::new(pts, cell.max(f64::MIN_POSITIVE));
    let mut keys: Vec<(usize, u64, usize)> = pts
        .iter()
        .enumerate()
        .map(|(k, &x)| (grid.cell_of(x), p.id[k], k))
        .collect();
    keys.par_sort_unstable();
    keys.into_iter().map(|k| k.2).collect()
}
