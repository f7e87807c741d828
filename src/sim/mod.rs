//! One simulation on one rank: the state and a [`Simulation::step`] that runs
//! named stages in order ([`stages`]), each timed ([`timers`]).
//!
//! Stages per step: `integrate` (first half kick and drift, with the
//! displacement scan), `insert` (pouring), `neighbor` (a rebuild when the
//! particles moved as far as the skin allows, relative to each other or to
//! what is fixed in space ([`crate::neighbor::trigger`]), or particles were
//! inserted — a global decision — else a halo update), `force`, `integrate`
//! (second half kick, or none when the run defers it to the next step's
//! first pass: [`Simulation::defer_kick`]). Particles in an outlet, or out
//! through an open face under `lost = "delete"`, are deleted right after the
//! drift ([`delete`]), which forces a rebuild. Checkpoints go through
//! [`restart`], comparisons of exact bits through [`dump`].
//!
//! A rebuild wraps positions at periodic boundaries, migrates particles that
//! left this rank's subdomain to their new owner together with their contact
//! history (pair records keyed by partner id, wall records), sorts the owned
//! particles spatially, creates the ghosts and builds the neighbour list,
//! putting every history record back by partner id.

pub mod balance;
pub mod delete;
pub mod dump;
pub mod restart;
pub mod stages;
pub mod timers;

use crate::config::Setup;
use crate::diagnostics::{self, Thermo};
use crate::error::{GravelError, Result};
use crate::force;
use crate::geometry::motion::place_walls;
use crate::geometry::walls::WallShape;
use crate::insert::earlier::NearFiles;
use crate::insert::initial::Files;
use crate::neighbor::carry::{HistoryRows, PairRecords};
use crate::neighbor::NeighborList;
use crate::parallel::comm::Comm;
use crate::parallel::grid::Decomposition;
use crate::parallel::halo::Halo;
use crate::state::history::WallHistory;
use crate::state::particles::{ParticleRecord, Particles};
use glam::{DMat3, DVec3};

pub use balance::Balancer;
pub use delete::Deleted;
pub use dump::HistoryPartner;
pub use timers::{Stage, Timers};

/// The contact history on its way through a rebuild: by pair on a single
/// rank, where no particle leaves ([`PairRecords`]), else in per-particle
/// rows that migrate with their particles ([`HistoryRows`]).
enum Carried {
    Rows(HistoryRows),
    Pairs(PairRecords),
}

/// The state of a run on this rank.
pub struct Simulation {
    /// Validated parameters.
    pub setup: Setup,
    /// Particles (owned then ghosts).
    pub particles: Particles,
    /// Neighbour list with pair history.
    pub neighbors: NeighborList,
    /// Wall-contact history, a record per (owned particle, wall).
    pub wall_history: WallHistory,
    /// Steps done.
    pub step: u64,
    /// Next free particle id.
    pub next_id: u64,
    /// What outlets and open faces have deleted so far (all ranks).
    pub deleted: Deleted,
    /// Stage timers.
    pub timers: Timers,
    /// The grid of subdomains.
    pub decomp: Decomposition,
    pub(crate) halo: Halo,
    pub(crate) x_ref: Vec<DVec3>,
    /// The bed's displacement gradient per step, fitted at the last
    /// rebuild ([`crate::neighbor::flow`]), which the rebuild rule
    /// foresees.
    pub(crate) flow: DMat3,
    /// The step of the last rebuild.
    pub(crate) rebuilt_at: u64,
    /// Where the last step's flow test went past the residuals' box: the
    /// middle of that box, which the first half step measures their
    /// distance from ([`crate::neighbor::trigger::ResidualScan`]); `None`
    /// after a rebuild or a restart. It only shortens the rebuild rule's
    /// work: any point, or none, gives the same decisions.
    pub(crate) residual_centre: Option<DVec3>,
    pair_results: force::PairResults,
    /// What each wall gives each owned particle, kept by the force stages
    /// run while [`Self::keep_loads`] is set.
    pub wall_loads: force::WallLoads,
    /// Which owned particles the walls that never move are tested against
    /// until the next rebuild.
    pub(crate) near_walls: force::NearWalls,
    /// Whether the force stage keeps the wall loads (the run sets it for
    /// the steps whose diagnostics read them).
    pub keep_loads: bool,
    /// Whether a step may leave its second half kick to the next step's
    /// first pass ([`crate::integrate::kick_drift`]'s deferred kick: one
    /// pass over the particles fewer, the same bits). The run sets it for
    /// the steps after which nothing reads the velocities; readers of the
    /// state ([`Self::view`], [`Self::rows`], [`Self::dump_state`],
    /// [`Self::state_by_id`], the output's frames) refuse a state whose
    /// kick is pending.
    pub defer_kick: bool,
    /// Whether the last step's second half kick is still to be given.
    kick_pending: bool,
    /// Dynamic load balancing: its settings, state and log.
    pub balancer: Balancer,
    comm: Box<dyn Comm>,
}

