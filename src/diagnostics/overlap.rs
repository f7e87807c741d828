//! The bound on overlaps: a contact deeper than [`MAX_OVERLAP`] stops the run.

use super::contacts::{contacts_of, Partner, Sides};
use crate::config::LawTable;
use crate::force::near_walls::{NearWalls, TEST_EVERY_PARTICLE};
use crate::geometry::walls::Wall;
use crate::neighbor::NeighborList;
use crate::state::particles::Particles;
use rayon::prelude::*;

/// The deepest overlap a contact may reach, as a fraction of its effective
/// radius `R* = Ri Rj/(Ri + Rj)` (a wall's contact: the sphere's radius), the
/// thermo column `max_overlap`: beyond it a run stops (exit 1). For two equal
/// spheres it is half a radius, for a sphere at a wall its centre on the
/// wall's surface; no contact law means anything there, and a sound run
/// (overlaps of a few per cent of `R*`) never comes near it.
pub const MAX_OVERLAP: f64 = 1.0;

/// A contact deeper than [`MAX_OVERLAP`]: the owned particle `k` with the
/// lowest id in one on this rank (pairs are seen from their lower-id side),
/// what it touches, and its overlap relative to `R*`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeepContact {
    /// Local index of the owned particle.
    pub k: usize,
    /// Its id.
    pub id: u64,
    /// What it overlaps: `particle id 7`, `wall[2]`.
    pub partner: String,
    /// The overlap `δ` (m).
    pub overlap: f64,
    /// `δ/R*`.
    pub ratio: f64,
}

/// The contact deeper than [`MAX_OVERLAP`] whose owned particle has the
/// lowest id on this rank, among the contacts [`super::measure`] measures
/// `max_overlap` over (so it finds one exactly when that exceeds the
/// bound); the owned particles are split over the threads.
pub fn deep_contact(
    p: &Particles,
    nl: &NeighborList,
    laws: &LawTable,
    walls: &[Wall],
) -> Option<DeepContact> {
    deep_contact_among(p, nl, laws, (walls, &TEST_EVERY_PARTICLE), |_| true)
}

/// [`deep_contact`] among the owned particles that `pick` names, each
/// tested against the walls `near` says it can touch (as the force stage
/// tests them, [`NearWalls`]).
pub fn deep_contact_among(
    p: &Particles,
    nl: &NeighborList,
    laws: &LawTable,
    walls: (&[Wall], &NearWalls),
    pick: impl Fn(usize) -> bool + Sync,
) -> Option<DeepContact> {
    (0..p.n_owned)
        .into_par_iter()
        .with_min_len(512)
        .filter(|&k| pick(k))
        .filter_map(|k| {
            contacts_of(p, nl, laws, walls, k, Sides::Lower).find_map(|c| {
                let ratio = c.delta / c.r_eff;
                (ratio > MAX_OVERLAP).then(|| DeepContact {
                    k,
                    id: p.id[k],
                    partner: match c.partner {
                        Partner::Particle(q) => format!("particle id {}", p.id[q]),
                        Partner::Wall(i) => format!("wall[{i}]"),
                    },
                    overlap: c.delta,
                    ratio,
                })
            })
        })
        .min_by_key(|c| c.id)
}
