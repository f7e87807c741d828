//! The work order of the force stage: runs of blocks, one per thread, each
//! taken from its front by its thread and from its back by threads that
//! ran out of their own; pass one of each block, and pass two of a block
//! once every block its pairs reach has had pass one.

use super::pairs::{pass_one, Block, BlockOut, Upper};
use super::shares::{RunEntries, ShareSlots};
use super::walls::wall_forces;
use super::ForceParams;
use crate::contact::{BodyInertia, ContactLaw};
use crate::neighbor::{Contribution, FreshRecords, PairJobs, RecordPool, BLOCK};
use crate::simd::isa::in_best_build;
use crate::state::particles::ParticleView;
use glam::DVec3;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Mutex;

/// The parts of one block that the force stage writes.
pub(super) struct BlockParts<'a> {
    /// The entry numbers of the block's jobs' records.
    pub(super) entry: &'a mut [u32],
    /// The contacts the block evaluates ([`super::PairResults`]): one value.
    pub(super) contacts: &'a mut [u32],
    /// The block's forces and torques (the upper sums until pass two).
    pub(super) force: &'a mut [DVec3],
    pub(super) torque: &'a mut [DVec3],
    pub(super) wall_history: &'a mut [f64],
    /// The wall loads: a row of one per wall per particle tested against
    /// the walls ([`super::WallLoads`]), or empty.
    pub(super) wall_loads: &'a mut [Contribution],
}

/// What one thread of the force stage hands back ([`Stage::claim_blocks`]).
#[derive(Default)]
pub(super) struct ClaimedBlocks<'a> {
    /// Blocks after pass one whose pass two waits for every block's pass
    /// one, with their parts.
    pub(super) waiting: Vec<(usize, BlockParts<'a>)>,
    /// The fresh records of the stretches of blocks this thread did, each
    /// with its first block.
    pub(super) fresh: Vec<(usize, FreshRecords)>,
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
    pub(super) slots: &'a ShareSlots,
    pub(super) records: &'a RecordPool,
    /// The law of every pair of the stage, where there is one (a table of
    /// one law, or one that every pair of the particles' materials takes).
    pub(super) one_law: Option<&'a ContactLaw>,
}

