//! Velocity Verlet for translation and rotation.
//!
//! Per step: `v += ½Δt F/m`, `ω += ½Δt τ/I`, `x += Δt v` ([`kick_drift`]);
//! forces at the new positions, evaluated with the half-step velocities
//! `v(t+½Δt)`, `ω(t+½Δt)` (as LAMMPS' `nve/sphere` does); then
//! `v += ½Δt F/m`, `ω += ½Δt τ/I` ([`kick`]). Frozen particles never move.
//!
//! The second half kick may be deferred to the next step's first pass
//! ([`kick_drift`] with `deferred_kick`), which then gives the two half
//! kicks one after the other, the same operations in the same order as
//! two passes (so the same bits), in one pass over the particles instead
//! of two; nothing may read the velocities in between.

#[cfg(target_arch = "x86_64")]
mod eights;
pub mod timestep;

use crate::geometry::domain::Domain;
use crate::neighbor::trigger::ResidualScan;
use crate::neighbor::{runs_cover, BLOCK};
use crate::parallel::team::Team;
use crate::simd::isa::in_best_build;
use crate::simd::lane::{F64x4, Lane, V3};
use crate::state::images::{Images, Sources};
use crate::state::particles::Particles;
use crate::state::room::split_chunks;
use glam::{DVec3, DVec4};
use rayon::prelude::*;
use std::ops::Range;

/// The largest distance a particle may move in one step, as a fraction of
/// its radius. A faster particle stops the run (exit 1): at half a radius
/// per step two approaching spheres close at most their mean radius per
/// step, so a contact is always seen before the overlap passes a radius,
/// and no sphere can pass through another between two force evaluations.
/// At the stable step of any law (1/10 of the Hooke collision time, 0.3 of
/// the Rayleigh time) a particle this fast would reach an overlap beyond a
/// radius in a head-on collision, so a sound run never comes near it.
/// LIGGGHTS's `fix check/timestep/gran` warns by the same kind of measure
/// (the distance travelled per step against the skin).
pub const MAX_STEP_FRACTION: f64 = 0.5;

/// Whether a step's squared displacement `step2` keeps a particle of radius
/// `radius` within [`MAX_STEP_FRACTION`] of its radius (a NaN is not), per
/// lane.
#[inline(always)]
pub fn within_step_bound<T: Lane>(step2: T, radius: T) -> T::Mask {
    step2.le(T::splat(MAX_STEP_FRACTION * MAX_STEP_FRACTION) * (radius * radius))
}

/// What the first half step saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftScan {
    /// Largest squared displacement since the last neighbour-list build.
    pub max_disp2: f64,
    /// The box of the displacements `x − x_ref` since the last build:
    /// their smallest and largest components (`(+∞, −∞)` for none; a NaN
    /// is passed over: the particle is flagged), as
    /// [`crate::neighbor::trigger::displacement_box`] finds it from the
    /// positions after the drift. The rebuild rule's centre is its middle.
    pub displacements: (DVec3, DVec3),
    /// Where a flow is fitted ([`ResidualScan`]): the box of the residuals
    /// `x − x_ref − m x_ref` after the drift, as
    /// [`crate::neighbor::trigger::residual_box`] finds it (`(+∞, −∞)`
    /// without a flow; a NaN is passed over).
    pub residuals: (DVec3, DVec3),
    /// Where a flow is fitted with a centre: the residuals' largest
    /// squared distance from [`ResidualScan::centre`] (0 without).
    pub residual_spread2: f64,
    /// The lowest-id particle with a non-finite state, outside the domain
    /// along a non-periodic axis, or moved more than [`MAX_STEP_FRACTION`]
    /// of its radius in this step: `(local index, id)`.
    pub bad: Option<(usize, u64)>,
    /// Whether the periodic images made on this rank were copied on the
    /// way ([`kick_drift`]'s `image_sources`), so the halo update need not.
    pub images_copied: bool,
}

impl DriftScan {
    /// Nothing moved, nothing bad.
    const NONE: Self = Self {
        max_disp2: 0.0,
        displacements: (DVec3::INFINITY, DVec3::NEG_INFINITY),
        residuals: (DVec3::INFINITY, DVec3::NEG_INFINITY),
        residual_spread2: 0.0,
        bad: None,
        images_copied: false,
    };

    /// The scan of two sets of particles: the larger displacement and
    /// spread, the boxes of both, the lower bad id, images copied if
    /// either copied them.
    fn merge(a: Self, b: Self) -> Self {
        let (da, db) = (a.displacements, b.displacements);
        let (ra, rb) = (a.residuals, b.residuals);
        Self {
            max_disp2: a.max_disp2.max(b.max_disp2),
            displacements: (da.0.min(db.0), da.1.max(db.1)),
            residuals: (ra.0.min(rb.0), ra.1.max(rb.1)),
            residual_spread2: a.residual_spread2.max(b.residual_spread2),
            bad: match (a.bad, b.bad) {
                (Some(x), Some(y)) => Some(if x.1 <= y.1 { x } else { y }),
                (x, None) => x,
                (None, y) => y,
            },
            images_copied: a.images_copied || b.images_copied,
        }
    }

    /// Flag owned particle `k`, of id `id`, as gone bad, unless a particle
    /// of lower id is flagged already.
    #[inline(always)]
    fn flag(&mut self, k: usize, id: u64) {
        if self.bad.is_none_or(|(_, i)| id < i) {
            self.bad = Some((k, id));
        }
    }
}

