//! The force stage: contact, wall and body forces on every owned particle.
//!
//! Each owned particle sums, in this fixed order, its pair contacts with
//! lower-id partners (`L`, by partner id), plus those with higher-id partners
//! (`U`, by partner id), then its wall contacts (by wall index), then
//! gravity. Each pair is evaluated once, in canonical orientation, so both
//! particles of a contact get the same bits (on one rank or two) and
//! Newton's third law holds exactly; the result does not depend on threads,
//! ranks or local order. See [`compute`] for the two passes.

use crate::config::LawTable;
use crate::contact::lanes::{self, ContactLanes, HookeSpringSliderLaw, LANES};
use crate::contact::{Body, ContactInertia, ContactLaw, Kinematics, PairContext, PairForce};
use crate::geometry::walls::Wall;
use crate::neighbor::{Contribution, NeighborList, BLOCK, NO_SLOT};
use crate::rng::PairNoise;
use crate::state::particles::Particles;
use glam::{DVec3, DVec4};
use rayon::prelude::*;

/// Run-constant inputs of the force stage.
#[derive(Debug, Clone, Copy)]
pub struct ForceParams<'a> {
    /// Contact laws.
    pub laws: &'a LawTable,
    /// Walls.
    pub walls: &'a [Wall],
    /// Gravity.
    pub gravity: DVec3,
    /// Time step (for history updates).
    pub dt: f64,
    /// Interaction range beyond `R_i + R_j` of the longest-ranged law (WCA), else 0.
    pub range_pad: f64,
    /// The step whose forces are computed (names the stochastic-friction noise).
    pub step: u64,
    /// Stochastic-friction noise under the run's seed
    /// (`rng::Stream::StochasticFriction`).
    pub noise: PairNoise,
}

/// Split `data` into consecutive mutable chunks of the given lengths.
pub fn split_chunks<T>(mut data: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for len in lens {
        let (head, tail) = data.split_at_mut(len);
        out.push(head);
        data = tail;
    }
    out
}

/// A pair contact of a law with couples (rolling, spinning) or stochastic
/// friction. Kept out of line so the pair loop's plain path stays lean.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn general_pair(
    p: &Particles,
    law: &ContactLaw,
    (i, j): (usize, usize),
    (bi, bj): (&Body, &Body),
    (id_i, id_j): (u64, u64),
    d: DVec3,
    r: f64,
    rec: &mut [f64],
    fp: &ForceParams,
) -> PairForce {
    let kin = Kinematics::pair(bi, bj, d, r);
    let inertia = || pair_inertia(p, i, j);
    if law.stochastic.is_some() {
        let ctx = PairContext {
            bi,
            bj,
            inv_inertia_i: p.inv_inertia[i],
            inv_inertia_j: p.inv_inertia[j],
            id_i,
            id_j,
            step: fp.step,
            noise: &fp.noise,
        };
        law.evaluate_pair(&kin, fp.dt, rec, &ctx, inertia)
    } else {
        law.evaluate_with(&kin, fp.dt, rec, inertia)
    }
}

/// The rolling/spinning inertia of the pair `(i, j)` (canonical order).
#[inline]
fn pair_inertia(p: &Particles, i: usize, j: usize) -> ContactInertia {
    ContactInertia::pair(
        p.inv_inertia[i],
        p.inv_mass[i],
        p.radius[i],
        p.inv_inertia[j],
        p.inv_mass[j],
        p.radius[j],
    )
}

/// Results of the pair stage kept between steps so that their storage is
/// reused (see [`compute`]).
#[derive(Debug, Clone, Default)]
pub struct PairResults {
    /// Per owned particle: the sum of its contacts with higher-id partners.
    upper: Vec<Contribution>,
}

/// The share slots ([`NeighborList::share`]) as seen by the threads of one
/// force stage. Each slot is written by exactly one job in pass one and
/// read by pass two of the slot's particle, after that job (the wavefront
/// in [`compute`] orders them), so no slot is ever touched by two threads
/// at once, though the writes of one run of blocks land in another's rows.
struct ShareSlots {
    share: *mut Contribution,
    len: usize,
}

// SAFETY: threads access disjoint slots (see the type's docs).
unsafe impl Sync for ShareSlots {}

impl ShareSlots {
    fn new(share: &mut [Contribution]) -> Self {
        Self {
            share: share.as_mut_ptr(),
            len: share.len(),
        }
    }

    /// Store the share of slot `e`.
    ///
    /// # Safety
    /// No other thread reads or writes slot `e` during the call.
    #[inline(always)]
    unsafe fn put(&self, e: usize, c: Contribution) {
        assert!(e < self.len);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe { *self.share.add(e) = c };
    }

    /// Hint the cache to load slot `e` (if any) soon.
    #[inline(always)]
    fn prefetch(&self, e: u32) {
        if (e as usize) < self.len {
            // The hint neither reads nor writes the slot.
            prefetch_ptr(self.share.wrapping_add(e as usize));
        }
    }

    /// The shares of slots `s..e`: this step's, or `+0` in every component
    /// where the pair is not in contact. Adding `+0` to a sum that starts
    /// at `+0` never changes its bits (round to nearest never makes `−0`
    /// from a `+0` start), so the sum needs no test.
    ///
    /// # Safety
    /// No other thread writes any of the slots while the slice lives.
    #[inline(always)]
    unsafe fn range(&self, s: usize, e: usize) -> &[Contribution] {
        assert!(s <= e && e <= self.len);
        // SAFETY: in bounds, and not written meanwhile by the caller's promise.
        unsafe { std::slice::from_raw_parts(self.share.add(s), e - s) }
    }
}

