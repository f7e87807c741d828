//! What a run measures of itself: the thermo row ([`thermo`]), the stress
//! tensor ([`stress`]), the bound on overlaps ([`overlap`]), all read
//! through one definition of a contact (`contacts.rs`). They never feed back
//! into the trajectory, so their sums may run in any order.

pub mod bins;
pub(crate) mod contacts;
pub mod overlap;
pub mod stress;
pub mod thermo;

use crate::config::LawTable;
use crate::force::WallLoads;
use crate::geometry::domain::Domain;
use crate::geometry::walls::Wall;
use crate::neighbor::NeighborList;
use crate::state::particles::Particles;
use glam::DVec3;

pub use overlap::{deep_contact, DeepContact, MAX_OVERLAP};
pub use thermo::{measure, thermo_columns, Thermo, SCALAR_COLUMNS};

/// What the diagnostics read of one rank's state between two steps.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// The particles, owned then ghosts.
    pub p: &'a Particles,
    /// The neighbour list, whose share slots hold every pair's force.
    pub nl: &'a NeighborList,
    /// The contact laws.
    pub laws: &'a LawTable,
    /// The walls.
    pub walls: &'a [Wall],
    /// The box.
    pub domain: &'a Domain,
    /// Gravity.
    pub gravity: DVec3,
    /// The wall loads, where the last force stage was of the particles as
    /// they are and kept them (so the share slots hold its pair forces
    /// too); `None` after a restart, which restores each particle's total
    /// force but not its contacts', until the next step.
    pub loads: Option<&'a WallLoads>,
}
