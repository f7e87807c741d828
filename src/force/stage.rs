//! The work order of the force stage: runs of blocks, pass one of each block,
//! and pass two of a block once every block its pairs reach has had pass one.

use super::pairs::{pass_one, Block, BlockOut, Upper};
use super::shares::{RunEntries, ShareSlots};
use super::walls::wall_forces;
use super::ForceParams;
use crate::contact::BodyInertia;
use crate::neighbor::{Contribution, FreshRecords, PairJobs, RecordPool, BLOCK};
use crate::simd::isa::in_best_build;
use crate::state::particles::ParticleView;
use glam::DVec3;

/// The parts of one run of blocks that the force stage writes.
pub(super) struct RunOut<'a> {
    /// The entry numbers of the run's jobs' records.
    pub(super) entry: &'a mut [u32],
    /// The contacts each block of the run evaluates ([`super::PairResults`]).
    pub(super) contacts: &'a mut [u32],
    /// The run's fresh records, for the contacts that form.
    pub(super) fresh: FreshRecords,
    /// The run's forces and torques (the upper sums until pass two).
    pub(super) force: &'a mut [DVec3],
    pub(super) torque: &'a mut [DVec3],
    pub(super) wall_history: &'a mut [f64],
    /// The wall loads: a row of one per wall per particle tested against
    /// the walls ([`super::WallLoads`]), or empty.
    pub(super) wall_loads: &'a mut [Contribution],
    /// The run's part of the share pool.
    pub(super) shares: RunEntries,
}

/// What both passes of the force stage read.
pub(super) struct Stage<'a> {
    pub(super) p: &'a ParticleView<'a>,
    /// Each particle's part of the couples' inertia (empty where no law
    /// has couples).
    pub(super) bodies: &'a [BodyInertia],
    pub(super) jobs: &'a PairJobs,
    pub(super) fp: &'a ForceParams<'a>,
    pub(super) n_blocks: usize,
    /// Values per contact-history record.
    pub(super) h: usize,
    /// Values per particle's wall-history row.
    pub(super) wh: usize,
    /// Wall loads kept per row: one per wall, or none.
    pub(super) lw: usize,
    /// The wall-load rows before each block (`n_blocks + 1` entries; all
    /// zero where none are kept).
    pub(super) load_rows: &'a [usize],
    pub(super) slots: &'a ShareSlots,
    pub(super) records: &'a RecordPool,
}

