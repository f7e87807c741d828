//! The pair jobs: which entry of a pair evaluates it, and where the other
//! side's share of its force goes.

use super::verlet::BlockRows;
use super::{NeighborList, BLOCK, NO_SLOT};
use crate::state::particles::Particles;
use rayon::prelude::*;

impl NeighborList {
    /// Make the jobs: the entry in the row of the lower global id evaluates
    /// a pair of owned particles that list each other, any other entry its
    /// own pair. Fills [`Self::jobs`], [`Self::job_offsets`],
    /// [`Self::job_of_entry`], [`Self::share_slot`] and [`Self::slot_offsets`]
    /// (`blocks` holds the build's work blocks, for their role scratch).
    pub(super) fn assign_jobs(&mut self, p: &Particles, blocks: &mut [BlockRows]) {
        const EVALUATES: u32 = u32::MAX;
        let n = self.offsets.len() - 1;
        let list = &*self;
        // Per entry: EVALUATES, or the entry of the same pair that does
        // (each block's entries in its `role`).
        blocks.par_iter_mut().enumerate().for_each(|(b, rows)| {
            let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            let role = &mut rows.role;
            role.clear();
            role.reserve(list.offsets[last] - list.offsets[first]);
            for k in first..last {
                for e in list.offsets[k]..list.offsets[k + 1] {
                    let q = list.partner[e] as usize;
                    // The lower id evaluates; the higher looks for the
                    // pair in the partner's row (present there unless the
                    // rows disagree at the cut-off, then it evaluates too).
                    let mirror = (q < n && list.partner_id[e] < p.id[k])
                        .then(|| list.entry_of(q, p.id[k]))
                        .flatten();
                    role.push(mirror.map_or(EVALUATES, |m| m as u32));
                }
            }
        });
        self.job_offsets.clear();
        self.job_offsets.reserve(n + 1);
        self.job_offsets.push(0);
        self.slot_offsets.clear();
        self.slot_offsets.reserve(n + 1);
        self.slot_offsets.push(0);
        for v in [&mut self.jobs, &mut self.share_slot] {
            v.clear();
            v.reserve(self.partner.len() / 2 + 1);
        }
        self.evaluator_lower.clear();
        self.evaluator_lower.reserve(self.partner.len() / 2 + 1);
        self.job_owner.clear();
        self.job_owner.reserve(self.partner.len() / 2 + 1);
        self.job_of_entry.clear();
        self.job_of_entry.resize(self.partner.len(), 0);
        // Block b's roles start at entry `offsets[b · BLOCK]`.
        let block_of = |k: usize| &blocks[k / BLOCK];
        let base = |k: usize| self.offsets[k / BLOCK * BLOCK];
        for k in 0..n {
            let row = self.offsets[k]..self.offsets[k + 1];
            let (roles, row0) = (&block_of(k).role, base(k));
            let lower = self.partner_id[row.clone()].partition_point(|&id| id < p.id[k]);
            let slot0 = *self.slot_offsets.last().expect("starts with 0");
            self.slot_offsets.push(slot0 + lower);
            for e in row.clone() {
                if roles[e - row0] == EVALUATES {
                    self.job_of_entry[e] = self.jobs.len() as u32;
                    self.jobs.push(self.partner[e]);
                    // A lower-id partner (the row's first `lower` entries):
                    // the share is this particle's own; else the partner's,
                    // placed by its mirror entry below.
                    let own = e < row.start + lower;
                    self.share_slot
                        .push(if own { self.slot_of(k, e) } else { NO_SLOT });
                    self.evaluator_lower.push(!own);
                    self.job_owner.push((k % BLOCK) as u16);
                }
            }
            self.job_offsets.push(self.jobs.len());
        }
        for k in 0..n {
            let (roles, row0) = (&block_of(k).role, base(k));
            for e in self.offsets[k]..self.offsets[k + 1] {
                let m = roles[e - row0];
                if m != EVALUATES {
                    let job = self.job_of_entry[m as usize];
                    self.job_of_entry[e] = job;
                    self.share_slot[job as usize] = self.slot_of(k, e);
                }
            }
        }
        self.block_reach = (0..n)
            .flat_map(|k| {
                let list = &*self;
                list.partner[list.offsets[k]..list.offsets[k + 1]]
                    .iter()
                    .filter(move |&&q| (q as usize) < n)
                    .map(move |&q| (q as usize / BLOCK).abs_diff(k / BLOCK))
            })
            .max()
            .unwrap_or(0);
    }

    /// The share slot of entry `e`, a lower-id entry of owned particle
    /// `k`'s row (see [`Self::slot_offsets`]).
    fn slot_of(&self, k: usize, e: usize) -> u32 {
        (self.slot_offsets[k] + e - self.offsets[k]) as u32
    }
}
