//! `random` blocks placed cell by cell: the same spheres on any number of
//! ranks, each rank placing only the cells near its own subdomain.
//!
//! # The rule
//!
//! The block's region is covered by a grid of cells at least one largest
//! diameter wide (`2 R_max`), sized to hold about [`SPHERES_PER_CELL`]
//! spheres; along a periodic axis the grid spans the whole period with an
//! even number of cells (or one), so that it wraps.
//!
//! 1. **Quotas.** Each cell's weight is the volume of the cell inside the
//!    region shrunk by `R_max` and clear of the walls by `R_max`, as an
//!    integer: exact for a box no wall cuts, else the count of the cell's
//!    5×5×5 midpoints that qualify. With `P(c)` the weight of the cells
//!    before `c` (z fastest, x slowest) and `W` the total, cell `c` holds
//!    the spheres numbered `⌊N P(c)/W⌋ .. ⌊N P(c+1)/W⌋`: exactly `N` in all,
//!    spread by volume, no cell more than one sphere from its share.
//!    Integer arithmetic makes the split the same on every rank.
//! 2. **Radii.** Sphere `i` draws its radius from its own stream, keyed by
//!    `(seed, block, i)`: the sizes are the distribution's draws whatever
//!    the geometry, and sphere `i` is particle `first_id + i`.
//! 3. **Positions.** The cells are placed in 8 phases, by the parities of
//!    their indices (`4 (i mod 2) + 2 (j mod 2) + k mod 2`). Two cells of
//!    one phase are at least a cell apart, so their spheres cannot touch,
//!    and a cell's spheres can touch only those of its 26 neighbours. A
//!    cell places its spheres largest first, each trying up to
//!    [`RANDOM_ATTEMPTS`] uniform points of the cell, from the stream keyed
//!    by `(seed, block, cell)`, that lie in the region shrunk by its
//!    radius, clear of the walls, of the earlier blocks and of the spheres
//!    its neighbours placed in earlier phases.
//!
//! So a cell's spheres depend only on its neighbours of earlier phases, and
//! they on theirs: on cells at most 1 away along x, 3 along y and 7 along z
//! (the table `WIDEN`). A rank places the cells overlapping its subdomain and those
//! they depend on, and nothing else, and gets the same spheres, bit for
//! bit, as one process that places them all. A walk over all of them
//! ([`RandomFill::try_for_each`]) places slabs of x layers one after
//! another, in bounded memory.
//!
//! This is the checkerboard (colour-by-parity) scheme of domain-decomposed
//! random sequential addition and Monte Carlo sweeps, where one colour's
//! cells are independent and are updated at once.
//!
//! # What it costs in density
//!
//! A cell must hold its share, and its last spheres look for room among
//! neighbours packed before it, so a fill jams sooner than one random
//! sequential addition over the whole region. Measured (`gravel check`,
//! equal spheres of radius 0.5 mm in a 40 mm box, 10,000 tries each): the
//! whole-region addition placed up to about 38,300 (packing fraction
//! 0.31), cells of 8 spheres 28,000 (0.23), of 64 31,700 (0.26), of 128
//! 32,700 (0.27), of 256 32,800. Denser beds are what a relaxed `fill` is
//! for. A region smaller than about one cell is placed as one cell, as the
//! whole-region addition.

use std::collections::HashMap;

use glam::DVec3;

#[cfg(test)]
use super::earlier::EarlierFile;
use super::earlier::{files_avoided, Earlier, NearFiles, Request};
use super::initial::Share;
use super::radius::RadiusDist;
use super::sample::{clear_of_walls, shrunk};
use super::{stream, uniform, Placer, RANDOM_ATTEMPTS};
use crate::geometry::domain::Domain;
use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use crate::parallel::comm::Comm;
use crate::state::particles::ParticleRecord;

/// The number of spheres a cell is sized to hold, where `2 R_max` does not
/// ask for larger cells. Fewer per cell jam sooner (see the module
/// documentation: 8 per cell reach a packing fraction of 0.23, 128 reach
/// 0.27, 256 hardly more); more per cell make the cells a rank places
/// beyond its subdomain larger.
pub const SPHERES_PER_CELL: f64 = 128.0;

/// Layers of cells a full walk places at once.
const WALK_LAYERS: usize = 4;

/// Mixed into the seed of the radius streams, so that they are independent
/// of the cells' position streams.
const RADIUS_SALT: u64 = 0x7261_6e64_6f6d_0001;

/// Weight units along one axis of a box region's cell (2^16).
const AXIS_UNITS: f64 = 65_536.0;

/// Sample points per axis of a curved region's cell weight.
const SAMPLES: usize = 5;

/// A sphere that found no room: the fill cannot hold the block's count.
#[derive(Debug, Clone, PartialEq)]
pub struct Unplaced {
    /// The sphere's number in the block (its id is `first_id` plus this).
    pub index: u64,
    /// Its radius.
    pub radius: f64,
    /// The centre of its cell.
    pub cell_centre: DVec3,
}

/// What a run or `gravel check` says of a fill (`particles[k]`) that
/// cannot place its count.
#[must_use]
pub fn unplaced_message(block: usize, u: &Unplaced) -> String {
    format!(
        "particles[{block}]: sphere {} of the block (radius {:e}) found no room in its cell at {:?} in {RANDOM_ATTEMPTS} tries: the region cannot hold `count` non-overlapping spheres placed at random; enlarge the region, lower `count`, or give `fill` (a relaxed fill reaches higher packing fractions)",
        u.index,
        u.radius,
        u.cell_centre.to_array()
    )
}

/// The cells of one placement and their quotas: `count` spheres, numbered
/// from 0, in `region`, clear of `walls`, across the periodic faces of
/// `domain` (steps 1 and 3 of the rule; a [`RandomFill`] and a pour's
/// batch, [`super::pour::PourBatch`], place their cells on it).
#[derive(Debug, Clone)]
pub struct CellPlan {
    count: u64,
    region: Region,
    r_max: f64,
    walls: Vec<Wall>,
    domain: Domain,
    grid: Grid,
    weights: Weights,
}

