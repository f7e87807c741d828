//! Spatial domain decomposition: a Cartesian grid of subdomains, one per rank.
//!
//! The box is cut along each axis at `cuts[a][0] = lo < cuts[a][1] < … <
//! cuts[a][p_a] = hi`; rank `(i, j, k)` owns the particles whose (wrapped)
//! centre lies in `[cuts[0][i], cuts[0][i+1]) × …`. The grid comes from
//! `[parallel] grid` or is chosen here from the number of ranks, the box and
//! the particles' extent ([`Decomposition::choose`]):
//!
//! - dims: the factorisation `p_x p_y p_z = P` with the least internal cut
//!   area over the particles' extent, with cuts across the gravity axis
//!   penalised (a settled bed is thin along gravity: slicing it there puts
//!   most particles on the bottom ranks);
//! - interior cuts: at the quantiles of the initial particles' coordinates
//!   (from a histogram of them, as [`crate::parallel::balance`] does)
//!   along that axis, so each slab holds the same number of them; uniform
//!   over the particles' extent when there are too few; uniform over the box
//!   as the last resort. The extent and the histograms ([`Spread`]) come
//!   from one walk over the initial particles; in a run whose config has
//!   `file` blocks, each rank adds the slice of each file it read, and the
//!   ranks' spreads are summed (whole numbers: the same on every rank, and
//!   the same as one walk over everything).
//!
//! The cuts move during the run when [`crate::parallel::balance`] finds
//! the ranks' loads uneven; the dims never change.
//!
//! Every subdomain must be at least one interaction range (`2 R_max + skin`
//! plus any range padding) thick, so that ghosts come only from the 26
//! adjacent subdomains; a grid that cannot satisfy this is refused before
//! step 0 with the limit in the message.
//!
//! The decomposition never changes the trajectory: forces are summed in
//! partner-id order whichever rank computes them.

use super::balance::AxisHistogram;
use super::comm::Comm;
use crate::config::Setup;
use crate::error::{GravelError, Result};
use crate::geometry::domain::Domain;
use crate::insert::initial::Files;
use crate::state::particles::ParticleRecord;
use glam::DVec3;

const AXES: [&str; 3] = ["x", "y", "z"];

/// The grid of subdomains and this rank's place in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decomposition {
    /// Ranks per axis.
    pub dims: [usize; 3],
    /// Cut positions per axis (`dims[a] + 1` values, from `lo` to `hi`).
    pub cuts: [Vec<f64>; 3],
    /// This rank's grid coordinates.
    pub coords: [usize; 3],
    /// This rank.
    pub rank: usize,
    /// Periodicity per axis.
    pub periodic: [bool; 3],
}

impl Decomposition {
    /// The single-rank decomposition of a box.
    pub fn single(d: &Domain) -> Self {
        Self {
            dims: [1, 1, 1],
            cuts: [
                vec![d.lo.x, d.hi.x],
                vec![d.lo.y, d.hi.y],
                vec![d.lo.z, d.hi.z],
            ],
            coords: [0, 0, 0],
            rank: 0,
            periodic: d.periodic,
        }
    }

    /// The decomposition of `setup` over `ranks` ranks, seen from `rank`:
    /// [`Decomposition::single`] on one rank, where `[parallel] grid` must
    /// be `[1, 1, 1]` or left out, else [`Decomposition::choose`].
    pub fn for_ranks(setup: &Setup, ranks: usize, rank: usize) -> Result<Self> {
        if ranks <= 1 {
            check_grid(setup, 1)?;
            Ok(Self::single(&setup.domain))
        } else {
            Self::choose(setup, ranks, rank)
        }
    }

    /// The decomposition of `setup` over `ranks` ranks, seen from `rank`
    /// (the same grid on every rank: it depends only on global data), from
    /// a walk over every initial particle ([`Spread::of`]).
    pub fn choose(setup: &Setup, ranks: usize, rank: usize) -> Result<Self> {
        Self::choose_from(setup, ranks, rank, &Spread::of(setup, Files::Read))
    }

    /// The decomposition over the ranks of `comm`, seen from this rank:
    /// each rank finds where its share of the initial particles lies
    /// ([`Spread::of`]; with [`Files::Skip`], `slices` are the particles
    /// of the files it read), and the ranks add their spreads up, so that
    /// every rank cuts the same grid. Collective.
    pub fn shared(
        setup: &Setup,
        comm: &dyn Comm,
        files: Files,
        slices: &[Vec<ParticleRecord>],
    ) -> Result<Self> {
        let mut spread = Spread::of(setup, files);
        slices.iter().for_each(|s| spread.add(s));
        spread.reduce(comm);
        Self::choose_from(setup, comm.size(), comm.rank(), &spread)
    }