/// First half kick and drift of the owned, mobile particles; measures the
/// displacement from `x_ref` and flags particles that went bad. Refreshes
/// the owned particles' [`Particles::packed`] images on the way (an owned
/// particle's shift is zero: its image is `x` itself), whose radii it keeps
/// (they are written whole at every rebuild, or here when missing). With
/// `deferred_kick`, the last step's second half kick ([`kick`], which was
/// not given) comes first, with the forces it would have read.
///
/// `runs` are the last force stage's runs of blocks, one per thread
/// ([`crate::force::PairResults::runs`]: first block, end). Where there
/// are several and they cover the blocks, each run's blocks go to one
/// task, as each went to one thread in the force stage: a thread then
/// moves the particles whose forces it summed, and their data stays in
/// its core's cache (passing it between cores far apart made the chute's
/// first half step on two threads slower by a tenth). The task then
/// copies the periodic images of the run's particles (`image_sources`,
/// the owned particle each copies, ascending: [`crate::state::images`]),
/// which the same thread's pairs will read, and the scan says so
/// ([`DriftScan::images_copied`]): one parallel region a step fewer than
/// a copy of its own in the halo update. Otherwise (one run, or particles
/// changed since) the blocks are shared as the thread pool sees fit, and
/// the images are left to the halo update. The result does not depend on
/// either.
pub fn kick_drift(
    p: &mut Particles,
    dt: f64,
    x_ref: &[DVec3],
    domain: &Domain,
    deferred_kick: bool,
    (runs, image_sources): (&[(usize, usize)], &[u32]),
    residuals: Option<ResidualScan>,
) -> DriftScan {
    let n = p.n_owned;
    if p.packed.len() < n {
        p.refresh_packed();
    }
    debug_assert!((0..n).all(|k| p.packed[k].w.to_bits() == p.radius[k].to_bits()));
    let by_runs = runs_cover(runs, n);
    let copy_images = by_runs && !image_sources.is_empty();
    if copy_images {
        p.size_packed();
    }
    let (x, gx) = p.x.split_at_mut(n);
    let (v, gv) = p.v.split_at_mut(n);
    let (w, gw) = p.omega.split_at_mut(n);
    let (packed, gp) = p.packed.split_at_mut(n);
    let (f, t) = (&p.force[..n], &p.torque[..n]);
    let (im, ii, frozen, id) = (
        &p.inv_mass[..n],
        &p.inv_inertia[..n],
        &p.frozen[..n],
        &p.id[..n],
    );
    let x_ref = &x_ref[..n];
    // The box as bounds, the finite numbers along periodic axes: `lo ≤ x ≤
    // hi` holds when `x` is finite and `Domain::outside_axis(x)` is `None`
    // (false for NaN and for an infinite coordinate).
    let axis = |a: usize, lo: bool| match (domain.periodic[a], lo) {
        (true, true) => f64::MIN,
        (true, false) => f64::MAX,
        (false, true) => domain.lo[a],
        (false, false) => domain.hi[a],
    };
    let lo = DVec3::new(axis(0, true), axis(1, true), axis(2, true));
    let hi = DVec3::new(axis(0, false), axis(1, false), axis(2, false));
    let drift = |b: usize, out: DriftOut| {
        let r = b * BLOCK..b * BLOCK + out.0.len();
        let inputs = DriftInputs {
            kick: KickInputs::of((f, t, im, ii, frozen), r.clone()),
            id: &id[r.clone()],
            x_ref: &x_ref[r.clone()],
            take_lines: by_runs,
        };
        if deferred_kick {
            drift_block::<true>(r.start, out, &inputs, (dt, lo, hi), residuals)
        } else {
            drift_block::<false>(r.start, out, &inputs, (dt, lo, hi), residuals)
        }
    };
    if by_runs {
        let sources = if copy_images { image_sources } else { &[] };
        let images = Images::of(sources, (gx, gv, gw, gp), (&p.shift, &p.radius[n..]));
        let images = images.split_by_sources(runs[1..].iter().map(|r| r.0 * BLOCK));
        let lens = || runs.iter().map(|&(s, e)| (e * BLOCK).min(n) - s * BLOCK);
        let (xs, vs) = (split_chunks(x, lens()), split_chunks(v, lens()));
        let (ws, ps) = (split_chunks(w, lens()), split_chunks(packed, lens()));
        let team = Team::new(runs.len());
        let tasks = (xs.into_iter().zip(vs).zip(ws).zip(ps))
            .zip(images.into_iter().zip(runs))
            .collect::<Vec<_>>();
        let scan = (tasks.into_par_iter())
            .map(|((((x, v), w), packed), (mut images, &(first, _)))| {
                team.task(|| {
                    let scan = (x.chunks_mut(BLOCK).zip(v.chunks_mut(BLOCK)))
                        .zip(w.chunks_mut(BLOCK))
                        .zip(packed.chunks_mut(BLOCK))
                        .enumerate()
                        .map(|(i, (((x, v), w), packed))| drift(first + i, (x, v, w, packed)))
                        .fold(DriftScan::NONE, DriftScan::merge);
                    images.copy_from(Sources {
                        first: first * BLOCK,
                        x,
                        v,
                        omega: w,
                    });
                    scan
                })
            })
            .reduce(|| DriftScan::NONE, DriftScan::merge);
        return DriftScan {
            images_copied: copy_images,
            ..scan
        };
    }
    x.par_chunks_mut(BLOCK)
        .zip(v.par_chunks_mut(BLOCK))
        .zip(w.par_chunks_mut(BLOCK))
        .zip(packed.par_chunks_mut(BLOCK))
        .enumerate()
        .map(|(b, (((x, v), w), packed))| drift(b, (x, v, w, packed)))
        .reduce(|| DriftScan::NONE, DriftScan::merge)
}

/// What the first half step of one block reads, block-local (index 0 is the
/// block's first particle).
struct DriftInputs<'a> {
    kick: KickInputs<'a>,
    id: &'a [u64],
    x_ref: &'a [DVec3],
    /// Ask ahead for the lines written ([`take_for_writing`]): the blocks
    /// go by the force stage's runs, each to the thread of its run.
    take_lines: bool,
}

/// The mutable per-particle arrays of [`drift_block`]: `x`, `v`, `ω` and
/// the packed images.
type DriftOut<'a> = (
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec4],
);

/// [`kick_drift`] over one block starting at local index `base`, with the
/// deferred half kick first if `DEFERRED`: eight particles at a time on
/// the arrays as they lie in memory where the processor has AVX-512
/// ([`eights`]), else four at a time in lanes in the build for the run's
/// instruction set ([`crate::simd::isa`]). The same bits either way.
fn drift_block<const DEFERRED: bool>(
    base: usize,
    out: DriftOut,
    a: &DriftInputs,
    (dt, lo, hi): (f64, DVec3, DVec3),
    residuals: Option<ResidualScan>,
) -> DriftScan {
    let mut b = DriftArrays::of(out, a);
    let c = DriftConstants {
        base,
        dt,
        lo,
        hi,
        residuals,
    };
    #[cfg(target_arch = "x86_64")]
    if crate::simd::isa::avx512() {
        // SAFETY: the processor has AVX-512 (`isa::avx512` checks it).
        return unsafe { eights::drift_block_avx512::<DEFERRED>(&mut b, &c, a.take_lines) };
    }
    in_best_build!(drift_block_avx2, || drift_block_body::<DEFERRED>(
        &mut b,
        &c,
        a.take_lines
    ))
}

/// The body of [`drift_block`] in lanes: four particles at a time through
/// [`drift_lanes`] (the same operations on each lane as on one particle,
/// so the same bits), the block's last few one at a time
/// ([`drift_rest`]). `take_lines`: [`take_for_writing`] ahead.
#[inline(always)]
fn drift_block_body<const DEFERRED: bool>(
    b: &mut DriftArrays,
    c: &DriftConstants,
    take_lines: bool,
) -> DriftScan {
    let m = b.x.len();
    let mut scan = DriftScan::NONE;
    let mut widest = Widest::<F64x4>::new();
    let flow = c.residuals.as_ref().map(LaneFlow::of);
    let full = m - m % 4;
    for k in (0..full).step_by(4) {
        if take_lines {
            take_for_writing(b, (k + WRITE_AHEAD).min(m - 4));
        }
        drift_lanes::<F64x4, DEFERRED>(k, b, c, flow.as_ref(), &mut scan, &mut widest);
    }
    let lanes = (0..4).map(|l| widest.lane(l));
    drift_rest::<DEFERRED>(full, b, c, scan, lanes)
}