/// A `random` block with a `count`: the rule that places its spheres (see
/// the module documentation). It holds no sphere.
#[derive(Debug, Clone)]
pub struct RandomFill {
    seed: u64,
    block: u64,
    dist: RadiusDist,
    /// The record of every sphere but its id, position, radius and mass.
    template: ParticleRecord,
    density: f64,
    first_id: u64,
    earlier: Earlier,
    plan: CellPlan,
}

/// The cells: `n` along each axis from `lo`, each `size` wide; along a
/// periodic axis index `n` is index 0 again.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Grid {
    lo: DVec3,
    size: DVec3,
    n: [usize; 3],
    periodic: [bool; 3],
}

/// Cell weights and their prefix sums, in integers.
#[derive(Debug, Clone)]
enum Weights {
    /// A box region no wall cuts: the weight of cell `(i, j, k)` is
    /// `axis[0][i] axis[1][j] axis[2][k]`;
    /// `prefix[a][t]` is the sum of the first `t` along axis `a`.
    Separable {
        axis: [Vec<u64>; 3],
        prefix: [Vec<u128>; 3],
    },
    /// Another region: `layer_prefix[i]` is the weight of the x layers
    /// before `i`; a layer's cells are counted when they are needed.
    Layers { layer_prefix: Vec<u128> },
}

/// A range of cell indices along one axis, unwrapped (`lo..=hi` may run
/// past the grid on a periodic axis).
#[derive(Debug, Clone, Copy)]
struct Span {
    lo: i64,
    hi: i64,
}

impl Grid {
    fn new(region: &Region, domain: &Domain, edge: f64) -> Self {
        let (rlo, rhi) = region.bounds();
        let mut lo = DVec3::ZERO;
        let mut size = DVec3::ZERO;
        let mut n = [1; 3];
        for a in 0..3 {
            let (l, h) = if domain.periodic[a] {
                (domain.lo[a], domain.hi[a])
            } else {
                (rlo[a], rhi[a])
            };
            let len = (h - l).max(0.0);
            let mut m = ((len / edge).floor() as usize).clamp(1, 1 << 20);
            if domain.periodic[a] && m > 1 && m % 2 == 1 {
                m -= 1;
            }
            lo[a] = l;
            n[a] = m;
            size[a] = if len > 0.0 { len / m as f64 } else { edge };
        }
        Grid {
            lo,
            size,
            n,
            periodic: domain.periodic,
        }
    }

    fn cells(&self) -> u64 {
        self.n.iter().map(|&m| m as u64).product()
    }

    /// The cell's number in z-fastest order (x slowest): the order of
    /// the spheres' numbers, so that a slab of x layers holds a run of them.
    fn linear(&self, c: [usize; 3]) -> u64 {
        c[2] as u64 + self.n[2] as u64 * (c[1] as u64 + self.n[1] as u64 * c[0] as u64)
    }

    fn cell_box(&self, c: [usize; 3]) -> (DVec3, DVec3) {
        let i = DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64);
        let lo = self.lo + i * self.size;
        (lo, lo + self.size)
    }

    /// The cells along axis `a` that the coordinates `lo..=hi` touch.
    fn span(&self, a: usize, lo: f64, hi: f64) -> Span {
        if self.periodic[a] && hi - lo >= self.n[a] as f64 * self.size[a] {
            return Span {
                lo: 0,
                hi: self.n[a] as i64 - 1,
            };
        }
        // Clamped far from where `i64` arithmetic would overflow.
        let at = |x: f64| {
            let t = ((x - self.lo[a]) / self.size[a]).floor();
            t.clamp(-1.0e12, 1.0e12) as i64
        };
        let (mut s, mut e) = (at(lo), at(hi));
        if !self.periodic[a] {
            let last = self.n[a] as i64 - 1;
            (s, e) = (s.clamp(0, last), e.clamp(0, last));
        }
        Span { lo: s, hi: e }
    }

    /// The wrapped indices of `span` widened by `d`, each once.
    fn indices(&self, a: usize, span: Span, d: i64) -> Vec<usize> {
        let n = self.n[a] as i64;
        let (mut s, mut e) = (span.lo - d, span.hi + d);
        if self.periodic[a] {
            if e - s + 1 >= n {
                return (0..self.n[a]).collect();
            }
            return (s..=e).map(|t| t.rem_euclid(n) as usize).collect();
        }
        (s, e) = (s.max(0), e.min(n - 1));
        if s > e {
            return Vec::new();
        }
        (s as usize..=e as usize).collect()
    }
}

/// The phase of cell `c`: the parities of its indices, z in the lowest
/// bit and x in the highest.
fn phase(c: [usize; 3]) -> usize {
    c[2] % 2 + 2 * (c[1] % 2) + 4 * (c[0] % 2)
}

/// `WIDEN[q][a]`: how many cells beyond a box along axis `a` the cells of
/// phase `q` that the box's cells depend on may lie. A cell depends on its
/// neighbours of lower phases; a step to a neighbour moves along axis `a`
/// only if the two phases differ in `a`'s parity bit. So `WIDEN[7] = 0`
/// and `WIDEN[q][a] = max over p > q of WIDEN[p][a] + [bit a of p ≠ bit a
/// of q]`: 1 along x (whose bit changes once down the phases), 3 along y,
/// 7 along z, at most.
const WIDEN: [[i64; 3]; 8] = widen();

const fn widen() -> [[i64; 3]; 8] {
    let mut w = [[0i64; 3]; 8];
    let mut q = 7;
    while q > 0 {
        q -= 1;
        let mut a = 0;
        while a < 3 {
            let bit = 1 << (2 - a);
            let mut p = q + 1;
            while p < 8 {
                let step = if (p & bit) != (q & bit) { 1 } else { 0 };
                if w[p][a] + step > w[q][a] {
                    w[q][a] = w[p][a] + step;
                }
                p += 1;
            }
            a += 1;
        }
    }
    w
}