/// This rank's particles at step 0: a walk over the initial blocks (a
/// lattice is generated, not held; a random fill places only the cells
/// near this subdomain), counted first for an exact reservation. A fill
/// that cannot place its count is refused on every rank (exit 2), naming
/// the sphere, before anything is written. Collective.
fn own_initial(
    setup: &Setup,
    decomp: &Decomposition,
    slices: Vec<Vec<ParticleRecord>>,
    comm: &dyn Comm,
) -> Result<Particles> {
    let me = decomp.rank;
    let owner = |r: &ParticleRecord| decomp.owner(setup.domain.wrap(r.x));
    // The subdomain, reaching past the box's non-periodic faces (where
    // the edge ranks own what lies beyond).
    let (mut lo, mut hi) = decomp.bounds();
    let d = &setup.domain;
    for a in 0..3 {
        if !d.periodic[a] {
            if lo[a] <= d.lo[a] {
                lo[a] = f64::MIN;
            }
            if hi[a] >= d.hi[a] {
                hi[a] = f64::MAX;
            }
        }
    }
    // The spheres of files that the fills avoid, near the cells this
    // rank places, from the ranks' slices (collective).
    let avoided = setup.initial.files_avoided();
    let near = (!avoided.is_empty()).then(|| {
        let asked = setup.initial.requests_near(lo, hi);
        NearFiles::fetch(Some(comm), &avoided, &asked, &setup.domain)
    });
    let mut mine = Vec::new();
    let placed = setup.initial.place_near(lo, hi, near.as_ref(), |_, r| {
        if owner(r) == me {
            mine.push(r.clone());
        }
    });
    let message = match &placed {
        Ok(()) => String::new(),
        Err((k, u)) => crate::insert::cells::unplaced_message(*k, u),
    };
    agree(setup, &message, comm)?;
    // The lattices of curved regions: each rank walks its part of them.
    let mut parts = Vec::new();
    setup
        .initial
        .for_each_unindexed_part(|r| parts.push(r.clone()));
    for slice in slices.into_iter().chain(std::iter::once(parts)) {
        mine.extend(send_to_owners(slice, &owner, comm));
    }
    let mut particles = Particles::default();
    particles.room_for(mine.len(), mine.len());
    for r in &mine {
        particles.push_owned(r);
    }
    Ok(particles)
}

/// This rank's slice of each `file` block ([`ParticleFile::read_part`]).
/// Collective: a rank that cannot read its slice makes every rank refuse.
///
/// [`ParticleFile::read_part`]: crate::insert::file::ParticleFile::read_part
fn read_file_slices(setup: &Setup, comm: &dyn Comm) -> Result<Vec<Vec<ParticleRecord>>> {
    let mut slices = Vec::new();
    let mut message = String::new();
    for (k, file) in setup.initial.files() {
        match file.read_part(comm.rank(), comm.size()) {
            Ok(slice) => slices.push(slice),
            Err(e) if message.is_empty() => message = format!("particles[{k}].path: {e}"),
            Err(_) => {}
        }
    }
    agree(setup, &message, comm)?;
    Ok(slices)
}

/// Refuse, on every rank, when any rank has a `message` (empty for none):
/// the first rank's, as an error in the config. Collective.
fn agree(setup: &Setup, message: &str, comm: &dyn Comm) -> Result<()> {
    let said = if comm.size() > 1 {
        comm.all_gather(message.as_bytes())
    } else {
        vec![message.as_bytes().to_vec()]
    };
    match said.iter().find(|m| !m.is_empty()) {
        Some(m) => Err(GravelError::config(
            &setup.config_path,
            String::from_utf8_lossy(m).into_owned(),
        )),
        None => Ok(()),
    }
}