impl Stage<'_> {
    /// Owned particles `first..last` of block `b` (empty at `b = n_blocks`).
    pub(super) fn block(&self, b: usize) -> (usize, usize) {
        let n = self.p.n_owned;
        ((b * BLOCK).min(n), ((b + 1) * BLOCK).min(n))
    }

    /// Pass one over the blocks `s..e`, with pass two of each block as soon
    /// as every block its pairs reach is done; returns the blocks whose
    /// pairs reach outside `s..e` (their pass two must wait).
    pub(super) fn run_blocks(&self, s: usize, e: usize, run: &mut RunOut) -> Vec<usize> {
        let jobs = self.jobs;
        let (h, wh) = (self.h, self.wh);
        let reach = jobs.block_reach();
        let (job0, first0) = (jobs.offsets()[self.block(s).0], self.block(s).0);
        let mut waiting = Vec::new();
        let mut next = s;
        for b in s..e {
            let (first, last) = self.block(b);
            let block_jobs = jobs.offsets()[first]..jobs.offsets()[last];
            let block_jobs_start = block_jobs.start;
            let (j0, j1) = (block_jobs.start - job0, block_jobs.end - job0);
            let blk = Block {
                p: self.p,
                bodies: self.bodies,
                first,
                jobs: &jobs.partners()[block_jobs.clone()],
                share_slot: &jobs.share_slots()[block_jobs.clone()],
                evaluator_lower: &jobs.evaluator_lower()[block_jobs.clone()],
                job_owner: &jobs.owners()[block_jobs],
                slots: self.slots,
                records: self.records,
                job0: block_jobs_start,
                fp: self.fp,
                h,
            };
            let out = BlockOut {
                entry: &mut run.entry[j0..j1],
                fresh: &mut run.fresh,
                upper: Upper {
                    force: &mut run.force[first - first0..last - first0],
                    torque: &mut run.torque[first - first0..last - first0],
                },
                shares: &mut run.shares,
            };
            run.contacts[b - s] = pass_one(&blk, out) as u32;
            // Blocks whose every reachable block has now had pass one.
            while next < e && (next + reach).min(self.n_blocks - 1) <= b {
                if next.saturating_sub(reach) >= s {
                    let (f, l) = self.block(next);
                    let (a, z) = (f - first0, l - first0);
                    let rows = &self.load_rows;
                    let (ra, rz) = (rows[next] - rows[s], rows[next + 1] - rows[s]);
                    let lw = self.lw;
                    self.pass_two(
                        next,
                        &mut run.force[a..z],
                        &mut run.torque[a..z],
                        &mut run.wall_history[a * wh..z * wh],
                        &mut run.wall_loads[ra * lw..rz * lw],
                    );
                } else {
                    waiting.push(next);
                }
                next += 1;
            }
        }
        waiting.extend(next..e);
        waiting
    }

    /// Pass two of block `b`: each particle's force is its lower-id shares
    /// (its row's lower-id entries of the share slots), in row order, plus
    /// its upper sum (in `fo` and `to` from pass one, where the result
    /// goes), its wall contacts and gravity (keeping each wall's share in `loads`,
    /// one per wall per row of a particle tested against the walls, unless
    /// it is empty). Must follow pass one of every block the block's pairs
    /// reach.
    pub(super) fn pass_two(
        &self,
        b: usize,
        fo: &mut [DVec3],
        to: &mut [DVec3],
        wrow: &mut [f64],
        loads: &mut [Contribution],
    ) {
        // Without walls, a loop of its own: the wall code's registers and
        // branches stay out of the common case.
        if !self.fp.walls.is_empty() {
            return in_best_build!(sum_walls_block_avx2, || self
                .sum_block::<true>(b, fo, to, wrow, loads));
        }
        in_best_build!(sum_block_avx2, || self
            .sum_block::<false>(b, fo, to, wrow, loads));
    }

    /// [`Self::pass_two`], with or without walls (`WALLS`). Without, the
    /// wall sum `+0` is not added: the contact sum is never `−0` (every sum
    /// starts at `+0`, and `+0 + (−0) = +0`), so adding `+0` leaves its bits
    /// as they are.
    #[inline(always)]
    pub(super) fn sum_block<const WALLS: bool>(
        &self,
        b: usize,
        fo: &mut [DVec3],
        to: &mut [DVec3],
        wrow: &mut [f64],
        loads: &mut [Contribution],
    ) {
        let (p, fp, h, wh, lw) = (self.p, self.fp, self.h, self.wh, self.lw);
        let (first, last) = self.block(b);
        let len = last - first;
        let starts = &self.jobs.slot_offsets()[first..=last];
        let (frozen, mass) = (&p.frozen[first..last], &p.mass[first..last]);
        let (fo, to) = (&mut fo[..len], &mut to[..len]);
        // Each particle's lower-id sum `L`, all of the block's slots in one
        // flat loop (`PairJobs::slot_owners`).
        let mut lower_sums = [Contribution::default(); BLOCK];
        let (s0, s1) = (starts[0], starts[len]);
        // SAFETY: the block's slots are its particles', and this block's
        // pass two is their only reader, after every writer (the caller
        // orders it after pass one of the blocks in reach).
        unsafe {
            self.slots.add_to(
                s0,
                s1,
                &self.jobs.slot_owners()[s0..s1],
                &mut lower_sums[..len],
            )
        };
        // The next wall-load row: each particle tested against the walls
        // has one, frozen or not (`WallLoads::lay_out`).
        let mut row = 0;
        for o in 0..len {
            let lower = lower_sums[o];
            let (mut f, mut t) = (lower.force + fo[o], lower.torque + to[o]);
            let tested = WALLS && fp.near_walls.any_for(first + o);
            row += tested as usize;
            if frozen[o] {
                (f, t) = (DVec3::ZERO, DVec3::ZERO);
            } else {
                if tested {
                    let rec = &mut wrow[o * wh..(o + 1) * wh];
                    let load = &mut loads[(row - 1) * lw..row * lw];
                    let (fw, tw) = wall_forces(p, first + o, rec, h, fp, load);
                    f += fw;
                    t += tw;
                }
                f += mass[o] * fp.gravity;
            }
            fo[o] = f;
            to[o] = t;
        }
    }
}
