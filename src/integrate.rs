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
    let half = 0.5 * dt;
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
            let base = b * BLOCK;
            let mut scan = DriftScan {
                max_disp2: 0.0,
                bad: None,
            };
            for (o, (((x, v), w), packed)) in x.iter_mut().zip(v).zip(w).zip(packed).enumerate() {
                let k = base + o;
                if !frozen[k] {
                    half_kick((v, w), (f[k], t[k]), (im[k], ii[k]), half);
                    *x += dt * *v;
                }
                *packed = x.extend(radius[k]);
                // A sum of the nine components is finite when they all are
                // (the exact test runs only when the sum says otherwise).
                let sum = (x.x + x.y + x.z) + (v.x + v.y + v.z) + (w.x + w.y + w.z);
                let finite = sum.is_finite() || x.is_finite() && v.is_finite() && w.is_finite();
                // One test of all six bounds (no branch per axis).
                let inside = (x.cmpge(lo) & x.cmple(hi)).all();
                let ok = finite & inside;
                if !ok && scan.bad.is_none_or(|(_, i)| id[k] < i) {
                    scan.bad = Some((k, id[k]));
                }
                // A NaN displacement leaves the maximum as `f64::max` would
                // (the particle is flagged above), without its NaN handling.
                let disp2 = (*x - x_ref[k]).length_squared();
                if disp2 > scan.max_disp2 {
                    scan.max_disp2 = disp2;
                }
            }
            scan
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
            let base = b * BLOCK;
            for (o, (v, w)) in v.iter_mut().zip(w).enumerate() {
                let k = base + o;
                if !frozen[k] {
                    half_kick((v, w), (f[k], t[k]), (im[k], ii[k]), half);
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
