//! Pass one of the force stage: every pair job of a block of owned particles
//! is evaluated once, in canonical orientation, by the evaluator that fits
//! the law table (one contact at a time, or four in lanes).

use super::filter::{filter_jobs, opened};
use super::shares::{RunEntries, ShareSlots};
use super::ForceParams;
use crate::contact::kinematics::PairBodies;
use crate::contact::{
    Body, BodyInertia, ContactInertia, ContactLaw, Kind, Kinematics, PairContext, PairForce,
};
use crate::neighbor::Contribution;
use crate::neighbor::{FreshRecords, RecordPool};
use crate::simd::isa::in_best_build;
use crate::simd::lane::{Lane, Lanes, V3};
use crate::simd::prefetch::prefetch_at;
use crate::state::particles::ParticleView;
use glam::{DVec3, DVec4};

/// How many candidates ahead the contact loop asks for its partner's data.
pub(super) const PREFETCH_AHEAD: usize = 6;

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
/// image, with its radius (as in
/// [`crate::state::particles::Particles::packed`]; the same bits).
#[inline(always)]
pub(super) fn body_of(p: &ParticleView, k: usize, image: DVec4) -> Body {
    Body {
        x: image.truncate(),
        v: p.v[k],
        omega: p.omega[k],
        radius: image.w,
        inv_mass: p.inv_mass[k],
    }
}

/// Any law table, one contact at a time: the law looked up per pair; laws
/// with couples or stochastic friction go out of line.
struct AnyLaw;

impl AnyLaw {
    /// The range of the pair `ij` of particles of `p` where it does not
    /// depend on their radii ([`crate::contact::NormalModel::fixed_range`]).
    #[inline(always)]
    fn fixed_range(
        &self,
        p: &ParticleView,
        (i, j): (usize, usize),
        fp: &ForceParams,
    ) -> Option<f64> {
        fp.laws
            .get(p.material[i], p.material[j])
            .normal
            .fixed_range()
    }

    /// The contact `c` (within range), with history record `rec`.
    #[inline(always)]
    fn eval(&self, blk: &Block, c: &Pair, rec: &mut [f64]) -> PairForce {
        let (p, fp) = (blk.p, blk.fp);
        let (i, j) = c.ij;
        let law = fp.laws.get(p.material[i], p.material[j]);
        if law.is_plain() {
            let kin = Kinematics::pair(c.bodies.0, c.bodies.1, c.d, c.r);
            law.evaluate_plain(&kin, fp.dt, rec)
        } else {
            let ids = (p.id[i], p.id[j]);
            general_pair(p, law, c.ij, c.bodies, ids, c.d, c.r, rec, fp, blk.bodies)
        }
    }
}

/// One law, without stochastic friction, for every pair, `W` contacts at
/// a time, through [`ContactLaw::evaluate_as`] over [`Lanes`] of `W`,
/// specialised on the law's normal and tangential kinds `N` and `TG` and
/// on whether it has couples `C` (see [`Kind`]; [`Kind::ANY`] where the
/// kind is left to run time). The kernel is the one that evaluates one
/// contact over `f64` (`contact/lane_tests.rs` compares the two).
struct OneLaw<'a, const N: u8, const TG: u8, const C: bool>(&'a ContactLaw);

impl<const N: u8, const TG: u8, const C: bool> OneLaw<'_, N, TG, C> {
    /// `W` contacts of the law.
    #[inline(always)]
    fn lanes<const W: usize>(
        &self,
        kin: &Kinematics<Lanes<W>>,
        dt: f64,
        history: &mut [Lanes<W>],
        inertia: impl FnOnce() -> ContactInertia<Lanes<W>>,
    ) -> PairForce<Lanes<W>> {
        self.0
            .evaluate_as::<Lanes<W>, N, TG, C>(kin, dt, history, inertia)
    }
}

