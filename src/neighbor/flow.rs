//! The bed's mean flow across the open axes: a displacement gradient fitted
//! at each rebuild, which lets the rebuild rule ([`super::trigger`]) keep
//! the list while a sheared bed moves as the fit foresees.
//!
//! At a rebuild, the displacements `Δ_k = x_k − x_ref,k` the particles made
//! since the last one are fitted by least squares to an affine field of
//! their reference positions along the axes that are not periodic,
//!
//! ```text
//! Δ_k ≈ a + G x_ref,k,      G's columns of periodic axes zero,
//! ```
//!
//! and `G` divided by the steps the fit spans is the gradient per step
//! foreseen until the next rebuild. In a chute, whose bed flows along `x`
//! faster the higher it lies, `G` is the shear `∂Δ_x/∂z`; a bed at rest or
//! sliding as a whole has `G = 0`. A gradient along a periodic axis would
//! not be periodic, so those columns stay zero: an image's shift `L` then
//! adds nothing (`G L = 0`), which the rule's bound needs.
//!
//! The fit must come out the same to the bit on any number of ranks and
//! threads, and after a restart (which reads `G` from the checkpoint): its
//! sums are taken exactly, in integers. Each position is rounded to a grid
//! of 2¹² steps across the box ([`POSITION_STEPS`]), each displacement to
//! 2¹⁰ steps a skin ([`DISPLACEMENT_STEPS`], at most ±2²⁰ steps), and the
//! products are summed as 64-bit integers modulo 2⁶⁴, whose sum is the same
//! in any order (exact for up to 2³⁰ particles; past that a sum may wrap,
//! which gives a poor gradient, the same on every rank, never a wrong
//! rebuild). The rounding costs the fit nothing it needs: the rule's bound
//! holds for any `G` (see [`super::trigger`]), and a better fit only keeps
//! the list longer.

use super::BLOCK;
use crate::geometry::domain::Domain;
use crate::parallel::comm::Comm;
use glam::{DMat3, DVec3};
use rayon::prelude::*;

/// Grid steps across the box's edge along an open axis, for the fit's
/// positions.
pub const POSITION_STEPS: f64 = 4096.0;
/// Grid steps a skin, for the fit's displacements.
pub const DISPLACEMENT_STEPS: f64 = 1024.0;
/// The largest displacement in grid steps (±2²⁰, a thousand skins); a
/// larger one is taken at this value.
const DISPLACEMENT_CAP: i64 = 1 << 20;

/// The sums of the fit, in grid steps: the count, `Σ x_j`, `Σ x_i x_j`
/// (`i ≤ j`), `Σ Δ_c`, `Σ Δ_c x_j`, for the three axes (an axis that is
/// periodic contributes 0).
const WORDS: usize = 1 + 3 + 6 + 3 + 9;

/// The integer sums of a part of the particles (each product summed modulo
/// 2⁶⁴).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Moments([u64; WORDS]);

impl Moments {
    const ZERO: Self = Self([0; WORDS]);

    /// The sums of one particle, `q` its grid position along the open axes
    /// (0 along the periodic ones) and `d` its grid displacement.
    fn of(q: [i64; 3], d: [i64; 3]) -> Self {
        let mut w = [0u64; WORDS];
        w[0] = 1;
        let mut at = 1;
        for v in q {
            w[at] = v as u64;
            at += 1;
        }
        for i in 0..3 {
            for j in i..3 {
                w[at] = q[i].wrapping_mul(q[j]) as u64;
                at += 1;
            }
        }
        for v in d {
            w[at] = v as u64;
            at += 1;
        }
        for c in d {
            for v in q {
                w[at] = c.wrapping_mul(v) as u64;
                at += 1;
            }
        }
        Self(w)
    }

    fn add(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a = a.wrapping_add(b);
        }
        self
    }

    /// The words as signed sums.
    fn signed(&self) -> [f64; WORDS] {
        self.0.map(|w| w as i64 as f64)
    }
}

