//! The cell grid that bins points for the neighbour search and for the
//! spatial order of the owned particles.

use crate::state::particles::Particles;
use crate::state::room::split_chunks;
use glam::DVec3;
use rayon::prelude::*;

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
        grid.rebin(points.len(), |k| points[k], size, 1, &mut Vec::new());
        grid
    }

    /// Bin the points `point(0)`, …, `point(n − 1)` anew into cells of
    /// edge at least `size` along y and z
    /// and `size / split` along x, reusing this grid's storage and `cells`
    /// (scratch for each point's cell). [`Self::near_slots`] then reaches
    /// `split` cells each way along x (still at least `size`) and one along
    /// y and z: thinner cells along the axis a row of cells runs along make
    /// the rows shorter (`2 + 1/split` edges instead of 3) at no cost in
    /// rows.
    pub fn rebin(
        &mut self,
        n: usize,
        point: impl Fn(usize) -> DVec3 + Sync,
        size: f64,
        split: usize,
        cells: &mut Vec<usize>,
    ) {
        let split = split.max(1);
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for k in 0..n {
            let x = point(k);
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if n == 0 {
            lo = DVec3::ZERO;
            hi = DVec3::ZERO;
        }
        // Cap the number of cells near 2 · split per point so a stray particle cannot blow up memory.
        let extent = (hi - lo).max(DVec3::splat(size));
        let mut size = size;
        let cap = (2 * split * n).max(64) as f64;
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
        self.items.resize(n, 0);
        cells.clear();
        let grid = &*self;
        cells.par_extend((0..n).into_par_iter().map(|k| grid.cell_of(point(k))));
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
        self.start[n_cells] = n as u32;
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
    #[inline(always)]
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

/// A permutation of the owned particles that sorts them by cell (for cache
/// locality); ties keep id order so the result is deterministic. The grid
/// bins them in cell order already; only each cell's few particles are
/// sorted, by id.
pub fn spatial_order(p: &Particles, cell: f64) -> Vec<usize> {
    let pts = &p.x[..p.n_owned];
    let grid = CellGrid::new(pts, cell.max(f64::MIN_POSITIVE));
    let mut order: Vec<usize> = grid.items.iter().map(|&k| k as usize).collect();
    let lens = grid.start.windows(2).map(|w| (w[1] - w[0]) as usize);
    (split_chunks(&mut order, lens)
        .into_par_iter()
        .with_min_len(256))
    .filter(|cell| cell.len() > 1)
    .for_each(|cell| cell.sort_unstable_by_key(|&k| p.id[k]));
    order
}
