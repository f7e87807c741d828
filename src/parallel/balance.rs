//! Dynamic load balancing: the cut planes of the grid of subdomains move
//! during the run so that every rank carries about the same cost.
//!
//! At a neighbour-list rebuild at least `every` steps after the last check,
//! every rank sums the cost of its owned particles ([`cost`] of each one's
//! [`Load`]: its partners apart and in contact, the walls within its reach). The
//! imbalance is the largest rank's cost over the mean (`max / mean`). Above
//! `tolerance`, the cuts along each axis with more than one slab move to the
//! quantiles of a global histogram of the cost along that axis
//! ([`AxisHistogram::cuts`]), the shift method of LAMMPS's `balance` and
//! `fix balance` (Plimpton, LAMMPS documentation, "balance command"), applied
//! per axis to the Cartesian grid. The histograms are summed over ranks;
//! their entries are whole numbers far below 2⁵³, so the sum is exact in any
//! order and every rank computes the same cuts.
//!
//! No slab becomes thinner than one interaction range (`2 R_max + pad +
//! skin`), which the halo needs ([`AxisHistogram::cuts`] stops a cut at
//! that limit and says so). The particles then travel to their new owners
//! with their history ([`crate::parallel::migrate`]); the trajectory does not
//! change, because forces never depend on which rank sums them.
//!
//! The cost is a count, so the decomposition's history is reproducible too.

use crate::parallel::grid::Decomposition;
use glam::DVec3;

/// What particles have to do a step, counted at a rebuild or a thermo
/// row: the input of [`cost`], which is linear in it (the cost of a sum of
/// loads is the sum of their costs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    /// The particles.
    pub particles: usize,
    /// Their neighbour-list partners apart (within reach, not overlapping).
    pub apart: usize,
    /// Their partners in contact (overlapping; a contact of two owned
    /// particles counts once for each).
    pub touching: usize,
    /// Walls within a mobile particle's radius plus the skin, other than
    /// meshes (none for a frozen particle, which no wall pushes).
    pub walls: usize,
    /// Mesh walls within a mobile particle's radius plus the skin.
    pub meshes: usize,
}

impl std::ops::AddAssign for Load {
    fn add_assign(&mut self, o: Self) {
        self.particles += o.particles;
        self.apart += o.apart;
        self.touching += o.touching;
        self.walls += o.walls;
        self.meshes += o.meshes;
    }
}

// The weights, in units of about a nanosecond of a step on the development
// machine (AMD EPYC, one thread, 2026-12-06; docs/performance.md). Only
// their ratios matter. Measured on 32,768 spheres in a periodic simple
// cubic lattice, at rest, one rebuild in 1,000 steps: with no partners
// (spacing 1.3 d) 6.7 ns a particle-step, six partners apart each (1.03 d)
// 10.3 ns, six in contact each (0.995 d) 81.8 ns under Hooke + spring-
// slider and 94 ns under Hertz + Mindlin + EPSD rolling + EDEM spinning
// (from a base of 7.5): a partner apart costs 0.5-0.6 ns, one in contact
// 12.5-14.5 ns. On the chute (one rank, 12 rebuilds in 2,000 steps), a
// contact costs about 8 ns per partner, a partner apart 0.6 ns plus 0.3
// for its share of the rebuilds, a particle about 7 ns. A layer of 4,096
// spheres 0.02 d above a floor: 7.1 ns a particle-step with no floor, 14
// more with a plane, 19 more with a mesh of 2,048 triangles.

/// The cost of one particle before its partners and walls (the two half
/// steps, its share of the rebuilds' sorting and halo, the output).
pub const PARTICLE_WEIGHT: u64 = 6;

/// The cost of a neighbour-list partner apart: the filter that finds it
/// apart, and its share of the rebuilds' search and job layout.
pub const APART_WEIGHT: u64 = 1;

/// The cost of a partner in contact: the contact law, the history, the
/// sums of force and torque (per partner: a contact between two owned
/// particles is counted in both their rows).
pub const TOUCHING_WEIGHT: u64 = 10;