/// Compute `force` and `torque` of every owned particle, updating the contact
/// history in `nl` and the wall-contact history `wall_history`
/// (`walls.len() · history_len` values per owned particle). The packed
/// images ([`Particles::packed`]) must be those of the current positions.
///
/// Each particle's force is `L + U` plus its wall contacts and gravity,
/// where `L` sums its contacts with lower-id partners and `U` those with
/// higher-id partners, each in partner-id order: a split by global id, so
/// the bits do not depend on ranks, threads or local order.
///
/// Two passes. First every pair is evaluated once, by its job (see
/// [`NeighborList`]), in canonical orientation, which gives both sides the
/// same bits: the lower-id side adds its share to its `U` directly (its
/// jobs run in partner-id order) and the higher-id side's share is stored
/// in that side's share slot for the pair. Then each owned particle sums
/// its share slots (one per lower-id entry of its row), in row order.
pub fn compute(
    p: &mut Particles,
    nl: &mut NeighborList,
    wall_history: &mut [f64],
    results: &mut PairResults,
    fp: &ForceParams,
) {
    let n = p.n_owned;
    debug_assert!(
        (0..p.len()).all(|k| p.packed[k].to_array().map(f64::to_bits)
            == p.packed_image(k).to_array().map(f64::to_bits)),
        "packed images are not those of the current positions"
    );
    let h = nl.history_len;
    let n_jobs = nl.jobs.len();
    if nl.active.len() != n_jobs {
        nl.refresh_active();
    }
    let mut share = std::mem::take(&mut nl.share);
    assert_eq!(
        share.len(),
        nl.slot_offsets[n],
        "share slots of another list"
    );
    let slots = ShareSlots::new(&mut share);
    results.upper.resize(n, Contribution::default());
    let n_blocks = n.div_ceil(BLOCK);
    let wh = fp.walls.len() * h;
    let mut force = std::mem::take(&mut p.force);
    let mut torque = std::mem::take(&mut p.torque);
    let mut history = std::mem::take(&mut nl.history);
    let mut active = std::mem::take(&mut nl.active);
    let parts: &Particles = p;
    let ctx = Stage {
        p: parts,
        nl: &*nl,
        fp,
        n_blocks,
        wh,
        slots: &slots,
    };
    // The blocks in as many contiguous runs as there are threads. Within a
    // run, pass two of a block follows pass one of the blocks its pairs
    // reach (`NeighborList::block_reach`) while their results are still in
    // cache; blocks whose pairs reach into another run wait for the end of
    // pass one everywhere. The result does not depend on the runs.
    let per_run = n_blocks
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1);
    let runs: Vec<(usize, usize)> = (0..n_blocks)
        .step_by(per_run)
        .map(|s| (s, (s + per_run).min(n_blocks)))
        .collect();
    // Where block `b` starts (`b` may be `n_blocks`: the end).
    let particle_at = |b: usize| ctx.block(b).0;
    let job_at = |b: usize| nl.job_offsets[particle_at(b)];
    let bounds = |f: &dyn Fn(usize) -> usize, per: usize| {
        runs.iter()
            .map(|&(s, e)| (f(e) - f(s)) * per)
            .collect::<Vec<_>>()
    };
    let job_lens = bounds(&job_at, 1);
    let particle_lens = bounds(&particle_at, 1);
    let waiting: Vec<usize> = split_chunks(&mut history, bounds(&job_at, h).into_iter())
        .into_par_iter()
        .zip(split_chunks(&mut active, job_lens.iter().copied()))
        .zip(split_chunks(
            &mut results.upper,
            particle_lens.iter().copied(),
        ))
        .zip(split_chunks(&mut force, particle_lens.iter().copied()))
        .zip(split_chunks(&mut torque, particle_lens.iter().copied()))
        .zip(split_chunks(
            wall_history,
            bounds(&particle_at, wh).into_iter(),
        ))
        .zip(runs.par_iter())
        .flat_map_iter(
            |((((((history, active), upper), fo), to), wrow), &(s, e))| {
                let mut run = RunOut {
                    history,
                    active,
                    upper,
                    force: fo,
                    torque: to,
                    wall_history: wrow,
                };
                ctx.run_blocks(s, e, &mut run)
            },
        )
        .collect();
    debug_assert!(waiting.windows(2).all(|w| w[0] < w[1]));
    // Pass two of the blocks left waiting, in parallel.
    let upper = &results.upper;
    let sizes =
        |per: usize| (0..n_blocks).map(move |b| (particle_at(b + 1) - particle_at(b)) * per);
    let todo: Vec<_> = split_chunks(&mut force, sizes(1))
        .into_iter()
        .zip(split_chunks(&mut torque, sizes(1)))
        .zip(split_chunks(wall_history, sizes(wh)))
        .enumerate()
        .filter(|(b, _)| waiting.binary_search(b).is_ok())
        .map(|(b, ((fo, to), wrow))| (b, (fo, to, wrow)))
        .collect();
    todo.into_par_iter().for_each(|(b, (fo, to, wrow))| {
        let (first, _) = ctx.block(b);
        ctx.pass_two(b, &upper[first..], fo, to, wrow);
    });
    nl.history = history;
    nl.active = active;
    nl.share = share;
    p.force = force;
    p.torque = torque;
}

/// The parts of one run of blocks that the force stage writes.
struct RunOut<'a> {
    history: &'a mut [f64],
    active: &'a mut [bool],
    upper: &'a mut [Contribution],
    force: &'a mut [DVec3],
    torque: &'a mut [DVec3],
    wall_history: &'a mut [f64],
}

/// What both passes of the force stage read.
struct Stage<'a> {
    p: &'a Particles,
    nl: &'a NeighborList,
    fp: &'a ForceParams<'a>,
    n_blocks: usize,
    wh: usize,
    slots: &'a ShareSlots,
}