impl Weights {
    /// The weights of `inner` (the region shrunk by `R_max`) less what the
    /// `walls` leave no room in for a sphere of radius `r_max`.
    fn new(
        grid: &Grid,
        inner: &Region,
        walls: &[Wall],
        r_max: f64,
        comm: Option<&dyn Comm>,
    ) -> Self {
        let (ilo, ihi) = inner.bounds();
        let walls_cut = walls.iter().any(|w| w.box_clearance(ilo, ihi) < r_max);
        match *inner {
            Region::Box { lo, hi } if !walls_cut => {
                let axis: [Vec<u64>; 3] = std::array::from_fn(|a| {
                    (0..grid.n[a])
                        .map(|t| {
                            let c0 = grid.lo[a] + t as f64 * grid.size[a];
                            let len = (hi[a].min(c0 + grid.size[a]) - lo[a].max(c0)).max(0.0);
                            // A box flat along this axis (a sphere that fits exactly)
                            // still weighs its cell.
                            let len = if hi[a] == lo[a] && (c0..=c0 + grid.size[a]).contains(&lo[a])
                            {
                                grid.size[a]
                            } else {
                                len
                            };
                            (len / grid.size[a] * AXIS_UNITS).round() as u64
                        })
                        .collect()
                });
                let prefix = std::array::from_fn(|a| {
                    let mut p = vec![0u128];
                    for &w in &axis[a] {
                        p.push(p.last().unwrap() + u128::from(w));
                    }
                    p
                });
                Weights::Separable { axis, prefix }
            }
            _ => {
                // Each rank weighs an even share of the x layers; the
                // ranks share the layers' totals.
                let layer = |i: usize| -> u128 {
                    (layer_weights(grid, inner, walls, r_max, i).iter())
                        .map(|&w| u128::from(w))
                        .sum()
                };
                let n = grid.n[0];
                let totals: Vec<u128> = match comm.filter(|c| c.size() > 1) {
                    None => (0..n).map(layer).collect(),
                    Some(comm) => {
                        let mine = Share {
                            rank: comm.rank(),
                            size: comm.size(),
                        }
                        .of(n);
                        let mut buf = Vec::with_capacity(16 * mine.len());
                        for i in mine {
                            buf.extend_from_slice(&layer(i).to_le_bytes());
                        }
                        (comm.all_gather(&buf).iter())
                            .flat_map(|b| b.chunks_exact(16))
                            .map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes")))
                            .collect()
                    }
                };
                let mut layer_prefix = Vec::with_capacity(n + 1);
                layer_prefix.push(0u128);
                for t in totals {
                    layer_prefix.push(layer_prefix.last().unwrap() + t);
                }
                Weights::Layers { layer_prefix }
            }
        }
    }

    fn total(&self) -> u128 {
        match self {
            Weights::Separable { prefix, .. } => {
                prefix.iter().map(|p| *p.last().unwrap()).product()
            }
            Weights::Layers { layer_prefix } => *layer_prefix.last().unwrap(),
        }
    }
}

/// The weights of x layer `i`'s cells, z-fastest: how many of a cell's
/// 5×5×5 midpoints lie in `inner` with room for a sphere of radius `r_max`
/// clear of the `walls` (a curved region, or one that walls cut).
fn layer_weights(grid: &Grid, inner: &Region, walls: &[Wall], r_max: f64, i: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(grid.n[1] * grid.n[2]);
    for j in 0..grid.n[1] {
        for k in 0..grid.n[2] {
            let (lo, hi) = grid.cell_box([i, j, k]);
            let near: Vec<Wall> = (walls.iter())
                .filter(|w| w.box_clearance(lo, hi) < r_max)
                .cloned()
                .collect();
            let mut w = 0;
            for a in 0..SAMPLES {
                for b in 0..SAMPLES {
                    for c in 0..SAMPLES {
                        let f = DVec3::new(a as f64 + 0.5, b as f64 + 0.5, c as f64 + 0.5)
                            / SAMPLES as f64;
                        let x = lo + f * grid.size;
                        w += u64::from(inner.contains(x) && clear_of_walls(&near, x, r_max));
                    }
                }
            }
            out.push(w);
        }
    }
    out
}

/// The spheres of a cell: their numbers, centres and radii.
pub type CellSpheres = Vec<(u64, DVec3, f64)>;

/// The prefix weights of the cells a placement asks about, by layer (a
/// curved region's layers are counted once per placement).
struct Prefixes<'a> {
    plan: &'a CellPlan,
    layers: HashMap<usize, Vec<u128>>,
}

impl<'a> Prefixes<'a> {
    fn of(plan: &'a CellPlan) -> Self {
        Prefixes {
            plan,
            layers: HashMap::new(),
        }
    }

    /// `P(c)`: the weight of the cells before `c`, z-fastest.
    fn before(&mut self, c: [usize; 3]) -> u128 {
        let plan = self.plan;
        let g = &plan.grid;
        match &plan.weights {
            Weights::Separable { axis, prefix } => {
                // z-fastest: the x layers before, the y rows before in this
                // layer, the cells before in this row.
                let (b, z) = (&prefix[1], &prefix[2]);
                let (tb, tz) = (*b.last().unwrap(), *z.last().unwrap());
                prefix[0][c[0]] * tb * tz
                    + u128::from(axis[0][c[0]])
                        * (b[c[1]] * tz + u128::from(axis[1][c[1]]) * z[c[2]])
            }
            Weights::Layers { layer_prefix } => {
                let inner = plan.inner();
                let layer = self.layers.entry(c[0]).or_insert_with(|| {
                    let mut p = Vec::with_capacity(g.n[1] * g.n[2] + 1);
                    p.push(0u128);
                    for w in layer_weights(g, &inner, &plan.walls, plan.r_max, c[0]) {
                        p.push(p.last().unwrap() + u128::from(w));
                    }
                    p
                });
                layer_prefix[c[0]] + layer[c[2] + g.n[2] * c[1]]
            }
        }
    }