/// The cost of a wall within reach of a mobile particle (a plane, a
/// cylinder, a disc): its test every step.
pub const WALL_WEIGHT: u64 = 14;

/// The cost of a mesh wall within reach of a mobile particle: the test of
/// its listed triangles every step.
pub const MESH_WEIGHT: u64 = 19;

/// The cost of `load` a step:
/// `PARTICLE_WEIGHT · particles + APART_WEIGHT · apart + TOUCHING_WEIGHT ·
/// touching + WALL_WEIGHT · walls + MESH_WEIGHT · meshes`. A whole
/// number, so that sums over ranks are exact in any order.
pub fn cost(load: Load) -> u64 {
    PARTICLE_WEIGHT * load.particles as u64
        + APART_WEIGHT * load.apart as u64
        + TOUCHING_WEIGHT * load.touching as u64
        + WALL_WEIGHT * load.walls as u64
        + MESH_WEIGHT * load.meshes as u64
}

/// Bins per axis of the cost histograms: cuts fall between bin edges by
/// linear interpolation, so the bins need not be finer than a particle.
pub const BINS: usize = 2048;

/// The cost along one axis of the box, in [`BINS`] equal bins (whole
/// numbers held as `f64`, so that their sum over ranks is exact).
#[derive(Debug, Clone)]
pub struct AxisHistogram {
    lo: f64,
    hi: f64,
    /// Cost per bin.
    pub bins: Vec<f64>,
}

impl AxisHistogram {
    /// An empty histogram over `[lo, hi]`.
    pub fn new(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            bins: vec![0.0; BINS],
        }
    }

    /// Add `cost` at coordinate `x` (clamped into the box).
    pub fn add(&mut self, x: f64, cost: u64) {
        let t = (x - self.lo) / (self.hi - self.lo) * BINS as f64;
        let b = if t >= 0.0 {
            (t as usize).min(BINS - 1)
        } else {
            0
        };
        self.bins[b] += cost as f64;
    }

    /// Total cost.
    pub fn total(&self) -> f64 {
        self.bins.iter().sum()
    }

    /// Cuts for `slabs` slabs of equal cost (`slabs + 1` values from `lo`
    /// to `hi`), each at least `width` thick, and whether a cut stopped at
    /// that limit. The interior cut `k` lies where the cumulative cost
    /// reaches `k / slabs` of the total, interpolated linearly inside its
    /// bin. Cuts nearer than `width` are then moved apart: a pass from the
    /// low end (`c_k ≥ c_{k−1} + width`) and one from the high end
    /// (`c_k ≤ c_{k+1} − width`), in both orders, averaged (`keep_apart`).
    /// `None` when the histogram is empty or the box is too short.
    pub fn cuts(&self, slabs: usize, width: f64) -> Option<(Vec<f64>, bool)> {
        let total = self.total();
        if slabs < 2 || total <= 0.0 || self.hi - self.lo < slabs as f64 * width {
            return None;
        }
        let h = (self.hi - self.lo) / BINS as f64;
        let mut cuts = vec![self.lo];
        let (mut b, mut below) = (0usize, 0.0f64);
        for k in 1..slabs {
            let target = total * k as f64 / slabs as f64;
            while b < BINS - 1 && below + self.bins[b] < target {
                below += self.bins[b];
                b += 1;
            }
            let frac = if self.bins[b] > 0.0 {
                ((target - below) / self.bins[b]).clamp(0.0, 1.0)
            } else {
                0.0
            };
            cuts.push(self.lo + (b as f64 + frac) * h);
        }
        cuts.push(self.hi);
        // A hair over the limit, so that the differences of the rounded
        // cuts still reach it.
        let w = width * (1.0 + 1e-9);
        let desired = cuts;
        let forward_first = keep_apart(&desired, w, true);
        let backward_first = keep_apart(&desired, w, false);
        let cuts: Vec<f64> = (forward_first.iter().zip(&backward_first))
            .map(|(a, b)| 0.5 * (a + b))
            .collect();
        if !cuts.windows(2).all(|s| s[1] - s[0] >= width) {
            return None;
        }
        let stopped = cuts != desired;
        Some((cuts, stopped))
    }
}

