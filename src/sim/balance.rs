//! Load balancing during a run: the check at a rebuild, the new cuts, and
//! the second rebuild that moves the particles to their new owners
//! ([`crate::parallel::balance`] holds the method).

use super::Simulation;
use crate::config::Balance;
use crate::error::Result;
use crate::geometry::mesh::TriMesh;
use crate::geometry::walls::WallShape;
use crate::parallel::balance::{cost, transfer_peers, AxisHistogram, BalanceLog, Load, BINS};
use crate::parallel::grid::halo_width;
use glam::DVec3;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The balancing state of a run on one rank.
#[derive(Debug, Clone, Default)]
pub struct Balancer {
    /// The settings; `None` when balancing is off (always on one rank).
    pub settings: Option<Balance>,
    /// What it did so far.
    pub log: BalanceLog,
    /// The first step at which a rebuild checks the load.
    next_check: u64,
    /// Whether the run said that a cut stopped at the thickness limit.
    said_limit: bool,
    /// Mesh walls kept whole (by wall index) while the rank uses a part of
    /// them: the parts are cut again when the subdomain moves.
    pub(super) whole_meshes: Vec<(usize, Arc<TriMesh>)>,
    /// Time spent checking and moving the cuts (the second rebuild
    /// included).
    pub time: Duration,
}

impl Balancer {
    /// The balancer of a run on `ranks` ranks with `settings`.
    pub fn new(settings: Option<Balance>, ranks: usize) -> Self {
        Self {
            settings: settings.filter(|_| ranks > 1),
            ..Self::default()
        }
    }
}

impl Simulation {
    /// What owned particle `k` has to do a step besides its partners:
    /// itself, and unless it is frozen the walls within its radius plus the
    /// skin. Only a particle the force stage tests against the walls
    /// ([`NearWalls::any_for`], the listing of the last rebuild, which
    /// holds every particle within that reach of a wall) is looked at.
    ///
    /// [`NearWalls::any_for`]: crate::force::NearWalls::any_for
    fn own_load(&self, k: usize) -> Load {
        let p = &self.particles;
        let mut load = Load {
            particles: 1,
            ..Load::default()
        };
        if p.frozen[k] || !self.near_walls.any_for(k) {
            return load;
        }
        let (x, r, skin) = (p.x[k], p.radius[k], self.setup.skin);
        for w in &self.setup.walls {
            match w.shape {
                WallShape::Mesh { .. } => load.meshes += usize::from(w.mesh_within(x, r + skin)),
                _ => load.walls += usize::from(w.touch(x, r, skin).is_some()),
            }
        }
        load
    }