/// Send each record of `part` to the rank `owner` names, and return those
/// that this rank owns: its own and those the others sent. Collective.
fn send_to_owners(
    part: Vec<ParticleRecord>,
    owner: &impl Fn(&ParticleRecord) -> usize,
    comm: &dyn Comm,
) -> Vec<ParticleRecord> {
    use crate::state::particles::{pack_record, unpack_record, RECORD_BYTES};
    let me = comm.rank();
    if comm.size() == 1 {
        return part;
    }
    let mut sends = vec![Vec::new(); comm.size()];
    let mut kept = Vec::new();
    for r in part {
        match owner(&r) {
            o if o == me => kept.push(r),
            o => pack_record(&r, &mut sends[o]),
        }
    }
    let peers: Vec<usize> = (0..comm.size()).filter(|&r| r != me).collect();
    let sends: Vec<Vec<u8>> = peers
        .iter()
        .map(|&r| std::mem::take(&mut sends[r]))
        .collect();
    for buf in comm.exchange(&peers, &sends) {
        let mut u = crate::state::pack::Unpack::new(&buf);
        kept.extend((0..buf.len() / RECORD_BYTES).map(|_| unpack_record(&mut u)));
    }
    kept
}

impl Simulation {
    /// Set up the initial state (this rank's particles of the config at
    /// step 0) and compute the forces of step 0. Collective.
    pub fn new(mut setup: Setup, comm: Box<dyn Comm>) -> Result<Self> {
        // Each rank reads a slice of each file; the decomposition is cut
        // from the generated blocks and every rank's slices together.
        let slices = read_file_slices(&setup, comm.as_ref())?;
        let decomp = if comm.size() > 1 {
            Decomposition::shared(&setup, comm.as_ref(), Files::Skip, &slices)?
        } else {
            Decomposition::for_ranks(&setup, comm.size(), comm.rank())?
        };
        // This rank's particles: those of the generated blocks near its
        // subdomain (a lattice and a random fill are not held), and those
        // the ranks' file slices send it.
        let particles = own_initial(&setup, &decomp, slices, comm.as_ref())?;
        // The initial particles are in place: the records held of them are
        // not needed again.
        setup.initial.release();
        let h = setup.laws.history_len;
        let balancer = Balancer::new(setup.balance, comm.size());
        let mut sim = Simulation {
            wall_history: WallHistory::new(particles.n_owned, setup.wall_records(), h),
            neighbors: NeighborList::empty(particles.n_owned, h),
            next_id: setup.next_id,
            deleted: Deleted::default(),
            particles,
            setup,
            step: 0,
            timers: Timers::default(),
            decomp,
            halo: Halo::default(),
            x_ref: Vec::new(),
            flow: DMat3::ZERO,
            rebuilt_at: 0,
            residual_centre: None,
            pair_results: force::PairResults::default(),
            wall_loads: force::WallLoads::default(),
            near_walls: force::NearWalls::default(),
            keep_loads: true,
            defer_kick: false,
            kick_pending: false,
            balancer,
            comm,
        };
        let mut carried = None;
        sim.insert_due(&mut carried)?;
        sim.rebuild_with(carried, None)?;
        sim.compute_forces();
        Ok(sim)
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.setup.time_at(self.step)
    }

    /// Move the moving walls to where they are at the current time: a
    /// function of the step alone ([`crate::geometry::motion`]).
    pub(crate) fn place_walls(&mut self) {
        if !self.setup.moving_walls.is_empty() {
            let t = self.time();
            place_walls(&mut self.setup.walls, &self.setup.moving_walls, t);
        }
    }

    /// Find the owned particles near the walls that never move and the
    /// moving meshes slow enough to list, where they are now
    /// ([`force::NearWalls`]): at a rebuild.
    pub(crate) fn find_near_walls(&mut self) {
        let s = &self.setup;
        let walls = (&s.walls[..], &s.moving_walls[..]);
        let at = s.wall_listing().at(self.time());
        (self.near_walls).find(&self.particles, walls, &self.wall_history, at);
    }

    /// A check of the wall lists for tests: where an owned particle is not
    /// tested against a wall ([`force::NearWalls::wall_for`]), the wall as
    /// it is now finds no contact with it (nor any within its radius), and
    /// where a mesh's listed triangles are searched, they give the contacts
    /// of the whole mesh. The first particle and wall that break this,
    /// described; `None` where none does.
    pub fn wall_lists_miss(&self) -> Option<String> {
        use crate::geometry::mesh::Contacts;
        let (p, near) = (&self.particles, &self.near_walls);
        let (mut listed, mut whole) = (Contacts::default(), Contacts::default());
        let step = self.step;
        for k in 0..p.n_owned {
            let (x, r) = (p.x[k], p.radius[k]);
            for (w, wall) in self.setup.walls.iter().enumerate() {
                let tested = near.any_for(k) && near.wall_for(k, w);
                if !tested && wall.touch(x, r, 0.0).is_some() {
                    return Some(format!(
                        "step {step}: particle id {} touches wall {w} untested",
                        p.id[k]
                    ));
                }
                if tested && matches!(wall.shape, crate::geometry::walls::WallShape::Mesh { .. }) {
                    near.mesh_contacts((k, w), wall, (x, r), &mut listed);
                    wall.mesh_contacts(x, r, &mut whole);
                    if listed.as_slice() != whole.as_slice() {
                        return Some(format!("step {step}: particle id {} meets mesh wall {w} at {:?} among its listed triangles, at {:?} in the whole", p.id[k], listed.as_slice(), whole.as_slice()));
                    }
                }
            }
        }
        None
    }