    /// The numbers of the spheres cell `c` holds.
    fn quota(&mut self, c: [usize; 3]) -> std::ops::Range<u64> {
        let g = self.plan.grid;
        let start = self.before(c);
        // The cell after `c` in z-fastest order, or the end.
        let next = if c[2] + 1 < g.n[2] {
            Some([c[0], c[1], c[2] + 1])
        } else if c[1] + 1 < g.n[1] {
            Some([c[0], c[1] + 1, 0])
        } else if c[0] + 1 < g.n[0] {
            Some([c[0] + 1, 0, 0])
        } else {
            None
        };
        let end = match next {
            Some(n) => self.before(n),
            None => self.plan.weights.total(),
        };
        self.plan.share(start)..self.plan.share(end)
    }
}

/// A cell as a placement hands it to the rule that places its spheres.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Its number in z-fastest order (the key of its stream).
    pub linear: u64,
    /// Its box.
    pub lo: DVec3,
    /// Its box.
    pub hi: DVec3,
    /// The numbers of the spheres it holds.
    pub numbers: std::ops::Range<u64>,
}

impl CellPlan {
    /// The cells for `count` spheres of radii at most `r_max` in `region`,
    /// sized to hold about `per_cell` spheres each (at least `2 r_max`
    /// wide), weighted by the volume left to centres inside `region` and
    /// clear of `walls`. `sized_for` is the count the cells are sized for
    /// (`count`, or fewer where a region could not hold them all). On
    /// several ranks (`comm`) each rank weighs a share of a curved
    /// region's layers, and the ranks share them (collective).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        count: u64,
        sized_for: u64,
        region: Region,
        r_max: f64,
        walls: &[Wall],
        domain: &Domain,
        per_cell: f64,
        comm: Option<&dyn Comm>,
    ) -> Self {
        let per_sphere = region.volume() / (sized_for.max(1) as f64);
        let edge = (2.0 * r_max).max((per_cell * per_sphere).cbrt());
        let grid = Grid::new(&region, domain, edge);
        let inner = shrunk(&region, r_max).unwrap_or(region);
        let weights = Weights::new(&grid, &inner, walls, r_max, comm);
        CellPlan {
            count,
            region,
            r_max,
            walls: walls.to_vec(),
            domain: *domain,
            grid,
            weights,
        }
    }

    /// How many spheres the cells hold.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The number of cells.
    #[must_use]
    pub fn cells(&self) -> u64 {
        self.grid.cells()
    }

    fn inner(&self) -> Region {
        shrunk(&self.region, self.r_max).unwrap_or(self.region)
    }

    /// `⌊N p / W⌋`.
    fn share(&self, p: u128) -> u64 {
        let total = self.weights.total();
        if total == 0 {
            return 0;
        }
        (u128::from(self.count) * p / total) as u64
    }

    /// Call `f(lo, hi, n)` for every cell `lo..hi` holding `n > 0` spheres.
    pub fn for_each_cell_count(&self, f: impl FnMut(DVec3, DVec3, u64)) {
        self.for_each_cell_count_in(0..u64::MAX, f);
    }

    /// [`Self::for_each_cell_count`] over the cells whose ordinal (x
    /// slowest, z fastest, empty cells counted) lies in `ordinals`.
    fn for_each_cell_count_in(
        &self,
        ordinals: std::ops::Range<u64>,
        mut f: impl FnMut(DVec3, DVec3, u64),
    ) {
        let mut prefixes = Prefixes::of(self);
        let g = self.grid;
        // Only the x layers that hold the ordinals are visited.
        let layer = (g.n[1] * g.n[2]).max(1) as u64;
        let first = usize::try_from(ordinals.start / layer).unwrap_or(usize::MAX);
        let end = usize::try_from(ordinals.end.div_ceil(layer)).unwrap_or(usize::MAX);
        let mut ordinal = first as u64 * layer;
        for i in first.min(g.n[0])..end.min(g.n[0]) {
            prefixes.layers.clear();
            for j in 0..g.n[1] {
                for k in 0..g.n[2] {
                    let at = ordinal;
                    ordinal += 1;
                    if !ordinals.contains(&at) {
                        continue;
                    }
                    let q = prefixes.quota([i, j, k]);
                    if !q.is_empty() {
                        let (lo, hi) = g.cell_box([i, j, k]);
                        f(lo, hi, q.end - q.start);
                    }
                }
            }
        }
    }

    /// The cells the box `lo..=hi` touches, along each axis. The box is
    /// taken a millionth of a cell wider, so that a centre on a cell's
    /// face, which rounding may put in either cell, has both.
    fn spans_near(&self, lo: DVec3, hi: DVec3) -> [Span; 3] {
        std::array::from_fn(|a| {
            let pad = 1e-6 * self.grid.size[a];
            self.grid.span(a, lo[a] - pad, hi[a] + pad)
        })
    }

    /// Every cell, along each axis.
    fn spans_all(&self) -> [Span; 3] {
        std::array::from_fn(|a| Span {
            lo: 0,
            hi: self.grid.n[a] as i64 - 1,
        })
    }

    /// The box holding every point within `reach` of the cells that placing
    /// the cells of `own` visits (they and those they depend on). Along a
    /// periodic axis it may run past the domain.
    fn visited_box(&self, own: [Span; 3], reach: f64) -> (DVec3, DVec3) {
        let g = self.grid;
        let (mut lo, mut hi) = (DVec3::ZERO, DVec3::ZERO);
        for a in 0..3 {
            let s = own[a];
            let d = WIDEN[0][a];
            lo[a] = g.lo[a] + (s.lo - d) as f64 * g.size[a] - reach;
            hi[a] = g.lo[a] + (s.hi + d + 1) as f64 * g.size[a] + reach;
        }
        (lo, hi)
    }

    /// The box holding every sphere of radius up to `reach - r_max` that a
    /// sphere of the cells near the box `lo..=hi` could touch
    /// (the cells within reach of those cells and of the cells they
    /// depend on).
    #[must_use]
    pub fn reach_of(&self, lo: DVec3, hi: DVec3, reach: f64) -> (DVec3, DVec3) {
        self.visited_box(self.spans_near(lo, hi), reach)
    }

    /// Place the cells of `own` and the cells they depend on, phase by
    /// phase, each by `place_cell` (which adds its spheres to `placer`);
    /// return the spheres of `own`'s cells in number order.
    fn place<E>(
        &self,
        own: [Span; 3],
        placer: &mut Placer,
        mut place_cell: impl FnMut(&Cell, &mut Placer) -> Result<CellSpheres, E>,
    ) -> Result<CellSpheres, E> {
        let g = self.grid;
        if self.count == 0 || (0..3).any(|a| g.indices(a, own[a], 0).is_empty()) {
            return Ok(Vec::new());
        }
        let mut prefixes = Prefixes::of(self);
        let own_at: [Vec<usize>; 3] = std::array::from_fn(|a| g.indices(a, own[a], 0));
        let mut mine: CellSpheres = Vec::new();
        for (p, widen) in WIDEN.iter().enumerate() {
            let at: [Vec<usize>; 3] = std::array::from_fn(|a| g.indices(a, own[a], widen[a]));
            for &k in &at[2] {
                for &j in &at[1] {
                    for &i in &at[0] {
                        let c = [i, j, k];
                        if phase(c) != p {
                            continue;
                        }
                        let numbers = prefixes.quota(c);
                        if numbers.is_empty() {
                            continue;
                        }
                        let (lo, hi) = g.cell_box(c);
                        let cell = Cell {
                            linear: g.linear(c),
                            lo,
                            hi,
                            numbers,
                        };
                        let placed = place_cell(&cell, placer)?;
                        if own_at[0].contains(&i)
                            && own_at[1].contains(&j)
                            && own_at[2].contains(&k)
                        {
                            mine.extend(placed);
                        }
                    }
                }
            }
        }
        mine.sort_by_key(|s| s.0);
        Ok(mine)
    }

    /// Place the cells near the box `lo..=hi` and the cells they depend
    /// on, phase by phase, each by `place_cell` (which adds its spheres to
    /// `placer`); return the spheres of the cells near the box, in number
    /// order.
    ///
    /// # Errors
    /// `place_cell`'s.
    pub fn place_near<E>(
        &self,
        lo: DVec3,
        hi: DVec3,
        placer: &mut Placer,
        place_cell: impl FnMut(&Cell, &mut Placer) -> Result<CellSpheres, E>,
    ) -> Result<CellSpheres, E> {
        self.place(self.spans_near(lo, hi), placer, place_cell)
    }

    /// Place every cell, as [`Self::place_near`] does.
    ///
    /// # Errors
    /// `place_cell`'s.
    pub fn place_all<E>(
        &self,
        placer: &mut Placer,
        place_cell: impl FnMut(&Cell, &mut Placer) -> Result<CellSpheres, E>,
    ) -> Result<CellSpheres, E> {
        self.place(self.spans_all(), placer, place_cell)
    }

    /// A centre for a sphere of radius `r` in `cell`: the first of up to
    /// `attempts` uniform points of the cell, drawn from `rng`, that lies in
    /// the region shrunk by `r`, clear of the walls and of the spheres in
    /// `placer`; `None` if none is.
    pub fn try_centre(
        &self,
        cell: &Cell,
        r: f64,
        attempts: u64,
        rng: &mut rand_pcg::Pcg64,
        placer: &Placer,
    ) -> Option<DVec3> {
        let inner = shrunk(&self.region, r)?;
        let (ilo, ihi) = inner.bounds();
        let (lo, hi) = (cell.lo.max(ilo), cell.hi.min(ihi));
        if !lo.cmple(hi).all() {
            return None;
        }
        (0..attempts).find_map(|_| {
            let u = DVec3::new(uniform(rng), uniform(rng), uniform(rng));
            let x = lo + u * (hi - lo);
            (inner.contains(x) && clear_of_walls(&self.walls, x, r) && !placer.overlaps(x, r))
                .then_some(x)
        })
    }
}

