//! The wall contacts of an owned particle, summed by wall index after its
//! pair contacts; a mesh's contacts in order of their features, each with
//! the history slot that follows it ([`mesh_forces`]).

use super::pairs::body_of;
use super::ForceParams;
use crate::contact::{ContactInertia, Kinematics};
use crate::geometry::mesh::{Contacts, MESH_SLOTS};
use crate::geometry::walls::{Wall, WallShape};
use crate::neighbor::Contribution;
use crate::state::particles::ParticleView;
use glam::DVec3;

/// The longest contact record a mesh contact without a slot can use.
const SCRATCH: usize = 32;

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
    let mut at = 0;
    for (w, wall) in fp.walls.iter().enumerate() {
        let len = wall.history_records(h) * h;
        let rec = &mut hist[at..at + len];
        at += len;
        if !fp.near_walls.wall_for(k, w) {
            continue;
        }
        if let WallShape::Mesh { .. } = wall.shape {
            let load = mesh_forces(p, (k, w), wall, rec, h, fp);
            f += load.force;
            t += load.torque;
            if let Some(l) = loads.get_mut(w) {
                *l = load;
            }
            continue;
        }
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

/// The contacts of owned particle `k` with the mesh `wall` (wall `w`;
/// among the triangles [`super::NearWalls::mesh_candidates`] gives, where
/// it gives them), each evaluated
/// with the history slot that follows it, summed in order of feature;
/// `rec` is the particle's [`MESH_SLOTS`] slots with this mesh, each a
/// key (the contact's last normal, padded to whole records) and then the
/// contact's record.
///
/// A contact keeps the slot whose key is nearest its normal (cosine above
/// ½, the nearest pairs first), so a sphere sliding from one triangle to
/// its neighbour, or over an edge, keeps its tangential spring; a slot no
/// contact keeps is cleared, and a new contact takes one of those. A
/// contact beyond the slots (more than [`MESH_SLOTS`] at once with one
/// mesh) is evaluated from a fresh record each step.
fn mesh_forces(
    p: &ParticleView,
    (k, w): (usize, usize),
    wall: &Wall,
    rec: &mut [f64],
    h: usize,
    fp: &ForceParams,
) -> Contribution {
    if !wall.mesh_within(p.x[k], p.radius[k]) {
        // Far from the mesh: no contact, no slot kept.
        clear(rec);
        return Contribution::default();
    }
    let mut found = Contacts::default();
    (fp.near_walls).mesh_contacts((k, w), wall, (p.x[k], p.radius[k]), &mut found);
    if found.is_empty() {
        clear(rec);
        return Contribution::default();
    }
    let contacts = found.as_slice();
    let key_len = Wall::mesh_key_records(h) * h;
    let slot_len = key_len + h;
    let slots = if h == 0 { 0 } else { MESH_SLOTS };
    let key = |rec: &[f64], s: usize| {
        let at = s * slot_len;
        DVec3::new(rec[at], rec[at + 1], rec[at + 2])
    };
    // Each contact's slot: the nearest keys first.
    let mut slot_of = [usize::MAX; 8];
    let mut taken = [false; MESH_SLOTS];
    let n_c = contacts.len().min(slot_of.len());
    let mut pairs: [(f64, usize, usize); 8 * MESH_SLOTS] = [(0.0, 0, 0); 8 * MESH_SLOTS];
    let mut n_p = 0;
    for (c, contact) in contacts.iter().enumerate().take(n_c) {
        for s in 0..slots {
            let old = key(rec, s);
            if old != DVec3::ZERO {
                let cos = old.dot(contact.n);
                if cos > 0.5 {
                    pairs[n_p] = (cos, c, s);
                    n_p += 1;
                }
            }
        }
    }
    pairs[..n_p].sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    for &(_, c, s) in &pairs[..n_p] {
        if slot_of[c] == usize::MAX && !taken[s] {
            slot_of[c] = s;
            taken[s] = true;
        }
    }
    // The slots no contact kept are cleared; new contacts take them.
    for s in 0..slots {
        if !taken[s] {
            clear(&mut rec[s * slot_len..(s + 1) * slot_len]);
        }
    }
    for slot in slot_of.iter_mut().take(n_c) {
        if *slot == usize::MAX {
            if let Some(s) = (0..slots).find(|&s| !taken[s]) {
                *slot = s;
                taken[s] = true;
            }
        }
    }
    let mut sum = Contribution::default();
    let body = body_of(p, k, p.packed_image(k));
    let law = fp.laws.get(p.material[k], wall.material);
    let mut scratch = [0.0; SCRATCH];
    debug_assert!(
        h <= SCRATCH,
        "a contact record longer than the scratch record"
    );
    for (c, contact) in contacts.iter().enumerate() {
        let record: &mut [f64] = match slot_of.get(c).copied().filter(|&s| s != usize::MAX) {
            Some(s) => {
                let at = s * slot_len;
                rec[at..at + 3].copy_from_slice(&contact.n.to_array());
                &mut rec[at + key_len..at + slot_len]
            }
            None => {
                scratch[..h].fill(0.0);
                &mut scratch[..h]
            }
        };
        let (velocity, omega) = wall.surface_motion(contact.point);
        let kin = Kinematics::wall(&body, contact.n, contact.dist, velocity, omega);
        let pf = law.evaluate_with(&kin, fp.dt, record, || {
            ContactInertia::wall(p.inv_inertia[k], p.inv_mass[k], p.radius[k])
        });
        sum += Contribution {
            force: pf.force_i.into(),
            torque: pf.torque_i.into(),
        };
    }
    sum
}
