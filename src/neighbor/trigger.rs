//! When the neighbour list must be rebuilt: the displacement rule.
//!
//! A list built with reach `R_p + R_q + pad + s` (`s` the skin) holds every
//! pair within that distance at the build. A pair it lacks was farther,
//! and comes within `R_p + R_q + pad` only if its separation changed by
//! more than `s`, that is if `|Δ_p − Δ_q| > s`, where `Δ_k = x_k − x_ref,k`
//! is particle `k`'s displacement since the build (a ghost moves with the
//! particle it images). For any point `c`, the same for every particle,
//! the triangle inequality gives
//!
//! ```text
//! |Δ_p − Δ_q| ≤ |Δ_p − c| + |Δ_q − c| ≤ 2 max_k |Δ_k − c|,
//! ```
//!
//! so the list holds every pair that can touch while `max_k |Δ_k − c| ≤
//! s/2` for some `c`. `c = 0` is the usual rule (LAMMPS's `neigh_modify
//! check yes`: any particle moved more than half the skin). Where that one
//! says rebuild, this rule also tries `c` = the middle of the box of the
//! displacements, which follows the bulk motion: a bed sliding as a whole
//! keeps its list. `max_k |Δ_k − c|` is at most the box's half-diagonal;
//! the first half step finds the box on its way (with the largest `|Δ_k|`,
//! reduced over the ranks in the step's one reduction), and `max_k |Δ_k −
//! c|` is measured (a pass over the particles) only where the
//! half-diagonal exceeds `s/2`.
//!
//! **A sheared bed.** In a chute the bed flows faster the higher it lies:
//! the displacements spread over the whole range of the flow's speeds,
//! though neighbours move nearly alike. Where the bed's mean flow was
//! fitted at the last rebuild ([`super::flow`]: `Δ ≈ a + k G x_ref` after
//! `k` steps, `G` zero along the periodic axes), the rule also bounds the
//! residuals `r_k = Δ_k − k G x_ref,k`. For a pair the list lacks, whose
//! separation `d₀` at the build exceeded `C + s` (`C = R_p + R_q + pad`),
//! the separation now is
//!
//! ```text
//! d = (I + k G) d₀ + r_p − r_q,     |d| ≥ (1 − k‖G‖) |d₀| − 2 max_k |r_k − c|
//! ```
//!
//! (an image's shift along a periodic axis drops out of `G d₀`, as `G`'s
//! columns there are zero; `‖G‖ ≤` its Frobenius norm). `|d| ≥ C` holds
//! while `2 max_k |r_k − c| ≤ s − k‖G‖ (C + s)`, and the right side is
//! least for the largest pair, `C + s = 2 R_max + pad + s`, the halo width.
//! The first half step finds the residuals' box as it finds the
//! displacements', and the step's one reduction takes both to every rank
//! ([`ResidualScan`]). Where a step's test goes past that box's
//! half-diagonal, the next step's first half also measures the residuals'
//! largest distance from the box's middle, which bounds their spread about
//! the next box's middle by the triangle inequality; only where neither
//! bound decides is the spread measured, with a pass and a reduction of
//! its own ([`residual_bound2`]: in the chute benchmark, 11 of its 2,000
//! steps; the rule rebuilds every 170 steps or so instead of every 62).
//!
//! What is fixed in space rather than carried with the bed (walls that
//! never move, the pours' exchange boxes) is found at a rebuild within the
//! skin of a particle, and stays out of its reach while the particle
//! itself has moved less than the skin: where a run has such walls or
//! pours, the rule also rebuilds when any particle has moved more than
//! [`FIXED_REACH`] of the skin. Without them (a bed in periodic or open
//! faces) nothing bounds how far the bed as a whole moves between
//! rebuilds: the ranks' halos and the periodic images move with it.
//!
//! A moving mesh listed at a rebuild within `R + m` of a particle (`m`
//! a multiple of the skin, [`crate::force::near_walls`]) stays out of the
//! reach of a particle farther than that while the particle's own
//! displacement plus the mesh's drift in its own frame since the rebuild
//! stays within [`FIXED_REACH`] of `m`: the rule rebuilds when `max |Δ|`
//! plus that drift passes it.
//!
//! The centres and boxes are measured afresh at each step that needs them,
//! from the positions alone, with minima and maxima (which do not depend
//! on the order they are taken in), and `G` is fitted in exact integer
//! sums: the same decision on any number of ranks and threads, and after a
//! restart (whose checkpoint holds the reference positions and `G`).