impl Stage<'_> {
    /// Owned particles `first..last` of block `b` (empty at `b = n_blocks`).
    fn block(&self, b: usize) -> (usize, usize) {
        let n = self.p.n_owned;
        ((b * BLOCK).min(n), ((b + 1) * BLOCK).min(n))
    }

    /// Pass one over the blocks `s..e`, with pass two of each block as soon
    /// as every block its pairs reach is done; returns the blocks whose
    /// pairs reach outside `s..e` (their pass two must wait).
    fn run_blocks(&self, s: usize, e: usize, run: &mut RunOut) -> Vec<usize> {
        let nl = self.nl;
        let (h, wh) = (nl.history_len, self.wh);
        let reach = nl.block_reach;
        let (job0, first0) = (nl.job_offsets[self.block(s).0], self.block(s).0);
        let mut waiting = Vec::new();
        let mut next = s;
        for b in s..e {
            let (first, last) = self.block(b);
            let block_jobs = nl.job_offsets[first]..nl.job_offsets[last];
            let (j0, j1) = (block_jobs.start - job0, block_jobs.end - job0);
            let blk = Block {
                p: self.p,
                first,
                jobs: &nl.jobs[block_jobs.clone()],
                share_slot: &nl.share_slot[block_jobs.clone()],
                evaluator_lower: &nl.evaluator_lower[block_jobs.clone()],
                job_owner: &nl.job_owner[block_jobs],
                slots: self.slots,
                fp: self.fp,
                h,
            };
            let out = BlockOut {
                history: &mut run.history[j0 * h..j1 * h],
                active: &mut run.active[j0..j1],
                upper: &mut run.upper[first - first0..last - first0],
            };
            pass_one(&blk, out);
            // Blocks whose every reachable block has now had pass one.
            while next < e && (next + reach).min(self.n_blocks - 1) <= b {
                if next.saturating_sub(reach) >= s {
                    let (f, l) = self.block(next);
                    let (a, z) = (f - first0, l - first0);
                    self.pass_two(
                        next,
                        &run.upper[a..],
                        &mut run.force[a..z],
                        &mut run.torque[a..z],
                        &mut run.wall_history[a * wh..z * wh],
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
    /// its upper sum (`upper`, from the block's first particle on), its
    /// wall contacts and gravity. Must follow pass one of every block the
    /// block's pairs reach.
    fn pass_two(
        &self,
        b: usize,
        upper: &[Contribution],
        fo: &mut [DVec3],
        to: &mut [DVec3],
        wrow: &mut [f64],
    ) {
        // Without walls, a loop of its own: the wall code's registers and
        // branches stay out of the common case.
        if !self.fp.walls.is_empty() {
            return self.sum_block::<true>(b, upper, fo, to, wrow);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::simd::isa::avx2() {
            // SAFETY: the processor has AVX2 (`isa::avx2`).
            return unsafe { self.sum_block_avx2(b, upper, fo, to, wrow) };
        }
        self.sum_block::<false>(b, upper, fo, to, wrow);
    }

    /// [`Self::sum_block`] without walls, compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_block_avx2(
        &self,
        b: usize,
        upper: &[Contribution],
        fo: &mut [DVec3],
        to: &mut [DVec3],
        wrow: &mut [f64],
    ) {
        self.sum_block::<false>(b, upper, fo, to, wrow);
    }

    /// [`Self::pass_two`], with or without walls (`WALLS`). Without, the
    /// wall sum `+0` is not added: the contact sum is never `−0` (every sum
    /// starts at `+0`, and `+0 + (−0) = +0`), so adding `+0` leaves its bits
    /// as they are.
    #[inline(always)]
    fn sum_block<const WALLS: bool>(
        &self,
        b: usize,
        upper: &[Contribution],
        fo: &mut [DVec3],
        to: &mut [DVec3],
        wrow: &mut [f64],
    ) {
        let (p, nl, fp, wh) = (self.p, self.nl, self.fp, self.wh);
        let (first, last) = self.block(b);
        let len = last - first;
        let starts = &nl.slot_offsets[first..=last];
        // SAFETY: the block's slots are its particles', and this block's
        // pass two is their only reader, after every writer (the caller
        // orders it after pass one of the blocks in reach).
        let shares = unsafe { self.slots.range(starts[0], starts[len]) };
        let (upper, frozen, mass) = (&upper[..len], &p.frozen[first..last], &p.mass[first..last]);
        let (fo, to) = (&mut fo[..len], &mut to[..len]);
        for o in 0..len {
            let (mut f, mut t) = contact_sum(shares, starts, upper, o);
            if frozen[o] {
                (f, t) = (DVec3::ZERO, DVec3::ZERO);
            } else {
                if WALLS {
                    let rec = &mut wrow[o * wh..(o + 1) * wh];
                    let (fw, tw) = wall_forces(p, first + o, rec, nl.history_len, fp);
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

/// The sum of the contacts of a block's particle `o`, `L + U`: its shares
/// (`shares[starts[o] - starts[0]..starts[o + 1] - starts[0]]`, in row
/// order) plus its upper sum `upper[o]`.
#[inline(always)]
fn contact_sum(
    shares: &[Contribution],
    starts: &[usize],
    upper: &[Contribution],
    o: usize,
) -> (DVec3, DVec3) {
    let mut lower = Contribution::default();
    for &c in &shares[starts[o] - starts[0]..starts[o + 1] - starts[0]] {
        lower += c;
    }
    (lower.force + upper[o].force, lower.torque + upper[o].torque)
}

/// History length marking the run-time (non-specialised) variant of [`jobs_block`].
const DYN: usize = usize::MAX;

/// How the pair stage evaluates one contact: a contact law, either looked
/// up per pair or fixed for the whole run with its sub-models known at
/// compile time.
trait PairEval: Sync {
    /// The centre distance below which the pair `ij` of particles of `p`,
    /// with the given radii, interacts.
    fn range(&self, p: &Particles, ij: (usize, usize), radii: (f64, f64), fp: &ForceParams) -> f64;

    /// The contact `c` (within range), with history record `rec`.
    fn eval(&self, p: &Particles, c: &Pair, rec: &mut [f64], fp: &ForceParams) -> PairForce;

    /// The law as a four-contact kernel ([`lanes`]), if it has one (the
    /// same bits as [`Self::eval`]).
    #[inline(always)]
    fn lanes(&self) -> Option<HookeSpringSliderLaw> {
        None
    }
}

/// A pair in contact, in canonical order.
struct Pair<'a> {
    /// Local indices `(i, j)`.
    ij: (usize, usize),
    /// The two bodies.
    bodies: (&'a Body, &'a Body),
    /// Separation `d = x_j − x_i`.
    d: DVec3,
    /// Its length.
    r: f64,
}

/// The body of particle `k` at `image`: its position, or its periodic
/// image, with its radius (as in [`Particles::packed`]; the same bits).
#[inline(always)]
fn body_of(p: &Particles, k: usize, image: DVec4) -> Body {
    Body {
        x: image.truncate(),
        v: p.v[k],
        omega: p.omega[k],
        radius: image.w,
        inv_mass: p.inv_mass[k],
    }
}

/// Any law table: the law looked up per pair; laws with couples or
/// stochastic friction go out of line.
struct AnyLaw;

impl PairEval for AnyLaw {
    #[inline(always)]
    fn range(
        &self,
        p: &Particles,
        (i, j): (usize, usize),
        radii: (f64, f64),
        fp: &ForceParams,
    ) -> f64 {
        let (ri, rj) = radii;
        fp.laws
            .get(p.material[i], p.material[j])
            .normal
            .range(ri, rj)
    }

    #[inline(always)]
    fn eval(&self, p: &Particles, c: &Pair, rec: &mut [f64], fp: &ForceParams) -> PairForce {
        let (i, j) = c.ij;
        let law = fp.laws.get(p.material[i], p.material[j]);
        if law.is_plain() {
            let kin = Kinematics::pair(c.bodies.0, c.bodies.1, c.d, c.r);
            law.evaluate_plain(&kin, fp.dt, rec)
        } else {
            let ids = (p.id[i], p.id[j]);
            general_pair(p, law, c.ij, c.bodies, ids, c.d, c.r, rec, fp)
        }
    }
}

/// One plain law (no couples, no stochastic friction) for every pair.
struct OnePlainLaw<'a>(&'a ContactLaw);

impl PairEval for OnePlainLaw<'_> {
    #[inline(always)]
    fn range(
        &self,
        _: &Particles,
        _: (usize, usize),
        (ri, rj): (f64, f64),
        _: &ForceParams,
    ) -> f64 {
        self.0.normal.range(ri, rj)
    }

    #[inline(always)]
    fn eval(&self, _: &Particles, c: &Pair, rec: &mut [f64], fp: &ForceParams) -> PairForce {
        let kin = Kinematics::pair(c.bodies.0, c.bodies.1, c.d, c.r);
        self.0.evaluate_plain(&kin, fp.dt, rec)
    }
}

/// [`HookeSpringSliderLaw`] for every pair, one contact at a time or four.
impl PairEval for HookeSpringSliderLaw {
    /// [`crate::contact::NormalModel::range`] of a Hooke contact.
    #[inline(always)]
    fn range(
        &self,
        _: &Particles,
        _: (usize, usize),
        (ri, rj): (f64, f64),
        _: &ForceParams,
    ) -> f64 {
        ri + rj
    }

    #[inline(always)]
    fn eval(&self, _: &Particles, c: &Pair, rec: &mut [f64], fp: &ForceParams) -> PairForce {
        let kin = Kinematics::pair(c.bodies.0, c.bodies.1, c.d, c.r);
        self.one(&kin, fp.dt, &mut rec[..3])
    }

    #[inline(always)]
    fn lanes(&self) -> Option<HookeSpringSliderLaw> {
        Some(*self)
    }
}

/// Pass one over a block of owned particles: evaluate their jobs with the
/// evaluator that fits the law table.
fn pass_one(blk: &Block, out: BlockOut) {
    let single = (blk.fp.laws.n == 1).then(|| &blk.fp.laws.laws[0]);
    if let (Some(kernel), 3) = (single.and_then(HookeSpringSliderLaw::of), blk.h) {
        return jobs_block::<_, 3>(blk, &kernel, out);
    }
    match (single, blk.h) {
        (Some(law), 0) if law.is_plain() => jobs_block::<_, 0>(blk, &OnePlainLaw(law), out),
        (Some(law), 3) if law.is_plain() => jobs_block::<_, 3>(blk, &OnePlainLaw(law), out),
        _ => jobs_block::<_, DYN>(blk, &AnyLaw, out),
    }
}

/// What [`jobs_block`] reads.
struct Block<'a> {
    p: &'a Particles,
    /// The block's first owned particle.
    first: usize,
    /// The block's jobs (their partners).
    jobs: &'a [u32],
    /// The share slots of the block's jobs ([`NeighborList::share_slot`]).
    share_slot: &'a [u32],
    /// Whether the block particle is the lower id of each job's pair
    /// ([`NeighborList::evaluator_lower`]).
    evaluator_lower: &'a [bool],
    /// The evaluator of each of the block's jobs, by its place in the
    /// block ([`NeighborList::job_owner`]).
    job_owner: &'a [u16],
    slots: &'a ShareSlots,
    fp: &'a ForceParams<'a>,
    h: usize,
}

/// What [`jobs_block`] writes: the block's slices of the per-job arrays and
/// its particles' upper sums (and, through [`Block::slots`], the shares).
struct BlockOut<'a> {
    history: &'a mut [f64],
    active: &'a mut [bool],
    upper: &'a mut [Contribution],
}

/// The pair jobs of a block of owned particles, with `H` history values
/// per contact known at compile time (or [`DYN`]), in the build for the
/// run's instruction set ([`crate::simd::isa`]).
#[inline(never)]
fn jobs_block<E: PairEval, const H: usize>(blk: &Block, eval: &E, out: BlockOut) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { jobs_block_avx2::<E, H>(blk, eval, out) };
    }
    jobs_block_body::<E, H>(blk, eval, out)
}

/// [`jobs_block_body`] compiled with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn jobs_block_avx2<E: PairEval, const H: usize>(blk: &Block, eval: &E, out: BlockOut) {
    jobs_block_body::<E, H>(blk, eval, out)
}

/// The body of [`jobs_block`], inlined into each build.
#[inline(always)]
fn jobs_block_body<E: PairEval, const H: usize>(blk: &Block, eval: &E, out: BlockOut) {
    let Block { p, first, fp, .. } = *blk;
    let h = if H == DYN { blk.h } else { H };
    let packed = &p.packed[..];
    let BlockOut {
        history,
        active,
        upper,
    } = out;
    let n_block = upper.len();
    // Each particle's upper sum builds up in place, in candidate order (by
    // partner), from zero: no branch on where one particle's candidates end.
    upper.fill(Contribution::default());
    // First the cheap filter on the packed image positions over every job
    // (a superset of the contacts), resetting the records of pairs that are
    // apart; then the candidates, in job order, in a loop of their own (no
    // hard-to-predict filter branch between two contact evaluations).
    let mut candidates: Vec<[u32; 2]> = Vec::with_capacity(blk.jobs.len() + 4);
    filter_jobs::<H>(blk, n_block, history, active, &mut candidates);
    if let (Some(law), 3) = (eval.lanes(), h) {
        let out = BlockOut {
            history,
            active,
            upper,
        };
        return contacts_in_lanes(blk, &law, &candidates, out);
    }
    for (c, &[o, j]) in candidates.iter().enumerate() {
        prefetch_candidate(blk, &candidates, c + PREFETCH_AHEAD, history, h);
        let (o, j) = (o as usize, j as usize);
        let (k, q) = (first + o, blk.jobs[j] as usize);
        let (pk, pq) = (packed[k], packed[q]);
        let d_kq = separation_from(p, pk, pq, q);
        let lower = blk.evaluator_lower[j];
        let (ij, radii, d) = if lower {
            ((k, q), (pk.w, pq.w), d_kq)
        } else {
            ((q, k), (pq.w, pk.w), -d_kq)
        };
        let r2 = d_kq.length_squared();
        let range = eval.range(p, ij, radii, fp);
        if r2 >= range * range {
            opened(blk, history, active, j, h);
            continue;
        }
        let images = if lower { (pk, pq) } else { (pq, pk) };
        let (bi, bj) = (body_of(p, ij.0, images.0), body_of(p, ij.1, images.1));
        let pair = Pair {
            ij,
            bodies: (&bi, &bj),
            d,
            r: r2.sqrt(),
        };
        let pf = eval.eval(p, &pair, &mut history[j * h..(j + 1) * h], fp);
        active[j] = true;
        // i receives force_i, j its negation (as f − force_i = f + (−force_i)).
        let on_j = Contribution {
            force: -pf.force_i,
            torque: pf.torque_j,
        };
        if lower {
            upper[o] += Contribution {
                force: pf.force_i,
                torque: pf.torque_i,
            };
        }
        // The higher-id side's share, for its L: the partner's if it is
        // owned here, or k's own when the partner is a ghost with a lower id.
        let slot = blk.share_slot[j];
        if slot != NO_SLOT {
            // SAFETY: this job is the slot's only writer, and its reader
            // runs after this block's pass one.
            unsafe { blk.slots.put(slot as usize, on_j) };
        }
    }
}

/// Ask the cache for the data of candidate `c` (if any) of a block: the
/// partners are scattered over the block's neighbourhood, so the contact
/// loops ask for a later contact's data while one is evaluated (+5 % on
/// the chute).
#[inline(always)]
fn prefetch_candidate(blk: &Block, candidates: &[[u32; 2]], c: usize, history: &[f64], h: usize) {
    if let Some(&[_, j]) = candidates.get(c) {
        let p = blk.p;
        let (j, q) = (j as usize, blk.jobs[j as usize] as usize);
        prefetch_at(&p.v, q);
        prefetch_at(&p.omega, q);
        if q >= p.n_owned {
            prefetch_at(&p.x, q);
            prefetch_at(&p.shift, q);
        }
        prefetch_at(&p.inv_mass, q);
        prefetch_at(history, j * h);
        blk.slots.prefetch(blk.share_slot[j]);
    }
}

/// The exact separation `d_kq` of partner `q` seen from an owned particle
/// `k` (packed images `pk`, `pq`). IEEE subtraction is exactly
/// antisymmetric (a − b = −(b − a)), so the canonical `d = (x_j − x_i) +
/// (s_j − s_i)` is exactly `±d_kq`. Owned particles' shifts are `+0` (and
/// `s − (+0) = s`), so only a ghost's is read; an owned particle's packed
/// image is its position itself (see [`Particles::packed`]), already in
/// cache from the filter.
#[inline(always)]
fn separation_from(p: &Particles, pk: DVec4, pq: DVec4, q: usize) -> DVec3 {
    let (x_q, shift_q) = if q < p.n_owned {
        (pq.truncate(), DVec3::ZERO)
    } else {
        (p.x[q], p.shift[q])
    };
    (x_q - pk.truncate()) + shift_q
}

/// The candidates of a block (`candidates`, from [`filter_jobs`]) under a
/// law with a four-contact kernel ([`lanes::evaluate`], 3 history values):
/// the contacts are gathered four at a time, in candidate order, evaluated
/// together, and their results added in the same order as one at a time,
/// so the bits are those of the one-contact loop of [`jobs_block_body`].
#[inline(always)]
fn contacts_in_lanes(
    blk: &Block,
    law: &HookeSpringSliderLaw,
    candidates: &[[u32; 2]],
    out: BlockOut,
) {
    const H: usize = 3;
    let Block { p, first, fp, .. } = *blk;
    let packed = &p.packed[..];
    let BlockOut {
        history,
        active,
        upper,
    } = out;
    let mut group = ContactLanes::default();
    // Per lane: the job, the block particle and whether it is the lower id.
    let mut jobs = [(0usize, 0usize, false); LANES];
    let mut filled = 0;
    for (c, &[o, j]) in candidates.iter().enumerate() {
        prefetch_candidate(blk, candidates, c + PREFETCH_AHEAD, history, H);
        let (o, j) = (o as usize, j as usize);
        let (k, q) = (first + o, blk.jobs[j] as usize);
        let (pk, pq) = (packed[k], packed[q]);
        let d_kq = separation_from(p, pk, pq, q);
        let lower = blk.evaluator_lower[j];
        let r2 = d_kq.length_squared();
        let range = pk.w + pq.w;
        if r2 >= range * range {
            opened(blk, history, active, j, H);
            continue;
        }
        let ((i, pi), (jj, pj), d) = if lower {
            ((k, pk), (q, pq), d_kq)
        } else {
            ((q, pq), (k, pk), -d_kq)
        };
        let l = filled;
        let (bi, bj) = (body_of(p, i, pi), body_of(p, jj, pj));
        let rec = &history[j * H..(j + 1) * H];
        group.set(l, [&bi, &bj], (d, r2.sqrt()), [rec[0], rec[1], rec[2]]);
        jobs[l] = (j, o, lower);
        filled += 1;
        if filled == LANES {
            lanes_done(
                blk,
                law,
                fp.dt,
                &mut group,
                &jobs,
                LANES,
                (history, active, upper),
            );
            filled = 0;
        }
    }
    if filled > 0 {
        lanes_done(
            blk,
            law,
            fp.dt,
            &mut group,
            &jobs,
            filled,
            (history, active, upper),
        );
    }
}

/// Evaluate the contacts of `group` (the first `filled` lanes hold
/// contacts; the others are left from an earlier group and their results
/// are dropped) and add their results in lane order: the record, the
/// lower-id side's upper sum and the higher-id side's share slot.
#[inline(always)]
fn lanes_done(
    blk: &Block,
    law: &HookeSpringSliderLaw,
    dt: f64,
    group: &mut ContactLanes,
    jobs: &[(usize, usize, bool); LANES],
    filled: usize,
    (history, active, upper): (&mut [f64], &mut [bool], &mut [Contribution]),
) {
    const H: usize = 3;
    let out = lanes::evaluate(law, dt, group);
    for (l, &(j, o, lower)) in jobs.iter().enumerate().take(filled) {
        let v = |x: &lanes::Vec3Lanes| DVec3::new(x[0][l], x[1][l], x[2][l]);
        let rec = &mut history[j * H..(j + 1) * H];
        (rec[0], rec[1], rec[2]) = (group.xi[0][l], group.xi[1][l], group.xi[2][l]);
        active[j] = true;
        let force_i = v(&out.force_i);
        if lower {
            upper[o] += Contribution {
                force: force_i,
                torque: v(&out.torque_i),
            };
        }
        let slot = blk.share_slot[j];
        if slot != NO_SLOT {
            let on_j = Contribution {
                force: -force_i,
                torque: v(&out.torque_j),
            };
            // SAFETY: this job is the slot's only writer, and its reader
            // runs after this block's pass one.
            unsafe { blk.slots.put(slot as usize, on_j) };
        }
    }
}

/// The cheap first test of [`jobs_block`], on the packed image positions,
/// over all the jobs of a block of `n_block` owned particles (one flat
/// loop, each job with its evaluator's place): the jobs whose pairs may
/// touch go to `candidates` (a superset of the contacts, in job order), the
/// others are apart ([`opened`]). A function of its own, so that its loop
/// keeps more of its pointers in registers (on the chute, 2 % fewer
/// instructions in the pair stage than inlined).
#[inline(never)]
fn filter_jobs<const H: usize>(
    blk: &Block,
    n_block: usize,
    history: &mut [f64],
    active: &mut [bool],
    candidates: &mut Vec<[u32; 2]>,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx2() {
        // SAFETY: the processor has AVX2 (`isa::avx2`).
        return unsafe { filter_jobs_avx2::<H>(blk, n_block, history, active, candidates) };
    }
    filter_jobs_body::<H>(blk, n_block, history, active, candidates)
}

/// [`filter_jobs_body`] with AVX2, four jobs at a time: the four tests in
/// the lanes of 256-bit registers, with the scalar test's operations in its
/// order (so the same outcome for every job), and the candidates among the
/// four written to the list in one store, packed by a permutation chosen
/// by the outcome (no branch per job, whose outcome the processor cannot
/// predict: one job in seven is a candidate, scattered). The last jobs
/// (fewer than four) take the scalar test.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn filter_jobs_avx2<const H: usize>(
    blk: &Block,
    n_block: usize,
    history: &mut [f64],
    active: &mut [bool],
    candidates: &mut Vec<[u32; 2]>,
) {
    use std::arch::x86_64::*;
    let h = if H == DYN { blk.h } else { H };
    let (packed, pad) = (&blk.p.packed[..], blk.fp.range_pad);
    let packed_block = &packed[blk.first..blk.first + n_block];
    let (jobs, owners) = (blk.jobs, blk.job_owner);
    let m = jobs.len();
    let active = &mut active[..m];
    candidates.clear();
    // Each store writes four entries, of which the first `kept` count.
    candidates.reserve(m + 4);
    let out = candidates.spare_capacity_mut();
    assert!(out.len() >= m + 4);
    let load = |x: &DVec4| -> __m256d {
        // SAFETY: a `DVec4` is four `f64` in order (x, y, z, w).
        unsafe { _mm256_loadu_pd((x as *const DVec4).cast()) }
    };
    let (pad4, margin) = (_mm256_set1_pd(pad), _mm256_set1_pd(1.0 + 1e-9));
    let mut kept = 0;
    let groups = m / 4;
    let four = jobs.chunks_exact(4).zip(owners.chunks_exact(4));
    for (g, (q, o)) in four.enumerate() {
        let j0 = 4 * g;
        if let Some(ahead) = jobs.get(j0 + FILTER_AHEAD..j0 + FILTER_AHEAD + 4) {
            for &qn in ahead {
                prefetch_at(packed, qn as usize);
            }
        }
        let pk = [0, 1, 2, 3].map(|t| load(&packed_block[o[t] as usize]));
        let pq = [0, 1, 2, 3].map(|t| load(&packed[q[t] as usize]));
        // dd = pq − pk and its squares per job, then by component across
        // the four jobs: x², y², z² (and the radius sums pk.w + pq.w).
        let sq = [0, 1, 2, 3].map(|t| {
            let dd = _mm256_sub_pd(pq[t], pk[t]);
            _mm256_mul_pd(dd, dd)
        });
        let sum = [0, 1, 2, 3].map(|t| _mm256_add_pd(pk[t], pq[t]));
        let lo01 = _mm256_unpacklo_pd(sq[0], sq[1]); // x0 x1 z0 z1
        let hi01 = _mm256_unpackhi_pd(sq[0], sq[1]); // y0 y1 w0 w1
        let lo23 = _mm256_unpacklo_pd(sq[2], sq[3]);
        let hi23 = _mm256_unpackhi_pd(sq[2], sq[3]);
        let x2 = _mm256_permute2f128_pd::<0x20>(lo01, lo23);
        let z2 = _mm256_permute2f128_pd::<0x31>(lo01, lo23);
        let y2 = _mm256_permute2f128_pd::<0x20>(hi01, hi23);
        let r01 = _mm256_unpackhi_pd(sum[0], sum[1]); // . . w0 w1
        let r23 = _mm256_unpackhi_pd(sum[2], sum[3]);
        let radii = _mm256_permute2f128_pd::<0x31>(r01, r23);
        // As the scalar test: dd.x² + dd.y² + dd.z² < ((w_k + w_q + pad)(1 + 1e-9))².
        let dist2 = _mm256_add_pd(_mm256_add_pd(x2, y2), z2);
        let reach = _mm256_mul_pd(_mm256_add_pd(radii, pad4), margin);
        let near = _mm256_cmp_pd::<_CMP_LT_OQ>(dist2, _mm256_mul_pd(reach, reach));
        let mask = _mm256_movemask_pd(near) as usize & 0xF;
        // The four entries [o, j], the near ones first, in job order.
        let entries = _mm256_setr_epi32(
            o[0] as i32,
            j0 as i32,
            o[1] as i32,
            j0 as i32 + 1,
            o[2] as i32,
            j0 as i32 + 2,
            o[3] as i32,
            j0 as i32 + 3,
        );
        let order = _mm256_loadu_si256(COMPRESS[mask].as_ptr().cast());
        let packed_entries = _mm256_permutevar8x32_epi32(entries, order);
        debug_assert!(kept + 4 <= out.len());
        // SAFETY: `kept ≤ j0` and `j0 + 4 ≤ m`, so the four entries from
        // `kept` (8 bytes each) lie within the `m + 4` spare ones.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(kept).cast(), packed_entries) };
        kept += mask.count_ones() as usize;
        // Apart and in contact at the last step (rare): opened. The four
        // flags (bytes 0 or 1) gathered into bits 21..24 by one product.
        let a = &active[j0..j0 + 4];
        let bytes = u32::from_le_bytes([a[0] as u8, a[1] as u8, a[2] as u8, a[3] as u8]);
        let was = (bytes.wrapping_mul(0x0020_4081) >> 21) as usize & 0xF;
        let mut apart = was & !mask;
        while apart != 0 {
            opened(
                blk,
                history,
                active,
                j0 + apart.trailing_zeros() as usize,
                h,
            );
            apart &= apart - 1;
        }
    }
    // SAFETY: the first `kept` entries were written above (each store wrote
    // its near entries first).
    unsafe { candidates.set_len(kept) };
    for j in 4 * groups..m {
        let (q, o) = (jobs[j] as usize, owners[j] as usize);
        if job_in_reach(packed_block[o], packed[q], pad) {
            candidates.push([o as u32, j as u32]);
        } else {
            opened(blk, history, active, j, h);
        }
    }
}