    /// [`Self::choose`] from `spread`, where the initial particles lie.
    pub fn choose_from(setup: &Setup, ranks: usize, rank: usize, spread: &Spread) -> Result<Self> {
        let file = &setup.config_path;
        let d = &setup.domain;
        let width = halo_width(setup);
        let (ext_lo, ext_hi) = particle_extent(setup, spread.bounds);
        let dims = match setup.grid {
            Some(g) => {
                check_grid(setup, ranks)?;
                g.map(|v| v as usize)
            }
            None => auto_dims(ranks, ext_hi - ext_lo, setup.gravity, d.length(), width)
                .ok_or_else(|| {
                    GravelError::config(
                        file,
                        format!(
                            "parallel: {ranks} ranks cannot be arranged in a grid whose subdomains are all at least one interaction range (2 R_max + skin = {width:e}) thick in a box of {:?}; use fewer ranks",
                            d.length().to_array()
                        ),
                    )
                })?,
        };
        let mut cuts: [Vec<f64>; 3] = Default::default();
        for a in 0..3 {
            cuts[a] = axis_cuts(setup, spread, a, dims[a], ext_lo[a], ext_hi[a], width).ok_or_else(
                || {
                    GravelError::config(
                        file,
                        format!(
                            "parallel.grid: {} subdomains along {} would be thinner than one interaction range (2 R_max + skin = {width:e}) over a box length of {:e}; use at most {} along {}",
                            dims[a],
                            AXES[a],
                            d.length()[a],
                            ((d.length()[a] / width).floor() as usize).max(1),
                            AXES[a]
                        ),
                    )
                },
            )?;
        }
        let mut out = Self {
            dims,
            cuts,
            coords: [0; 3],
            rank,
            periodic: d.periodic,
        };
        out.coords = out.coords_of(rank);
        Ok(out)
    }

    /// The same grid with the cuts along axis `a` replaced by `cuts`
    /// (`dims[a] + 1` values from the box's `lo` to its `hi`).
    pub fn with_cuts(&self, a: usize, cuts: Vec<f64>) -> Self {
        debug_assert_eq!(cuts.len(), self.dims[a] + 1);
        let mut out = self.clone();
        out.cuts[a] = cuts;
        out
    }

    /// The grid coordinates of `rank`.
    pub fn coords_of(&self, rank: usize) -> [usize; 3] {
        let d = self.dims;
        [rank / (d[1] * d[2]), (rank / d[2]) % d[1], rank % d[2]]
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }

    /// The rank at grid coordinates `c`.
    pub fn rank_of(&self, c: [usize; 3]) -> usize {
        (c[0] * self.dims[1] + c[1]) * self.dims[2] + c[2]
    }

    /// The slab along axis `a` holding coordinate `x` (clamped to the box).
    pub fn slab(&self, a: usize, x: f64) -> usize {
        let cuts = &self.cuts[a];
        // Number of interior cuts at or below x.
        cuts[1..cuts.len() - 1].partition_point(|&c| c <= x)
    }

    /// The rank owning a (wrapped) position.
    pub fn owner(&self, x: DVec3) -> usize {
        self.rank_of([self.slab(0, x.x), self.slab(1, x.y), self.slab(2, x.z)])
    }