    /// The transport.
    pub fn comm(&self) -> &dyn Comm {
        self.comm.as_ref()
    }

    /// Keep of each mesh wall at rest only the triangles near this rank's
    /// subdomain (within the halo width, `2 R_max + pad + skin`, of it),
    /// on a run of more than one rank: a rank's owned particles stay
    /// within the skin of its subdomain between rebuilds (the rebuild
    /// rule sees to it where a wall is at rest), so they meet
    /// the part as they met the whole, in the whole's order. Kept whole:
    /// moving meshes (which move across subdomains), every mesh of a run
    /// that pours (every rank tests every pouring candidate against the
    /// walls, whoever owns it), and a mesh with no triangle near. With load
    /// balancing on, the whole mesh is kept beside the part, which is cut
    /// again whenever the subdomain moves. Call once the output has taken
    /// what it draws of the walls.
    pub fn keep_mesh_parts(&mut self) {
        if self.comm.size() == 1 || !self.setup.pours.is_empty() {
            return;
        }
        let moving: Vec<usize> = self.setup.moving_walls.iter().map(|m| m.index).collect();
        self.balancer.whole_meshes = (self.setup.walls.iter().enumerate())
            .filter(|(k, _)| !moving.contains(k))
            .filter_map(|(k, wall)| match &wall.shape {
                WallShape::Mesh { mesh, .. } => Some((k, mesh.clone())),
                _ => None,
            })
            .collect();
        self.cut_mesh_parts();
        if self.balancer.settings.is_none() {
            self.balancer.whole_meshes = Vec::new();
        }
    }

    /// Number of ghosts on this rank.
    pub fn ghosts(&self) -> usize {
        self.halo.len()
    }

    /// Panics with `reader` named if the last step's second half kick is
    /// pending ([`Self::defer_kick`]): the velocities are not yet those of
    /// the step's end.
    pub(crate) fn assert_settled(&self, reader: &str) {
        assert!(
            !self.kick_pending,
            "{reader} read the state of step {} before its second half kick",
            self.step
        );
    }