/// Per outcome of four tests (bit `t` set: job `t` is near), the order in
/// which [`filter_jobs_avx2`] keeps the four `[o, j]` entries (as 32-bit
/// words): the near ones first, in job order.
#[cfg(target_arch = "x86_64")]
static COMPRESS: [[u32; 8]; 16] = {
    let mut table = [[0u32; 8]; 16];
    let mut mask = 0;
    while mask < 16 {
        let (mut t, mut at) = (0, 0);
        while t < 4 {
            if mask & (1 << t) != 0 {
                table[mask][2 * at] = 2 * t as u32;
                table[mask][2 * at + 1] = 2 * t as u32 + 1;
                at += 1;
            }
            t += 1;
        }
        mask += 1;
    }
    table
};

/// The filter's test of one job: whether the packed images `pk` (the
/// block particle) and `pq` (the partner) may touch, with the margin that
/// keeps every contact in (a superset of the contacts).
#[inline(always)]
fn job_in_reach(pk: DVec4, pq: DVec4, pad: f64) -> bool {
    let reach = (pk.w + pq.w + pad) * (1.0 + 1e-9);
    let dd = pq - pk;
    dd.x * dd.x + dd.y * dd.y + dd.z * dd.z < reach * reach
}

/// The body of [`filter_jobs`] (the baseline build).
#[inline(always)]
fn filter_jobs_body<const H: usize>(
    blk: &Block,
    n_block: usize,
    history: &mut [f64],
    active: &mut [bool],
    candidates: &mut Vec<[u32; 2]>,
) {
    let h = if H == DYN { blk.h } else { H };
    let (packed, pad) = (&blk.p.packed[..], blk.fp.range_pad);
    let packed_block = &packed[blk.first..blk.first + n_block];
    let (jobs, owners) = (blk.jobs, blk.job_owner);
    // The test of job `j`, of the block's particle `o`, with partner `q`.
    macro_rules! test {
        ($j:expr, $q:expr, $o:expr) => {{
            let (j, o) = ($j, $o as usize);
            if job_in_reach(packed_block[o], packed[$q as usize], pad) {
                candidates.push([o as u32, j as u32]);
            } else {
                opened(blk, history, active, j, h);
            }
        }};
    }
    // Asking for the position of the partner FILTER_AHEAD jobs on while
    // this one is tested, then the last jobs without.
    let body = jobs.len().saturating_sub(FILTER_AHEAD);
    let ahead = jobs.get(FILTER_AHEAD..).unwrap_or_default();
    for (j, ((&q, &o), &qn)) in jobs.iter().zip(owners).zip(ahead).enumerate() {
        prefetch_at(packed, qn as usize);
        test!(j, q, o);
    }
    for (j, (&q, &o)) in jobs.iter().zip(owners).enumerate().skip(body) {
        test!(j, q, o);
    }
}