/// `cuts` (from `lo` to `hi`) moved apart so that neighbours are at least
/// `w` apart: a pass from the low end (`c_k ≥ c_{k−1} + w`) and one from
/// the high end (`c_k ≤ c_{k+1} − w`), in the order `forward_first` says.
/// Either order satisfies both bounds when `hi − lo ≥ (len − 1) w`; the
/// first pass pushes a crowd of cuts away from its end, so
/// `AxisHistogram::cuts` averages the two orders (the bounds are linear:
/// the mean satisfies them too), which keeps a crowd centred where it was.
fn keep_apart(cuts: &[f64], w: f64, forward_first: bool) -> Vec<f64> {
    let mut c = cuts.to_vec();
    let n = c.len() - 1;
    let forward = |c: &mut Vec<f64>| {
        for k in 1..n {
            c[k] = c[k].max(c[k - 1] + w);
        }
    };
    let backward = |c: &mut Vec<f64>| {
        for k in (1..n).rev() {
            c[k] = c[k].min(c[k + 1] - w);
        }
    };
    if forward_first {
        forward(&mut c);
        backward(&mut c);
    } else {
        backward(&mut c);
        forward(&mut c);
    }
    c
}

/// The ranks this rank exchanges particles with when the cuts move from
/// `old` to `new`: those whose new subdomain overlaps this rank's old one,
/// or whose old one overlaps this rank's new one (a symmetric relation; a
/// particle owned under `old`, clamped into the box as [`Decomposition::owner`]
/// clamps, has its new owner among them). Sorted, without this rank.
pub fn transfer_peers(old: &Decomposition, new: &Decomposition) -> Vec<usize> {
    let me = old.rank;
    let overlap = |(alo, ahi): (DVec3, DVec3), (blo, bhi): (DVec3, DVec3)| {
        alo.cmplt(bhi).all() && blo.cmplt(ahi).all()
    };
    (0..old.size())
        .filter(|&r| {
            r != me
                && (overlap(old.bounds(), new.bounds_of(r))
                    || overlap(new.bounds(), old.bounds_of(r)))
        })
        .collect()
}