/// How positions and displacements are put on the fit's grid.
#[derive(Debug, Clone, Copy)]
struct Grid {
    lo: DVec3,
    /// Grid steps per unit length along each axis (0 along periodic axes).
    per_length: DVec3,
    /// Grid steps per unit displacement.
    per_displacement: f64,
}

impl Grid {
    fn new(domain: &Domain, skin: f64) -> Self {
        let length = domain.length();
        let per_length = DVec3::from_array(std::array::from_fn(|a| {
            if domain.periodic[a] || length[a].is_nan() || length[a] <= 0.0 {
                0.0
            } else {
                POSITION_STEPS / length[a]
            }
        }));
        Self {
            lo: domain.lo,
            per_length,
            per_displacement: DISPLACEMENT_STEPS / skin,
        }
    }

    /// Round `v` to a whole number of steps, within `±cap`; NaN gives 0.
    fn steps(v: f64, cap: i64) -> i64 {
        (v.round() as i64).clamp(-cap, cap)
    }

    fn position(&self, x: DVec3) -> [i64; 3] {
        let q = (x - self.lo) * self.per_length;
        // Twice the box on either side at most: a particle past an open
        // face is lost or flagged before long.
        let cap = 2 * POSITION_STEPS as i64;
        [q.x, q.y, q.z].map(|v| Self::steps(v, cap))
    }

    fn displacement(&self, d: DVec3) -> [i64; 3] {
        let q = d * self.per_displacement;
        [q.x, q.y, q.z].map(|v| Self::steps(v, DISPLACEMENT_CAP))
    }
}

/// The displacement gradient per step of the particles at `x`, which were
/// at `x_ref` (this rank's owned particles, the first `x_ref.len()` of
/// `x`) `steps` steps ago: the least-squares fit of the module's
/// documentation, over all ranks' particles, divided by `steps`. Zero where
/// there is nothing to fit (no step, no open axis, the particles all in one
/// plane across it, or a fit so steep that it would not help). The same
/// bits on any number of ranks and threads. Collective.
pub fn fit_gradient(
    x: &[DVec3],
    x_ref: &[DVec3],
    domain: &Domain,
    skin: f64,
    steps: u64,
    comm: &dyn Comm,
) -> DMat3 {
    if steps == 0 || domain.periodic.iter().all(|&p| p) {
        return DMat3::ZERO;
    }
    let grid = Grid::new(domain, skin);
    let local = (x[..x_ref.len()].par_chunks(BLOCK))
        .zip(x_ref.par_chunks(BLOCK))
        .map(|(x, x_ref)| {
            (x.iter().zip(x_ref)).fold(Moments::ZERO, |m, (x, r)| {
                m.add(Moments::of(grid.position(*r), grid.displacement(*x - *r)))
            })
        })
        .reduce(|| Moments::ZERO, Moments::add);
    let sums = sum_words(comm, local);
    let g = solve(&sums);
    // Back from grid steps: Δ in units of 1/per_displacement, x in units
    // of 1/per_length.
    let g = DMat3::from_cols_array_2d(&std::array::from_fn(|j| {
        std::array::from_fn(|c| g[c][j] * grid.per_length[j] / grid.per_displacement / steps as f64)
    }));
    if g.to_cols_array().iter().all(|v| v.is_finite()) {
        g
    } else {
        DMat3::ZERO
    }
}

/// The sums of all ranks, word by word modulo 2⁶⁴, in one reduction
/// ([`pieces`], [`from_pieces`]).
fn sum_words(comm: &dyn Comm, local: Moments) -> Moments {
    if comm.size() == 1 {
        return local;
    }
    let mut p = pieces(&local);
    comm.sum_f64(&mut p);
    from_pieces(&p)
}

/// Each word as four 16-bit pieces in doubles: sums of the pieces of up
/// to 2³⁷ parts are exact, in any order.
fn pieces(m: &Moments) -> Vec<f64> {
    (m.0.iter())
        .flat_map(|&w| (0..4).map(move |k| ((w >> (16 * k)) & 0xffff) as f64))
        .collect()
}

