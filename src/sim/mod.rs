//! One simulation on one rank: the state and a [`Simulation::step`] that runs
//! named stages in order ([`stages`]), each timed ([`timers`]).
//!
//! Stages per step: `integrate` (first half kick and drift, with the
//! displacement scan), `insert` (pouring), `neighbor` (a rebuild when any
//! particle anywhere moved more than half the skin or particles were
//! inserted — a global decision — else a halo update), `force`, `integrate`
//! (second half kick). Checkpoints go through [`restart`], comparisons of
//! exact bits through [`dump`].
//!
//! A rebuild wraps positions at periodic boundaries, migrates particles that
//! left this rank's subdomain to their new owner together with their contact
//! history (pair records keyed by partner id, wall records), sorts the owned
//! particles spatially, creates the ghosts and builds the neighbour list,
//! putting every history record back by partner id.

pub mod dump;
pub mod restart;
pub mod stages;
pub mod timers;

use crate::config::Setup;
use crate::diagnostics::{self, Thermo};
use crate::error::Result;
use crate::force;
use crate::neighbor::carry::{HistoryRows, PairRecords};
use crate::neighbor::NeighborList;
use crate::parallel::comm::Comm;
use crate::parallel::grid::Decomposition;
use crate::parallel::halo::Halo;
use crate::state::history::WallHistory;
use crate::state::particles::Particles;
use glam::DVec3;

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
    /// Stage timers.
    pub timers: Timers,
    /// The grid of subdomains.
    pub decomp: Decomposition,
    pub(crate) halo: Halo,
    pub(crate) x_ref: Vec<DVec3>,
    pair_results: force::PairResults,
    comm: Box<dyn Comm>,
}

impl Simulation {
    /// Set up the initial state (this rank's particles of the config at
    /// step 0) and compute the forces of step 0. Collective.
    pub fn new(setup: Setup, comm: Box<dyn Comm>) -> Result<Self> {
        let decomp = if comm.size() == 1 {
            Decomposition::single(&setup.domain)
        } else {
            Decomposition::choose(&setup, comm.size(), comm.rank())?
        };
        let mut particles = Particles::default();
        for r in &setup.initial {
            if decomp.owner(setup.domain.wrap(r.x)) == decomp.rank {
                particles.push_owned(r);
            }
        }
        let h = setup.laws.history_len;
        let mut sim = Simulation {
            wall_history: WallHistory::new(particles.n_owned, setup.walls.len(), h),
            neighbors: NeighborList::empty(particles.n_owned, h),
            next_id: setup.next_id,
            particles,
            setup,
            step: 0,
            timers: Timers::default(),
            decomp,
            halo: Halo::default(),
            x_ref: Vec::new(),
            pair_results: force::PairResults::default(),
            comm,
        };
        sim.insert_due()?;
        sim.rebuild()?;
        sim.compute_forces();
        Ok(sim)
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.step as f64 * self.setup.dt
    }

    /// The transport.
    pub fn comm(&self) -> &dyn Comm {
        self.comm.as_ref()
    }

    /// Number of ghosts on this rank.
    pub fn ghosts(&self) -> usize {
        self.halo.len()
    }

    /// The thermo row of the current state (a collective call).
    pub fn thermo(&self) -> Thermo {
        let s = diagnostics::measure(
            &self.particles,
            &self.neighbors,
            &self.setup.laws,
            &self.setup.walls,
            self.setup.gravity,
            self.comm.as_ref(),
        );
        Thermo {
            step: self.step,
            time: self.time(),
            particles: s[0],
            kinetic_energy: s[1],
            rotational_energy: s[2],
            potential_energy: s[3],
            elastic_energy: s[4],
            contacts: s[5],
            max_overlap: s[6],
            temperature: s[7],
            rotational_temperature: s[8],
        }
    }
}