/// What balancing did over a run, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BalanceLog {
    /// Load checks made.
    pub checks: u64,
    /// Times the cuts moved.
    pub rebalances: u64,
    /// The largest imbalance any check found.
    pub worst_imbalance: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(points: &[(f64, u64)]) -> AxisHistogram {
        let mut h = AxisHistogram::new(0.0, 1.0);
        for &(x, c) in points {
            h.add(x, c);
        }
        h
    }

    #[test]
    fn uniform_cost_gives_uniform_cuts() {
        let pts: Vec<(f64, u64)> = (0..10_000).map(|i| ((i as f64 + 0.5) / 1e4, 3)).collect();
        let (cuts, limited) = histogram(&pts).cuts(4, 0.01).unwrap();
        assert!(!limited);
        for (k, c) in cuts.iter().enumerate() {
            assert!((c - 0.25 * k as f64).abs() < 1e-3, "{cuts:?}");
        }
    }

    #[test]
    fn a_heap_in_the_middle_is_cut_at_its_quantiles() {
        // Cost density 1 − |2x − 1| on [0, 1] (a triangle): the cumulative
        // cost reaches a quarter at x = √2/4 and three quarters at 1 − √2/4.
        let n = 200_000;
        let pts: Vec<(f64, u64)> = (0..n)
            .map(|i| {
                let u = (i as f64 + 0.5) / n as f64;
                let x = if u < 0.5 {
                    (u / 2.0).sqrt()
                } else {
                    1.0 - ((1.0 - u) / 2.0).sqrt()
                };
                (x, 1)
            })
            .collect();
        let (cuts, _) = histogram(&pts).cuts(4, 0.01).unwrap();
        let want = [0.0, 2f64.sqrt() / 4.0, 0.5, 1.0 - 2f64.sqrt() / 4.0, 1.0];
        for (c, w) in cuts.iter().zip(want) {
            assert!((c - w).abs() < 2e-3, "{cuts:?} vs {want:?}");
        }
    }

    #[test]
    fn a_narrow_heap_stops_the_cuts_at_one_interaction_range() {
        // Everything in [0.49, 0.51]: quantile cuts would be 0.005 apart.
        let pts: Vec<(f64, u64)> = (0..1000)
            .map(|i| (0.49 + 0.02 * i as f64 / 1e3, 1))
            .collect();
        let width = 0.05;
        let (cuts, limited) = histogram(&pts).cuts(4, width).unwrap();
        assert!(limited, "{cuts:?}");
        assert!(cuts.windows(2).all(|s| s[1] - s[0] >= width), "{cuts:?}");
        assert_eq!((cuts[0], cuts[4]), (0.0, 1.0));
        // The cuts stay as near the heap as the limit lets them.
        assert!((cuts[2] - 0.5).abs() < 1e-3, "{cuts:?}");
        assert!(
            (cuts[1] - 0.45).abs() < 1e-3 && (cuts[3] - 0.55).abs() < 1e-3,
            "{cuts:?}"
        );
    }

    #[test]
    fn no_cuts_without_cost_or_room() {
        assert!(AxisHistogram::new(0.0, 1.0).cuts(2, 0.1).is_none());
        assert!(histogram(&[(0.5, 1)]).cuts(4, 0.3).is_none());
        assert!(histogram(&[(0.5, 1)]).cuts(1, 0.1).is_none());
    }

    #[test]
    fn positions_outside_the_box_fall_in_the_end_bins() {
        let h = histogram(&[(-0.5, 2), (1.5, 3), (1.0, 4)]);
        assert_eq!(h.bins[0], 2.0);
        assert_eq!(h.bins[BINS - 1], 7.0);
        assert_eq!(h.total(), 9.0);
    }

    #[test]
    fn transfer_peers_are_symmetric_and_hold_every_new_owner() {
        let grid = |cuts: [f64; 5], rank: usize| Decomposition {
            dims: [4, 1, 1],
            cuts: [cuts.to_vec(), vec![0.0, 1.0], vec![0.0, 1.0]],
            coords: [rank, 0, 0],
            rank,
            periodic: [false; 3],
        };
        let old = [0.0, 0.25, 0.5, 0.75, 1.0];
        let new = [0.0, 0.45, 0.5, 0.55, 1.0];
        let peers: Vec<Vec<usize>> = (0..4)
            .map(|r| transfer_peers(&grid(old, r), &grid(new, r)))
            .collect();
        for (r, list) in peers.iter().enumerate() {
            for &q in list {
                assert!(peers[q].contains(&r), "{r} -> {q}: {peers:?}");
            }
        }
        // Rank 0's old slab [0, 0.25) lies in rank 0's new one: it sends
        // nothing, but rank 1's old slab overlaps its new one.
        assert_eq!(peers[0], [1]);
        // Rank 3's new slab [0.55, 1) takes from old ranks 2 and 3.
        assert!(peers[3].contains(&2));
        for i in 0..1000 {
            let x = DVec3::new(i as f64 / 1000.0, 0.5, 0.5);
            let (from, to) = (grid(old, 0).owner(x), grid(new, 0).owner(x));
            assert!(
                from == to || peers[from].contains(&to),
                "{x}: {from} -> {to}"
            );
        }
    }

    #[test]
    fn cost_weighs_particles_partners_walls_and_meshes_and_adds_up() {
        let one = Load {
            particles: 1,
            ..Load::default()
        };
        assert_eq!(cost(one), PARTICLE_WEIGHT);
        let busy = Load {
            particles: 1,
            apart: 10,
            touching: 3,
            walls: 1,
            meshes: 2,
        };
        assert_eq!(
            cost(busy),
            PARTICLE_WEIGHT
                + 10 * APART_WEIGHT
                + 3 * TOUCHING_WEIGHT
                + WALL_WEIGHT
                + 2 * MESH_WEIGHT
        );
        let mut both = one;
        both += busy;
        assert_eq!(cost(both), cost(one) + cost(busy));
        assert_eq!(both.particles, 2);
    }
}