/// The words, modulo 2⁶⁴, from sums of [`pieces`].
fn from_pieces(p: &[f64]) -> Moments {
    let mut out = Moments::ZERO;
    for (w, p) in out.0.iter_mut().zip(p.chunks(4)) {
        *w = (p.iter().enumerate()).fold(0u64, |w, (k, &v)| {
            w.wrapping_add((v as u64).wrapping_shl(16 * k as u32))
        });
    }
    out
}

/// `G` in grid steps (`g[c][j] = ∂Δ_c/∂x_j`) from the sums: the normal
/// equations of the affine fit, centred, over the axes whose positions
/// spread (the others' columns zero). Zero if the sums do not fix it.
fn solve(m: &Moments) -> [[f64; 3]; 3] {
    let s = m.signed();
    let n = s[0];
    let zero = [[0.0; 3]; 3];
    if n < 2.0 {
        return zero;
    }
    let sx = [s[1], s[2], s[3]];
    let mut sxx = [[0.0; 3]; 3];
    let mut at = 4;
    for i in 0..3 {
        for j in i..3 {
            sxx[i][j] = s[at] - sx[i] * sx[j] / n;
            sxx[j][i] = sxx[i][j];
            at += 1;
        }
    }
    let sd = [s[10], s[11], s[12]];
    let mut sdx = [[0.0; 3]; 3];
    for (c, row) in sdx.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = s[13 + 3 * c + j] - sd[c] * sx[j] / n;
        }
    }
    // The axes whose positions spread by more than a grid step.
    let axes: Vec<usize> = (0..3).filter(|&a| sxx[a][a] > n).collect();
    if axes.is_empty() {
        return zero;
    }
    let a: Vec<Vec<f64>> = (axes.iter())
        .map(|&i| axes.iter().map(|&j| sxx[i][j]).collect())
        .collect();
    let Some(inv) = invert(&a) else {
        return zero;
    };
    let mut g = zero;
    for c in 0..3 {
        for (jj, &j) in axes.iter().enumerate() {
            g[c][j] = (0..axes.len())
                .map(|ii| sdx[c][axes[ii]] * inv[ii][jj])
                .sum();
        }
    }
    g
}