use super::BLOCK;
use glam::{DMat3, DVec3};
use rayon::prelude::*;

/// The share of the skin a particle may move from where the last rebuild
/// saw it before the next: a hair less than all of it, for the rounding of
/// the distances to what the rebuild found within the skin.
pub const FIXED_REACH: f64 = 1.0 - 1e-6;

/// The displacement rule for a skin `s` (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RebuildRule {
    skin: f64,
    /// Whether something fixed in space bounds each particle's own
    /// displacement by the skin.
    fixed_in_space: bool,
    /// The largest pair's reach at a build, `2 R_max + pad + s`.
    reach: f64,
    /// For moving meshes listed at the last build: the reach beyond a
    /// particle's radius they were listed within, and how far they have
    /// drifted since ([`crate::force::NearWalls::moving_meshes_drift`]).
    moving_meshes: Option<(f64, f64)>,
}

impl RebuildRule {
    /// The rule for skin `skin`, pairs reaching at most `reach` (the halo
    /// width, `2 R_max + pad + skin`), and whether walls or pours fixed in
    /// space are present.
    pub fn new(skin: f64, reach: f64, fixed_in_space: bool) -> Self {
        Self {
            skin,
            fixed_in_space,
            reach,
            moving_meshes: None,
        }
    }

    /// The same rule where moving meshes were listed within `reach` beyond
    /// a particle's radius at the last build, and have drifted by `drift`
    /// in their own frame since (`(reach, drift)`; `None`: none listed).
    pub fn with_moving_meshes(self, moving_meshes: Option<(f64, f64)>) -> Self {
        Self {
            moving_meshes,
            ..self
        }
    }

    /// Whether the list must be rebuilt, where `max2` is the largest
    /// squared displacement `max |Δ|²` of all ranks' particles,
    /// `spread2(half2)` gives `max |Δ − c|²` for the middle `c` of their
    /// box (or a bound of it, exact where the bound passes `half2`), `kg`
    /// is `k ‖G‖` for the fitted flow (0 where none was fitted), and
    /// `residual2(half2)` gives the same for the residuals `Δ − k G x_ref`.
    /// Rebuild when `max |Δ| + drift >` [`FIXED_REACH`] `· reach` with
    /// moving meshes listed, when `max |Δ| >` [`FIXED_REACH`] `· s` with
    /// something fixed in space, or else when every test of the module's
    /// documentation fails: `max |Δ| ≤ s/2`,
    /// `max |r − c| ≤ (s − k‖G‖ (C + s))/2` (where `kg > 0`),
    /// `max |Δ − c| ≤ s/2`, in that order. Each closure is
    /// called (collectively, on every rank alike) only when the tests
    /// before it did not decide.
    pub fn due(
        &self,
        max2: f64,
        kg: f64,
        spread2: impl FnOnce(f64) -> f64,
        residual2: impl FnOnce(f64) -> f64,
    ) -> bool {
        let half = 0.5 * self.skin;
        if let Some((reach, drift)) = self.moving_meshes {
            let left = FIXED_REACH * reach - drift;
            if left < 0.0 || max2 > left * left {
                return true;
            }
        }
        let fixed = FIXED_REACH * self.skin;
        if self.fixed_in_space && max2 > fixed * fixed {
            return true;
        }
        let half2 = half * half;
        if max2 <= half2 {
            return false;
        }
        // The flow's test first where it is fitted: it keeps a sheared
        // bed's list where the centre's does not, and its bound from the
        // residuals' box (a pass) mostly decides without the spread's pass.
        let allowed = self.foreseen_half(kg);
        let foreseen = kg > 0.0 && allowed > 0.0;
        !(foreseen && residual2(allowed * allowed) <= allowed * allowed || spread2(half2) <= half2)
    }

    /// The largest `max |r − c|` that keeps the list after `k` steps of a
    /// flow fitted with `k ‖G‖ = kg`: `(FIXED_REACH · s − kg (C + s))/2`
    /// (negative: none).
    pub fn foreseen_half(&self, kg: f64) -> f64 {
        0.5 * (FIXED_REACH * self.skin - kg * self.reach)
    }
}