/// The particles of a block from `from` on, one at a time, then the
/// scan with the largest displacements, spreads and boxes of the
/// `widest` (those of the particles before `from`) merged in: a NaN never
/// enters them (the particle is flagged instead).
#[inline(always)]
fn drift_rest<const DEFERRED: bool>(
    from: usize,
    b: &mut DriftArrays,
    c: &DriftConstants,
    mut scan: DriftScan,
    widest: impl Iterator<Item = DriftScan>,
) -> DriftScan {
    let mut widest_one = Widest::<f64>::new();
    let flow = c.residuals.as_ref().map(LaneFlow::of);
    for k in from..b.x.len() {
        drift_lanes::<f64, DEFERRED>(k, b, c, flow.as_ref(), &mut scan, &mut widest_one);
    }
    widest
        .chain([widest_one.lane(0)])
        .fold(scan, DriftScan::merge)
}

/// The running extremes of [`drift_lanes`], per lane: the largest squared
/// displacement and the box of the displacements; with a flow, the box
/// of the residuals and their largest squared distance from the centre.
struct Widest<T> {
    disp2: T,
    lo: V3<T>,
    hi: V3<T>,
    residual_lo: V3<T>,
    residual_hi: V3<T>,
    spread2: T,
}

impl<T: Lane> Widest<T> {
    /// Nothing seen: zero displacements and empty boxes.
    #[inline(always)]
    fn new() -> Self {
        let (inf, neg) = (T::splat(f64::INFINITY), T::splat(f64::NEG_INFINITY));
        Self {
            disp2: T::splat(0.0),
            lo: V3::new(inf, inf, inf),
            hi: V3::new(neg, neg, neg),
            residual_lo: V3::new(inf, inf, inf),
            residual_hi: V3::new(neg, neg, neg),
            spread2: T::splat(0.0),
        }
    }

    /// Lane `l`'s extremes, as a scan with nothing bad.
    #[inline(always)]
    fn lane(&self, l: usize) -> DriftScan {
        let v = |g: &V3<T>| DVec3::new(g.x.lane(l), g.y.lane(l), g.z.lane(l));
        DriftScan {
            max_disp2: self.disp2.lane(l),
            displacements: (v(&self.lo), v(&self.hi)),
            residuals: (v(&self.residual_lo), v(&self.residual_hi)),
            residual_spread2: self.spread2.lane(l),
            ..DriftScan::NONE
        }
    }
}

/// A [`ResidualScan`] in lanes: the flow's columns, which are in use, and
/// the centre if any, each in every lane.
struct LaneFlow<T> {
    cols: [V3<T>; 3],
    used: [bool; 3],
    centre: Option<V3<T>>,
}

impl<T: Lane> LaneFlow<T> {
    #[inline(always)]
    fn of(r: &ResidualScan) -> Self {
        let splat = |v: DVec3| V3::new(T::splat(v.x), T::splat(v.y), T::splat(v.z));
        let m = r.flow.matrix();
        Self {
            cols: [splat(m.x_axis), splat(m.y_axis), splat(m.z_axis)],
            used: r.flow.used(),
            centre: r.centre.map(splat),
        }
    }
}

/// `lo` and `hi` widened to hold `d`, per lane and component: `d < lo ?
/// d : lo` and `d > hi ? d : hi`, so that a NaN leaves them as they were.
#[inline(always)]
fn widen<T: Lane>(lo: &mut V3<T>, hi: &mut V3<T>, d: V3<T>) {
    (lo.x, hi.x) = (
        T::select(d.x.lt(lo.x), d.x, lo.x),
        T::select(d.x.gt(hi.x), d.x, hi.x),
    );
    (lo.y, hi.y) = (
        T::select(d.y.lt(lo.y), d.y, lo.y),
        T::select(d.y.gt(hi.y), d.y, hi.y),
    );
    (lo.z, hi.z) = (
        T::select(d.z.lt(lo.z), d.z, lo.z),
        T::select(d.z.gt(hi.z), d.z, hi.z),
    );
}

/// How many particles ahead of its lanes the drift asks for the lines it
/// will write ([`take_for_writing`]).
const WRITE_AHEAD: usize = 64;

/// Ask for the lines of the four particles from `k` that the drift
/// writes (`x`, `v`, `ω`, the packed image), to own them by the time it
/// does. On one thread they are in cache already. On several, the
/// particles a run shares a boundary with another run were read by the
/// other thread in the force stage (as partners), so each line written is
/// first taken back from the other core: the chute's six blocks at the
/// boundary of two runs drifted 3 to 3.7 times slower than the others
/// (7–9 µs against 2.4 µs a block, while every other block took the
/// same time on one and on two threads). Asked for 64 particles ahead,
/// the two-thread first half step took 0.21 against 0.23 s of 2,000
/// steps. Not on one thread, where the hints cost 1 % of the chute's
/// run.
#[inline(always)]
fn take_for_writing(b: &DriftArrays, k: usize) {
    // Every line of the bytes `[at, at + len)`: at most three here.
    let take = |at: *const u8, len: usize| {
        for offset in [0, 64, len - 1] {
            crate::simd::prefetch::prefetch_write_ptr(at.wrapping_add(offset));
        }
    };
    for s in [&*b.x, &*b.v, &*b.w] {
        take(s[k..k + 4].as_ptr().cast(), 4 * size_of::<DVec3>());
    }
    take(b.packed[k..k + 4].as_ptr().cast(), 4 * size_of::<DVec4>());
}

/// The block's arrays in [`drift_block`], each cut to the block.
struct DriftArrays<'a> {
    x: &'a mut [DVec3],
    v: &'a mut [DVec3],
    w: &'a mut [DVec3],
    packed: &'a mut [DVec4],
    f: &'a [DVec3],
    t: &'a [DVec3],
    im: &'a [f64],
    ii: &'a [f64],
    frozen: &'a [bool],
    id: &'a [u64],
    x_ref: &'a [DVec3],
}

impl<'a> DriftArrays<'a> {
    /// The arrays of a block: those it writes, `out`, and those it reads,
    /// `a`, each cut to the block's length.
    fn of((x, v, w, packed): DriftOut<'a>, a: &DriftInputs<'a>) -> Self {
        let m = x.len();
        let (f, t, im, ii, frozen) = a.kick.cut(m);
        DriftArrays {
            x,
            v: &mut v[..m],
            w: &mut w[..m],
            packed: &mut packed[..m],
            f,
            t,
            im,
            ii,
            frozen,
            id: &a.id[..m],
            x_ref: &a.x_ref[..m],
        }
    }
}

/// What every particle of a block's first half step shares: the block's
/// first local index, the step, the box's bounds, the flow whose
/// residuals it measures (if one is fitted).
struct DriftConstants {
    base: usize,
    dt: f64,
    lo: DVec3,
    hi: DVec3,
    residuals: Option<ResidualScan>,
}