impl Stage<'_> {
    /// Owned particles `first..last` of block `b` (empty at `b = n_blocks`).
    pub(super) fn block(&self, b: usize) -> (usize, usize) {
        let n = self.p.n_owned;
        ((b * BLOCK).min(n), ((b + 1) * BLOCK).min(n))
    }

    /// Pass one of block `b` into its own parts `out`, taking the entries
    /// of the contacts that form from `fresh` and those of the shares from
    /// `shares`.
    pub(super) fn pass_one_of(
        &self,
        b: usize,
        out: &mut BlockParts,
        fresh: &mut FreshRecords,
        shares: &mut RunEntries,
    ) {
        let jobs = self.jobs;
        let (first, last) = self.block(b);
        let block_jobs = jobs.offsets()[first]..jobs.offsets()[last];
        let blk = Block {
            p: self.p,
            bodies: self.bodies,
            first,
            jobs: &jobs.partners()[block_jobs.clone()],
            share_slot: &jobs.share_slots()[block_jobs.clone()],
            evaluator_lower: &jobs.evaluator_lower()[block_jobs.clone()],
            job_owner: &jobs.owners()[block_jobs.clone()],
            slots: self.slots,
            records: self.records,
            job0: block_jobs.start,
            fp: self.fp,
            h: self.h,
            one_law: self.one_law,
        };
        let parts = BlockOut {
            entry: &mut out.entry[..],
            fresh,
            upper: Upper {
                force: &mut out.force[..],
                torque: &mut out.torque[..],
            },
            shares,
        };
        out.contacts[0] = pass_one(&blk, parts) as u32;
    }

    /// Pass two of block `b` into its own parts `out`.
    pub(super) fn pass_two_of(&self, b: usize, out: &mut BlockParts) {
        self.pass_two(
            b,
            &mut out.force[..],
            &mut out.torque[..],
            &mut out.wall_history[..],
            &mut out.wall_loads[..],
        );
    }

    /// The jobs of blocks `blocks`.
    fn jobs_of(&self, blocks: Range<usize>) -> Range<usize> {
        let at = |b: usize| self.jobs.offsets()[self.block(b).0];
        at(blocks.start)..at(blocks.end)
    }

    /// One thread's share of the blocks: pass one of run `r`'s blocks from
    /// its front, with pass two of each block as soon as every block its
    /// pairs reach has had pass one on this thread; then pass one of
    /// blocks taken from the back of the other runs, one at a time, until
    /// none is left anywhere. Returns the blocks whose pass two must wait
    /// for the end of pass one everywhere (with their parts), and the
    /// fresh records of what it did. `fresh_start` is the pool's first
    /// fresh entry ([`crate::neighbor::PairHistory::stage_parts`]).
    ///
    /// A block is claimed once, under its run's lock, from the front by the
    /// run's thread or from the back by another, so a thread whose core
    /// runs slower than the other's gives blocks away. The blocks a run's
    /// thread did from the front take their pool entries from the front of
    /// the run's part of each pool, densely; a block taken from the back
    /// takes them from its own jobs' part, which lies beyond what the
    /// run's thread can reach (a job takes at most one entry of each). The
    /// result does not depend on who claims what.
    pub(super) fn claim_blocks<'p>(
        &self,
        r: usize,
        runs: &[Mutex<Range<usize>>],
        parts: &[Mutex<Option<BlockParts<'p>>>],
        fresh_start: usize,
    ) -> ClaimedBlocks<'p> {
        let reach = self.jobs.block_reach();
        let take = |b: usize| {
            let mut slot = parts[b].lock().expect("block parts poisoned");
            slot.take().expect("a block claimed twice")
        };
        let mut done = ClaimedBlocks::default();
        let own = runs[r].lock().expect("run poisoned").clone();
        let mut fresh = FreshRecords::of(r, self.jobs_of(own.clone()), fresh_start);
        let mut shares = RunEntries::of(self.jobs_of(own.clone()));
        // Blocks of this run after pass one, awaiting pass two, in order.
        let mut pending: VecDeque<(usize, BlockParts)> = VecDeque::new();
        loop {
            let claimed = runs[r].lock().expect("run poisoned").next();
            let Some(b) = claimed else { break };
            let mut out = take(b);
            self.pass_one_of(b, &mut out, &mut fresh, &mut shares);
            pending.push_back((b, out));
            // This thread did every block from `own.start` to `b`.
            while let Some(&(next, _)) = pending.front() {
                if (next + reach).min(self.n_blocks - 1) > b {
                    break;
                }
                let (next, mut out) = pending.pop_front().expect("a pending block");
                if next.saturating_sub(reach) >= own.start {
                    self.pass_two_of(next, &mut out);
                } else {
                    done.waiting.push((next, out));
                }
            }
        }
        done.waiting.extend(pending);
        done.fresh.push((own.start, fresh));
        // Then the other runs' blocks, from their backs.
        while let Some((o, b)) = (0..runs.len())
            .filter(|&o| o != r)
            .find_map(|o| Some((o, runs[o].lock().expect("run poisoned").next_back()?)))
        {
            let mut out = take(b);
            let mut fresh = FreshRecords::of(o, self.jobs_of(b..b + 1), fresh_start);
            let mut shares = RunEntries::of(self.jobs_of(b..b + 1));
            self.pass_one_of(b, &mut out, &mut fresh, &mut shares);
            done.waiting.push((b, out));
            done.fresh.push((b, fresh));
        }
        done
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
            return in_best_build!(sum_walls_block_avx2, sum_walls_block_avx512, || self
                .sum_block::<true>(b, fo, to, wrow, loads));
        }
        in_best_build!(sum_block_avx2, sum_block_avx512, || self
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
        // Each particle's lower-id sum `L`: the block's slots in contact,
        // picked and added in flat loops (`ShareSlots::add_to`, with
        // `PairJobs::slot_owners`).
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