/// The box of displacements `x_k − x_ref,k`: their smallest and largest
/// components, `(+∞, −∞)` for none. NaNs are passed over (the drift flags
/// such a particle). On the threads, block by block: a minimum and a
/// maximum are the same in any order.
pub fn displacement_box(x: &[DVec3], x_ref: &[DVec3]) -> (DVec3, DVec3) {
    residual_box(x, x_ref, DMat3::ZERO)
}

/// The box of the residuals `x_k − x_ref,k − m x_ref,k` (`m = k G`, the
/// displacement the fitted flow foresees per unit of reference position),
/// as [`displacement_box`]. The first half step finds the same box on its
/// way ([`crate::integrate::DriftScan::residuals`]); this is the reference
/// it is tested against.
pub fn residual_box(x: &[DVec3], x_ref: &[DVec3], m: DMat3) -> (DVec3, DVec3) {
    let flow = Foreseen::of(m);
    (x.par_chunks(BLOCK).zip(x_ref.par_chunks(BLOCK)))
        .map(|(x, x_ref)| {
            (x.iter().zip(x_ref)).fold(EMPTY_BOX, |(lo, hi), (x, r)| {
                // `d.min(lo)` is `d < lo ? d : lo` per component: a NaN
                // keeps the box.
                let d = flow.residual(*x, *r);
                (d.min(lo), d.max(hi))
            })
        })
        .reduce(|| EMPTY_BOX, merge_boxes)
}

/// No displacement seen.
const EMPTY_BOX: (DVec3, DVec3) = (DVec3::INFINITY, DVec3::NEG_INFINITY);

fn merge_boxes(a: (DVec3, DVec3), b: (DVec3, DVec3)) -> (DVec3, DVec3) {
    (a.0.min(b.0), a.1.max(b.1))
}

/// `m = k G`, the displacement a fitted flow foresees after `k` steps per
/// unit of reference position (its columns of periodic axes are zero:
/// [`super::flow`]), with which of its columns are not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Foreseen {
    m: DMat3,
    used: [bool; 3],
}

impl Foreseen {
    /// The flow `m`.
    pub fn of(m: DMat3) -> Self {
        Self {
            m,
            used: [0, 1, 2].map(|a| m.col(a) != DVec3::ZERO),
        }
    }

    /// The matrix `m`.
    pub fn matrix(&self) -> DMat3 {
        self.m
    }

    /// Which columns of `m` are not zero.
    pub fn used(&self) -> [bool; 3] {
        self.used
    }

    /// `x − x_ref − m x_ref`, `m x_ref` summed over the columns not zero,
    /// in axis order, each column times its component (`m_j x_ref,j`)
    /// taken from the sum in turn; the bits of `x − x_ref` for `m = 0`.
    /// Every path that computes a residual (the first half step's lanes
    /// and registers) goes through these operations in this order.
    #[inline]
    pub fn residual(&self, x: DVec3, x_ref: DVec3) -> DVec3 {
        let mut d = x - x_ref;
        if self.used[0] {
            d -= self.m.x_axis * x_ref.x;
        }
        if self.used[1] {
            d -= self.m.y_axis * x_ref.y;
        }
        if self.used[2] {
            d -= self.m.z_axis * x_ref.z;
        }
        d
    }
}

/// What the first half step measures for the rule's flow test, where a
/// flow is fitted ([`crate::integrate::kick_drift`]): the box of the
/// residuals of `flow`, and if a `centre` is given (a point the same on
/// every rank), their largest squared distance from it. The simulation
/// gives the middle of the last step's box, close to this step's, so
/// that the distance bounds the spread about this step's middle
/// ([`residual_bound2`]), and only where the last step's test went past
/// the box (a distance costs the drift more than a box).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidualScan {
    /// The flow `m = k G` at the step.
    pub flow: Foreseen,
    /// The point the distance is measured from, if it is.
    pub centre: Option<DVec3>,
}

/// The middle of a box of [`displacement_box`] (of all ranks), or 0 for
/// an empty one.
pub fn box_centre((lo, hi): (DVec3, DVec3)) -> DVec3 {
    if lo.cmple(hi).all() {
        0.5 * (lo + hi)
    } else {
        DVec3::ZERO
    }
}

