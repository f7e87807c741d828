//! A rank's part of the state, row by row: what a checkpoint is written
//! from, one column at a time, without a copy of the whole state.
//!
//! A [`Snapshot`](super::snapshot::Snapshot) is such rows (held), and so is
//! the running simulation (`sim::restart`, its arrays read in id order):
//! the checkpoint writer asks for one column after another and never holds
//! more than one.

use glam::DVec3;

use super::particles::ParticleRecord;

/// One particle row.
#[derive(Debug, Clone)]
pub struct RowView {
    /// The particle.
    pub particle: ParticleRecord,
    /// Its position at the last neighbour-list rebuild.
    pub x_ref: DVec3,
    /// Its force at the step.
    pub force: DVec3,
    /// Its torque at the step.
    pub torque: DVec3,
}

/// Particle rows, each followed by its contact-history records (only
/// records with a non-zero bit), in a fixed order (sorted by id).
pub trait StateRows {
    /// The numbers of particle rows, pair records and wall records.
    fn counts(&self) -> [usize; 3];
    /// Call `f` for every particle row, in order.
    fn for_each_particle(&self, f: &mut dyn FnMut(&RowView));
    /// Call `f(pair records, wall records)` for every particle row, in
    /// order.
    fn for_each_record_count(&self, f: &mut dyn FnMut(usize, usize));
    /// Call `f(particle id, partner id, values)` for every pair record, in
    /// the order of the rows.
    fn for_each_pair(&self, f: &mut dyn FnMut(u64, u64, &[f64]));
    /// Call `f(particle id, wall index, values)` for every wall record, in
    /// the order of the rows.
    fn for_each_wall(&self, f: &mut dyn FnMut(u64, u32, &[f64]));
}
