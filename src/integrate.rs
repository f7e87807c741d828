//! Velocity Verlet for translation and rotation.
//!
//! Per step: `v += ½Δt F/m`, `ω += ½Δt τ/I`, `x += Δt v` ([`kick_drift`]);
//! forces at the new positions, evaluated with the half-step velocities
//! `v(t+½Δt)`, `ω(t+½Δt)` (as LAMMPS' `nve/sphere` does); then
//! `v += ½Δt F/m`, `ω += ½Δt τ/I` ([`kick`]). Frozen particles never move.

use crate::domain::Domain;
use crate::neighbor::BLOCK;
use crate::particles::Particles;
use glam::{DVec3, DVec4};
use rayon::prelude::*;

/// What the first half step saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftScan {
    /// Largest squared displacement since the last neighbour-list build.
    pub max_disp2: f64,
    /// The lowest-id particle with a non-finite state or outside the domain
    /// along a non-periodic axis: `(local index, id)`.
    pub bad: Option<(usize, u64)>,
}

/// First half kick and drift of the owned, mobile particles; measures the
/// displacement from `x_ref` and flags particles that went bad. Refreshes
/// the owned particles' [`Particles::packed`] images on the way (an owned
/// particle's shift is zero: its image is `x` itself).
pub fn kick_drift(p: &mut Particles, dt: f64, x_ref: &[DVec3], domain: &Domain) -> DriftScan {
    let n = p.n_owned;
    if p.packed.len() < n {
        p.packed.resize(n, DVec4::ZERO);
    }
    let (x, v, w) = (&mut p.x[..n], &mut p.v[..n], &mut p.omega[..n]);
    let packed = &mut p.packed[..n];
    let (f, t) = (&p.force[..n], &p.torque[..n]);
    let (im, ii, frozen, id, radius) = (
        &p.inv_mass[..n],
        &p.inv_inertia[..n],
        &p.frozen[..n],
        &p.id[..n],
        &p.radius[..n],
    );
    let x_ref = &x_ref[..n];
    // The box as bounds, unbounded along periodic axes: `lo ≤ x ≤ hi` (false
    // for NaN) is the negation of `Domain::outside_axis(x).is_some()` for finite `x`.
    let axis = |a: usize, lo: bool| match (domain.periodic[a], lo) {
        (true, true) => f64::NEG_INFINITY,
        (true, false) => f64::INFINITY,
        (false, true) => domain.lo[a],
        (false, false) => domain.hi[a],
    };
    let lo = DVec3::new(axis(0, true), axis(1, true), axis(2, true));
    let hi = DVec3::new(axis(0, false), axis(1, false), axis(2, false));
    x.par_chunks_mut(BLOCK)
        .zip(v.par_chunks_mut(BLOCK))
        .zip(w.par_chunks_mut(BLOCK))
        .zip(packed.par_chunks_mut(BLOCK))
        .enumerate()
        .map(|(b, (((x, v), w), packed))| {
            let r = b * BLOCK..b * BLOCK + x.len();
            let inputs = DriftInputs {
                force: &f[r.clone()],
                torque: &t[r.clone()],
                inv_mass: &im[r.clone()],
                inv_inertia: &ii[r.clone()],
                frozen: &frozen[r.clone()],
                id: &id[r.clone()],
                radius: &radius[r.clone()],
                x_ref: &x_ref[r.clone()],
            };
            drift_block(r.start, (x, v, w, packed), &inputs, (dt, lo, hi))
        })
        .reduce(
            || DriftScan {
                max_disp2: 0.0,
                bad: None,
            },
            |a, b| DriftScan {
                max_disp2: a.max_disp2.max(b.max_disp2),
                bad: match (a.bad, b.bad) {
                    (Some(x), Some(y)) => Some(if x.1 <= y.1 { x } else { y }),
                    (x, None) => x,
                    (None, y) => y,
                },
            },
        )
}

/// What the first half step of one block reads, block-local (index 0 is the
/// block's first particle).
struct DriftInputs<'a> {
    force: &'a [DVec3],
    torque: &'a [DVec3],
    inv_mass: &'a [f64],
    inv_inertia: &'a [f64],
    frozen: &'a [bool],
    id: &'a [u64],
    radius: &'a [f64],
    x_ref: &'a [DVec3],
}

/// [`kick_drift`] over one block starting at local index `base`; every
/// slice is cut to the block's length first, so the loop indexes without
/// bound tests.
fn drift_block(
    base: usize,
    (x, v, w, packed): (&mut [DVec3], &mut [DVec3], &mut [DVec3], &mut [DVec4]),
    a: &DriftInputs,
    (dt, lo, hi): (f64, DVec3, DVec3),
) -> DriftScan {
    let half = 0.5 * dt;
    let m = x.len();
    let (v, w, packed) = (&mut v[..m], &mut w[..m], &mut packed[..m]);
    let (f, t, im, ii) = (
        &a.force[..m],
        &a.torque[..m],
        &a.inv_mass[..m],
        &a.inv_inertia[..m],
    );
    let (frozen, id, radius, x_ref) = (&a.frozen[..m], &a.id[..m], &a.radius[..m], &a.x_ref[..m]);
    let mut scan = DriftScan {
        max_disp2: 0.0,
        bad: None,
    };
    for k in 0..m {
        if !frozen[k] {
            half_kick((&mut v[k], &mut w[k]), (f[k], t[k]), (im[k], ii[k]), half);
            x[k] += dt * v[k];
        }
        let (xk, vk, wk) = (x[k], v[k], w[k]);
        packed[k] = xk.extend(radius[k]);
        // A sum of the nine components is finite when they all are
        // (the exact test runs only when the sum says otherwise).
        let sum = (xk.x + xk.y + xk.z) + (vk.x + vk.y + vk.z) + (wk.x + wk.y + wk.z);
        let finite = sum.is_finite() || xk.is_finite() && vk.is_finite() && wk.is_finite();
        // One test of all six bounds (no branch per axis).
        let inside = (xk.cmpge(lo) & xk.cmple(hi)).all();
        if !(finite & inside) && scan.bad.is_none_or(|(_, i)| id[k] < i) {
            scan.bad = Some((base + k, id[k]));
        }
        // A NaN displacement leaves the maximum as `f64::max` would
        // (the particle is flagged above), without its NaN handling.
        let disp2 = (xk - x_ref[k]).length_squared();
        if disp2 > scan.max_disp2 {
            scan.max_disp2 = disp2;
        }
    }
    scan
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
            let m = v.len();
            let w = &mut w[..m];
            let (f, t) = (&f[r.clone()], &t[r.clone()]);
            let (im, ii, frozen) = (&im[r.clone()], &ii[r.clone()], &frozen[r]);
            let (f, t, im, ii, frozen) = (&f[..m], &t[..m], &im[..m], &ii[..m], &frozen[..m]);
            for k in 0..m {
                if !frozen[k] {
                    half_kick((&mut v[k], &mut w[k]), (f[k], t[k]), (im[k], ii[k]), half);
                }
            }
        });
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
