//! The list of touching contacts (`[[diagnostics]] kind = "contacts"`), for
//! force chains and fabric tensors, as LIGGGHTS `compute pair/gran/local`
//! and LAMMPS `compute pair/local` give them: every contact with overlap
//! `δ > 0` (a pair once, from its lower-id side; every wall contact), with
//! its contact point, normal, normal and tangential force and overlap.
//!
//! For particle `i` (centre `x_i`, radius `R_i`) and its partner:
//! - `normal` `n`: the unit vector from `x_i` toward the partner's centre
//!   (minimum image), or toward the wall;
//! - `point`: `x_i + (R_i − δ/2) n` for a pair (the middle of the overlap on
//!   the line of centres), the point of the wall nearest `x_i` for a wall;
//! - `force_normal = −f · n`, `f` the force on `i` (positive when the
//!   contact pushes `i` away), and `force_tangential = f + force_normal n`,
//!   the rest of `f`.
//!
//! Each rank lists the contacts of its own particles, sorted by (`id`,
//! `wall`, partner's `id`), and writes them at its offset in the list
//! (every rank at once, as frames are written): a list's contacts follow
//! the ranks, and sorted by that key they are the same on any number of
//! ranks. No rank gathers another's contacts.

use super::contacts::{contacts_of, pair_force, separation, Partner, Sides};
use super::View;
use glam::DVec3;

/// One touching contact as listed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListedContact {
    /// The particle's id and its partner's (`−1` for a wall).
    pub id: [i64; 2],
    /// The wall's index, or `−1` for a pair.
    pub wall: i64,
    /// The contact point.
    pub point: DVec3,
    /// The unit normal from the particle toward its partner.
    pub normal: DVec3,
    /// The overlap `δ > 0`.
    pub overlap: f64,
    /// The normal force on the particle, positive when repulsive (NaN
    /// where the step's contact forces are not known, as just after a
    /// restart).
    pub force_normal: f64,
    /// The tangential force on the particle.
    pub force_tangential: DVec3,
}

impl ListedContact {
    /// The sort key: the particle, then the walls, then the pairs by the
    /// partner's id.
    #[must_use]
    pub fn key(&self) -> (i64, i64, i64) {
        (self.id[0], -self.wall, self.id[1])
    }
}

/// The touching contacts of this rank's particles.
pub fn local_contacts(v: &View) -> Vec<ListedContact> {
    let p = v.p;
    let mut out = Vec::new();
    for k in 0..p.n_owned {
        let x = v.domain.wrap(p.x[k]);
        let mine: Vec<_> = contacts_of(p, v.nl, v.laws, (v.walls, v.near_walls), k, Sides::Lower)
            .filter(|c| c.delta > 0.0)
            .collect();
        for c in &mine {
            let (id, wall, normal, point, force) = match c.partner {
                Partner::Particle(q) => {
                    let n = separation(p, k, q) / c.dist;
                    let force = match (v.loads, c.entry) {
                        (Some(_), Some(e)) => pair_force(p, v.nl, k, q, e),
                        _ => DVec3::NAN,
                    };
                    let point = x + (p.radius[k] - 0.5 * c.delta) * n;
                    ([p.id[k] as i64, p.id[q] as i64], -1, n, point, force)
                }
                Partner::Wall(w) => {
                    // A wall's load is the sum over its contacts: a
                    // contact's own force where it is the only one.
                    let alone = mine
                        .iter()
                        .filter(|o| o.partner == Partner::Wall(w))
                        .count()
                        == 1;
                    let force = match v.loads {
                        Some(l) if alone => l.get(k, w).force,
                        _ => DVec3::NAN,
                    };
                    let n = c.wall_normal;
                    ([p.id[k] as i64, -1], w as i64, n, x + c.dist * n, force)
                }
            };
            let force_normal = -force.dot(normal);
            out.push(ListedContact {
                id,
                wall,
                point,
                normal,
                overlap: c.delta,
                force_normal,
                force_tangential: force + force_normal * normal,
            });
        }
    }
    out
}

/// The touching contacts of this rank's particles, sorted by
/// [`ListedContact::key`].
pub fn sorted_contacts(v: &View) -> Vec<ListedContact> {
    let mut mine = local_contacts(v);
    mine.sort_by_key(ListedContact::key);
    mine
}