    /// What the diagnostics read of the current state.
    pub fn view(&self) -> diagnostics::View<'_> {
        self.assert_settled("the diagnostics");
        // Loads of this step's force stage: it came after this step's
        // rebuild, if any, so the share slots hold its pair forces too (a
        // restart's state has none: it restores forces, not contacts).
        let fresh = self.wall_loads.step() == Some(self.step);
        diagnostics::View {
            p: &self.particles,
            nl: &self.neighbors,
            laws: &self.setup.laws,
            walls: &self.setup.walls,
            near_walls: &self.near_walls,
            domain: &self.setup.domain,
            gravity: self.setup.gravity,
            loads: fresh.then_some(&self.wall_loads),
        }
    }

    /// The thermo row of the current state (a collective call).
    pub fn thermo(&self) -> Thermo {
        let measured = diagnostics::measure(&self.view(), self.comm.as_ref());
        Thermo {
            step: self.step,
            time: self.time(),
            deleted: self.deleted.count as f64,
            deleted_mass: self.deleted.mass,
            imbalance: self.imbalance(),
            ..measured
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::comm::SerialComm;
    use std::time::Duration;

    /// Two unequal spheres of two materials meeting off-centre while
    /// spinning, with friction (Hooke, spring-slider), no gravity or walls.
    const PAIR: &str = r#"
[run]
name = "pair"
dt = 1e-5
steps = 600

[domain]
lo = [-0.1, -0.1, -0.1]
hi = [0.1, 0.1, 0.1]

[[material]]
name = "glass"
density = 2500.0

[[material]]
name = "steel"
density = 7800.0

[contact]
normal = { model = "hooke", stiffness = 1e4, restitution = 0.8 }
tangential = { model = "spring_slider", friction = 0.5, stiffness_ratio = 0.3 }

[[particles]]
kind = "list"
material = "glass"
radius = 0.005
position = [[-0.006, 0.001, 0.0]]
velocity = [[1.0, 0.0, 0.0]]
omega = [[0.0, 0.0, 10.0]]

[[particles]]
kind = "list"
material = "steel"
radius = 0.004
position = [[0.006, -0.001, 0.0005]]
velocity = [[-0.5, 0.2, 0.0]]
omega = [[5.0, 0.0, 0.0]]
"#;

    fn simulation() -> Simulation {
        let setup = Setup::from_str(std::path::Path::new("pair.toml"), PAIR).unwrap();
        Simulation::new(setup, Box::new(SerialComm)).unwrap()
    }

    /// `(Σ m v, Σ (m x × v + I ω), Σ m |v|, Σ (m |x| |v| + I |ω|))`.
    fn momenta(sim: &Simulation) -> (DVec3, DVec3, f64, f64) {
        let p = &sim.particles;
        let mut out = (DVec3::ZERO, DVec3::ZERO, 0.0, 0.0);
        for k in 0..p.n_owned {
            let (m, i) = (p.mass[k], 0.4 * p.mass[k] * p.radius[k] * p.radius[k]);
            out.0 += m * p.v[k];
            out.1 += m * p.x[k].cross(p.v[k]) + i * p.omega[k];
            out.2 += m * p.v[k].length();
            out.3 += m * p.x[k].length() * p.v[k].length() + i * p.omega[k].length();
        }
        out
    }

    /// A particle that goes bad is blamed on the first non-finite quantity
    /// in the order the step makes them: force, velocity, angular
    /// velocity, position.
    #[test]
    fn a_bad_particle_names_the_first_non_finite_quantity() {
        let cause = |f: fn(&mut Simulation)| {
            let mut sim = simulation();
            f(&mut sim);
            let e = sim.step().unwrap_err().to_string();
            assert!(e.contains("particle id "), "{e}");
            e
        };
        let e = cause(|s| s.particles.force[0].x = f64::NAN);
        assert!(e.contains("its force became non-finite"), "{e}");
        let e = cause(|s| s.particles.v[0].y = f64::INFINITY);
        assert!(e.contains("its velocity became non-finite"), "{e}");
        let e = cause(|s| s.particles.omega[0].z = f64::NAN);
        assert!(e.contains("its angular velocity became non-finite"), "{e}");
        let e = cause(|s| s.particles.x[0].x = f64::NAN);
        assert!(e.contains("its position became non-finite"), "{e}");
    }

    #[test]
    fn a_collision_conserves_momentum_and_angular_momentum() {
        let mut sim = simulation();
        assert_eq!(sim.particles.n_owned, 2);
        let (p0, l0, ps, ls) = momenta(&sim);
        let v0 = sim.state_by_id()[0].2;
        let mut touching = 0;
        while sim.step < sim.setup.steps {
            sim.step().unwrap();
            touching += usize::from(sim.particles.force[0] != DVec3::ZERO);
            let (p, l, _, _) = momenta(&sim);
            assert!(
                (p - p0).length() <= 1e-14 * ps,
                "step {}: P {p} vs {p0}",
                sim.step
            );
            assert!(
                (l - l0).length() <= 1e-13 * ls,
                "step {}: L {l} vs {l0}",
                sim.step
            );
        }
        assert!(touching > 20, "the spheres touched for {touching} steps");
        let by_id = sim.state_by_id();
        assert!(
            by_id[0].2.x < v0.x,
            "the collision slowed sphere 0: {:?}",
            by_id[0]
        );
        // Friction spun both spheres about new axes.
        assert!(by_id[1].3.y != 0.0 || by_id[1].3.z != 0.0);
        assert_eq!(sim.time(), 600.0 * 1e-5);
    }

    #[test]
    fn a_step_runs_and_times_its_stages() {
        let mut sim = simulation();
        // Set-up builds the neighbour list once.
        assert_eq!(sim.timers.rebuilds, 1);
        assert_eq!(sim.timers.total(), Duration::ZERO);
        for _ in 0..10 {
            sim.step().unwrap();
        }
        assert_eq!(sim.step, 10);
        for stage in [Stage::Integrate, Stage::Neighbor, Stage::Force] {
            assert!(sim.timers.spent(stage) > Duration::ZERO, "{}", stage.name());
        }
        // Output happens between steps, in the run loop, not in a step.
        assert_eq!(sim.timers.spent(Stage::Output), Duration::ZERO);
        let stages: Duration = Stage::ALL.iter().map(|&s| sim.timers.spent(s)).sum();
        assert_eq!(sim.timers.total(), stages);
        // 1 m/s for 10 steps of 10 µs is far below half the skin: no rebuild.
        assert_eq!(sim.timers.rebuilds, 1);
        // Forces of the last step are in place (none yet: the spheres are apart).
        assert_eq!(sim.particles.force[..2], [DVec3::ZERO; 2]);
        assert_eq!(sim.ghosts(), 0);
    }
}