/// Pass one over a block of owned particles: evaluate their jobs with the
/// evaluator that fits the law table. Without stochastic friction, the
/// contacts go eight at a time through the lane kernels: a table of one
/// law in one stream of groups ([`lanes_block`]), a table of several materials in a stream per law
/// ([`law_groups_block`]). Specialised at compile time where every law of
/// the table has the kinds of the chute's law (Hooke, spring-slider), the
/// pour's (Hertz, spring-slider) or the dense pack's (Hertz,
/// spring-slider, couples), and left to run time otherwise. A law with
/// stochastic friction takes the one-contact path ([`jobs_block`]).
/// Returns the number of pairs in contact.
pub(super) fn pass_one(blk: &Block, out: BlockOut) -> usize {
    const ANY: u8 = Kind::ANY;
    const HOOKE: u8 = Kind::HOOKE;
    const HERTZ: u8 = Kind::HERTZ;
    const SPRING: u8 = Kind::SPRING_SLIDER;
    // The one law of every pair, or every law of the table.
    let laws = blk
        .one_law
        .map_or(&blk.fp.laws.laws[..], std::slice::from_ref);
    if laws.iter().any(|law| law.stochastic.is_some()) || one_contact_path_forced() {
        return jobs_block(blk, out);
    }
    macro_rules! lanes {
        ($n:ident, $tg:ident, $c:expr, $h:expr) => {
            match blk.one_law {
                Some(law) => lanes_block::<$n, $tg, $c, $h, LANES>(blk, &OneLaw(law), out),
                None => law_groups_block::<$n, $tg, $c, $h, LANES>(blk, out),
            }
        };
    }
    match (table_kinds(laws), blk.h) {
        (Some((HOOKE, SPRING, false)), 3) => lanes!(HOOKE, SPRING, false, 3),
        (Some((HERTZ, SPRING, false)), 3) => lanes!(HERTZ, SPRING, false, 3),
        (Some((HERTZ, SPRING, true)), 6) => lanes!(HERTZ, SPRING, true, 6),
        (_, 0) => lanes!(ANY, ANY, true, 0),
        (_, 3) => lanes!(ANY, ANY, true, 3),
        (_, 6) => lanes!(ANY, ANY, true, 6),
        _ => jobs_block(blk, out),
    }
}

/// The normal kind, tangential kind and whether it has couples, of every
/// law of `laws` when they all share them (`None` when they differ).
fn table_kinds(laws: &[ContactLaw]) -> Option<(u8, u8, bool)> {
    let first = laws.first()?.kinds();
    laws.iter().all(|law| law.kinds() == first).then_some(first)
}

#[cfg(test)]
thread_local! {
    /// Whether pass one on this thread takes the one-contact path
    /// ([`jobs_block`]) whatever the law table, for the tests that compare
    /// the lane kernels with it.
    pub(super) static FORCE_ONE_CONTACT_PATH: std::cell::Cell<bool> =
        const { std::cell::Cell::new(false) };
}

/// Whether a test asked for the one-contact path ([`FORCE_ONE_CONTACT_PATH`]).
#[inline(always)]
fn one_contact_path_forced() -> bool {
    #[cfg(test)]
    return FORCE_ONE_CONTACT_PATH.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

/// What [`jobs_block`] and [`lanes_block`] read.
pub(super) struct Block<'a> {
    pub(super) p: &'a ParticleView<'a>,
    /// Each particle's part of the couples' inertia (empty where no law
    /// has couples).
    pub(super) bodies: &'a [BodyInertia],
    /// The block's first owned particle.
    pub(super) first: usize,
    /// The block's jobs (their partners).
    pub(super) jobs: &'a [u32],
    /// The share slots of the block's jobs ([`crate::neighbor::PairJobs::share_slots`]).
    pub(super) share_slot: &'a [u32],
    /// Whether the block particle is the lower id of each job's pair
    /// ([`crate::neighbor::PairJobs::evaluator_lower`]).
    pub(super) evaluator_lower: &'a [bool],
    /// The evaluator of each of the block's jobs, by its place in the
    /// block ([`crate::neighbor::PairJobs::owners`]).
    pub(super) job_owner: &'a [u16],
    pub(super) slots: &'a ShareSlots,
    /// The records' pool ([`crate::neighbor::PairHistory`]).
    pub(super) records: &'a RecordPool,
    /// The list's number of the block's first job.
    pub(super) job0: usize,
    pub(super) fp: &'a ForceParams<'a>,
    pub(super) h: usize,
    /// The law of every pair, where there is one (see
    /// [`super::stage::Stage::one_law`]).
    pub(super) one_law: Option<&'a ContactLaw>,
}