/// Job `j` of the block (`history` and `active` are the block's, `h`
/// values per record) is apart:
/// its contact, if any, has opened, so its record and share slot go back
/// to zero.
#[inline(always)]
fn opened(blk: &Block, history: &mut [f64], active: &mut [bool], j: usize, h: usize) {
    if active[j] {
        history[j * h..(j + 1) * h].fill(0.0);
        active[j] = false;
        let slot = blk.share_slot[j];
        if slot != NO_SLOT {
            // SAFETY: this job is the slot's only writer, and its reader
            // runs after this block's pass one.
            unsafe { blk.slots.put(slot as usize, Contribution::default()) };
        }
    }
}

/// How many candidates ahead the contact loop asks for its partner's data.
const PREFETCH_AHEAD: usize = 6;

/// How many jobs ahead the filter asks for its partner's position.
const FILTER_AHEAD: usize = 8;

/// Hint the cache to load `data[i]` soon (no bound test: the hint never
/// faults, so `i` may lie past the end).
#[inline(always)]
fn prefetch_at<T>(data: &[T], i: usize) {
    prefetch_ptr(data.as_ptr().wrapping_add(i));
}

/// Hint the cache to load the value at `x` soon (any address: the hint
/// never faults, reads or writes).
#[inline(always)]
fn prefetch_ptr<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect on program state.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(x.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Reset a contact record that has opened (only writing a record that holds something).
#[inline(always)]
fn clear(rec: &mut [f64]) {
    if rec.iter().any(|&v| v != 0.0) {
        rec.fill(0.0);
    }
}

/// The wall contacts of owned particle `k`.
#[inline]
fn wall_forces(
    p: &Particles,
    k: usize,
    hist: &mut [f64],
    h: usize,
    fp: &ForceParams,
) -> (DVec3, DVec3) {
    let mut f = DVec3::ZERO;
    let mut t = DVec3::ZERO;
    for (w, wall) in fp.walls.iter().enumerate() {
        let rec = &mut hist[w * h..(w + 1) * h];
        match wall.touch(p.x[k], p.radius[k], 0.0) {
            Some(touch) => {
                let body = body_of(p, k, p.packed_image(k));
                let kin = Kinematics::wall(&body, touch.n, touch.dist, touch.velocity, touch.omega);
                let law = fp.laws.get(p.material[k], wall.material);
                let pf = law.evaluate_with(&kin, fp.dt, rec, || {
                    ContactInertia::wall(p.inv_inertia[k], p.inv_mass[k], p.radius[k])
                });
                f += pf.force_i;
                t += pf.torque_i;
            }
            None => clear(rec),
        }
    }
    (f, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::normal::HookeDamping;
    use crate::contact::tangential::TangentialStiffness;
    use crate::contact::{NormalModel, TangentialModel};
    use crate::rng::Stream;
    use crate::state::particles::ParticleRecord;

    /// A small deterministic generator for test inputs.
    struct Lcg(u64);

    impl Lcg {
        fn unit(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }

        fn vec(&mut self, scale: f64) -> DVec3 {
            DVec3::new(self.unit() - 0.5, self.unit() - 0.5, self.unit() - 0.5) * scale
        }
    }

    /// 216 overlapping polydisperse spheres on a jittered lattice, with
    /// scrambled ids, random velocities and spins, and every seventh frozen.
    fn cluster() -> Particles {
        let mut rng = Lcg(7);
        let mut p = Particles::default();
        let mut k = 0u64;
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let radius = 0.5 * (0.9 + 0.2 * rng.unit());
                    let x = DVec3::new(a as f64, b as f64, c as f64) * 0.97 + rng.vec(0.05);
                    p.push_owned(&ParticleRecord {
                        id: (k * 97) % 216,
                        x,
                        v: rng.vec(2.0),
                        omega: rng.vec(4.0),
                        radius,
                        mass: ParticleRecord::sphere_mass(radius, 1.0),
                        material: 0,
                        frozen: k % 7 == 3,
                    });
                    k += 1;
                }
            }
        }
        p.refresh_packed();
        p
    }

    fn hooke_spring(restitution: bool) -> ContactLaw {
        ContactLaw {
            normal: NormalModel::Hooke {
                stiffness: 2e5,
                damping: if restitution {
                    HookeDamping::Restitution { beta: 0.2 }
                } else {
                    HookeDamping::Rate { rate: 50.0 }
                },
                no_tension: false,
            },
            tangential: TangentialModel::SpringSlider {
                friction: 0.5,
                stiffness: TangentialStiffness::Linear { ratio: 2.0 / 7.0 },
                damping_ratio: 0.3,
            },
            stochastic: None,
            rolling: None,
            spinning: None,
        }
    }

    /// `law` for every pair, as a table of one material, or of two (which
    /// makes the force stage look the law up per pair).
    fn table(law: ContactLaw, materials: usize) -> LawTable {
        LawTable {
            n: materials,
            laws: vec![law; materials * materials],
            history_len: law.history_len(),
        }
    }

    /// Gravity in the tests.
    const G: DVec3 = DVec3::new(0.0, 0.0, -9.81);

    /// Force-stage parameters for `laws`, no walls, gravity [`G`].
    fn params(laws: &LawTable) -> ForceParams<'_> {
        ForceParams {
            laws,
            walls: &[],
            gravity: G,
            dt: 1e-4,
            range_pad: 0.0,
            step: 0,
            noise: PairNoise::new(1, Stream::StochasticFriction),
        }
    }

    /// Run `steps` force evaluations (positions moved a little between
    /// them, so that the history rotates); return forces, torques and history.
    fn run(laws: &LawTable, steps: usize) -> (Vec<DVec3>, Vec<DVec3>, Vec<f64>) {
        let mut p = cluster();
        let mut nl = NeighborList::build(&p, 0.1, laws.history_len);
        let mut results = PairResults::default();
        let fp = params(laws);
        for _ in 0..steps {
            compute(&mut p, &mut nl, &mut [], &mut results, &fp);
            assert_slots_clear_apart(&p, &nl);
            for k in 0..p.n_owned {
                if !p.frozen[k] {
                    let v = p.v[k];
                    p.x[k] += 1e-4 * v;
                }
            }
            p.refresh_packed();
        }
        (p.force, p.torque, nl.history)
    }

    fn bits(v: &[DVec3]) -> Vec<[u64; 3]> {
        v.iter().map(|x| x.to_array().map(f64::to_bits)).collect()
    }

    #[test]
    fn specialised_kernels_give_the_bits_of_the_general_path() {
        for law in [hooke_spring(false), hooke_spring(true)] {
            let (f1, t1, h1) = run(&table(law, 1), 5);
            let (f2, t2, h2) = run(&table(law, 2), 5);
            assert_eq!(bits(&f1), bits(&f2));
            assert_eq!(bits(&t1), bits(&t2));
            assert!(h1.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()));
            assert!(h1.iter().any(|&v| v != 0.0), "the test must load springs");
        }
    }

    /// Every job whose pair is apart (centre distance at least `R_i + R_j`)
    /// is inactive, with a zero record and a zero share slot: pass two sums
    /// every slot, so a share left from a contact that opened would count.
    fn assert_slots_clear_apart(p: &Particles, nl: &NeighborList) {
        let h = nl.history_len;
        for k in 0..p.n_owned {
            for j in nl.job_offsets[k]..nl.job_offsets[k + 1] {
                let q = nl.jobs[j] as usize;
                if (p.x[q] - p.x[k]).length() < p.radius[k] + p.radius[q] {
                    continue;
                }
                assert!(!nl.active[j], "job {j} of an open pair is active");
                assert!(nl.history[j * h..(j + 1) * h].iter().all(|&v| v == 0.0));
                let slot = nl.share_slot[j];
                if slot != NO_SLOT {
                    assert_eq!(nl.share[slot as usize], Contribution::default());
                }
            }
        }
        assert!(nl.share.len() == nl.slot_offsets[p.n_owned]);
    }

    /// The force and torque on each particle of `p` as `L + U` (+ gravity),
    /// each the sum of its contacts with lower-id (`L`) or higher-id (`U`)
    /// partners in id order, each contact evaluated directly in canonical
    /// orientation with a zero history record; and the number of contacts.
    fn direct_sums(p: &Particles, law: &ContactLaw, g: DVec3) -> (Vec<[DVec3; 2]>, usize) {
        let mut by_id: Vec<usize> = (0..p.n_owned).collect();
        by_id.sort_by_key(|&k| p.id[k]);
        let mut contacts = 0;
        let mut out = Vec::new();
        for k in 0..p.n_owned {
            let (mut lower, mut upper) = (Contribution::default(), Contribution::default());
            for &q in &by_id {
                if q == k || (p.frozen[k] && p.frozen[q]) {
                    continue;
                }
                let k_lower = p.id[k] < p.id[q];
                let (i, j) = if k_lower { (k, q) } else { (q, k) };
                let d = p.x[j] - p.x[i];
                let r = d.length();
                if r >= p.radius[i] + p.radius[j] {
                    continue;
                }
                contacts += 1;
                let (bi, bj) = (
                    body_of(p, i, p.packed_image(i)),
                    body_of(p, j, p.packed_image(j)),
                );
                let mut rec = vec![0.0; law.history_len()];
                let pf = law.evaluate_plain(&Kinematics::pair(&bi, &bj, d, r), 1e-4, &mut rec);
                if k_lower {
                    upper += Contribution {
                        force: pf.force_i,
                        torque: pf.torque_i,
                    };
                } else {
                    lower += Contribution {
                        force: -pf.force_i,
                        torque: pf.torque_j,
                    };
                }
            }
            out.push(if p.frozen[k] {
                [DVec3::ZERO; 2]
            } else {
                [
                    lower.force + upper.force + p.mass[k] * g,
                    lower.torque + upper.torque,
                ]
            });
        }
        (out, contacts)
    }

    /// The force on each particle is `L + U` (+ gravity), each the sum of its
    /// contacts with lower-id (`L`) or higher-id (`U`) partners in id order,
    /// each contact evaluated directly in canonical orientation.
    #[test]
    fn forces_are_the_id_ordered_sums_of_the_lower_and_upper_contacts() {
        let law = hooke_spring(false);
        let (force, torque, _) = run(&table(law, 1), 1);
        let (direct, contacts) = direct_sums(&cluster(), &law, G);
        for k in 0..force.len() {
            assert_eq!(
                bits(&[force[k], torque[k]]),
                bits(&direct[k]),
                "particle {k}"
            );
        }
        assert!(contacts > 400, "{contacts} contacts");
    }

    /// The AVX2 filter's packing table keeps, for each outcome of four
    /// tests, the entries of the near jobs and only those, in job order.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_filter_packing_keeps_the_near_jobs_in_order() {
        for (mask, order) in COMPRESS.iter().enumerate() {
            let near: Vec<u32> = (0..4).filter(|t| mask & (1 << t) != 0).collect();
            let kept: Vec<u32> = order
                .chunks_exact(2)
                .take(near.len())
                .map(|w| {
                    assert_eq!(w[1], w[0] + 1, "mask {mask:04b}: [o, j] split");
                    w[0] / 2
                })
                .collect();
            assert_eq!(kept, near, "mask {mask:04b}");
        }
    }

    /// Contacts that open between two steps (the cluster spread apart
    /// within the same list) leave nothing behind: no share slot, no
    /// record, no force. With laws with and without history, and with the
    /// specialised and general kernels.
    #[test]
    fn opened_contacts_leave_no_share_or_record() {
        let plain_hooke = ContactLaw {
            tangential: TangentialModel::None,
            ..hooke_spring(false)
        };
        for (law, materials) in [
            (hooke_spring(false), 1),
            (hooke_spring(false), 2),
            (plain_hooke, 1),
        ] {
            let laws = table(law, materials);
            let mut p = cluster();
            let mut nl = NeighborList::build(&p, 0.1, laws.history_len);
            let mut results = PairResults::default();
            let fp = params(&laws);
            compute(&mut p, &mut nl, &mut [], &mut results, &fp);
            let touching = nl.active.iter().filter(|&&a| a).count();
            assert!(touching > 200, "{touching} contacts");
            // Spread by 5 %: the shallowest contacts open, the deepest stay.
            for x in p.x.iter_mut() {
                *x *= 1.05;
            }
            p.refresh_packed();
            compute(&mut p, &mut nl, &mut [], &mut results, &fp);
            assert_slots_clear_apart(&p, &nl);
            let still = nl.active.iter().filter(|&&a| a).count();
            assert!(
                still > 0 && still < touching / 2,
                "{still} of {touching} stay"
            );
            if law.history_len() == 0 {
                // No history: the forces are the direct sums of the contacts left.
                let (direct, contacts) = direct_sums(&p, &law, G);
                assert_eq!(contacts, 2 * still);
                for (k, direct) in direct.iter().enumerate() {
                    assert_eq!(
                        bits(&[p.force[k], p.torque[k]]),
                        bits(direct),
                        "particle {k}"
                    );
                }
            }
        }
    }
}
