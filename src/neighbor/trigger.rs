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
//! displacements, which follows the bulk motion: in a chute the bed slides
//! over its fixed base, every grain moving much the same way, and the
//! displacements spread over about half the range their lengths do (the
//! chute benchmark rebuilds 32 times in 2,000 steps instead of 59).
//! `max_k |Δ_k − c|` is at most the box's half-diagonal; the first half
//! step finds the box on its way (with the largest `|Δ_k|`, reduced over
//! the ranks in the step's one reduction), and `max_k |Δ_k − c|` is
//! measured (a pass over the particles) only where the half-diagonal
//! exceeds `s/2`.
//!
//! What is fixed in space rather than carried with the bed (walls that
//! never move, the subdomains' edges, the pours' exchange boxes) is found
//! at a rebuild within the skin of a particle, and stays out of its reach
//! while the particle itself has moved less than the skin: the rule also
//! rebuilds when any particle has moved more than [`FIXED_REACH`] of the
//! skin.
//!
//! The centre is measured afresh at each step that needs it, from the
//! positions alone, with minima and maxima (which do not depend on the
//! order they are taken in): the same decision on any number of ranks and
//! threads, and after a restart (whose checkpoint holds the reference
//! positions).

use super::BLOCK;
use glam::DVec3;
use rayon::prelude::*;

/// The share of the skin a particle may move from where the last rebuild
/// saw it before the next: a hair less than all of it, for the rounding of
/// the distances to what the rebuild found within the skin.
pub const FIXED_REACH: f64 = 1.0 - 1e-6;

/// The displacement rule for a skin `s` (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RebuildRule {
    skin: f64,
}

impl RebuildRule {
    /// The rule for skin `skin`.
    pub fn new(skin: f64) -> Self {
        Self { skin }
    }

    /// Whether the list must be rebuilt, where `max2` is the largest
    /// squared displacement `max |Δ|²` of all ranks' particles and
    /// `spread2(c)` gives `max |Δ − c|²` for the middle `c` of their box:
    /// when `min(max |Δ|, max |Δ − c|) > s/2`, or `max |Δ| >` [`FIXED_REACH`]
    /// `· s`. `spread2` is called (collectively, on every rank alike) only
    /// when `max |Δ|` alone does not decide.
    pub fn due(&self, max2: f64, spread2: impl FnOnce() -> f64) -> bool {
        let half = 0.5 * self.skin;
        let fixed = FIXED_REACH * self.skin;
        if max2 > fixed * fixed {
            return true;
        }
        max2 > half * half && spread2() > half * half
    }
}

/// The box of displacements `x_k − x_ref,k`: their smallest and largest
/// components, `(+∞, −∞)` for none. NaNs are passed over (the drift flags
/// such a particle). On the threads, block by block: a minimum and a
/// maximum are the same in any order.
pub fn displacement_box(x: &[DVec3], x_ref: &[DVec3]) -> (DVec3, DVec3) {
    let empty = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    (x.par_chunks(BLOCK).zip(x_ref.par_chunks(BLOCK)))
        .map(|(x, x_ref)| {
            // Two running boxes, even and odd particles, so that each
            // compare waits on the one two particles back.
            let mut b = [empty; 2];
            for (k, (x, r)) in x.iter().zip(x_ref).enumerate() {
                let (d, b) = (*x - *r, &mut b[k % 2]);
                *b = (b.0.min(d), b.1.max(d));
            }
            (b[0].0.min(b[1].0), b[0].1.max(b[1].1))
        })
        .reduce(|| empty, |a, b| (a.0.min(b.0), a.1.max(b.1)))
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

/// `max_k |x_k − x_ref,k − c|²` (0 for none), on the threads as
/// [`displacement_box`].
pub fn spread2(x: &[DVec3], x_ref: &[DVec3], c: DVec3) -> f64 {
    (x.par_chunks(BLOCK).zip(x_ref.par_chunks(BLOCK)))
        .map(|(x, x_ref)| {
            (x.iter().zip(x_ref)).fold(0.0, |m: f64, (x, r)| m.max((*x - *r - c).length_squared()))
        })
        .reduce(|| 0.0, f64::max)
}

/// A bound of `max_k |Δ_k − c|²` over all ranks' particles, `Δ_k = x_k −
/// x_ref,k` and `c` the middle of `(lo, hi)`, the box of the `Δ_k` of all
/// ranks ([`displacement_box`], which the first half step finds on its way,
/// [`crate::integrate::DriftScan::displacements`], with the step's one
/// reduction): the squared half-diagonal of the box if that is at most
/// `half2` (no pass over the particles), else the value itself (a pass,
/// and a reduction by `max_words`, the element-wise maximum of words over
/// the ranks, [`crate::parallel::comm::Comm::max_u64s`]; collective).
pub fn spread_bound2(
    (lo, hi): (DVec3, DVec3),
    x: &[DVec3],
    x_ref: &[DVec3],
    half2: f64,
    max_words: &mut dyn FnMut(&mut [u64]),
) -> f64 {
    if !lo.cmple(hi).all() {
        return 0.0;
    }
    let half_diagonal2 = (0.5 * (hi - lo)).length_squared();
    if half_diagonal2 <= half2 {
        return half_diagonal2;
    }
    let mut spread = [spread2(x, x_ref, box_centre((lo, hi))).to_bits()];
    max_words(&mut spread);
    f64::from_bits(spread[0])
}

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

    /// The rule's decision for displacements `ds` (from reference 0).
    fn due(rule: RebuildRule, ds: &[DVec3]) -> bool {
        let zero = vec![DVec3::ZERO; ds.len()];
        let max2 = spread2(ds, &zero, DVec3::ZERO);
        let exact = rule.due(max2, || {
            spread2(ds, &zero, box_centre(displacement_box(ds, &zero)))
        });
        // The bound from the box decides as the value does (one rank:
        // the words are the maximum already).
        let half2 = 0.25 * rule.skin * rule.skin;
        let bounded = rule.due(max2, || {
            spread_bound2(displacement_box(ds, &zero), ds, &zero, half2, &mut |_| ())
        });
        assert_eq!(bounded, exact, "{ds:?}");
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
        let (skin, rule) = (0.1, RebuildRule::new(0.1));
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
    fn particles_moving_apart_by_more_than_the_skin_rebuild() {
        let rule = RebuildRule::new(0.1);
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
        let rule = RebuildRule::new(0.1);
        let asked = std::cell::Cell::new(0);
        let spread = || {
            asked.set(asked.get() + 1);
            0.0
        };
        assert!(!rule.due(0.04 * 0.04, spread));
        assert!(rule.due(0.1 * 0.1, spread));
        assert_eq!(asked.get(), 0);
        assert!(!rule.due(0.06 * 0.06, spread));
        assert_eq!(asked.get(), 1);
    }

    #[test]
    fn the_bound_holds_for_every_pair() {
        // Pseudo-random displacements about a drift: whenever the rule
        // keeps the list, no two particles' displacements differ by more
        // than the skin.
        let rule = RebuildRule::new(0.1);
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
                let max2 = spread2(&ds, &[DVec3::ZERO; 6], DVec3::ZERO);
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
}