    /// This rank's subdomain.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.bounds_of(self.rank)
    }

    /// The subdomain of `rank`: `[lo, hi)` per axis.
    pub fn bounds_of(&self, rank: usize) -> (DVec3, DVec3) {
        let c = self.coords_of(rank);
        (
            DVec3::new(self.cuts[0][c[0]], self.cuts[1][c[1]], self.cuts[2][c[2]]),
            DVec3::new(
                self.cuts[0][c[0] + 1],
                self.cuts[1][c[1] + 1],
                self.cuts[2][c[2] + 1],
            ),
        )
    }

    /// The other ranks among the (up to 26) adjacent subdomains, periodic
    /// wrap included, sorted and without repeats (a symmetric relation).
    pub fn peers(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for dx in -1i64..=1 {
            for dy in -1i64..=1 {
                for dz in -1i64..=1 {
                    let mut c = [0usize; 3];
                    let mut ok = true;
                    for (a, o) in [dx, dy, dz].into_iter().enumerate() {
                        let v = self.coords[a] as i64 + o;
                        let p = self.dims[a] as i64;
                        if (0..p).contains(&v) {
                            c[a] = v as usize;
                        } else if self.periodic[a] {
                            c[a] = v.rem_euclid(p) as usize;
                        } else {
                            ok = false;
                        }
                    }
                    if ok {
                        let r = self.rank_of(c);
                        if r != self.rank {
                            out.push(r);
                        }
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// One line describing the grid, for logs and `gravel check`.
    pub fn describe(&self) -> String {
        let fmt = |v: &Vec<f64>| {
            v.iter()
                .map(|&c| crate::math::figures::sig(c, 5))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "grid {:?} ({} rank(s)); cuts x [{}], y [{}], z [{}]",
            self.dims,
            self.size(),
            fmt(&self.cuts[0]),
            fmt(&self.cuts[1]),
            fmt(&self.cuts[2])
        )
    }
}

/// Halo width: the largest distance at which two particles can interact
/// before the next neighbour-list rebuild, `2 R_max + pad + skin`.
pub fn halo_width(setup: &Setup) -> f64 {
    2.0 * setup.max_radius + setup.range_pad + setup.skin
}

/// How far beyond its own radius a particle can reach a partner before the
/// next rebuild, `R_max + pad + skin`: a pair of radii `R_p`, `R_q` is
/// listed within `R_p + R_q + pad + skin`, so a particle farther than its
/// radius plus this from a face has no partner across it, and the halo
/// ([`crate::parallel::halo::Halo::build`]) does not copy it there.
pub fn halo_reach(setup: &Setup) -> f64 {
    setup.max_radius + setup.range_pad + setup.skin
}

/// Where the initial particles lie, for cutting the decomposition: the
/// box holding them whole and, per axis, a histogram of their centres over
/// the box.
#[derive(Debug, Clone)]
pub struct Spread {
    /// The box holding every initial particle whole, `None` for none.
    pub bounds: Option<(DVec3, DVec3)>,
    /// Along x, y and z, over the domain.
    pub histograms: [AxisHistogram; 3],
}

impl Spread {
    /// The spread of this process's share of `setup`'s initial particles
    /// (all of them on one process; on several ranks, [`Self::reduce`]
    /// adds the ranks' spreads up), from one walk over them and one for
    /// the box; `files` says whether the walks read the files.
    #[must_use]
    pub fn of(setup: &Setup, files: Files) -> Self {
        let d = &setup.domain;
        let mut histograms = [0, 1, 2].map(|a| AxisHistogram::new(d.lo[a], d.hi[a]));
        setup.initial.for_each_weighted(files, |x, n| {
            for (a, h) in histograms.iter_mut().enumerate() {
                h.add(x[a], n);
            }
        });
        Spread {
            bounds: setup.initial.bounds(files),
            histograms,
        }
    }

    /// Add `records`, particles the walks left out.
    pub fn add(&mut self, records: &[ParticleRecord]) {
        for r in records {
            for (a, h) in self.histograms.iter_mut().enumerate() {
                h.add(r.x[a], 1);
            }
            let (lo, hi) = (r.x - r.radius, r.x + r.radius);
            self.bounds = Some(match self.bounds {
                Some((a, b)) => (a.min(lo), b.max(hi)),
                None => (lo, hi),
            });
        }
    }

    /// Every rank's spread together (the box's union, the histograms'
    /// sums: whole numbers, so the sum is exact in any order). Collective.
    pub fn reduce(&mut self, comm: &dyn Comm) {
        let (lo, hi) = self
            .bounds
            .unwrap_or((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)));
        let lo = DVec3::from_array([0, 1, 2].map(|a| -comm.max_f64(-lo[a])));
        let hi = DVec3::from_array([0, 1, 2].map(|a| comm.max_f64(hi[a])));
        self.bounds = lo.cmple(hi).all().then_some((lo, hi));
        for h in &mut self.histograms {
            comm.sum_f64(&mut h.bins);
        }
    }
}

/// Where particles will be: the bounding box of the initial particles and
/// the pouring regions, stretched along gravity to the box's end (poured or
/// settling particles fall that way). Periodic axes always span the box,
/// and so do the axes across gravity of a run that pours.
fn particle_extent(setup: &Setup, bounds: Option<(DVec3, DVec3)>) -> (DVec3, DVec3) {
    let d = &setup.domain;
    let (mut lo, mut hi) =
        bounds.unwrap_or((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)));
    for s in &setup.pours {
        let (a, b) = s.region.bounds();
        lo = lo.min(a);
        hi = hi.max(b);
    }
    if !(lo.cmple(hi).all()) {
        return (d.lo, d.hi);
    }
    for a in 0..3 {
        // Poured particles spread sideways from their source as they
        // land: the box, not the source, is where they will be.
        if d.periodic[a] || (!setup.pours.is_empty() && setup.gravity[a] == 0.0) {
            lo[a] = d.lo[a];
            hi[a] = d.hi[a];
        } else if setup.gravity[a] < 0.0 {
            lo[a] = d.lo[a];
        } else if setup.gravity[a] > 0.0 {
            hi[a] = d.hi[a];
        }
    }
    (lo.max(d.lo), hi.min(d.hi))
}

/// `[parallel] grid`, if given, must have as many subdomains as the run
/// has ranks (entries of at least 1 are checked with the config).
fn check_grid(setup: &Setup, ranks: usize) -> Result<()> {
    let Some(g) = setup.grid else {
        return Ok(());
    };
    let n = g.iter().map(|&v| v as usize).product::<usize>();
    if n == ranks {
        return Ok(());
    }
    Err(GravelError::config(
        &setup.config_path,
        format!(
            "parallel.grid: {g:?} has {n} subdomains but the run has {ranks} rank(s); the product must equal the number of ranks{}",
            if ranks == 1 {
                " (on one rank, give [1, 1, 1] or leave grid out)"
            } else {
                ""
            }
        ),
    ))
}

/// The factorisation of `ranks` into a grid with the least internal cut area
/// over `extent`, cuts across gravity's main axis weighted ×10, among grids
/// whose slabs are at least `width` thick over the box (`None` if none is).
fn auto_dims(
    ranks: usize,
    extent: DVec3,
    gravity: DVec3,
    box_len: DVec3,
    width: f64,
) -> Option<[usize; 3]> {
    let e = extent.max(DVec3::splat(width));
    let g = gravity.abs();
    let g_axis = if g.max_element() <= 0.0 {
        None
    } else if g.x >= g.y && g.x >= g.z {
        Some(0)
    } else if g.y >= g.z {
        Some(1)
    } else {
        Some(2)
    };
    let mut best: Option<(f64, [usize; 3])> = None;
    for px in 1..=ranks {
        if !ranks.is_multiple_of(px) {
            continue;
        }
        for py in 1..=ranks / px {
            if !(ranks / px).is_multiple_of(py) {
                continue;
            }
            let dims = [px, py, ranks / px / py];
            if (0..3).any(|a| box_len[a] / (dims[a] as f64) < width) {
                continue;
            }
            let area = [e.y * e.z, e.x * e.z, e.x * e.y];
            let cost: f64 = (0..3)
                .map(|a| {
                    let w = if Some(a) == g_axis { 10.0 } else { 1.0 };
                    w * (dims[a] - 1) as f64 * area[a]
                })
                .sum();
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, dims));
            }
        }
    }
    best.map(|b| b.1)
}