    /// Each owned particle's position and [`cost`], from the neighbour
    /// list of the last rebuild and the current positions: its partners in
    /// contact (overlapping, [`VerletRows::touching`]) and apart, and
    /// [`Self::own_load`].
    ///
    /// [`VerletRows::touching`]: crate::neighbor::VerletRows::touching
    fn particle_costs(&self) -> impl Iterator<Item = (DVec3, u64)> + '_ {
        let p = &self.particles;
        let rows = self.neighbors.rows();
        (0..p.n_owned).map(move |k| {
            let touching = rows.touching(k, &p.packed);
            let mut load = self.own_load(k);
            load += Load {
                apart: rows.row(k).len() - touching,
                touching,
                ..Load::default()
            };
            (p.x[k], cost(load))
        })
    }

    /// The sum of [`Self::particle_costs`], with the contacts counted in
    /// one flat pass over the pair jobs ([`NeighborList::touching`]):
    /// read at every thermo row, where a walk row by row would cost a
    /// tenth of a millisecond per 10,000 particles.
    ///
    /// [`NeighborList::touching`]: crate::neighbor::NeighborList::touching
    fn rank_cost(&self) -> u64 {
        let p = &self.particles;
        let touching = self.neighbors.touching(&p.packed);
        let mut load = Load {
            apart: self.neighbors.rows().entries() - touching,
            touching,
            ..Load::default()
        };
        if self.setup.walls.is_empty() {
            load.particles = p.n_owned;
        } else {
            (0..p.n_owned).for_each(|k| load += self.own_load(k));
        }
        cost(load)
    }

    /// The imbalance of the current decomposition: the largest rank's cost
    /// over the mean (1 on one rank or without particles). Collective.
    pub fn imbalance(&self) -> f64 {
        if self.comm.size() == 1 {
            return 1.0;
        }
        let mine = self.rank_cost();
        let mut max = [mine];
        self.comm.max_u64s(&mut max);
        let mut total = [mine as f64];
        self.comm.sum_f64(&mut total);
        ratio(max[0], total[0], self.comm.size())
    }

    /// At a rebuild: check the load when due, and when it is uneven move
    /// the cuts and rebuild again, which sends the particles to their new
    /// owners. Collective.
    pub(super) fn balance_if_due(&mut self) -> Result<()> {
        let Some(settings) = self.balancer.settings else {
            return Ok(());
        };
        if self.step < self.balancer.next_check {
            return Ok(());
        }
        let start = Instant::now();
        self.balancer.next_check = self.step + settings.every;
        let d = &self.setup.domain;
        let axes: Vec<usize> = (0..3).filter(|&a| self.decomp.dims[a] > 1).collect();
        let mut hist: Vec<AxisHistogram> = axes
            .iter()
            .map(|&a| AxisHistogram::new(d.lo[a], d.hi[a]))
            .collect();
        let mut mine = 0u64;
        for (x, c) in self.particle_costs() {
            mine += c;
            for (h, &a) in hist.iter_mut().zip(&axes) {
                h.add(x[a], c);
            }
        }
        // One sum for every histogram and the total (whole numbers: exact),
        // one maximum for the largest rank.
        let mut sums: Vec<f64> = hist.iter().flat_map(|h| h.bins.iter().copied()).collect();
        sums.push(mine as f64);
        let tc = Instant::now();
        self.comm.sum_f64(&mut sums);
        let mut max = [mine];
        self.comm.max_u64s(&mut max);
        self.timers.comm += tc.elapsed();
        let total = sums.pop().unwrap_or(0.0);
        for (h, chunk) in hist.iter_mut().zip(sums.chunks(BINS)) {
            h.bins.copy_from_slice(chunk);
        }
        let imbalance = ratio(max[0], total, self.comm.size());
        let log = &mut self.balancer.log;
        log.checks += 1;
        log.worst_imbalance = log.worst_imbalance.max(imbalance);
        if imbalance <= settings.tolerance {
            self.balancer.time += start.elapsed();
            return Ok(());
        }
        let width = halo_width(&self.setup);
        let mut new = self.decomp.clone();
        let mut limited = Vec::new();
        for (h, &a) in hist.iter().zip(&axes) {
            if let Some((cuts, stopped)) = h.cuts(self.decomp.dims[a], width) {
                new = new.with_cuts(a, cuts);
                if stopped {
                    limited.push(["x", "y", "z"][a]);
                }
            }
        }
        if !limited.is_empty() && !self.balancer.said_limit {
            self.balancer.said_limit = true;
            if self.comm.rank() == 0 {
                eprintln!(
                    "balance: on step {}, a cut along {} stopped where its subdomain is one interaction range (2 R_max + skin = {width:e} m) thick; the load stays uneven there (said once)",
                    self.step,
                    limited.join(", ")
                );
            }
        }
        if new.cuts != self.decomp.cuts {
            self.balancer.log.rebalances += 1;
            // After the cuts moved, a particle may go farther than an
            // adjacent subdomain.
            let peers = transfer_peers(&self.decomp, &new);
            self.decomp = new;
            self.cut_mesh_parts();
            self.rebuild_with(None, Some(peers))?;
        }
        self.balancer.time += start.elapsed();
        Ok(())
    }

    /// Cut the mesh walls kept whole to this rank's subdomain.
    pub(super) fn cut_mesh_parts(&mut self) {
        if self.balancer.whole_meshes.is_empty() {
            return;
        }
        let (lo, hi) = self.decomp.bounds();
        let margin = DVec3::splat(halo_width(&self.setup));
        for (k, whole) in &self.balancer.whole_meshes {
            let wall = &mut self.setup.walls[*k];
            if let WallShape::Mesh { pose, .. } = &wall.shape {
                let mesh = whole
                    .near(lo - margin, hi + margin)
                    .map_or_else(|| whole.clone(), Arc::new);
                wall.shape = WallShape::Mesh { mesh, pose: *pose };
            }
        }
    }
}