/// What [`jobs_block`] and [`lanes_block`] write: the block's slices of the per-job arrays and
/// its particles' upper sums (and, through [`Block::slots`], the shares).
pub(super) struct BlockOut<'a> {
    /// The entry numbers of the block's jobs' records
    /// ([`crate::neighbor::PairHistory`]).
    pub(super) entry: &'a mut [u32],
    /// The run's fresh records, for the contacts that form.
    pub(super) fresh: &'a mut FreshRecords,
    pub(super) upper: Upper<'a>,
    /// The run's part of the share pool, for the shares of the contacts.
    pub(super) shares: &'a mut RunEntries,
}

/// The upper sums `U` of a block's particles (their contacts with
/// higher-id partners), built up in pass one in the block's own slices of
/// the force and torque arrays, which pass two then overwrites with the
/// particles' whole force and torque (`L + U` and the rest): the sums
/// need no storage of their own.
pub(super) struct Upper<'a> {
    pub(super) force: &'a mut [DVec3],
    pub(super) torque: &'a mut [DVec3],
}

impl Upper<'_> {
    /// Number of particles.
    #[inline(always)]
    fn len(&self) -> usize {
        self.force.len()
    }

    /// Every sum at `+0`.
    #[inline(always)]
    fn clear(&mut self) {
        self.force.fill(DVec3::ZERO);
        self.torque.fill(DVec3::ZERO);
    }

    /// Add `c` to particle `o`'s sum (as `Contribution`'s `+=`: force,
    /// then torque).
    #[inline(always)]
    fn add(&mut self, o: usize, c: Contribution) {
        self.force[o] += c.force;
        self.torque[o] += c.torque;
    }
}

/// Where a lane evaluator puts a block particle's part of a contact, its
/// upper-sum share: added to the particle's sum at once ([`Upper`], keyed
/// by the particle's place in the block), or kept by candidate until the
/// block's contacts are done ([`ByCandidate`]).
trait UpperSink {
    /// Take `c` for key `key`.
    fn take(&mut self, key: usize, c: Contribution);
}

impl UpperSink for Upper<'_> {
    #[inline(always)]
    fn take(&mut self, o: usize, c: Contribution) {
        self.add(o, c);
    }
}

/// The upper-sum shares of a block's candidates, by candidate number, `+0`
/// for a candidate that is apart or whose block particle is the higher id.
struct ByCandidate<'a>(&'a mut [Contribution]);

impl UpperSink for ByCandidate<'_> {
    #[inline(always)]
    fn take(&mut self, c: usize, share: Contribution) {
        self.0[c] = share;
    }
}

/// The pair jobs of a block of owned particles under any law table, one
/// contact at a time, in the build for the run's instruction set
/// ([`crate::simd::isa`]).
#[inline(never)]
fn jobs_block(blk: &Block, out: BlockOut) -> usize {
    in_best_build!(jobs_block_avx2, jobs_block_avx512, || jobs_block_body(
        blk, out
    ))
}

/// The pair jobs of a block of owned particles under one law, `W`
/// contacts at a time ([`OneLaw`], with `H` history values per contact),
/// in the build for the run's instruction set ([`crate::simd::isa`]).
#[inline(never)]
fn lanes_block<const N: u8, const TG: u8, const C: bool, const H: usize, const W: usize>(
    blk: &Block,
    law: &OneLaw<N, TG, C>,
    out: BlockOut,
) -> usize {
    in_best_build!(lanes_block_avx2, lanes_block_avx512, || lanes_block_body::<
        N,
        TG,
        C,
        H,
        W,
    >(blk, law, out))
}

/// The pair jobs of a block of owned particles under a table of several
/// laws (materials), none with stochastic friction, `W` contacts of one
/// law at a time, each law's kinds `N`, `TG`, `C` ([`Kind::ANY`] where
/// they differ between laws), in the build for the run's instruction set
/// ([`crate::simd::isa`]).
#[inline(never)]
fn law_groups_block<const N: u8, const TG: u8, const C: bool, const H: usize, const W: usize>(
    blk: &Block,
    out: BlockOut,
) -> usize {
    in_best_build!(law_groups_block_avx2, law_groups_block_avx512, || {
        law_groups_block_body::<N, TG, C, H, W>(blk, out)
    })
}