/// The inverse of a symmetric positive matrix of size 1 to 3, by
/// cofactors, or `None` if it is near singular.
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let m = a.len();
    let at = |i: usize, j: usize| a[i % m][j % m];
    let det = match m {
        1 => a[0][0],
        2 => a[0][0] * a[1][1] - a[0][1] * a[1][0],
        _ => (0..3)
            .map(|j| a[0][j] * (at(1, j + 1) * at(2, j + 2) - at(1, j + 2) * at(2, j + 1)))
            .sum(),
    };
    let scale: f64 = (0..m).map(|i| a[i][i]).product();
    if det.is_nan() || det <= 1e-9 * scale {
        return None;
    }
    Some(match m {
        1 => vec![vec![1.0 / det]],
        2 => vec![
            vec![a[1][1] / det, -a[0][1] / det],
            vec![-a[1][0] / det, a[0][0] / det],
        ],
        _ => (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| {
                        (at(j + 1, i + 1) * at(j + 2, i + 2) - at(j + 1, i + 2) * at(j + 2, i + 1))
                            / det
                    })
                    .collect()
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::comm::SerialComm;

    fn open_box() -> Domain {
        Domain {
            lo: DVec3::ZERO,
            hi: DVec3::new(4.0, 2.0, 6.0),
            periodic: [true, true, false],
        }
    }

    /// Reference positions spread through the box (a fixed pseudo-random walk).
    fn positions(n: usize, domain: &Domain) -> Vec<DVec3> {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| domain.lo + domain.length() * DVec3::new(next(), next(), next()))
            .collect()
    }

    #[test]
    fn a_shear_along_the_open_axis_is_found() {
        let d = open_box();
        let x_ref = positions(4000, &d);
        // 0.02 a unit of height in 40 steps, plus a slide the fit leaves
        // to the rule's centre, and a dependence on x that it must not
        // take (x is periodic).
        let x: Vec<DVec3> = (x_ref.iter())
            .map(|r| *r + DVec3::new(0.3 + 0.02 * r.z + 0.001 * r.x, 0.0, 0.0))
            .collect();
        let g = fit_gradient(&x, &x_ref, &d, 0.1, 40, &SerialComm);
        // ∂Δ_x/∂z per step, within the grids' rounding (a displacement
        // step is 1e-4, a position step 1.5e-3).
        assert!((g.z_axis.x - 0.02 / 40.0).abs() < 2e-3 * 0.02 / 40.0, "{g}");
        for (c, v) in g.to_cols_array().iter().enumerate() {
            if c != 6 {
                assert_eq!(*v, 0.0, "column-major entry {c} of {g}");
            }
        }
    }

    #[test]
    fn the_sums_are_the_same_in_any_order() {
        let d = Domain {
            periodic: [false; 3],
            ..open_box()
        };
        let x_ref = positions(3000, &d);
        let x: Vec<DVec3> = (x_ref.iter())
            .map(|r| *r + DVec3::new(1e-3 * r.z * r.z, -2e-3 * r.x, 5e-4 * r.y))
            .collect();
        let grid = Grid::new(&d, 0.1);
        let sum = |order: &mut dyn Iterator<Item = usize>| {
            order.fold(Moments::ZERO, |m, k| {
                m.add(Moments::of(
                    grid.position(x_ref[k]),
                    grid.displacement(x[k] - x_ref[k]),
                ))
            })
        };
        let forward = sum(&mut (0..3000));
        assert_eq!(forward, sum(&mut (0..3000).rev()));
        assert_eq!(forward, sum(&mut (0..3000).map(|k| (k * 7) % 3000)));
        // The ranks' reduction: the sums of the pieces give the sum of
        // the words, carries and wraps included.
        let (a, b) = (sum(&mut (0..1500)), sum(&mut (1500..3000)));
        let joined: Vec<f64> = (pieces(&a).iter().zip(pieces(&b)))
            .map(|(u, v)| u + v)
            .collect();
        assert_eq!(from_pieces(&joined), forward);
        let big = Moments([u64::MAX - 5; WORDS]);
        let joined: Vec<f64> = (pieces(&big).iter().zip(pieces(&a)))
            .map(|(u, v)| u + v)
            .collect();
        assert_eq!(from_pieces(&joined), big.add(a));
        // A full gradient on three open axes.
        let g = fit_gradient(&x, &x_ref, &d, 0.1, 1, &SerialComm);
        assert!(
            (g.y_axis.z - 5e-4).abs() < 5e-6 && (g.x_axis.y + 2e-3).abs() < 5e-6,
            "{g}"
        );
    }

    #[test]
    fn nothing_to_fit_gives_zero() {
        let d = open_box();
        let x_ref = positions(100, &d);
        let x: Vec<DVec3> = x_ref
            .iter()
            .map(|r| *r + DVec3::new(0.0, 0.0, 0.01 * r.z))
            .collect();
        assert_eq!(
            fit_gradient(&x, &x_ref, &d, 0.1, 0, &SerialComm),
            DMat3::ZERO
        );
        let periodic = Domain {
            periodic: [true; 3],
            ..d
        };
        assert_eq!(
            fit_gradient(&x, &x_ref, &periodic, 0.1, 5, &SerialComm),
            DMat3::ZERO
        );
        // All at one height: no gradient along z can be fitted.
        let flat: Vec<DVec3> = x_ref.iter().map(|r| DVec3::new(r.x, r.y, 1.0)).collect();
        assert_eq!(
            fit_gradient(&flat, &flat, &d, 0.1, 5, &SerialComm),
            DMat3::ZERO
        );
        assert_eq!(fit_gradient(&[], &[], &d, 0.1, 5, &SerialComm), DMat3::ZERO);
    }
}