/// `T::LANES` consecutive vectors of `s` from `k`, one per lane.
#[inline(always)]
fn gather<T: Lane>(s: &[DVec3], k: usize) -> V3<T> {
    let s = &s[k..k + T::LANES];
    let mut g = V3::<T>::zero();
    for (l, e) in s.iter().enumerate() {
        g.x.set_lane(l, e.x);
        g.y.set_lane(l, e.y);
        g.z.set_lane(l, e.z);
    }
    g
}

/// Lane `l` of `g` back into `s[k + l]`.
#[inline(always)]
fn scatter<T: Lane>(g: V3<T>, s: &mut [DVec3], k: usize) {
    for (l, e) in s[k..k + T::LANES].iter_mut().enumerate() {
        *e = DVec3::new(g.x.lane(l), g.y.lane(l), g.z.lane(l));
    }
}

/// `T::LANES` consecutive values of `s` from `k`, one per lane.
#[inline(always)]
fn gather_values<T: Lane>(s: &[f64], k: usize) -> T {
    let mut g = T::splat(0.0);
    for (l, &e) in s[k..k + T::LANES].iter().enumerate() {
        g.set_lane(l, e);
    }
    g
}

/// The first half step of the `T::LANES` particles from block index `k`
/// (the loop body of [`kick_drift`]): the deferred half kick if
/// `DEFERRED`, the half kick, the drift, the packed images; flags the
/// lowest-id particle gone bad into `scan` and keeps each lane's largest
/// displacement from `x_ref` and the box of its displacements in
/// `widest`, and with a `flow` the box of the residuals and their largest
/// squared distance from its centre.
#[inline(always)]
fn drift_lanes<T: Lane, const DEFERRED: bool>(
    k: usize,
    b: &mut DriftArrays,
    c: &DriftConstants,
    flow: Option<&LaneFlow<T>>,
    scan: &mut DriftScan,
    widest: &mut Widest<T>,
) {
    let (x0, v0, w0) = (
        gather::<T>(b.x, k),
        gather::<T>(b.v, k),
        gather::<T>(b.w, k),
    );
    let (f, t) = (gather::<T>(b.f, k), gather::<T>(b.t, k));
    // `v += (½Δt/m) F`, `ω += (½Δt/I) τ`, as `half_kick` computes them.
    let half = T::splat(0.5 * c.dt);
    let (per_mass, per_inertia) = (
        half * gather_values::<T>(b.im, k),
        half * gather_values::<T>(b.ii, k),
    );
    let (mut v1, mut w1) = (v0, w0);
    if DEFERRED {
        (v1, w1) = (v1 + f.scale(per_mass), w1 + t.scale(per_inertia));
    }
    (v1, w1) = (v1 + f.scale(per_mass), w1 + t.scale(per_inertia));
    let dx = v1.scale(T::splat(c.dt));
    let mut frozen = T::splat(0.0);
    for (l, &fz) in b.frozen[k..k + T::LANES].iter().enumerate() {
        frozen.set_lane(l, if fz { 1.0 } else { 0.0 });
    }
    // A frozen particle keeps its state; its step is zero.
    let mobile = frozen.eq(T::splat(0.0));
    let x1 = V3::select(mobile, x0 + dx, x0);
    let (v1, w1) = (V3::select(mobile, v1, v0), V3::select(mobile, w1, w0));
    let step2 = T::select(mobile, dx.length_squared(), T::splat(0.0));
    scatter(x1, b.x, k);
    scatter(v1, b.v, k);
    scatter(w1, b.w, k);
    // The radius is the image's already (written at the rebuild).
    let images = &mut b.packed[k..k + T::LANES];
    let mut radius = T::splat(0.0);
    for (l, image) in images.iter_mut().enumerate() {
        radius.set_lane(l, image.w);
        *image = DVec4::new(x1.x.lane(l), x1.y.lane(l), x1.z.lane(l), image.w);
    }
    // Not too far in one step, every component finite, inside the box
    // along the closed axes (a NaN compares false: flagged either way).
    let slow = within_step_bound(step2, radius);
    let finite = [v1.x, v1.y, v1.z, w1.x, w1.y, w1.z]
        .map(T::is_finite)
        .into_iter()
        .reduce(|a, b| a & b)
        .expect("six components");
    let (lo, hi) = (c.lo, c.hi);
    let inside = (T::splat(lo.x).le(x1.x) & x1.x.le(T::splat(hi.x)))
        & (T::splat(lo.y).le(x1.y) & x1.y.le(T::splat(hi.y)))
        & (T::splat(lo.z).le(x1.z) & x1.z.le(T::splat(hi.z)));
    let bad = !(finite & inside & slow);
    if T::any(bad) {
        let flags = T::select(bad, T::splat(1.0), T::splat(0.0));
        for l in 0..T::LANES {
            if flags.lane(l) != 0.0 {
                scan.flag(c.base + k + l, b.id[k + l]);
            }
        }
    }
    // A NaN displacement leaves the maximum and the box as `f64::max` and
    // `f64::min` would (the particle is flagged above), without their NaN
    // handling.
    let x_ref = gather::<T>(b.x_ref, k);
    let d = x1 - x_ref;
    let disp2 = d.length_squared();
    widest.disp2 = T::select(disp2.gt(widest.disp2), disp2, widest.disp2);
    widen(&mut widest.lo, &mut widest.hi, d);
    if let Some(f) = flow {
        // `Foreseen::residual`'s operations, in its order.
        let mut r = d;
        for (j, s) in [x_ref.x, x_ref.y, x_ref.z].into_iter().enumerate() {
            if f.used[j] {
                r = r - f.cols[j].scale(s);
            }
        }
        widen(&mut widest.residual_lo, &mut widest.residual_hi, r);
        if let Some(centre) = f.centre {
            let s2 = (r - centre).length_squared();
            widest.spread2 = T::select(s2.gt(widest.spread2), s2, widest.spread2);
        }
    }
}

/// Second half kick of the owned, mobile particles.
pub fn kick(p: &mut Particles, dt: f64) {
    let n = p.n_owned;
    let half = 0.5 * dt;
    let (v, w) = (&mut p.v[..n], &mut p.omega[..n]);
    let (f, t, im, ii, frozen) = (
        &p.force[..n],
        &p.torque[..n],
        &p.inv_mass[..n],
        &p.inv_inertia[..n],
        &p.frozen[..n],
    );
    v.par_chunks_mut(BLOCK)
        .zip(w.par_chunks_mut(BLOCK))
        .enumerate()
        .for_each(|(b, (v, w))| {
            let r = b * BLOCK..b * BLOCK + v.len();
            let inputs = KickInputs::of((f, t, im, ii, frozen), r);
            kick_block((v, w), &inputs, half);
        });
}

/// The arrays a half kick reads: force, torque, inverse mass, inverse
/// inertia, frozen.
type KickArrays<'a> = (&'a [DVec3], &'a [DVec3], &'a [f64], &'a [f64], &'a [bool]);

