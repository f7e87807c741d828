//! Wall-contact history: one record of `history_len` values per (owned
//! particle, wall), stored row by row in the owned particles' order, so a
//! particle's row travels with it when the particles are permuted, migrate
//! or are saved.
//!
//! (Pair-contact history lives with the pair jobs of the neighbour list,
//! one record per pair; see [`crate::neighbor::NeighborList`].)

use crate::state::room::Reorder;

/// The wall-contact records of the owned particles of one rank.
///
/// Particle `k`'s row is `walls · history_len` values: its record with
/// wall 0, then wall 1, and so on. A record of zeros is the same as no
/// contact.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WallHistory {
    values: Vec<f64>,
    walls: usize,
    history_len: usize,
}

impl WallHistory {
    /// Zeroed records for `particles` owned particles, `walls` walls and
    /// `history_len` values per record.
    pub fn new(particles: usize, walls: usize, history_len: usize) -> Self {
        Self {
            values: vec![0.0; particles * walls * history_len],
            walls,
            history_len,
        }
    }

    /// Values per particle (`walls · history_len`).
    #[inline]
    pub fn stride(&self) -> usize {
        self.walls * self.history_len
    }

    /// Number of walls.
    pub fn walls(&self) -> usize {
        self.walls
    }

    /// Values per record.
    pub fn history_len(&self) -> usize {
        self.history_len
    }

    /// Number of particles whose rows are held.
    pub fn particles(&self) -> usize {
        self.values.len().checked_div(self.stride()).unwrap_or(0)
    }

    /// Particle `k`'s row (all its wall records).
    pub fn row(&self, k: usize) -> &[f64] {
        let s = self.stride();
        &self.values[k * s..(k + 1) * s]
    }

    /// The record of particle `k` with wall `w`.
    pub fn record(&self, k: usize, w: usize) -> &[f64] {
        let h = self.history_len;
        let at = (k * self.walls + w) * h;
        &self.values[at..at + h]
    }

    /// The record of particle `k` with wall `w`, to write.
    pub fn record_mut(&mut self, k: usize, w: usize) -> &mut [f64] {
        let h = self.history_len;
        let at = (k * self.walls + w) * h;
        &mut self.values[at..at + h]
    }

    /// Every row, in particle order, as one slice (for the force stage,
    /// which cuts it into the rows of its blocks).
    pub fn rows_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Add a zeroed row for a new last particle.
    pub fn push_zeroed(&mut self) {
        let s = self.stride();
        self.values.resize(self.values.len() + s, 0.0);
    }

    /// Add `row` (one particle's, `stride` values) for a new last particle.
    ///
    /// # Panics
    /// If `row` is not one row long.
    pub fn push_row(&mut self, row: &[f64]) {
        assert_eq!(
            row.len(),
            self.stride(),
            "a wall-history row of another length"
        );
        self.values.extend_from_slice(row);
    }

    /// Keep the rows of particles `order[0], order[1], ...`, in that order
    /// (a permutation, or an ascending selection of the particles kept), in
    /// place ([`Reorder`]): a rebuild's sort makes no copy of the rows.
    pub fn reorder(&mut self, order: &[usize]) {
        let stride = self.stride();
        if stride > 0 {
            Reorder::new(order, self.particles()).apply(&mut self.values, stride);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_their_particles() {
        let mut h = WallHistory::new(3, 2, 3);
        assert_eq!((h.stride(), h.particles()), (6, 3));
        h.record_mut(1, 1).copy_from_slice(&[1.0, 2.0, 3.0]);
        h.record_mut(2, 0)[0] = 4.0;
        let mut p = h.clone();
        p.reorder(&[2, 0, 1]);
        assert_eq!(p.record(2, 1), &[1.0, 2.0, 3.0]);
        assert_eq!(p.record(0, 0), &[4.0, 0.0, 0.0]);
        assert_eq!(p.row(1), &[0.0; 6]);
        let mut q = p.clone();
        q.reorder(&[2]);
        q.push_zeroed();
        q.push_row(p.row(0));
        assert_eq!(q.particles(), 3);
        assert_eq!(q.record(0, 1), &[1.0, 2.0, 3.0]);
        assert_eq!(q.record(2, 0), &[4.0, 0.0, 0.0]);
    }

    #[test]
    fn no_walls_hold_no_values() {
        let mut h = WallHistory::new(5, 0, 3);
        h.push_zeroed();
        assert_eq!((h.stride(), h.particles(), h.rows_mut().len()), (0, 0, 0));
    }
}
