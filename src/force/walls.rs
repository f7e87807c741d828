//! The wall contacts of an owned particle, summed by wall index after its
//! pair contacts.

use super::pairs::body_of;
use super::ForceParams;
use crate::contact::{ContactInertia, Kinematics};
use crate::neighbor::Contribution;
use crate::state::particles::ParticleView;
use glam::DVec3;

/// Reset a contact record that has opened (only writing a record that holds something).
#[inline(always)]
fn clear(rec: &mut [f64]) {
    if rec.iter().any(|&v| v != 0.0) {
        rec.fill(0.0);
    }
}

/// The wall contacts of owned particle `k`; each wall's force and torque
/// also go to `loads[w]` where `loads` is not empty (one per wall).
#[inline]
pub(super) fn wall_forces(
    p: &ParticleView,
    k: usize,
    hist: &mut [f64],
    h: usize,
    fp: &ForceParams,
    loads: &mut [Contribution],
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
                f += DVec3::from(pf.force_i);
                t += DVec3::from(pf.torque_i);
                if let Some(load) = loads.get_mut(w) {
                    *load = Contribution {
                        force: pf.force_i.into(),
                        torque: pf.torque_i.into(),
                    };
                }
            }
            None => clear(rec),
        }
    }
    (f, t)
}
