//! Deletion: at one point of the step, right after the first half step's
//! drift, every owned particle whose centre lies in an outlet, or that left
//! the domain through an open face under `lost = "delete"`, is removed on
//! the rank that owns it, with its wall-history row; a deletion anywhere
//! forces a neighbour-list rebuild on every rank (a global decision, taken
//! in the first half step's one reduction), and the rebuild drops every
//! pair record that names a deleted particle: such a record has no pair in
//! the new list (ids are never reused), ghost copies included.
//!
//! The totals ([`Deleted`]) are the same on every rank: the deleted ids
//! and masses of a step are gathered (a step's deletions, not the run's
//! particles) and summed in id order, so `deleted_mass` has the same bits
//! on any number of ranks, and a checkpoint carries it on.

use super::{Carried, Simulation};
use crate::geometry::outlet::Outflow;
use crate::neighbor::BLOCK;
use crate::state::pack::{Pack, Unpack};
use rayon::prelude::*;
use std::time::Instant;

/// What a run has deleted so far, over all ranks (the same on every rank):
/// the thermo columns `deleted` and `deleted_mass`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Deleted {
    /// Particles deleted.
    pub count: u64,
    /// Their total mass (kg): step by step, and within a step in id order.
    pub mass: f64,
}

impl Simulation {
    /// The run's deletion rule: its outlets and `domain.lost`.
    pub(super) fn outflow(&self) -> Outflow<'_> {
        Outflow {
            domain: &self.setup.domain,
            outlets: &self.setup.outlets,
            lost: self.setup.lost,
        }
    }

    /// The owned particles to delete at the current positions (ascending
    /// local indices). A run that deletes nothing (no outlet, `lost =
    /// "error"`) makes no pass.
    pub(super) fn doomed(&self) -> Vec<usize> {
        let rule = self.outflow();
        if !rule.deletes() {
            return Vec::new();
        }
        let x = &self.particles.x[..self.particles.n_owned];
        x.par_chunks(BLOCK)
            .enumerate()
            .flat_map_iter(|(b, xs)| {
                xs.iter()
                    .enumerate()
                    .filter(move |&(_, &x)| rule.deletion(x).is_some())
                    .map(move |(k, _)| b * BLOCK + k)
            })
            .collect()
    }

    /// Delete the owned particles `doomed` (ascending local indices; maybe
    /// none on this rank), add every rank's to the totals, and return the
    /// pair history of the particles that stay, lifted out of the neighbour
    /// list for the rebuild that must follow. Collective: every rank calls
    /// it on a step where any rank deletes.
    pub(super) fn delete(&mut self, doomed: &[usize]) -> Carried {
        let carried = self.lift_history();
        let p = &self.particles;
        let mut mine = Vec::with_capacity(16 * doomed.len());
        for &k in doomed {
            mine.put_u64(p.id[k]);
            mine.put_f64(p.mass[k]);
        }
        let tc = Instant::now();
        let all = if self.comm.size() > 1 {
            self.comm.all_gather(&mine)
        } else {
            vec![mine]
        };
        self.timers.comm += tc.elapsed();
        let mut gone: Vec<(u64, f64)> = Vec::new();
        for b in &all {
            let mut u = Unpack::new(b);
            while !u.is_empty() {
                let id = u.u64();
                gone.push((id, u.f64()));
            }
        }
        gone.sort_unstable_by_key(|g| g.0);
        for &(_, m) in &gone {
            self.deleted.mass += m;
        }
        self.deleted.count += gone.len() as u64;
        let n = p.n_owned;
        let mut keep = Vec::with_capacity(n - doomed.len());
        let mut next = doomed.iter().copied().peekable();
        for k in 0..n {
            if next.peek() == Some(&k) {
                next.next();
            } else {
                keep.push(k);
            }
        }
        self.particles.truncate_ghosts();
        self.particles.retain_owned(&keep);
        self.wall_history.reorder(&keep);
        self.x_ref = keep.iter().map(|&k| self.x_ref[k]).collect();
        match carried {
            Carried::Rows(mut rows) => {
                rows.retain_rows(&keep);
                Carried::Rows(rows)
            }
            Carried::Pairs(mut pairs) => {
                pairs.retain_particles(&keep, n);
                Carried::Pairs(pairs)
            }
        }
    }
}
