//! The force stage: contact, wall and body forces on every owned particle.
//!
//! Each owned particle sums, in this fixed order, its pair contacts (by
//! partner id, the order of its neighbour list), then its wall contacts (by
//! wall index), then gravity. Pairs are evaluated in canonical orientation,
//! so both particles of a contact compute the same bits and Newton's third law
//! holds exactly; the result does not depend on threads, ranks or local order.

use crate::config::LawTable;
use crate::contact::{Body, ContactInertia, ContactLaw, Kinematics, PairContext, PairForce};
use crate::neighbor::{NeighborList, BLOCK};
use crate::particles::Particles;
use crate::rng::PairNoise;
use crate::walls::Wall;
use glam::DVec3;
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

#[inline]
fn body(p: &Particles, k: usize) -> Body {
    Body {
        x: p.x[k],
        v: p.v[k],
        omega: p.omega[k],
        radius: p.radius[k],
        inv_mass: p.inv_mass[k],
    }
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

/// Compute `force` and `torque` of every owned particle, updating the contact
/// history in `nl` and the wall-contact history `wall_history`
/// (`walls.len() · history_len` values per owned particle).
pub fn compute(
    p: &mut Particles,
    nl: &mut NeighborList,
    wall_history: &mut [f64],
    fp: &ForceParams,
) {
    let n = p.n_owned;
    let h = nl.history_len;
    let wh = fp.walls.len() * h;
    let mut force = std::mem::take(&mut p.force);
    let mut torque = std::mem::take(&mut p.torque);
    let n_blocks = n.div_ceil(BLOCK);
    let block = |b: usize| (b * BLOCK, ((b + 1) * BLOCK).min(n));
    if nl.active.len() != nl.partner.len() {
        nl.refresh_active();
    }
    let offsets = &nl.offsets;
    let hist = split_chunks(
        &mut nl.history,
        (0..n_blocks).map(|b| (offsets[block(b).1] - offsets[block(b).0]) * h),
    );
    let whist = split_chunks(
        wall_history,
        (0..n_blocks).map(|b| (block(b).1 - block(b).0) * wh),
    );
    let act = split_chunks(
        &mut nl.active,
        (0..n_blocks).map(|b| offsets[block(b).1] - offsets[block(b).0]),
    );
    let parts: &Particles = p;
    let (partner, partner_id) = (&nl.partner, &nl.partner_id);
    force
        .par_chunks_mut(BLOCK)
        .zip(torque.par_chunks_mut(BLOCK))
        .zip(hist.into_par_iter().zip(whist).zip(act))
        .enumerate()
        .for_each(|(b, ((fo, to), ((hrow, wrow), arow)))| {
            let (first, last) = block(b);
            let base = offsets[first];
            for k in first..last {
                let (f, t) = if parts.frozen[k] {
                    (DVec3::ZERO, DVec3::ZERO)
                } else {
                    let (s, e) = (offsets[k] - base, offsets[k + 1] - base);
                    let (mut f, mut t) = pair_forces(
                        parts,
                        k,
                        &partner[offsets[k]..offsets[k + 1]],
                        &partner_id[offsets[k]..offsets[k + 1]],
                        &mut hrow[s * h..e * h],
                        &mut arow[s..e],
                        h,
                        fp,
                    );
                    let (fw, tw) = wall_forces(
                        parts,
                        k,
                        &mut wrow[(k - first) * wh..(k - first + 1) * wh],
                        h,
                        fp,
                    );
                    f += fw;
                    t += tw;
                    f += parts.mass[k] * fp.gravity;
                    (f, t)
                };
                fo[k - first] = f;
                to[k - first] = t;
            }
        });
    p.force = force;
    p.torque = torque;
}

/// History length marking the run-time (non-specialised) variant of [`pair_forces_n`].
const DYN: usize = usize::MAX;

/// The pair contacts of owned particle `k`, dispatched on the history length
/// so that the common lengths get a loop with the record size known at compile time.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn pair_forces(
    p: &Particles,
    k: usize,
    partners: &[u32],
    partner_ids: &[u64],
    hist: &mut [f64],
    active: &mut [bool],
    h: usize,
    fp: &ForceParams,
) -> (DVec3, DVec3) {
    match h {
        0 => pair_forces_n::<0>(p, k, partners, partner_ids, hist, active, h, fp),
        3 => pair_forces_n::<3>(p, k, partners, partner_ids, hist, active, h, fp),
        _ => pair_forces_n::<DYN>(p, k, partners, partner_ids, hist, active, h, fp),
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pair_forces_n<const H: usize>(
    p: &Particles,
    k: usize,
    partners: &[u32],
    partner_ids: &[u64],
    hist: &mut [f64],
    active: &mut [bool],
    h_dyn: usize,
    fp: &ForceParams,
) -> (DVec3, DVec3) {
    let h = if H == DYN { h_dyn } else { H };
    let mut f = DVec3::ZERO;
    let mut t = DVec3::ZERO;
    let (idk, xk, sk) = (p.id[k], p.x[k], p.shift[k]);
    let pk = p.packed[k];
    let (pad, dt) = (fp.range_pad, fp.dt);
    // The chute and most runs have one material pair: look its law up once.
    let single = (fp.laws.n == 1).then(|| &fp.laws.laws[0]);
    let packed = &p.packed[..];
    let active = &mut active[..partners.len()];
    let partner_ids = &partner_ids[..partners.len()];
    // k's side of every pair (the radius from `packed`, the same bits).
    let bk = Body {
        x: xk,
        v: p.v[k],
        omega: p.omega[k],
        radius: pk.w,
        inv_mass: p.inv_mass[k],
    };
    for (e, &q) in partners.iter().enumerate() {
        let q = q as usize;
        // Cheap filter on the packed image positions (a superset of the contacts).
        let pq = packed[q];
        let reach = (pk.w + pq.w + pad) * (1.0 + 1e-9);
        let dd = pq - pk;
        if dd.x * dd.x + dd.y * dd.y + dd.z * dd.z >= reach * reach {
            if active[e] {
                hist[e * h..(e + 1) * h].fill(0.0);
                active[e] = false;
            }
            continue;
        }
        let rec = &mut hist[e * h..(e + 1) * h];
        // Exact separation seen from k. IEEE subtraction is exactly
        // antisymmetric (a − b = −(b − a)), so the canonical
        // d = (x_j − x_i) + (s_j − s_i) is exactly ±d_kq.
        let d_kq = (p.x[q] - xk) + (p.shift[q] - sk);
        let r2 = d_kq.length_squared();
        // The partner's id and radius come from the row and `packed`, so a
        // contact loads only the partner's x, shift, v, ω and 1/m besides.
        let lower = idk < partner_ids[e];
        let (i, j, d) = if lower { (k, q, d_kq) } else { (q, k, -d_kq) };
        let law = match single {
            Some(law) => law,
            None => fp.laws.get(p.material[i], p.material[j]),
        };
        let (ri, rj) = if lower { (pk.w, pq.w) } else { (pq.w, pk.w) };
        let range = law.normal.range(ri, rj);
        if r2 >= range * range {
            if active[e] {
                rec.fill(0.0);
                active[e] = false;
            }
            continue;
        }
        let bq = Body {
            x: p.x[q],
            v: p.v[q],
            omega: p.omega[q],
            radius: pq.w,
            inv_mass: p.inv_mass[q],
        };
        let (bi, bj) = if lower { (&bk, &bq) } else { (&bq, &bk) };
        let r = r2.sqrt();
        let pf = if law.is_plain() {
            law.evaluate_plain(&Kinematics::pair(bi, bj, d, r), dt, rec)
        } else {
            let ids = if lower {
                (idk, partner_ids[e])
            } else {
                (partner_ids[e], idk)
            };
            general_pair(p, law, (i, j), (bi, bj), ids, d, r, rec, fp)
        };
        active[e] = h != 0;
        if lower {
            f += pf.force_i;
            t += pf.torque_i;
        } else {
            f -= pf.force_i;
            t += pf.torque_j;
        }
    }
    (f, t)
}

/// Reset a contact record that has opened (only writing a record that holds something).
#[inline(always)]
fn clear(rec: &mut [f64]) {
    if rec.iter().any(|&v| v != 0.0) {
        rec.fill(0.0);
    }
}

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
                let kin = Kinematics::wall(
                    &body(p, k),
                    touch.n,
                    touch.dist,
                    touch.velocity,
                    touch.omega,
                );
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