/// `max / (total / ranks)`, 1 when there is nothing to share.
fn ratio(max: u64, total: f64, ranks: usize) -> f64 {
    if total > 0.0 {
        max as f64 * ranks as f64 / total
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Setup;
    use crate::parallel::comm::SerialComm;

    /// A config of glass spheres of `radius` given by position and
    /// velocity (`spheres`), Hooke contacts, no gravity, in a box from the
    /// origin to `hi` periodic along `periodic`, with the config lines
    /// `extra` (further laws, walls, the skin's line in `[domain]` first).
    fn spheres_config(
        name: &str,
        (hi, periodic): ([f64; 3], [bool; 3]),
        radius: f64,
        spheres: &[(DVec3, DVec3)],
        (domain_extra, extra): (&str, &str),
    ) -> String {
        let list = |v: &dyn Fn(&(DVec3, DVec3)) -> DVec3| {
            let items: Vec<String> = spheres
                .iter()
                .map(|s| format!("{:?}", v(s).to_array()))
                .collect();
            items.join(", ")
        };
        format!(
            r#"
[run]
name = "{name}"
dt = 1e-5
steps = 1000

[domain]
lo = [0.0, 0.0, 0.0]
hi = {hi:?}
periodic = {periodic:?}
{domain_extra}

[[material]]
name = "glass"
density = 2500.0

[contact]
normal = {{ model = "hooke", stiffness = 1e4, restitution = 0.8 }}
{extra}

[[particles]]
kind = "list"
material = "glass"
radius = {radius:?}
position = [{}]
velocity = [{}]
"#,
            list(&|s| s.0),
            list(&|s| s.1)
        )
    }

    /// 48 spheres apart in a box periodic along x and y, open along z,
    /// sheared: `v_x = 5 z` per second, no gravity, no contacts.
    fn sheared() -> String {
        let spheres: Vec<(DVec3, DVec3)> = (0..48)
            .map(|k| {
                let at = DVec3::new((k % 4) as f64, (k / 4 % 2) as f64, (k / 8) as f64);
                let x = DVec3::splat(0.005) + 0.01 * at;
                (x, DVec3::new(5.0 * x.z, 0.0, 0.0))
            })
            .collect();
        let box_ = ([0.04, 0.02, 0.1], [true, true, false]);
        spheres_config("sheared", box_, 0.002, &spheres, ("skin = 0.001", ""))
    }

    /// Two rows of ten spheres along a periodic x (period 0.101 m), each
    /// 0.1 mm from the next, the last from the first through the periodic
    /// face, above a floor 0.1 mm below them; every other pair closing at
    /// 0.1 m/s, the pair across the face among them.
    fn chains() -> String {
        let (r, pitch) = (0.005, 0.0101);
        let spheres: Vec<(DVec3, DVec3)> = (0..20)
            .map(|k| {
                let (i, row) = (k % 10, k / 10);
                let x = DVec3::new(
                    r + 0.00005 + pitch * i as f64,
                    0.02 + pitch * row as f64,
                    0.0051,
                );
                let vx = if i % 2 == 0 { -0.05 } else { 0.05 };
                (x, DVec3::new(vx, 0.0, 0.0))
            })
            .collect();
        let floor = r#"tangential = { model = "spring_slider", friction = 0.5, stiffness_ratio = 0.3 }

[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass""#;
        let box_ = ([0.101, 0.05, 0.05], [true, false, false]);
        spheres_config("chains", box_, r, &spheres, ("", floor))
    }

    #[test]
    fn a_second_rebuild_on_the_same_step_keeps_the_fitted_flow() {
        let setup = Setup::from_str(std::path::Path::new("sheared.toml"), &sheared()).unwrap();
        let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
        while sim.rebuilt_at == 0 {
            sim.step().unwrap();
            assert!(sim.step < 1000, "no rebuild");
        }
        // The shear, fitted at the rebuild: d v_x / d z = 5 per second.
        let fitted = sim.flow;
        let rate = fitted.col(2).x / sim.setup.dt;
        assert!((rate - 5.0).abs() < 0.05, "fitted {fitted}");
        // A rebalance's second rebuild, on the same step, moves particles
        // only: the rule's flow and its start stay (a refit over no steps
        // dropped the flow, and the next rebuilds came on other steps than
        // without the rebalance: other bits).
        let at = sim.rebuilt_at;
        sim.rebuild_with(None, Some(Vec::new())).unwrap();
        assert_eq!(sim.flow, fitted);
        assert_eq!(sim.rebuilt_at, at);
    }

    /// The partners in contact, by brute force: every pair within the sum
    /// of its radii, the nearest periodic image along x, counted once for
    /// each sphere.
    fn touching_by_brute_force(sim: &Simulation) -> usize {
        let p = &sim.particles;
        let period = sim.setup.domain.length().x;
        let mut count = 0;
        for a in 0..p.n_owned {
            for b in a + 1..p.n_owned {
                let mut d = p.x[b] - p.x[a];
                d.x -= period * (d.x / period).round();
                count += 2 * usize::from(d.length() < p.radius[a] + p.radius[b]);
            }
        }
        count
    }

    #[test]
    fn the_flat_count_of_contacts_is_the_rows_count_and_the_rank_cost_their_sum() {
        let setup = Setup::from_str(std::path::Path::new("chains.toml"), &chains()).unwrap();
        let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
        // The pairs close 0.1 mm at 0.1 m/s: in contact from step 100, for
        // about 80 steps.
        for _ in 0..140 {
            sim.step().unwrap();
        }
        assert!(sim.ghosts() > 0, "no periodic images");
        let (p, rows) = (&sim.particles, sim.neighbors.rows());
        let by_rows: usize = (0..p.n_owned).map(|k| rows.touching(k, &p.packed)).sum();
        let expected = touching_by_brute_force(&sim);
        // Five closing pairs a row, one through the periodic face.
        assert_eq!(expected, 2 * 2 * 5);
        assert_eq!(by_rows, expected);
        assert_eq!(sim.neighbors.touching(&p.packed), expected);
        // Every sphere is within reach of the floor, and costs it.
        let walls: usize = (0..p.n_owned).map(|k| sim.own_load(k).walls).sum();
        assert_eq!(walls, p.n_owned);
        let summed: u64 = sim.particle_costs().map(|(_, c)| c).sum();
        assert_eq!(sim.rank_cost(), summed);
        let entries = rows.entries();
        assert_eq!(
            summed,
            cost(Load {
                particles: p.n_owned,
                apart: entries - expected,
                touching: expected,
                walls: p.n_owned,
                meshes: 0,
            })
        );
    }
}