/// `max_k |x_k − x_ref,k − m x_ref,k − c|²` (0 for none), on the threads
/// as [`displacement_box`].
pub fn spread2(x: &[DVec3], x_ref: &[DVec3], m: DMat3, c: DVec3) -> f64 {
    let flow = Foreseen::of(m);
    (x.par_chunks(BLOCK).zip(x_ref.par_chunks(BLOCK)))
        .map(|(x, x_ref)| {
            (x.iter().zip(x_ref)).fold(0.0, |s: f64, (x, r)| {
                s.max((flow.residual(*x, *r) - c).length_squared())
            })
        })
        .reduce(|| 0.0, f64::max)
}

/// A bound of `max_k |r_k − c|²` over all ranks' particles, `r_k = x_k −
/// x_ref,k − m x_ref,k` and `c` the middle of `(lo, hi)`, the box of the
/// `r_k` of all ranks (for `m = 0`, [`displacement_box`], which the first
/// half step finds on its way, [`crate::integrate::DriftScan::displacements`],
/// with the step's one reduction): the squared half-diagonal of the box if
/// that is at most `half2` (no pass over the particles), else the value
/// itself (a pass, and a reduction by `max_words`, the element-wise maximum
/// of words over the ranks, [`crate::parallel::comm::Comm::max_u64s`];
/// collective).
pub fn spread_bound2(
    (lo, hi): (DVec3, DVec3),
    x: &[DVec3],
    x_ref: &[DVec3],
    m: DMat3,
    half2: f64,
    max_words: &mut dyn FnMut(&mut [u64]),
) -> f64 {
    if !lo.cmple(hi).all() {
        return 0.0;
    }
    let half_diagonal2 = half_diagonal2((lo, hi));
    if half_diagonal2 <= half2 {
        return half_diagonal2;
    }
    let mut spread = [spread2(x, x_ref, m, box_centre((lo, hi))).to_bits()];
    max_words(&mut spread);
    f64::from_bits(spread[0])
}

/// [`spread_bound2`] for the residuals `r_k` of `m`, from what the first
/// half step measured of them over all ranks ([`ResidualScan`]): their box
/// `(lo, hi)`, and if it was measured, `about = (s2, c')` with `s2 =
/// max_k |r_k − c'|²`. Where
/// the box's half-diagonal does not pass `half2`, the triangle inequality
/// `max_k |r_k − c| ≤ √s2 + |c − c'|` for the box's middle `c` (widened by
/// a relative 10⁻¹², so that it bounds the value as computed), and only where
/// that does not pass either, the value (a pass and a reduction;
/// collective). Each bound is returned only where it passes `half2`, where
/// the value would pass it too: the rule decides as the value would, with
/// any `c'`.
pub fn residual_bound2(
    boxed: (DVec3, DVec3),
    about: Option<(f64, DVec3)>,
    x: &[DVec3],
    x_ref: &[DVec3],
    m: DMat3,
    half2: f64,
    max_words: &mut dyn FnMut(&mut [u64]),
) -> f64 {
    let (lo, hi) = boxed;
    if let Some((s2, c_prime)) = about.filter(|_| lo.cmple(hi).all()) {
        let bound = (s2.sqrt() + (box_centre(boxed) - c_prime).length()) * (1.0 + ROUNDING);
        if half_diagonal2(boxed) > half2 && bound * bound <= half2 {
            return bound * bound;
        }
    }
    spread_bound2(boxed, x, x_ref, m, half2, max_words)
}

/// The squared half-diagonal of a box, which bounds `max_k |d_k − c|²`
/// for the box's middle `c` (infinite for an empty box).
pub fn half_diagonal2((lo, hi): (DVec3, DVec3)) -> f64 {
    (0.5 * (hi - lo)).length_squared()
}

/// The relative widening of a bound computed in floating point, so that
/// it is not below the value computed otherwise: far above the few
/// roundings either takes (each 1.1·10⁻¹⁶ at most).
const ROUNDING: f64 = 1e-12;