/// Cut positions along axis `a` for `p` slabs, each at least `width` thick.
fn axis_cuts(
    setup: &Setup,
    spread: &Spread,
    a: usize,
    p: usize,
    ext_lo: f64,
    ext_hi: f64,
    width: f64,
) -> Option<Vec<f64>> {
    let (lo, hi) = (setup.domain.lo[a], setup.domain.hi[a]);
    let valid = |c: &Vec<f64>| c.windows(2).all(|w| w[1] - w[0] >= width);
    let uniform = |l: f64, h: f64| -> Vec<f64> {
        let mut c = vec![lo];
        c.extend((1..p).map(|k| l + (h - l) * k as f64 / p as f64));
        c.push(hi);
        c
    };
    if p == 1 {
        return Some(vec![lo, hi]);
    }
    let mut candidates = Vec::new();
    if setup.initial.len() >= 4 * p {
        // The quantiles of the initial particles' coordinates, from a
        // histogram (no copy of the coordinates: see `insert::initial`).
        if let Some((c, _)) = spread.histograms[a].cuts(p, width) {
            candidates.push(c);
        }
    }
    candidates.push(uniform(ext_lo, ext_hi));
    candidates.push(uniform(lo, hi));
    candidates.into_iter().find(valid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn setup(extra: &str, particles: &str) -> Setup {
        let text = format!(
            r#"
[run]
name = "t"
dt = 1e-5
steps = 1
gravity = [0.0, 0.0, -9.81]
[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.04, 0.04, 0.3]
periodic = [true, false, false]
{extra}
[[material]]
name = "g"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3
[contact]
normal = {{ model = "hertz", restitution = 0.5 }}
{particles}
"#
        );
        Setup::from_str(Path::new("t.toml"), &text).unwrap()
    }

    const BED: &str = r#"
[[particles]]
kind = "random"
material = "g"
radius = 0.001
count = 8000
region = { lo = [0.0, 0.0, 0.0], hi = [0.04, 0.04, 0.1] }
"#;

    fn shares(s: &Setup, ranks: usize) -> Vec<usize> {
        let d = Decomposition::choose(s, ranks, 0).unwrap();
        let mut n = vec![0; ranks];
        for p in &s.initial.to_vec() {
            n[d.owner(s.domain.wrap(p.x))] += 1;
        }
        n
    }

    #[test]
    fn a_bed_in_the_bottom_third_of_a_tall_box_is_shared_evenly() {
        let s = setup("", BED);
        for ranks in [2, 3, 4, 6, 8] {
            let d = Decomposition::choose(&s, ranks, 0).unwrap();
            assert_eq!(d.dims[2], 1, "{ranks} ranks: no cut across gravity: {d:?}");
            let n = shares(&s, ranks);
            let (lo, hi) = (*n.iter().min().unwrap(), *n.iter().max().unwrap());
            // Quantile cuts: every rank within 5 % of the mean share. The
            // cuts see a random block to within its cells (which hold about
            // 8 spheres each), not sphere by sphere.
            let mean = 8000.0 / ranks as f64;
            assert!(
                (hi as f64) < 1.05 * mean && (lo as f64) > 0.95 * mean,
                "{ranks} ranks: shares {n:?}"
            );
        }
    }

    #[test]
    fn owner_and_bounds_agree_and_peers_are_symmetric() {
        let s = setup("[parallel]\ngrid = [2, 3, 1]", BED);
        let all: Vec<Decomposition> = (0..6)
            .map(|r| Decomposition::choose(&s, 6, r).unwrap())
            .collect();
        for d in &all {
            let (lo, hi) = d.bounds();
            let centre = 0.5 * (lo + hi);
            assert_eq!(d.owner(centre), d.rank);
            assert_eq!(d.owner(lo), d.rank, "lower faces belong to the subdomain");
            for &q in &d.peers() {
                assert!(all[q].peers().contains(&d.rank), "{} -> {q}", d.rank);
            }
        }
        // Periodic along x with two slabs: the left and right neighbour are one rank.
        assert_eq!(all[0].peers().len(), 3);
    }

    #[test]
    fn balancing_is_on_by_default_and_takes_its_settings() {
        use crate::config::Balance;
        assert_eq!(setup("", BED).balance, Some(Balance::default()));
        assert_eq!(
            Balance::default(),
            Balance {
                every: 1000,
                tolerance: 1.1
            }
        );
        assert_eq!(setup("[parallel]\nbalance = false", BED).balance, None);
        assert_eq!(
            setup("[parallel]\nbalance = true", BED).balance,
            Some(Balance::default())
        );
        assert_eq!(
            setup("[parallel]\nbalance = { every = 50 }", BED).balance,
            Some(Balance {
                every: 50,
                tolerance: 1.1
            })
        );
    }

    #[test]
    fn a_pour_is_cut_evenly_across_the_box_not_across_its_inlet() {
        // An inlet 20 mm wide in the middle of a 40 mm box along y (not
        // periodic), cut in 4 along y: the beads spread along y as they
        // land, so the cuts are even over the box, not over the inlet.
        let pour = r#"
[[particles]]
kind = "pour"
material = "g"
radius = 0.001
rate = 1000.0
until = 0.1
region = { lo = [0.0, 0.01, 0.25], hi = [0.04, 0.03, 0.29] }
"#;
        let s = setup("[parallel]\ngrid = [1, 4, 1]", pour);
        let d = Decomposition::choose(&s, 4, 0).unwrap();
        assert_eq!(d.cuts[1], [0.0, 0.01, 0.02, 0.03, 0.04], "{d:?}");
    }

    #[test]
    fn a_grid_thinner_than_the_interaction_range_is_refused() {
        let s = setup("[parallel]\ngrid = [32, 1, 1]", BED);
        let e = Decomposition::choose(&s, 32, 0).unwrap_err().to_string();
        assert!(
            e.contains("t.toml") && e.contains("parallel.grid") && e.contains("along x"),
            "{e}"
        );
        let e = Decomposition::choose(&s, 4, 0).unwrap_err().to_string();
        assert!(e.contains("32 subdomains") && e.contains("4 rank"), "{e}");
    }
}
