//! What a run measures of itself: the thermo row ([`thermo`]), the stress
//! tensor ([`stress`]), the bound on overlaps ([`overlap`]), the
//! `[[diagnostics]]` tables ([`bins`] for regions and profiles,
//! [`coarse_grain`] for continuum fields, both [`Sampled`]), all read
//! through one definition of a contact (`contacts.rs`). They never feed
//! back into the trajectory, so their sums may run in any order.

pub mod bins;
mod blocks;
pub mod coarse_grain;
pub mod contact_list;
pub(crate) mod contacts;
pub mod kernel;
pub mod overlap;
pub mod stress;
pub mod thermo;

use crate::config::{DiagnosticSpec, LawTable, Measure};
use crate::force::{NearWalls, WallLoads};
use crate::geometry::domain::Domain;
use crate::geometry::walls::Wall;
use crate::io::frames::Fixed;
use crate::io::table::Column;
use crate::neighbor::NeighborList;
use crate::parallel::comm::Comm;
use crate::state::particles::Particles;
use glam::DVec3;

pub use overlap::{deep_contact, deep_contact_among, DeepContact, MAX_OVERLAP};
pub use thermo::{contacts_on_rank, measure, thermo_columns, Thermo, SCALAR_COLUMNS};

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
    /// Which owned particles can touch which walls (and mesh triangles)
    /// until the next rebuild, as the force stage found them.
    pub near_walls: &'a NearWalls,
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

/// A `[[diagnostics]]` block that samples the state every `every` steps and
/// pools `average` samples into one row of its table.
pub trait Sampled: Send {
    /// What it is.
    fn spec(&self) -> &DiagnosticSpec;
    /// Take one sample of the state `v` (collective: every rank calls it).
    fn sample(&mut self, v: &View, comm: &dyn Comm);
    /// The row of the samples since the last one, in [`Self::columns`]
    /// order, and a fresh start.
    fn take_row(&mut self, step: u64, time: f64) -> Vec<f64>;
    /// The table's columns.
    fn columns(&self) -> Vec<Column>;
    /// The datasets written once beside the table.
    fn fixed(&self) -> Vec<Fixed>;
    /// The group's string attributes (`kind` first).
    fn attrs(&self) -> Vec<(&'static str, &'static str)>;

    /// Its name.
    fn name(&self) -> &str {
        &self.spec().name
    }
    /// Whether it samples at `step`.
    fn samples_at(&self, step: u64) -> bool {
        step.is_multiple_of(self.spec().every)
    }
    /// Whether it writes a row at `step` (after that step's sample).
    fn writes_at(&self, step: u64) -> bool {
        step.is_multiple_of(self.spec().every * self.spec().average)
    }
}

/// The sampler of a region, profile or coarse-graining block in the box
/// `domain`; `None` for a contact list, which writes no table.
pub fn sampler(spec: &DiagnosticSpec, domain: &Domain) -> Option<Box<dyn Sampled>> {
    match spec.measure {
        Measure::Region | Measure::Profile { .. } => Some(Box::new(bins::Bins::new(spec))),
        Measure::CoarseGrain(_) => Some(Box::new(coarse_grain::CoarseGrain::new(spec, domain))),
        Measure::Contacts => None,
    }
}