/// The candidates of a block (see [`filter_jobs`]), after each particle's
/// upper sum is set to zero: it builds up in place, in candidate order (by
/// partner), with no branch on where one particle's candidates end.
#[inline(always)]
fn block_candidates(blk: &Block, out: &mut BlockOut) -> Candidates {
    out.upper.clear();
    // The cheap filter on the packed image positions over every job (a
    // superset of the contacts), resetting the records of pairs that are
    // apart; the candidates then go in job order, in a loop of their own
    // (no hard-to-predict filter branch between two contact evaluations).
    let mut candidates = Candidates(CANDIDATES.take());
    let n_block = out.upper.len();
    filter_jobs(blk, n_block, out.entry, out.fresh, &mut candidates.0);
    candidates
}

thread_local! {
    /// The storage of this thread's last block's candidates, kept for its
    /// next block ([`Candidates`]).
    static CANDIDATES: std::cell::Cell<Vec<[u32; 2]>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A block's candidates `[owner, job]`, in storage that goes back to the
/// thread when they are dropped, so that the next block's fill it again
/// (an allocation per block and step fewer: the chute's blocks hold
/// about 2,000 jobs, 16 KB).
struct Candidates(Vec<[u32; 2]>);

impl std::ops::Deref for Candidates {
    type Target = Vec<[u32; 2]>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Drop for Candidates {
    fn drop(&mut self) {
        CANDIDATES.set(std::mem::take(&mut self.0));
    }
}

/// The body of [`lanes_block`], inlined into each build.
#[inline(always)]
fn lanes_block_body<const N: u8, const TG: u8, const C: bool, const H: usize, const W: usize>(
    blk: &Block,
    law: &OneLaw<N, TG, C>,
    mut out: BlockOut,
) -> usize {
    let candidates = block_candidates(blk, &mut out);
    contacts_in_lanes::<N, TG, C, H, W>(blk, law, &candidates, out)
}

/// The body of [`jobs_block`], inlined into each build.
#[inline(always)]
fn jobs_block_body(blk: &Block, mut out: BlockOut) -> usize {
    let Block { p, fp, .. } = *blk;
    let eval = AnyLaw;
    let candidates = block_candidates(blk, &mut out);
    let BlockOut {
        entry,
        fresh,
        mut upper,
        shares,
    } = out;
    let mut contacts = 0;
    for (c, &[o, j]) in candidates.iter().enumerate() {
        prefetch_candidate(blk, &candidates, c + PREFETCH_AHEAD, entry);
        let (o, j) = (o as usize, j as usize);
        let range_of = |ij| eval.fixed_range(p, ij, fp);
        let Some(touch) = touching(blk, o, j, range_of, entry, fresh) else {
            continue;
        };
        contacts += 1;
        let ((i, pi), (jj, pj), lower) = (touch.i, touch.jj, touch.lower);
        let (bi, bj) = (body_of(p, i, pi), body_of(p, jj, pj));
        let pair = Pair {
            ij: (i, jj),
            bodies: (&bi, &bj),
            d: touch.d,
            r: touch.r2.sqrt(),
        };
        let e = held_or_fresh(blk, entry, fresh, j);
        // SAFETY: the entry is this job's (see `RecordPool`).
        let pf = eval.eval(blk, &pair, unsafe { blk.records.record_mut(e) });
        // i receives force_i, j its negation (as f − force_i = f + (−force_i)).
        let on_j = Contribution {
            force: -DVec3::from(pf.force_i),
            torque: pf.torque_j.into(),
        };
        if lower {
            upper.add(
                o,
                Contribution {
                    force: pf.force_i.into(),
                    torque: pf.torque_i.into(),
                },
            );
        }
        // The higher-id side's share, for its L: the partner's if it is
        // owned here, k's own when the partner is a ghost with a lower id,
        // else the job's boundary slot (kept for the diagnostics).
        // SAFETY: this job is the slot's only writer, and its reader
        // runs after this block's pass one.
        unsafe {
            blk.slots
                .put(blk.share_slot[j] as usize, shares.take(), on_j)
        };
    }
    contacts
}

/// The entry of job `j`'s record (of a block, whose entry numbers are
/// `entry`), a fresh one if the job has none: its pair is in contact, so
/// the job is active.
#[inline(always)]
fn held_or_fresh(blk: &Block, entry: &mut [u32], fresh: &mut FreshRecords, j: usize) -> u32 {
    if entry[j] == 0 {
        entry[j] = fresh.take(blk.job0 + j);
    }
    entry[j]
}

/// Ask the cache for the data of candidate `c` (if any) of a block: the
/// partners are scattered over the block's neighbourhood, so the contact
/// loops ask for a later contact's data while one is evaluated.
#[inline(always)]
fn prefetch_candidate(blk: &Block, candidates: &[[u32; 2]], c: usize, entry: &[u32]) {
    if let Some(&[_, j]) = candidates.get(c) {
        let p = blk.p;
        let (j, q) = (j as usize, blk.jobs[j as usize] as usize);
        prefetch_body(blk, q);
        if q >= p.n_owned {
            prefetch_at(p.x, q);
            prefetch_at(p.shift, q - p.n_owned);
        }
        blk.records.prefetch(entry[j]);
        blk.slots.prefetch(blk.share_slot[j]);
    }
}

/// Ask the cache for what a contact reads of particle `k` besides its
/// packed image: velocities, inverse mass and, for a law with couples,
/// its inertia (`blk.bodies`, empty for other laws).
#[inline(always)]
fn prefetch_body(blk: &Block, k: usize) {
    let p = blk.p;
    prefetch_at(p.v, k);
    prefetch_at(p.omega, k);
    prefetch_at(p.inv_mass, k);
    if !blk.bodies.is_empty() {
        prefetch_at(blk.bodies, k);
    }
}

/// The exact separation `d_kq` of partner `q` seen from an owned particle
/// `k` (packed images `pk`, `pq`). IEEE subtraction is exactly
/// antisymmetric (a − b = −(b − a)), so the canonical `d = (x_j − x_i) +
/// (s_j − s_i)` is exactly `±d_kq`. Owned particles' shifts are `+0` (and
/// `s − (+0) = s`), so only a ghost's is read; an owned particle's packed
/// image is its position itself (see
/// [`crate::state::particles::Particles::packed`]), already in cache from
/// the filter.
#[inline(always)]
fn separation_from(p: &ParticleView, pk: DVec4, pq: DVec4, q: usize) -> DVec3 {
    let (x_q, shift_q) = if q < p.n_owned {
        (pq.truncate(), DVec3::ZERO)
    } else {
        (p.x[q], p.shift[q - p.n_owned])
    };
    (x_q - pk.truncate()) + shift_q
}

/// The candidates of a block (`candidates`, from [`filter_jobs`]) under a
/// single law with `H` history values: the contacts are gathered `W` at a
/// time, in candidate order, evaluated together by the law's kernel over
/// [`Lanes`] of `W`, and their results added in the same order as one at a
/// time, so the bits are those of the one-contact loop of
/// [`jobs_block_body`]. Returns the number of contacts.
#[inline(always)]
fn contacts_in_lanes<const N: u8, const TG: u8, const C: bool, const H: usize, const W: usize>(
    blk: &Block,
    eval: &OneLaw<N, TG, C>,
    candidates: &[[u32; 2]],
    out: BlockOut,
) -> usize {
    let law = eval.0;
    let BlockOut {
        entry,
        fresh,
        mut upper,
        shares,
    } = out;
    debug_assert!(H <= MAX_HISTORY);
    let mut group = Group::<W>::new(law.reads_r_eff());
    // What the law decides for every pair, out of the loop.
    let (fixed_range, couples) = (law.normal.fixed_range(), law.needs_inertia());
    let (mut filled, mut contacts) = (0, 0);
    for (c, &[o, j]) in candidates.iter().enumerate() {
        prefetch_candidate(blk, candidates, c + PREFETCH_AHEAD, entry);
        let (o, j) = (o as usize, j as usize);
        let Some(pair) = touching(blk, o, j, |_| fixed_range, entry, fresh) else {
            continue;
        };
        contacts += 1;
        fill_lane::<H, W>(blk, &mut group, filled, &pair, o, entry, couples);
        filled += 1;
        if filled == W {
            lanes_done::<N, TG, C, H, W>(
                blk,
                eval,
                &mut group,
                W,
                (entry, fresh, &mut upper, shares),
            );
            filled = 0;
        }
    }
    if filled > 0 {
        lanes_done::<N, TG, C, H, W>(
            blk,
            eval,
            &mut group,
            filled,
            (entry, fresh, &mut upper, shares),
        );
    }
    contacts
}

/// A candidate in contact, as the lane evaluators gather it.
struct Touching {
    /// The job.
    j: usize,
    /// Whether the block particle is the lower id.
    lower: bool,
    /// The lower-id particle `i`: its local index and packed image.
    i: (usize, DVec4),
    /// The higher-id particle `j`: its local index and packed image.
    jj: (usize, DVec4),
    /// Separation `d = x_j − x_i`.
    d: DVec3,
    /// Its squared length.
    r2: f64,
}

/// Candidate job `j` of the block's particle `o`, if its pair is in
/// contact: within the range that `range_of` gives for the pair's local
/// indices in canonical order (`None`: `R_i + R_j`, the range of every
/// contact model); else it is apart ([`opened`]).
#[inline(always)]
fn touching(
    blk: &Block,
    o: usize,
    j: usize,
    range_of: impl FnOnce((usize, usize)) -> Option<f64>,
    entry: &mut [u32],
    fresh: &mut FreshRecords,
) -> Option<Touching> {
    let p = blk.p;
    let (k, q) = (blk.first + o, blk.jobs[j] as usize);
    let (pk, pq) = (p.packed[k], p.packed[q]);
    let d_kq = separation_from(p, pk, pq, q);
    let lower = blk.evaluator_lower[j];
    let r2 = d_kq.length_squared();
    let (i, jj, d) = if lower {
        ((k, pk), (q, pq), d_kq)
    } else {
        ((q, pq), (k, pk), -d_kq)
    };
    // NormalModel::range, with the law's decision taken by the caller.
    let range = range_of((i.0, jj.0)).unwrap_or(pk.w + pq.w);
    if r2 >= range * range {
        opened(blk, entry, fresh, j);
        return None;
    }
    Some(Touching {
        j,
        lower,
        i,
        jj,
        d,
        r2,
    })
}

/// Put the contact `pair` in lane `l` of `group`: its bodies, its history
/// record (entry 0, zero, for a contact that forms) and, for a law with
/// `couples`, the couples' inertia; `key` is what the group's results go
/// to the upper sums by (see [`UpperSink`]).
#[inline(always)]
fn fill_lane<const H: usize, const W: usize>(
    blk: &Block,
    group: &mut Group<W>,
    l: usize,
    pair: &Touching,
    key: usize,
    entry: &[u32],
    couples: bool,
) {
    let ((i, pi), (jj, pj)) = (pair.i, pair.jj);
    let (bi, bj) = (body_of(blk.p, i, pi), body_of(blk.p, jj, pj));
    group.bodies.set_lane(l, [&bi, &bj], pair.d, pair.r2.sqrt());
    // SAFETY: the entry is this job's, or entry 0 (see `RecordPool`).
    // Cut to `H` values once, so that the loop's indices need no checks.
    let rec = &unsafe { blk.records.record(entry[pair.j]) }[..H];
    // By index over the compile-time `H` (a zip of the two made the
    // pair stage longer).
    #[allow(clippy::needless_range_loop)]
    for v in 0..H {
        group.history[v].set_lane(l, rec[v]);
    }
    if couples {
        let (ai, aj) = (blk.bodies[i], blk.bodies[jj]);
        group
            .inv_rolling
            .set_lane(l, ai.inv_rolling + aj.inv_rolling);
        group.min_moment.set_lane(l, ai.moment.min(aj.moment));
    }
    group.jobs[l] = (pair.j, key, pair.lower);
}

/// The body of [`law_groups_block`]: the candidates in contact go to a
/// group of `W` per law of the table (that of the pair's two materials),
/// each evaluated by its law's kernel once full (and at the end, partly
/// filled). Records and share slots belong to one job each, so they are
/// written as each group is done; the block particles' upper sums,
/// whose bits depend on the order of their terms, are kept by candidate
/// and added in candidate order at the end, so the bits are those of the
/// one-contact loop of [`jobs_block_body`]. Returns the number of contacts.
#[inline(always)]
fn law_groups_block_body<
    const N: u8,
    const TG: u8,
    const C: bool,
    const H: usize,
    const W: usize,
>(
    blk: &Block,
    mut out: BlockOut,
) -> usize {
    let candidates = block_candidates(blk, &mut out);
    let BlockOut {
        entry,
        fresh,
        mut upper,
        shares,
    } = out;
    debug_assert!(H <= MAX_HISTORY);
    let (p, table) = (blk.p, blk.fp.laws);
    // What each law decides for every pair: its range where fixed, and
    // whether it has couples.
    let decided: Vec<(Option<f64>, bool)> = (table.laws.iter())
        .map(|law| (law.normal.fixed_range(), law.needs_inertia()))
        .collect();
    // Per law key, a group and its number of filled lanes, made when the
    // block first meets the law.
    let mut groups: Vec<Option<(Box<Group<W>>, usize)>> =
        (0..table.laws.len()).map(|_| None).collect();
    let mut by_candidate = vec![Contribution::default(); candidates.len()];
    let mut sink = ByCandidate(&mut by_candidate);
    let mut contacts = 0;
    for (c, &[o, j]) in candidates.iter().enumerate() {
        prefetch_candidate(blk, &candidates, c + PREFETCH_AHEAD, entry);
        // The partner's material too, for its law.
        if let Some(&[_, ahead]) = candidates.get(c + PREFETCH_AHEAD) {
            prefetch_at(p.material, blk.jobs[ahead as usize] as usize);
        }
        let mut key = 0;
        let range_of = |(i, jj): (usize, usize)| {
            key = table.at(p.material[i], p.material[jj]);
            decided[key].0
        };
        let Some(pair) = touching(blk, o as usize, j as usize, range_of, entry, fresh) else {
            continue;
        };
        contacts += 1;
        let law = &table.laws[key];
        let (group, filled) =
            groups[key].get_or_insert_with(|| (Box::new(Group::new(law.reads_r_eff())), 0));
        fill_lane::<H, W>(blk, group, *filled, &pair, c, entry, decided[key].1);
        *filled += 1;
        if *filled == W {
            let eval = OneLaw::<N, TG, C>(law);
            let done = (&mut *entry, &mut *fresh, &mut sink, &mut *shares);
            lanes_done::<N, TG, C, H, W>(blk, &eval, group, W, done);
            *filled = 0;
        }
    }
    for (key, slot) in groups.iter_mut().enumerate() {
        if let Some((group, filled)) = slot.as_mut().filter(|g| g.1 > 0) {
            let eval = OneLaw::<N, TG, C>(&table.laws[key]);
            let done = (&mut *entry, &mut *fresh, &mut sink, &mut *shares);
            lanes_done::<N, TG, C, H, W>(blk, &eval, group, *filled, done);
        }
    }
    // Adding `+0` to a sum that starts at `+0` never changes its bits (see
    // `ShareSlots::add_to`), so the candidates apart, or whose block
    // particle is the higher id, count as nothing.
    for (&[o, _], &share) in candidates.iter().zip(&by_candidate) {
        upper.add(o as usize, share);
    }
    contacts
}

/// Number of contacts evaluated together: a whole 512-bit register, or
/// two 256-bit ones side by side, so that one group's divisions and roots
/// run while the other's wait. Hooke's kernel took 12.2 → 9.5 µs per
/// 1,024 contacts against four lanes (2026-11-28); the dense pack's law,
/// whose values do not all fit the sixteen registers at eight lanes, ran
/// 2 % slower at eight that day, but 2.8 % faster on 2026-12-02 (since
/// the friction caps are computed only where a lane needs them).
const LANES: usize = 8;

/// The most history values per contact of any law (a spring-slider and a
/// rolling spring).
const MAX_HISTORY: usize = 6;

/// `W` contacts on their way through the kernel: the bodies, the history
/// records (by value index; the law's first values), the couples' inertia
/// (as [`ContactInertia::of_bodies`], its division done for all the lanes
/// at once), and per lane the job, its key for the upper sums
/// ([`UpperSink`]) and whether the block particle is the lower id.
struct Group<const W: usize> {
    bodies: PairBodies<Lanes<W>>,
    history: [Lanes<W>; MAX_HISTORY],
    /// `1/a_i + 1/a_j` of [`ContactInertia::of_bodies`].
    inv_rolling: Lanes<W>,
    /// `min(I_i, I_j)`.
    min_moment: Lanes<W>,
    /// The kernel's results.
    out: PairForce<Lanes<W>>,
    jobs: [(usize, usize, bool); W],
    /// Whether the law reads `R*` ([`ContactLaw::reads_r_eff`]).
    r_eff: bool,
}

impl<const W: usize> Group<W> {
    /// An empty group, for a law that reads `R*` or not.
    fn new(r_eff: bool) -> Self {
        Group {
            bodies: PairBodies::default(),
            history: [Lanes::default(); MAX_HISTORY],
            inv_rolling: Lanes::default(),
            min_moment: Lanes::default(),
            out: PairForce::default(),
            jobs: [(0, 0, false); W],
            r_eff,
        }
    }
}

/// Evaluate the contacts of `group` (the first `filled` lanes hold
/// contacts; the others are left from an earlier group and their results
/// are dropped) and add their results in lane order: the record, the
/// lower-id side's upper sum and the higher-id side's share slot.
#[inline(always)]
fn lanes_done<const N: u8, const TG: u8, const C: bool, const H: usize, const W: usize>(
    blk: &Block,
    eval: &OneLaw<N, TG, C>,
    group: &mut Group<W>,
    filled: usize,
    (entry, fresh, upper, shares): (
        &mut [u32],
        &mut FreshRecords,
        &mut impl UpperSink,
        &mut RunEntries,
    ),
) {
    let kin = Kinematics::of_pair_for(&group.bodies, group.r_eff);
    // Lanes past `filled` may divide by zero; their results are dropped.
    let (inv_rolling, min) = (group.inv_rolling, group.min_moment);
    let inertia = || ContactInertia {
        rolling: Lanes::splat(1.0) / inv_rolling,
        min,
    };
    group.out = eval.lanes(&kin, blk.fp.dt, &mut group.history[..H], inertia);
    // Each lane read in place from the group's memory: a lane of a result
    // kept in a register, at a lane number known only at run time, is
    // stored and loaded back for every lane, and the load waits on the store.
    let at = |v: &V3<Lanes<W>>, l: usize| DVec3::new(v.x.0[l], v.y.0[l], v.z.0[l]);
    for (l, &(j, key, lower)) in group.jobs.iter().enumerate().take(filled) {
        let e = held_or_fresh(blk, entry, fresh, j);
        // SAFETY: the entry is this job's (see `RecordPool`).
        let rec = &mut unsafe { blk.records.record_mut(e) }[..H];
        #[allow(clippy::needless_range_loop)]
        for v in 0..H {
            rec[v] = group.history[v].0[l];
        }
        let force_i = at(&group.out.force_i, l);
        if lower {
            upper.take(
                key,
                Contribution {
                    force: force_i,
                    torque: at(&group.out.torque_i, l),
                },
            );
        }
        let on_j = Contribution {
            force: -force_i,
            torque: at(&group.out.torque_j, l),
        };
        // SAFETY: this job is the slot's only writer, and its reader
        // runs after this block's pass one.
        unsafe {
            blk.slots
                .put(blk.share_slot[j] as usize, shares.take(), on_j)
        };
    }
}

/// A pair contact of a law with couples (rolling, spinning) or stochastic
/// friction. Kept out of line so the pair loop's plain path stays lean.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn general_pair(
    p: &ParticleView,
    law: &ContactLaw,
    (i, j): (usize, usize),
    (bi, bj): (&Body, &Body),
    (id_i, id_j): (u64, u64),
    d: DVec3,
    r: f64,
    rec: &mut [f64],
    fp: &ForceParams,
    bodies: &[BodyInertia],
) -> PairForce {
    let kin = Kinematics::pair(bi, bj, d, r);
    let inertia = || ContactInertia::of_bodies(bodies[i], bodies[j]);
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