/// What a half kick of one block reads, block-local.
struct KickInputs<'a> {
    force: &'a [DVec3],
    torque: &'a [DVec3],
    inv_mass: &'a [f64],
    inv_inertia: &'a [f64],
    frozen: &'a [bool],
}

impl<'a> KickInputs<'a> {
    /// Entries `r` of the owned particles' arrays.
    fn of((f, t, im, ii, frozen): KickArrays<'a>, r: Range<usize>) -> Self {
        KickInputs {
            force: &f[r.clone()],
            torque: &t[r.clone()],
            inv_mass: &im[r.clone()],
            inv_inertia: &ii[r.clone()],
            frozen: &frozen[r],
        }
    }

    /// The arrays cut to the loop's length `m`, so that the compiler knows
    /// every length is the loop's (no bound test per particle and array).
    #[inline(always)]
    fn cut(&self, m: usize) -> KickArrays<'a> {
        (
            &self.force[..m],
            &self.torque[..m],
            &self.inv_mass[..m],
            &self.inv_inertia[..m],
            &self.frozen[..m],
        )
    }
}

/// [`kick`] over one block, in the build for the run's instruction set
/// ([`crate::simd::isa`]).
fn kick_block(out: (&mut [DVec3], &mut [DVec3]), a: &KickInputs, half: f64) {
    in_best_build!(kick_block_avx2, || kick_block_body(out, a, half))
}

/// The body of [`kick_block`]; every slice is cut to the block's length
/// first, so the loop indexes without bound tests.
#[inline(always)]
fn kick_block_body((v, w): (&mut [DVec3], &mut [DVec3]), a: &KickInputs, half: f64) {
    let m = v.len();
    let w = &mut w[..m];
    let (f, t, im, ii, frozen) = a.cut(m);
    for k in 0..m {
        if !frozen[k] {
            half_kick((&mut v[k], &mut w[k]), (f[k], t[k]), (im[k], ii[k]), half);
        }
    }
}