/// A box of [`displacement_box`] as words whose element-wise maximum over
/// the ranks ([`crate::parallel::comm::Comm::max_u64s`]) is the box of all
/// ranks' particles ([`box_of_words`]): each value mapped to a word in the
/// order of the values, the minima negated first.
pub fn box_words((lo, hi): (DVec3, DVec3)) -> [u64; 6] {
    let lo = -lo;
    [lo.x, lo.y, lo.z, hi.x, hi.y, hi.z].map(ordered_word)
}

/// The box from the words of [`box_words`].
pub fn box_of_words(w: &[u64; 6]) -> (DVec3, DVec3) {
    let v = w.map(word_value);
    (-DVec3::new(v[0], v[1], v[2]), DVec3::new(v[3], v[4], v[5]))
}

/// A word whose unsigned order is the order of the values (`−0` just below
/// `+0`): negative values have every bit flipped, the others their sign
/// bit.
fn ordered_word(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// The value of an [`ordered_word`].
fn word_value(w: u64) -> f64 {
    f64::from_bits(if w >> 63 == 1 { w & !(1 << 63) } else { !w })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule's decision for displacements `ds` (from reference 0), no
    /// flow fitted.
    fn due(rule: RebuildRule, ds: &[DVec3]) -> bool {
        let zero = vec![DVec3::ZERO; ds.len()];
        due_with_flow(rule, ds, &zero, DMat3::ZERO)
    }

    /// The rule's decision for particles at `x`, built at `x_ref`, with
    /// the flow `m = k G` foreseen.
    fn due_with_flow(rule: RebuildRule, x: &[DVec3], x_ref: &[DVec3], m: DMat3) -> bool {
        let o = DMat3::ZERO;
        let max2 = spread2(x, x_ref, o, DVec3::ZERO);
        let kg = m.to_cols_array().iter().map(|v| v * v).sum::<f64>().sqrt();
        let exact = rule.due(
            max2,
            kg,
            |_| spread2(x, x_ref, o, box_centre(displacement_box(x, x_ref))),
            |_| spread2(x, x_ref, m, box_centre(residual_box(x, x_ref, m))),
        );
        // The bounds from the boxes decide as the values do (one rank:
        // the words are the maximum already), whatever point the residuals'
        // distance was measured from (the box's middle, 0, one far off),
        // or with none measured.
        let boxed = residual_box(x, x_ref, m);
        let points = [box_centre(boxed), DVec3::ZERO, DVec3::new(0.02, -0.5, 0.01)];
        for c_prime in points.map(Some).into_iter().chain([None]) {
            let about = c_prime.map(|c| (spread2(x, x_ref, m, c), c));
            let bounded = rule.due(
                max2,
                kg,
                |h2| spread_bound2(displacement_box(x, x_ref), x, x_ref, o, h2, &mut |_| ()),
                |h2| residual_bound2(boxed, about, x, x_ref, m, h2, &mut |_| ()),
            );
            assert_eq!(bounded, exact, "{x:?}, measured about {c_prime:?}");
        }
        exact
    }

    #[test]
    fn the_words_keep_the_order_of_the_values() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            0.5,
            1e300,
            f64::INFINITY,
        ];
        for w in values.windows(2) {
            assert!(
                ordered_word(w[0]) < ordered_word(w[1]),
                "{} < {}",
                w[0],
                w[1]
            );
        }
        for v in values {
            assert_eq!(word_value(ordered_word(v)).to_bits(), v.to_bits());
        }
    }

    #[test]
    fn the_maximum_of_the_words_is_the_box_of_all_particles() {
        let x = [
            DVec3::new(1.3, -0.1, 0.0),
            DVec3::new(1.05, 0.2, -0.4),
            DVec3::new(0.8, 0.0, 0.1),
        ];
        let x_ref = [DVec3::X; 3];
        let all = displacement_box(&x, &x_ref);
        assert_eq!(all.0, DVec3::new(1.0 - 1.2, -0.1, -0.4));
        assert_eq!(all.1, DVec3::new(1.3 - 1.0, 0.2, 0.1));
        // Two "ranks", one with no particles, reduced by the element-wise
        // maximum of their words.
        for (a, b) in [(&x[..1], &x[1..]), (&x[..], &x[..0])] {
            let (wa, wb) = (
                box_words(displacement_box(a, &x_ref)),
                box_words(displacement_box(b, &x_ref)),
            );
            let words: [u64; 6] = std::array::from_fn(|i| wa[i].max(wb[i]));
            assert_eq!(box_of_words(&words), all);
        }
        assert_eq!(box_centre(displacement_box(&[], &[])), DVec3::ZERO);
    }

    #[test]
    fn a_bed_moving_together_waits_for_the_whole_skin() {
        let (skin, rule) = (0.1, RebuildRule::new(0.1, 1.1, true));
        // Both particles moved about 0.08 along x: half the skin is
        // passed, but their separation changed by less than 0.002.
        let ds = [DVec3::new(0.08, 0.0, 0.0), DVec3::new(0.079, 0.001, 0.0)];
        assert!(!due(rule, &ds));
        // With a particle that stayed (a frozen base): no separation
        // changed by more than 0.08 either, though the usual rule would
        // rebuild; with one that moved 0.03 against the flow, 0.11 did.
        assert!(!due(rule, &[ds[0], ds[1], DVec3::ZERO]));
        assert!(due(rule, &[ds[0], ds[1], DVec3::new(-0.03, 0.0, 0.0)]));
        // Past FIXED_REACH of the skin, a wall might be reached.
        assert!(due(rule, &[DVec3::new(skin, 0.0, 0.0); 2]));
        assert!(!due(rule, &[DVec3::new(0.999 * skin, 0.0, 0.0); 2]));
    }

    #[test]
    fn a_listed_moving_mesh_rebuilds_when_its_drift_and_a_displacement_pass_its_reach() {
        // Listed within 0.2 beyond the radius: a particle's 0.05 and the
        // mesh's 0.14 stay within it, 0.05 and 0.151 do not, nor does a
        // drift past the reach alone; a bed moving together past the skin
        // with nothing fixed in space rebuilds only for the mesh.
        let ds = [DVec3::new(0.05, 0.0, 0.0), DVec3::new(0.05, 0.0, 0.0)];
        for fixed in [true, false] {
            let rule = |m| RebuildRule::new(0.1, 1.1, fixed).with_moving_meshes(m);
            assert!(!due(rule(Some((0.2, 0.14))), &ds));
            assert!(due(rule(Some((0.2, 0.151))), &ds));
            assert!(due(rule(Some((0.2, 0.2001))), &[DVec3::ZERO]));
            assert!(!due(rule(None), &ds));
            let together = [DVec3::new(0.15, 0.0, 0.0); 2];
            assert_eq!(due(rule(None), &together), fixed);
            assert_eq!(due(rule(Some((0.2, 0.04))), &together), fixed);
            assert!(due(rule(Some((0.2, 0.06))), &together));
        }
    }

    #[test]
    fn particles_moving_apart_by_more_than_the_skin_rebuild() {
        let rule = RebuildRule::new(0.1, 1.1, true);
        for (a, expected) in [(0.049, false), (0.051, true)] {
            // Two particles moving in opposite directions: 2a apart, with
            // a third between them carried along the bulk motion or not.
            for bulk in [DVec3::ZERO, DVec3::new(0.0, 0.03, 0.0)] {
                let ds = [
                    bulk + DVec3::new(a, 0.0, 0.0),
                    bulk - DVec3::new(a, 0.0, 0.0),
                    bulk,
                ];
                assert_eq!(due(rule, &ds), expected, "a = {a}, bulk = {bulk}");
            }
        }
    }

    #[test]
    fn the_spread_is_asked_for_only_past_half_the_skin() {
        let rule = RebuildRule::new(0.1, 1.1, true);
        let asked = std::cell::Cell::new(0);
        let spread = |_| {
            asked.set(asked.get() + 1);
            0.0
        };
        let residual = |_| -> f64 { panic!("the residuals asked for") };
        assert!(!rule.due(0.04 * 0.04, 0.0, spread, residual));
        assert!(rule.due(0.1 * 0.1, 0.0, spread, residual));
        assert_eq!(asked.get(), 0);
        assert!(!rule.due(0.06 * 0.06, 0.0, spread, residual));
        assert_eq!(asked.get(), 1);
        // With a flow fitted, its residuals first: where they keep the
        // list, the spread is not asked for.
        let (kept, lost) = (|_| 0.04 * 0.04, |_| 0.05 * 0.05);
        let no_spread = |_| -> f64 { panic!("the spread asked for") };
        assert!(!rule.due(0.06 * 0.06, 0.001, no_spread, kept));
        // 0.05 is past (0.1 − 0.001 · 1.1)/2: the spread decides.
        assert!(!rule.due(0.06 * 0.06, 0.001, spread, lost));
        assert_eq!(asked.get(), 2);
        let wide = |_| 0.06 * 0.06;
        assert!(rule.due(0.06 * 0.06, 0.001, wide, lost));
        // A flow so steep that nothing is allowed: not asked.
        assert!(rule.due(0.06 * 0.06, 0.1, wide, residual));
        // Without walls or pours fixed in space, a particle may move
        // farther than the skin.
        let free = RebuildRule::new(0.1, 1.1, false);
        assert!(!free.due(0.5 * 0.5, 0.0, |_| 0.0, residual));
        assert!(free.due(0.5 * 0.5, 0.0, wide, residual));
    }

    #[test]
    fn the_bound_holds_for_every_pair() {
        // Pseudo-random displacements about a drift: whenever the rule
        // keeps the list, no two particles' displacements differ by more
        // than the skin.
        let rule = RebuildRule::new(0.1, 1.1, true);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut kept_by_centre = 0;
        for _ in 0..4000 {
            let drift = DVec3::new(next(), next(), next()) * 0.15;
            let ds: Vec<DVec3> = (0..6)
                .map(|_| drift + DVec3::new(next(), next(), next()) * 0.06)
                .collect();
            if !due(rule, &ds) {
                let max2 = spread2(&ds, &[DVec3::ZERO; 6], DMat3::ZERO, DVec3::ZERO);
                kept_by_centre += usize::from(max2 > 0.05 * 0.05);
                for p in &ds {
                    for q in &ds {
                        assert!((*p - *q).length() <= 0.1, "{p} {q}");
                    }
                }
            }
        }
        assert!(
            kept_by_centre > 100,
            "only {kept_by_centre} sets kept past the usual rule"
        );
    }

    /// Whenever the rule keeps a list with a flow foreseen, no pair it
    /// lacks (farther than `C + s` at the build) has come within `C`:
    /// beds of pseudo-random reference positions, sheared by the flow
    /// (and by more than it foresees), slid as a whole and shaken.
    #[test]
    fn a_sheared_bed_keeps_its_list_only_while_no_missing_pair_can_touch() {
        let (skin, c) = (0.1, 1.0);
        let rule = RebuildRule::new(skin, c + skin, false);
        let mut state = 0x5851_f42d_4c95_7f2du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let (mut kept, mut kept_by_flow) = (0, 0);
        for _ in 0..600 {
            let n = 40;
            let x_ref: Vec<DVec3> = (0..n)
                .map(|_| DVec3::new(next(), next(), next()) * 5.0)
                .collect();
            // The flow foreseen: a shear of x along z, and the one that
            // happened, up to 40 % off, with a slide and some noise.
            let shear = 0.03 * next();
            let m = DMat3::from_cols(DVec3::ZERO, DVec3::ZERO, DVec3::new(shear, 0.0, 0.0));
            let actual = shear * (1.0 + 0.8 * next());
            let slide = DVec3::new(next(), next(), next()) * 0.4;
            let noise = 0.05 * (next() + 0.5);
            let x: Vec<DVec3> = (x_ref.iter())
                .map(|r| {
                    let shake = DVec3::new(next(), next(), next()) * noise;
                    *r + slide + DVec3::new(actual * r.z, 0.0, 0.0) + shake
                })
                .collect();
            if due_with_flow(rule, &x, &x_ref, m) {
                continue;
            }
            kept += 1;
            let zero = DMat3::ZERO;
            let spread = spread2(&x, &x_ref, zero, box_centre(residual_box(&x, &x_ref, zero)));
            kept_by_flow += usize::from(spread > 0.25 * skin * skin);
            for p in 0..n {
                for q in 0..n {
                    if (x_ref[p] - x_ref[q]).length() > c + skin {
                        let d = (x[p] - x[q]).length();
                        assert!(d >= c, "pair {p}, {q}: {d} after the rule kept the list");
                    }
                }
            }
        }
        assert!(
            kept_by_flow > 20,
            "{kept_by_flow} of {kept} kept by the flow alone"
        );
    }
}