impl RandomFill {
    /// The fill of `count` spheres of radii `dist` in `region`, block
    /// `block` of a run seeded `seed`; `template` gives the material,
    /// velocity and frozen flag, `density` the masses. It avoids `walls`
    /// and what `earlier` blocks placed, across the periodic faces of
    /// `domain`. The region must have room for the largest sphere
    /// ([`super::has_room`]). Ids start at 0 until [`Self::set_first_id`].
    /// On several ranks (`comm`) its cells are weighed by parts
    /// ([`CellPlan::new`]; collective).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seed: u64,
        block: u64,
        count: u64,
        region: Region,
        dist: RadiusDist,
        template: ParticleRecord,
        density: f64,
        walls: &[Wall],
        domain: &Domain,
        earlier: Earlier,
        comm: Option<&dyn Comm>,
    ) -> Self {
        let plan = CellPlan::new(
            count,
            count,
            region,
            dist.max(),
            walls,
            domain,
            SPHERES_PER_CELL,
            comm,
        );
        RandomFill {
            seed,
            block,
            dist,
            template,
            density,
            first_id: 0,
            earlier,
            plan,
        }
    }

    /// The same fill with cells sized for `per_cell` spheres (tests use
    /// small cells, to have many).
    #[cfg(test)]
    fn with_cells_of(mut self, per_cell: f64) -> Self {
        let p = &self.plan;
        self.plan = CellPlan::new(
            p.count, p.count, p.region, p.r_max, &p.walls, &p.domain, per_cell, None,
        );
        self
    }

    /// Number the spheres from `id`.
    pub fn set_first_id(&mut self, id: u64) {
        self.first_id = id;
    }

    /// The rule, written out exactly (a fingerprint of the spheres it
    /// places: the same rule places the same spheres).
    #[must_use]
    pub fn rule(&self) -> String {
        let (lattices, spheres, fills) = self.earlier.counts();
        format!(
            "{:?}",
            (
                self.seed,
                self.block,
                self.plan.count,
                self.first_id,
                &self.plan.region,
                &self.dist,
                &self.template,
                self.density,
                self.plan.grid,
                lattices,
                spheres,
                fills,
            )
        )
    }

    /// How many spheres the block places.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.plan.count
    }

    /// The block's region (every sphere lies wholly inside it).
    #[must_use]
    pub fn region(&self) -> &Region {
        &self.plan.region
    }

    /// The radius distribution.
    #[must_use]
    pub fn dist(&self) -> &RadiusDist {
        &self.dist
    }

    /// The record of sphere `index` at `x` with radius `r`.
    #[must_use]
    pub fn record(&self, index: u64, x: DVec3, r: f64) -> ParticleRecord {
        ParticleRecord {
            id: self.first_id + index,
            x,
            radius: r,
            mass: ParticleRecord::sphere_mass(r, self.density),
            ..self.template.clone()
        }
    }

    /// The template record (material, velocity, frozen flag).
    #[must_use]
    pub fn template(&self) -> &ParticleRecord {
        &self.template
    }

    /// The radius of sphere `index`, from its own stream.
    #[must_use]
    pub fn radius_of(&self, index: u64) -> f64 {
        self.dist
            .draw(&mut stream(self.seed ^ RADIUS_SALT, self.block, index))
    }

    /// The number of cells.
    #[must_use]
    pub fn cells(&self) -> u64 {
        self.plan.cells()
    }

    /// Call `f(x, 1)` once per sphere of the cells of `share` (an even
    /// share of all the cells, in their order) at a point of its cell: a
    /// cell's `n` points lie evenly along the diagonal of the part of the
    /// cell where centres may go, so that they spread over it along every
    /// axis. Where the spheres will be, to within a cell, without placing
    /// them (for cutting the decomposition; the ranks add their shares up).
    pub fn for_each_cell_point(&self, share: Share, mut f: impl FnMut(DVec3, u64)) {
        let (ilo, ihi) = self.plan.inner().bounds();
        let cells = usize::try_from(self.plan.cells()).unwrap_or(usize::MAX);
        let mine = share.of(cells);
        let mine = mine.start as u64..mine.end as u64;
        self.plan.for_each_cell_count_in(mine, |lo, hi, n| {
            // The part of the cell where centres may go.
            let (lo, hi) = (lo.max(ilo), hi.min(ihi).max(lo.max(ilo)));
            for t in 0..n {
                f(lo + (t as f64 + 0.5) / n as f64 * (hi - lo), 1);
            }
        });
    }

    /// Call `f(lo, hi, n)` for every cell `lo..hi` holding `n > 0` spheres.
    pub fn for_each_cell_count(&self, f: impl FnMut(DVec3, DVec3, u64)) {
        self.plan.for_each_cell_count(f);
    }

    /// The spheres whose cells overlap the box `lo..=hi`, as
    /// `(number, centre, radius)` in number order, or the first sphere (in
    /// the placing order) that found no room.
    ///
    /// # Errors
    /// [`Unplaced`] when a sphere of these cells, or of one they depend
    /// on, found no room.
    pub fn place_near(
        &self,
        lo: DVec3,
        hi: DVec3,
        near: Option<&NearFiles>,
    ) -> Result<CellSpheres, Unplaced> {
        self.place(self.plan.spans_near(lo, hi), near)
    }

    /// [`Self::place_near`], the spheres of the files the fill avoids
    /// first fetched near the cells from the slices the ranks of `comm`
    /// hold ([`NearFiles::fetch`]; collective on several ranks, every
    /// rank calling it at the same point). One process holds them whole.
    ///
    /// # Errors
    /// [`Unplaced`], as [`Self::place_near`].
    pub fn place_near_fetching(
        &self,
        lo: DVec3,
        hi: DVec3,
        comm: Option<&dyn Comm>,
    ) -> Result<CellSpheres, Unplaced> {
        let files = files_avoided([self]);
        if files.iter().all(|f| f.whole) {
            return self.place_near(lo, hi, None);
        }
        let mut asked = Vec::new();
        self.requests_near(lo, hi, &mut asked);
        let near = NearFiles::fetch(comm, &files, &asked, &self.plan.domain);
        self.place_near(lo, hi, Some(&near))
    }

    /// What the fill avoids.
    #[must_use]
    pub fn earlier(&self) -> &Earlier {
        &self.earlier
    }

    /// The boxes of earlier files' spheres that [`Self::place_near`]
    /// (`lo..=hi`) needs, appended to `out`.
    pub fn requests_near(&self, lo: DVec3, hi: DVec3, out: &mut Vec<Request>) {
        self.requests(self.plan.spans_near(lo, hi), out);
    }

    /// The boxes of earlier files' spheres that placing `own` needs.
    fn requests(&self, own: [Span; 3], out: &mut Vec<Request>) {
        let (lo, hi) = self.visited(own);
        self.earlier.requests(lo, hi, out);
    }

    /// The box holding every earlier sphere that a sphere of the cells
    /// placing `own` visits could touch: the visited cells widened by the
    /// largest radius of this fill and of the earlier blocks.
    fn visited(&self, own: [Span; 3]) -> (DVec3, DVec3) {
        let reach = self.plan.r_max + self.earlier.r_max();
        self.plan.visited_box(own, reach)
    }

    /// Place the cells of `own` and the cells they depend on; return the
    /// spheres of `own`. An earlier file's spheres come from `near`, or,
    /// without it, from the file held whole.
    fn place(&self, own: [Span; 3], near: Option<&NearFiles>) -> Result<CellSpheres, Unplaced> {
        let plan = &self.plan;
        if plan.count == 0 {
            return Ok(Vec::new());
        }
        let mut placer = Placer::new(plan.r_max).periodic_in(&plan.domain);
        // What earlier blocks left near every cell this placing visits.
        let (lo, hi) = self.visited(own);
        (self.earlier).record_near(lo, hi, &plan.domain, near, &mut placer)?;
        plan.place(own, &mut placer, |cell, placer| {
            self.place_cell(cell, placer)
        })
    }

    /// Place `cell`'s spheres, largest first, adding them to `placer`.
    fn place_cell(&self, cell: &Cell, placer: &mut Placer) -> Result<CellSpheres, Unplaced> {
        let mut spheres: Vec<(u64, f64)> = (cell.numbers.clone())
            .map(|i| (i, self.radius_of(i)))
            .collect();
        spheres.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut rng = stream(self.seed, self.block, cell.linear);
        let mut out = Vec::with_capacity(spheres.len());
        for (index, r) in spheres {
            let Some(x) = self
                .plan
                .try_centre(cell, r, RANDOM_ATTEMPTS, &mut rng, placer)
            else {
                return Err(Unplaced {
                    index,
                    radius: r,
                    cell_centre: 0.5 * (cell.lo + cell.hi),
                });
            };
            placer.add(x, r);
            out.push((index, x, r));
        }
        Ok(out)
    }

    /// Call `f` for every sphere, in number order, placing slabs of
    /// 4 x layers of cells at a time, with the one layer either
    /// side that they depend on (bounded memory), until `f` fails or a
    /// sphere finds no room. For one process, which holds the files the
    /// fill avoids whole (`gravel check`, tests).
    ///
    /// # Errors
    /// `f`'s error, or [`Unplaced`] converted.
    pub fn try_for_each<E: From<Unplaced>>(
        &self,
        mut f: impl FnMut(u64, DVec3, f64) -> Result<(), E>,
    ) -> Result<(), E> {
        let g = self.plan.grid;
        let all = self.plan.spans_all();
        for i0 in (0..g.n[0]).step_by(WALK_LAYERS) {
            let i1 = (i0 + WALK_LAYERS).min(g.n[0]) - 1;
            let slab = [
                Span {
                    lo: i0 as i64,
                    hi: i1 as i64,
                },
                all[1],
                all[2],
            ];
            for (i, x, r) in self.place(slab, None)? {
                f(i, x, r)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(region: Region, domain: Domain, count: u64, dist: RadiusDist) -> RandomFill {
        fill_after(region, domain, count, dist, Earlier::default())
    }

    fn fill_after(
        region: Region,
        domain: Domain,
        count: u64,
        dist: RadiusDist,
        earlier: Earlier,
    ) -> RandomFill {
        let template = ParticleRecord {
            id: 0,
            x: DVec3::ZERO,
            v: DVec3::ZERO,
            omega: DVec3::ZERO,
            radius: 0.0,
            mass: 0.0,
            material: 0,
            frozen: false,
        };
        RandomFill::new(
            5,
            1,
            count,
            region,
            dist,
            template,
            1000.0,
            &[],
            &domain,
            earlier,
            None,
        )
        .with_cells_of(8.0)
    }

    fn all(f: &RandomFill) -> CellSpheres {
        let mut out = Vec::new();
        f.try_for_each(|i, x, r| {
            out.push((i, x, r));
            Ok::<(), Unplaced>(())
        })
        .unwrap();
        out
    }

    /// The unit box cut in `parts` slabs along axis `a`: the spheres that
    /// `place(lo, hi)` gives for each slab whose centres lie in it, in
    /// number order.
    fn by_parts(
        a: usize,
        parts: usize,
        mut place: impl FnMut(DVec3, DVec3) -> CellSpheres,
    ) -> CellSpheres {
        let mut got: CellSpheres = Vec::new();
        for p in 0..parts {
            let mut lo = DVec3::splat(-1.0);
            let mut hi = DVec3::splat(2.0);
            lo[a] = p as f64 / parts as f64;
            hi[a] = (p + 1) as f64 / parts as f64;
            let inside =
                |x: DVec3| x[a] >= lo[a] && (x[a] < hi[a] || (p + 1 == parts && x[a] <= hi[a]));
            got.extend(place(lo, hi).into_iter().filter(|s| inside(s.1)));
        }
        got.sort_by_key(|s| s.0);
        got
    }

    fn unit_box() -> Region {
        Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
        }
    }

    fn closed() -> Domain {
        Domain {
            lo: DVec3::splat(-0.5),
            hi: DVec3::splat(1.5),
            periodic: [false; 3],
        }
    }

    #[test]
    fn every_sphere_is_placed_once_inside_and_apart() {
        let dist = RadiusDist::Uniform {
            min: 0.02,
            max: 0.04,
        };
        let f = fill(unit_box(), closed(), 2000, dist);
        let s = all(&f);
        assert_eq!(s.len(), 2000);
        for (k, &(i, x, r)) in s.iter().enumerate() {
            assert_eq!(i, k as u64, "numbers 0..N, in order");
            assert_eq!(r, f.radius_of(i), "each sphere keeps its drawn radius");
            assert!(unit_box().holds_sphere(x, r));
        }
        let mut placer = Placer::new(0.04);
        for &(_, x, r) in &s {
            assert!(!placer.overlaps(x, r), "sphere at {x} overlaps");
            placer.add(x, r);
        }
    }

    #[test]
    fn any_box_of_cells_gives_the_same_spheres_as_the_whole_walk() {
        for (region, domain) in [
            (unit_box(), closed()),
            (
                unit_box(),
                Domain {
                    lo: DVec3::ZERO,
                    hi: DVec3::ONE,
                    periodic: [true, false, true],
                },
            ),
            (
                Region::Cylinder {
                    center: DVec3::splat(0.5),
                    axis: DVec3::Z,
                    radius: 0.5,
                    half_length: 0.5,
                },
                closed(),
            ),
        ] {
            let dist = RadiusDist::Uniform {
                min: 0.015,
                max: 0.03,
            };
            let f = fill(region, domain, 3000, dist);
            let whole = all(&f);
            assert_eq!(whole.len(), 3000);
            // Cut the box in halves and thirds along each axis: the parts'
            // spheres (each in the part holding its centre) are the whole's.
            for a in 0..3 {
                for parts in [2, 3] {
                    let got = by_parts(a, parts, |lo, hi| f.place_near(lo, hi, None).unwrap());
                    assert_eq!(got, whole, "{} cut {parts} along {a}", region.kind());
                }
            }
        }
    }

    #[test]
    fn the_phases_reach_1_along_x_3_along_y_and_7_along_z() {
        assert_eq!(WIDEN[0], [1, 3, 7]);
        assert_eq!(WIDEN[7], [0, 0, 0]);
        // A cell depends on its neighbours of lower phases only: the table
        // holds for every chain of such steps (checked by brute force).
        for (q, widen) in WIDEN.iter().enumerate() {
            for (a, &w) in widen.iter().enumerate() {
                let bit = 1 << (2 - a);
                let longest = (q + 1..8)
                    .map(|p| WIDEN[p][a] + i64::from((p & bit) != (q & bit)))
                    .max()
                    .unwrap_or(0);
                assert_eq!(w, longest);
            }
        }
    }

    #[test]
    fn quotas_follow_the_volume_and_sum_to_the_count() {
        let f = fill(unit_box(), closed(), 10_000, RadiusDist::Fixed(0.01));
        let mut total = 0;
        let mut inner = Vec::new();
        f.for_each_cell_count(|lo, hi, n| {
            let x = 0.5 * (lo + hi);
            total += n;
            // Cells wholly inside the region shrunk by the radius have equal weights.
            if x.cmpgt(DVec3::splat(0.2)).all() && x.cmplt(DVec3::splat(0.8)).all() {
                inner.push(n);
            }
        });
        assert_eq!(total, 10_000);
        let (lo, hi) = (inner.iter().min().unwrap(), inner.iter().max().unwrap());
        assert!(hi - lo <= 1, "interior quotas {lo}..{hi}");
        // 10,000 in (0.98)³ of the unit box: about 10,400 per unit volume.
        let cell = f.plan.grid.size.element_product();
        let expected = 10_000.0 * cell / 0.98f64.powi(3);
        assert!((*lo as f64 - expected).abs() <= 1.0, "{lo} vs {expected}");
    }

    #[test]
    fn a_fill_too_dense_names_the_sphere_that_found_no_room() {
        let f = fill(unit_box(), closed(), 400, RadiusDist::Fixed(0.1));
        let e = f
            .try_for_each(|_, _, _| Ok::<(), Unplaced>(()))
            .unwrap_err();
        assert_eq!(e.radius, 0.1);
        assert!(e.index < 400);
    }

    /// A fill of small spheres after a fill of spheres six times larger
    /// and a file of spheres five times larger: no sphere overlaps an
    /// earlier one, and any box of cells, given only the file's spheres
    /// it asks for, places what the whole walk places. (The visited cells
    /// must be widened by the earlier blocks' largest radius, not by the
    /// fill's own: with its own, some cuts placed spheres over a large
    /// one.)
    #[test]
    fn a_fill_after_larger_spheres_avoids_them_in_any_box_of_cells() {
        let domain = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic: [true, false, false],
        };
        let big = fill(unit_box(), domain, 150, RadiusDist::Fixed(0.06));
        let big_spheres = all(&big);
        assert_eq!(big_spheres.len(), 150);
        // The file: a layer of spheres at every x and y, clear of the big
        // ones (so some lie at the edges of the walk's slabs).
        let mut file_spheres = Vec::new();
        for k in 0..400 {
            let x = DVec3::new(
                0.05 * (k % 20) as f64 + 0.02,
                0.05 * (k / 20) as f64 + 0.02,
                0.5,
            );
            let clear = (big_spheres.iter()).all(|&(_, y, s)| (y - x).length() > s + 0.05)
                && (file_spheres.iter()).all(|&(y, _): &(DVec3, f64)| (y - x).length() > 0.1);
            if clear {
                file_spheres.push((x, 0.05));
            }
        }
        assert!(file_spheres.len() >= 20, "{}", file_spheres.len());
        let file = EarlierFile {
            block: 0,
            rows: file_spheres.len() as u64,
            r_max: 0.05,
            spheres: std::sync::Arc::new(file_spheres.clone()),
            whole: true,
        };
        let mut earlier = Earlier::default();
        earlier.push_file(file);
        earlier.push_fill(big);
        let small = fill_after(unit_box(), domain, 8_000, RadiusDist::Fixed(0.008), earlier);
        let whole = all(&small);
        assert_eq!(whole.len(), 8_000);
        let mut placer = Placer::new(0.008).periodic_in(&domain);
        big_spheres.iter().for_each(|&(_, x, r)| placer.add(x, r));
        file_spheres.iter().for_each(|&(x, r)| placer.add(x, r));
        for &(i, x, r) in &whole {
            assert!(
                !placer.overlaps(x, r),
                "sphere {i} at {x} overlaps an earlier one"
            );
        }
        let files = files_avoided([&small]);
        assert_eq!(files.len(), 1);
        for a in 0..3 {
            for parts in [2, 3, 5] {
                let got = by_parts(a, parts, |lo, hi| {
                    let mut asked = Vec::new();
                    small.requests_near(lo, hi, &mut asked);
                    let near = NearFiles::fetch(None, &files, &asked, &domain);
                    small.place_near(lo, hi, Some(&near)).unwrap()
                });
                assert_eq!(got, whole, "cut {parts} along {a}");
            }
        }
    }

    /// The ranks' shares of a fill's cell points (for the decomposition's
    /// spread) are, together and in rank order, the points of the whole.
    #[test]
    fn the_shares_of_cell_points_add_up_to_the_whole() {
        let f = fill(unit_box(), closed(), 3000, RadiusDist::Fixed(0.01));
        let points = |share: Share| {
            let mut out = Vec::new();
            f.for_each_cell_point(share, |x, n| out.push((x, n)));
            out
        };
        let whole = points(Share::default());
        assert_eq!(whole.len(), 3000);
        for size in [2, 3, 7] {
            let parts: Vec<_> = (0..size)
                .flat_map(|rank| points(Share { rank, size }))
                .collect();
            assert_eq!(parts, whole, "{size} shares");
        }
    }
}