/// The half kick of one particle: `v += ½Δt F/m`, `ω += ½Δt τ/I`
/// (`half` = ½Δt).
#[inline(always)]
fn half_kick(
    (v, w): (&mut DVec3, &mut DVec3),
    (f, t): (DVec3, DVec3),
    (inv_mass, inv_inertia): (f64, f64),
    half: f64,
) {
    *v += (half * inv_mass) * f;
    *w += (half * inv_inertia) * t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::trigger::{displacement_box, residual_box, spread2, Foreseen};
    use crate::state::particles::ParticleRecord;

    /// A box periodic along x and y, closed along z.
    const DOMAIN: Domain = Domain {
        lo: DVec3::ZERO,
        hi: DVec3::new(10.0, 10.0, 10.0),
        periodic: [true, true, false],
    };

    /// Three mobile spheres and a frozen one, at rest in the middle of the
    /// box, with scrambled ids; `x_ref` is where they stand.
    fn spheres() -> (Particles, Vec<DVec3>) {
        let mut p = Particles::default();
        for (k, id) in [7u64, 3, 5, 1].into_iter().enumerate() {
            let x = DVec3::new(2.0 + k as f64, 5.0, 5.0);
            p.push_owned(&ParticleRecord {
                frozen: k == 3,
                ..ParticleRecord::resting(id, x, 0.5)
            });
        }
        let x_ref = p.x.clone();
        (p, x_ref)
    }

    #[test]
    fn the_half_kick_and_drift_follow_velocity_verlet() {
        let (mut p, x_ref) = spheres();
        let dt = 0.1;
        p.force[0] = DVec3::new(2.0, 0.0, -4.0);
        p.torque[0] = DVec3::new(0.0, 1.0, 0.0);
        p.force[3] = DVec3::splat(9.0);
        let scan = kick_drift(&mut p, dt, &x_ref, &DOMAIN, false, (&[], &[]), None);
        // v = ½Δt F/m, x = x0 + Δt v, ω = ½Δt τ/I with I = 0.4 m R².
        assert_eq!(p.v[0], DVec3::new(0.1, 0.0, -0.2));
        assert_eq!(p.x[0], DVec3::new(2.0 + 0.1 * 0.1, 5.0, 5.0 - 0.1 * 0.2));
        assert!((p.omega[0].y - 0.05 / 0.1).abs() < 1e-15);
        // The frozen sphere stays put, and every packed image is x with its radius.
        assert_eq!((p.x[3], p.v[3]), (x_ref[3], DVec3::ZERO));
        for k in 0..4 {
            assert_eq!(p.packed[k], p.x[k].extend(0.5));
        }
        assert_eq!(scan.bad, None);
        assert_eq!(scan.max_disp2, (p.x[0] - x_ref[0]).length_squared());
    }

    #[test]
    fn a_deferred_kick_gives_the_bits_of_the_two_passes() {
        // Forces and velocities whose sums round: the fused pass must give
        // the second half kick, then the first, in the passes' order.
        let (mut two_passes, x_ref) = spheres();
        for k in 0..4 {
            let s = 0.1 + k as f64 / 3.0;
            two_passes.v[k] = DVec3::new(s, -s / 7.0, 1.0 / 3.0);
            two_passes.omega[k] = DVec3::new(-s / 11.0, 0.3, s);
            two_passes.force[k] = DVec3::new(1.0 / 3.0, -s, 2.0 / 7.0);
            two_passes.torque[k] = DVec3::new(s / 13.0, 0.7, -0.1);
        }
        let start = two_passes.clone();
        let mut one_pass = start.clone();
        let dt = 0.1;
        kick(&mut two_passes, dt);
        let a = kick_drift(
            &mut two_passes,
            dt,
            &x_ref,
            &DOMAIN,
            false,
            (&[], &[]),
            None,
        );
        let b = kick_drift(&mut one_pass, dt, &x_ref, &DOMAIN, true, (&[], &[]), None);
        assert_eq!(a, b);
        for k in 0..4 {
            let bits = |p: &Particles| {
                [p.x[k], p.v[k], p.omega[k]].map(|q| q.to_array().map(f64::to_bits))
            };
            assert_eq!(bits(&one_pass), bits(&two_passes), "particle {k}");
        }
        // The frozen sphere never moves; a mobile one got both half kicks
        // (one kick alone would leave it slower).
        assert_eq!(one_pass.x[3], x_ref[3]);
        let mut once = start;
        kick_drift(&mut once, dt, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_ne!(once.v[0], one_pass.v[0]);
    }

    /// Nine spheres (two groups of four lanes and one alone), two of them
    /// frozen, with velocities, forces and torques whose sums round.
    fn nine_spheres() -> (Particles, Vec<DVec3>) {
        let mut p = Particles::default();
        for k in 0..9u64 {
            let s = 0.1 + k as f64 / 3.0;
            p.push_owned(&ParticleRecord {
                id: (k * 5) % 9 + 1,
                x: DVec3::new(1.0 + k as f64 / 7.0, 5.0 - s / 9.0, 5.0 + s / 11.0),
                v: DVec3::new(s, -s / 7.0, 1.0 / 3.0),
                omega: DVec3::new(-s / 11.0, 0.3, s),
                radius: 0.5 + k as f64 / 100.0,
                mass: 1.0 + s,
                material: 0,
                frozen: k == 2 || k == 8,
            });
            let k = k as usize;
            p.force[k] = DVec3::new(1.0 / 3.0, -s, 2.0 / 7.0);
            p.torque[k] = DVec3::new(s / 13.0, 0.7, -0.1);
        }
        let x_ref =
            p.x.iter()
                .map(|x| *x - DVec3::new(0.01, 0.0, -0.02))
                .collect();
        (p, x_ref)
    }

    /// `n` owned particles spread along x, some frozen, with forces and
    /// torques, and reference positions near theirs.
    fn spread_bed(n: usize) -> (Particles, Vec<DVec3>) {
        let mut p = Particles::default();
        for k in 0..n {
            let s = (k as f64 * 0.618).fract();
            p.push_owned(&ParticleRecord {
                id: ((k * 7919) % n) as u64 + 1,
                x: DVec3::new(1.0 + 8.0 * s, 1.0 + k as f64 / n as f64, 5.0),
                v: DVec3::new(s - 0.5, 0.25, -s),
                omega: DVec3::new(s, -0.5, 0.1),
                radius: 0.01,
                mass: 1.0 + s,
                material: 0,
                frozen: k % 97 == 0,
            });
            p.force[k] = DVec3::new(-s, 1.0 / 3.0, s * s);
            p.torque[k] = DVec3::new(0.2, s, -0.7);
        }
        let x_ref: Vec<DVec3> = p.x.iter().map(|x| *x + DVec3::splat(1e-3)).collect();
        (p, x_ref)
    }

    /// The blocks in the force stage's runs give the bits and the scan
    /// of the blocks shared as the pool sees fit, and runs that no longer
    /// cover the blocks are passed over.
    #[test]
    fn blocks_by_runs_give_the_same_bits() {
        let n = 3 * BLOCK + 17;
        let (p, x_ref) = spread_bed(n);
        let bits = |p: &Particles| {
            let all = [&p.x[..], &p.v[..], &p.omega[..]].map(|a| a.to_vec());
            (all, p.packed.clone())
        };
        let mut reference = p.clone();
        let want = kick_drift(
            &mut reference,
            1e-3,
            &x_ref,
            &DOMAIN,
            true,
            (&[], &[]),
            None,
        );
        let blocks = n.div_ceil(BLOCK);
        let cover = [vec![(0, 1), (1, blocks)], vec![(0, 2), (2, 3), (3, blocks)]];
        let stale = [
            vec![(0, 1), (1, 2)],
            vec![(0, 2), (1, blocks)],
            vec![(0, blocks)],
        ];
        assert!(cover.iter().all(|r| runs_cover(r, n)));
        assert!(stale.iter().all(|r| !runs_cover(r, n)));
        for runs in cover.iter().chain(&stale) {
            let mut q = p.clone();
            let got = kick_drift(&mut q, 1e-3, &x_ref, &DOMAIN, true, (runs, &[]), None);
            assert_eq!(got, want, "{runs:?}");
            assert!(bits(&q) == bits(&reference), "{runs:?}");
        }
    }

    /// With images to copy, the runs' tasks copy them after moving their
    /// sources: each image holds its source's new state and the packed
    /// image [`Particles::refresh_packed_of`] computes, the owned
    /// particles the bits of the drift alone, and the scan says the images
    /// were copied; where the runs do not cover the blocks they are left
    /// alone, and the scan says so.
    #[test]
    fn runs_copy_the_periodic_images_of_their_particles() {
        let n = 3 * BLOCK + 17;
        let (mut p, x_ref) = spread_bed(n);
        // Images of every third particle (ascending, some in each run),
        // then a ghost that is no image (as one received from a peer).
        let images: Vec<(u32, DVec3)> = (0..n as u32)
            .step_by(3)
            .map(|k| (k, DVec3::new(-10.0, 0.0, 0.0)))
            .collect();
        let sources: Vec<u32> = images.iter().map(|i| i.0).collect();
        p.push_images(&images);
        let other = p.record(5);
        p.push_ghost(&other, DVec3::new(0.0, 3.0, 0.0));
        p.refresh_packed();
        let blocks = n.div_ceil(BLOCK);
        let mut alone = p.clone();
        let want = kick_drift(
            &mut alone,
            1e-3,
            &x_ref,
            &DOMAIN,
            true,
            (&[], &sources),
            None,
        );
        assert!(!want.images_copied);
        for runs in [vec![(0, 1), (1, blocks)], vec![(0, 2), (2, 3), (3, blocks)]] {
            let mut q = p.clone();
            let got = kick_drift(&mut q, 1e-3, &x_ref, &DOMAIN, true, (&runs, &sources), None);
            assert!(got.images_copied, "{runs:?}");
            assert_eq!(
                DriftScan {
                    images_copied: false,
                    ..got
                },
                want,
                "{runs:?}"
            );
            assert_eq!((&q.x[..n], &q.v[..n]), (&alone.x[..n], &alone.v[..n]));
            assert_eq!(&q.packed[..n], &alone.packed[..n]);
            let mut expected = q.clone();
            expected.refresh_packed_of(n..n + sources.len());
            for (g, &s) in sources.iter().enumerate() {
                let (s, i) = (s as usize, n + g);
                assert_eq!([q.x[i], q.v[i], q.omega[i]], [q.x[s], q.v[s], q.omega[s]]);
                assert_eq!(q.packed[i].to_array(), expected.packed[i].to_array());
                if !p.frozen[s] {
                    assert_ne!(q.x[i], p.x[i], "image {g} not copied");
                }
            }
            // The ghost that is no image is left as it was.
            let last = n + sources.len();
            assert_eq!((q.x[last], q.packed[last]), (p.x[last], p.packed[last]));
        }
        let mut stale = p.clone();
        let got = kick_drift(
            &mut stale,
            1e-3,
            &x_ref,
            &DOMAIN,
            true,
            (&[(0, 1), (1, 2)], &sources),
            None,
        );
        assert!(!got.images_copied);
        assert_eq!(&stale.x[n..], &p.x[n..]);
    }

    #[test]
    fn four_lanes_give_the_bits_of_one_particle_at_a_time() {
        // The one-particle reference: `half_kick` and the drift on
        // `DVec3`s, in `kick_drift`'s order.
        for deferred in [false, true] {
            let (mut p, x_ref) = nine_spheres();
            let mut expected = p.clone();
            let dt = 0.1;
            let mut widest = 0.0f64;
            for (k, x_ref) in x_ref.iter().enumerate() {
                let e = &mut expected;
                if !e.frozen[k] {
                    for _ in 0..1 + deferred as usize {
                        let (f, t) = (e.force[k], e.torque[k]);
                        let inverse = (e.inv_mass[k], e.inv_inertia[k]);
                        half_kick((&mut e.v[k], &mut e.omega[k]), (f, t), inverse, 0.5 * dt);
                    }
                    e.x[k] += dt * e.v[k];
                }
                widest = widest.max((e.x[k] - *x_ref).length_squared());
            }
            let scan = kick_drift(&mut p, dt, &x_ref, &DOMAIN, deferred, (&[], &[]), None);
            assert_eq!(scan.bad, None);
            assert_eq!(scan.max_disp2.to_bits(), widest.to_bits());
            // The box of the displacements, as a pass over the positions
            // finds it (the rebuild rule's, before the drift found it).
            let moved = displacement_box(&expected.x, &x_ref);
            assert_eq!(scan.displacements, moved, "deferred {deferred}");
            assert!(
                moved.0.cmplt(moved.1).all(),
                "a box of one point: {moved:?}"
            );
            for k in 0..9 {
                let bits = |p: &Particles| {
                    [p.x[k], p.v[k], p.omega[k]].map(|q| q.to_array().map(f64::to_bits))
                };
                assert_eq!(
                    bits(&p),
                    bits(&expected),
                    "particle {k}, deferred {deferred}"
                );
                assert_eq!(p.packed[k], p.x[k].extend(p.radius[k]));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    /// `m` particles whose values round in every operation, some frozen,
    /// with scrambled ids; particle `big` has moved furthest since
    /// `x_ref` (+x, −y, +z) and particle `m − 1 − big` next furthest the
    /// other way, so each place of a group holds the largest displacement
    /// and the box's bounds in some case. `spoilt`: some particles gone bad
    /// in each way the scan flags (non-finite velocity or angular
    /// velocity, out of the box along the closed axis, too fast for the
    /// step); `fast`: particle `big` moves just too far for its radius in
    /// this step, along z alone.
    fn jumbled(m: usize, big: usize, spoilt: bool, fast: bool) -> (Particles, Vec<DVec3>) {
        let mut p = Particles::default();
        for k in 0..m {
            let s = (k as f64 * 0.618_033_988_75).fract();
            let radius = 0.25 + s / 10.0;
            // 0.51 R per step of 0.1 along z: the bound is 0.5 R.
            let vz = if fast && k == big {
                5.1 * radius
            } else {
                -s / 7.0
            };
            p.push_owned(&ParticleRecord {
                id: ((k * 7 + 3) % (m + 5)) as u64 + 1,
                x: DVec3::new(1.0 + 8.0 * s, 9.0 - 7.0 * s, 5.0 + s / 3.0),
                v: DVec3::new(s - 0.5, 1.0 / 3.0, vz),
                omega: DVec3::new(s / 11.0, -0.3, s),
                radius,
                mass: 1.0 + s,
                material: 0,
                frozen: k % 5 == 3,
            });
            p.force[k] = DVec3::new(-s, 1.0 / 3.0, s * s);
            p.torque[k] = DVec3::new(0.2, s / 13.0, -0.7);
        }
        let moved = |k: usize| match k {
            _ if k == big => DVec3::new(0.5, -0.6, 0.7),
            _ if k + 1 + big == m => DVec3::new(-0.4, 0.5, -0.6),
            _ => DVec3::new(0.01, -0.02, 0.003) * (k as f64 * 0.37).fract(),
        };
        let x_ref = (p.x.iter().enumerate())
            .map(|(k, x)| *x - moved(k))
            .collect();
        if spoilt {
            for k in (0..m).step_by(3) {
                match (k / 3) % 5 {
                    0 => p.v[k].y = f64::NAN,
                    1 => p.omega[k].x = f64::NEG_INFINITY,
                    2 => p.x[k].z = 10.5,
                    3 => p.v[k].x = 1e3,
                    _ => {}
                }
            }
        }
        (p, x_ref)
    }

    /// A flow `m` whose columns `j` with bit `j` of `columns` set are not
    /// zero, and a centre off the origin.
    fn flow_of_columns(columns: usize) -> ResidualScan {
        let centre = Some(DVec3::new(0.003, -0.01, 0.002));
        let col = |j: usize, v: DVec3| {
            if columns >> j & 1 == 1 {
                v
            } else {
                DVec3::ZERO
            }
        };
        ResidualScan {
            flow: Foreseen::of(glam::DMat3::from_cols(
                col(0, DVec3::new(1e-3, -2e-4, 3e-5)),
                col(1, DVec3::new(-7e-4, 1e-4, 0.0)),
                col(2, DVec3::new(4.1e-3, 0.0, -1e-5)),
            )),
            centre,
        }
    }

    #[cfg(target_arch = "x86_64")]
    /// The first half step of particles `p` as one block, by the
    /// eight-particle AVX-512 path (`eights`) or the lane path.
    fn one_block(
        p: &mut Particles,
        x_ref: &[DVec3],
        deferred: bool,
        eights: bool,
        residuals: Option<ResidualScan>,
    ) -> DriftScan {
        p.refresh_packed();
        let n = p.n_owned;
        let inputs = DriftInputs {
            kick: KickInputs::of(
                (&p.force, &p.torque, &p.inv_mass, &p.inv_inertia, &p.frozen),
                0..n,
            ),
            id: &p.id,
            x_ref,
            take_lines: eights,
        };
        let out = (
            &mut p.x[..n],
            &mut p.v[..n],
            &mut p.omega[..n],
            &mut p.packed[..n],
        );
        let mut b = DriftArrays::of(out, &inputs);
        let c = DriftConstants {
            base: 7,
            dt: 0.1,
            lo: DVec3::new(f64::MIN, f64::MIN, 0.0),
            hi: DVec3::new(f64::MAX, f64::MAX, 10.0),
            residuals,
        };
        let avx512 = |deferred: bool, b: &mut DriftArrays| {
            // SAFETY: the caller checked for AVX-512.
            unsafe {
                if deferred {
                    eights::drift_block_avx512::<true>(b, &c, true)
                } else {
                    eights::drift_block_avx512::<false>(b, &c, true)
                }
            }
        };
        match (eights, deferred) {
            (true, _) => avx512(deferred, &mut b),
            (false, false) => drift_block_body::<false>(&mut b, &c, false),
            (false, true) => drift_block_body::<true>(&mut b, &c, false),
        }
    }

    #[cfg(target_arch = "x86_64")]
    /// The eight-particle AVX-512 path gives the bits and the scan of the
    /// lane path, on blocks of every length up to past three groups, with
    /// and without the deferred kick, particles frozen and gone bad, and
    /// the largest displacement, the box's bounds and a step just too long
    /// at each place of a group.
    #[test]
    fn eight_at_a_time_gives_the_bits_of_the_lanes() {
        if !crate::simd::isa::avx512() {
            eprintln!("no AVX-512 on this processor: the eight-particle path is not tested");
            return;
        }
        let bits = |p: &Particles| {
            let v = [&p.x[..], &p.v[..], &p.omega[..]].map(|a| {
                (a.iter())
                    .map(|q| q.to_array().map(f64::to_bits))
                    .collect::<Vec<_>>()
            });
            let packed: Vec<_> = (p.packed.iter())
                .map(|q| q.to_array().map(f64::to_bits))
                .collect();
            (v, packed)
        };
        for m in 0..=27 {
            for big in 0..m.max(1) {
                for (spoilt, fast, deferred) in (0..8).map(|c| (c & 1 > 0, c & 2 > 0, c & 4 > 0)) {
                    let (start, x_ref) = jumbled(m, big, spoilt, fast);
                    // A flow of every set of columns in turn (none: 0),
                    // its distance measured for every other length.
                    let flow = (m % 8 != 0).then(|| {
                        let flow = flow_of_columns(m % 8);
                        ResidualScan {
                            centre: flow.centre.filter(|_| m % 16 < 8),
                            ..flow
                        }
                    });
                    let (mut lanes, mut eights) = (start.clone(), start);
                    let want = one_block(&mut lanes, &x_ref, deferred, false, flow);
                    let got = one_block(&mut eights, &x_ref, deferred, true, flow);
                    let case = format!("{m} particles, {big} furthest, spoilt {spoilt}, fast {fast}, deferred {deferred}");
                    assert_eq!(got.bad, want.bad, "{case}");
                    assert_eq!(got.max_disp2.to_bits(), want.max_disp2.to_bits(), "{case}");
                    assert_eq!(got.displacements, want.displacements, "{case}");
                    assert_eq!(got.residuals, want.residuals, "{case}");
                    let spread = [got, want].map(|s| s.residual_spread2.to_bits());
                    assert_eq!(spread[0], spread[1], "{case}");
                    assert!(bits(&eights) == bits(&lanes), "{case}");
                    if let Some(f) = flow {
                        let n = lanes.n_owned;
                        let reference = residual_box(&lanes.x[..n], &x_ref, f.flow.matrix());
                        assert_eq!(want.residuals, reference, "{case}");
                    } else {
                        assert_eq!(want.residual_spread2, 0.0, "{case}");
                    }
                    // The cases test what they are meant to.
                    let frozen = lanes.frozen.get(big) == Some(&true);
                    let bad = (spoilt || fast && !frozen) && m > 0;
                    assert_eq!(want.bad.is_some(), bad, "{case}");
                    if m > 0 && !spoilt && !frozen {
                        let d = lanes.x[big] - x_ref[big];
                        assert_eq!(want.max_disp2, d.length_squared(), "{case}");
                        if fast {
                            assert_eq!(want.bad, Some((7 + big, lanes.id[big])), "{case}");
                        }
                    }
                }
            }
        }
    }

    /// Where a flow is fitted, the first half step finds the residuals'
    /// box and their largest squared distance from the centre as the
    /// rebuild rule's references do, particle by particle, over several
    /// blocks, for every set of columns of the flow (none: the
    /// displacements).
    #[test]
    fn the_drift_measures_the_residuals_as_the_rule_would() {
        for columns in 0..8 {
            let flow = flow_of_columns(columns);
            let (mut p, x_ref) = jumbled(3 * BLOCK + 37, 700, false, false);
            let scan = kick_drift(&mut p, 0.1, &x_ref, &DOMAIN, false, (&[], &[]), Some(flow));
            let (x, m) = (&p.x[..p.n_owned], flow.flow.matrix());
            assert_eq!(scan.residuals, residual_box(x, &x_ref, m), "{columns:03b}");
            let spread = spread2(x, &x_ref, m, flow.centre.expect("a centre"));
            assert_eq!(scan.residual_spread2.to_bits(), spread.to_bits());
            if columns == 0 {
                assert_eq!(scan.residuals, scan.displacements);
            } else {
                assert_ne!(scan.residuals, scan.displacements);
            }
        }
    }

    #[test]
    fn the_lowest_bad_id_is_found_across_lanes_and_the_last_particle() {
        // Ids by index: 1, 6, 2, 7, 3, 8, 4, 9, 5. Spoilt: index 1 (id 6,
        // a lane of the first group), 6 (id 4, the second group) and 8
        // (id 5, frozen, the one alone: a frozen particle is checked too).
        let (mut p, x_ref) = nine_spheres();
        p.v[1].z = f64::NAN;
        p.x[6].z = 20.0;
        p.x[8].z = -1.0;
        let scan = kick_drift(&mut p, 0.1, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, Some((6, 4)));
        // The NaN passed over in the box of the displacements, as the
        // pass over the positions does.
        assert!(p.x[1].z.is_nan());
        assert_eq!(scan.displacements, displacement_box(&p.x[..9], &x_ref));
        assert!(scan.displacements.0.is_finite() && scan.displacements.1.is_finite());
        let (mut p, x_ref) = nine_spheres();
        p.x[8].z = -1.0;
        let scan = kick_drift(&mut p, 0.1, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, Some((8, 5)));
    }

    #[test]
    fn a_particle_that_goes_bad_is_flagged_lowest_id_first() {
        // An infinite position along the periodic x axis (no bound there
        // but finiteness), a NaN angular velocity, and a particle leaving
        // through the closed z axis.
        type Spoil = fn(&mut Particles);
        let cases: [(usize, Spoil); 3] = [
            (0, |p| p.x[0].x = f64::INFINITY),
            (1, |p| p.omega[1].z = f64::NAN),
            (2, |p| p.v[2].z = -100.0),
        ];
        for (k, spoil) in cases {
            let (mut p, x_ref) = spheres();
            spoil(&mut p);
            let scan = kick_drift(&mut p, 0.1, &x_ref, &DOMAIN, false, (&[], &[]), None);
            assert_eq!(scan.bad, Some((k, p.id[k])), "case {k}");
        }
        let (mut p, x_ref) = spheres();
        for k in 0..3 {
            p.v[k].z = -100.0;
        }
        let scan = kick_drift(&mut p, 0.1, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, Some((1, 3)), "the lowest id of three");
    }

    #[test]
    fn a_particle_faster_than_half_its_radius_per_step_is_flagged() {
        // Radius 0.5: at most 0.25 per step. Along the periodic x axis,
        // where no bound of the box stops it.
        let dt = 0.1;
        let (mut p, x_ref) = spheres();
        p.v[1].x = 2.5; // exactly 0.25 per step: allowed
        p.v[2].y = -2.4;
        let scan = kick_drift(&mut p, dt, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, None);
        let (mut p, x_ref) = spheres();
        p.v[2].x = 2.6;
        let scan = kick_drift(&mut p, dt, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, Some((2, 5)));
        // A frozen particle never moves, whatever its velocity says.
        let (mut p, x_ref) = spheres();
        p.v[3].x = 1e4;
        let scan = kick_drift(&mut p, dt, &x_ref, &DOMAIN, false, (&[], &[]), None);
        assert_eq!(scan.bad, None);
    }
}
