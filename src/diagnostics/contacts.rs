//! The contacts of an owned particle as the diagnostics see them: by
//! geometry (the pairs within the normal law's range and the walls touched,
//! [`contacts_of`]) and by force (every pair and wall that gave the
//! particle a force in the last force stage, [`loads_of`]).

use crate::config::LawTable;
use crate::contact::ContactLaw;
use crate::force::{NearWalls, WallLoads};
use crate::geometry::mesh::{Contacts, MeshContact};
use crate::geometry::walls::{Wall, WallShape};
use crate::neighbor::NeighborList;
use crate::state::particles::Particles;
use glam::DVec3;

/// What a contact of an owned particle touches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Partner {
    /// Another particle, by local index (owned or ghost).
    Particle(usize),
    /// A wall, by index.
    Wall(usize),
}

/// Which pairs of an owned particle [`contacts_of`] gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sides {
    /// Only those whose partner has the higher id: each pair once over all
    /// ranks (a pair across ranks is seen by its lower-id side's owner).
    Lower,
    /// All of them: per-particle quantities (coordination).
    Both,
}

/// One contact as the diagnostics measure it.
pub(crate) struct Contact<'l> {
    pub(crate) partner: Partner,
    /// A pair's entry in the neighbour rows (for [`pair_force`]).
    pub(crate) entry: Option<usize>,
    /// The overlap `δ`.
    pub(crate) delta: f64,
    /// The centre distance (at a wall: the centre's distance from its surface).
    pub(crate) dist: f64,
    /// `R* = Ri Rj/(Ri + Rj)` (at a wall: the sphere's radius).
    pub(crate) r_eff: f64,
    /// At a wall, the unit normal from the centre towards the wall (zero
    /// for a pair).
    pub(crate) wall_normal: DVec3,
    /// The law between the two materials.
    pub(crate) law: &'l ContactLaw,
}

/// Every contact of the owned particle `k`: its pairs within the normal
/// law's range (of `sides`), then the walls it touches. The thermo row, the
/// overlap bound, the coordination numbers and the contact lists read
/// contacts through this one definition ([`pair_contact`],
/// [`wall_contacts_of`]), so they agree.
pub(crate) fn contacts_of<'a>(
    p: &'a Particles,
    nl: &'a NeighborList,
    laws: &'a LawTable,
    walls: (&'a [Wall], &'a NearWalls),
    k: usize,
    sides: Sides,
) -> impl Iterator<Item = Contact<'a>> + 'a {
    let rows = nl.rows();
    let row = rows.row(k);
    let from = match sides {
        Sides::Lower => higher_partners_from(p, nl, k),
        Sides::Both => row.start,
    };
    let pairs = (from..row.end).filter_map(move |e| pair_contact(p, laws, k, e, rows.partner(e)));
    pairs.chain(wall_contacts_of(p, laws, walls, k))
}

/// The first entry of owned particle `k`'s row whose partner has the
/// higher id: a row is sorted by partner id, the partners of lower id
/// first, one for each of the particle's share slots.
#[inline]
pub(crate) fn higher_partners_from(p: &Particles, nl: &NeighborList, k: usize) -> usize {
    nl.rows().row(k).start + lower_partners(p, nl, k)
}

/// The pair of entry `e` of owned particle `k`'s row, partner `q`, if it
/// is within the normal law's range: the pair part of [`contacts_of`].
#[inline(always)]
pub(crate) fn pair_contact<'a>(
    p: &Particles,
    laws: &'a LawTable,
    k: usize,
    e: usize,
    q: usize,
) -> Option<Contact<'a>> {
    let (rk, rq) = (p.radius[k], p.radius[q]);
    let d = separation(p, k, q);
    let law = laws.get(p.material[k], p.material[q]);
    let range = law.normal.range(rk, rq);
    // Most partners are out of range: a test on the squared distance,
    // with a margin far above the root's rounding, spares them the root.
    if d.length_squared() >= range * range * (1.0 + 1e-12) {
        return None;
    }
    let r = d.length();
    (r < range).then(|| Contact {
        partner: Partner::Particle(q),
        entry: Some(e),
        delta: rk + rq - r,
        dist: r,
        r_eff: rk * rq / (rk + rq),
        wall_normal: DVec3::ZERO,
        law,
    })
}

/// Every contact of the owned particle `k` with a wall, walls by index
/// (one, or a mesh's several): the wall part of [`contacts_of`]. As in the
/// force stage, a wall is tested where `near` says it must be, and a mesh
/// among the triangles it lists ([`NearWalls`]: the same contacts).
pub(crate) fn wall_contacts_of<'a>(
    p: &'a Particles,
    laws: &'a LawTable,
    (walls, near): (&'a [Wall], &'a NearWalls),
    k: usize,
) -> impl Iterator<Item = Contact<'a>> + 'a {
    let rk = p.radius[k];
    walls.iter().enumerate().flat_map(move |(i, w)| {
        let mut list = Contacts::default();
        if !near.wall_for(k, i) {
            // No contact before the next rebuild.
        } else if let WallShape::Mesh { .. } = w.shape {
            near.mesh_contacts((k, i), w, (p.x[k], rk), &mut list);
        } else if let Some(t) = w.touch(p.x[k], rk, 0.0) {
            list.push(MeshContact {
                n: t.n,
                dist: t.dist,
                ..MeshContact::default()
            });
        }
        let law = laws.get(p.material[k], w.material);
        (0..list.len()).map(move |j| {
            let t = list.as_slice()[j];
            Contact {
                partner: Partner::Wall(i),
                entry: None,
                delta: rk - t.dist,
                dist: t.dist,
                r_eff: rk,
                wall_normal: t.n,
                law,
            }
        })
    })
}

/// The number of partners of owned particle `k` with a lower id (the
/// first entries of its row): as many as its share slots, counted without
/// a search through the partners' ids.
#[inline]
fn lower_partners(p: &Particles, nl: &NeighborList, k: usize) -> usize {
    let below = nl.jobs().slots_of(k).len();
    debug_assert_eq!(below, nl.rows().below(k, p.id[k], &p.id));
    below
}

/// The separation `x_q − x_k` of two particles of `p` (minimum image: a
/// ghost's periodic shift included), the bits the force stage used.
#[inline]
pub(crate) fn separation(p: &Particles, k: usize, q: usize) -> DVec3 {
    (p.x[q] - p.x[k]) + (p.shift_of(q) - p.shift_of(k))
}

/// The force that the pair of entry `e` of owned particle `k`'s row (partner
/// `q`) gave `k` in the last force stage, read from the pair's share slot
/// (which holds the force on the higher-id side; see
/// [`crate::neighbor::PairJobs::share_slots`]).
#[inline]
pub(crate) fn pair_force(p: &Particles, nl: &NeighborList, k: usize, q: usize, e: usize) -> DVec3 {
    let jobs = nl.jobs();
    let slot = jobs.share_slots()[jobs.job_of(e)] as usize;
    slot_force(nl, slot, p.id[k] > p.id[q])
}

/// The force that the pair of share slot `slot` gave the particle on its
/// higher-id side (`higher`) or on its lower-id side: the slot holds the
/// former.
#[inline]
fn slot_force(nl: &NeighborList, slot: usize, higher: bool) -> DVec3 {
    let on_higher = nl.shares().get(slot).force;
    if higher {
        on_higher
    } else {
        -on_higher
    }
}

/// One force on an owned particle from the last force stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Load {
    /// What gave it.
    pub(crate) partner: Partner,
    /// The branch vector `l = x_k − x_partner` (minimum image; at a wall,
    /// from the contact point on the wall to the centre).
    pub(crate) branch: DVec3,
    /// The force on the particle.
    pub(crate) force: DVec3,
    /// The torque on the particle (walls only; zero for pairs).
    pub(crate) torque: DVec3,
}

/// Every force that a pair or a wall gave the owned particle `k` in the
/// last force stage (pairs of every side, then walls by index), with its
/// branch vector: pairs whose share slot holds a force, walls whose load
/// is not zero. `loads` must be of that force stage.
pub(crate) fn loads_of<'a>(
    p: &'a Particles,
    nl: &'a NeighborList,
    walls: &'a [Wall],
    loads: &'a WallLoads,
    k: usize,
) -> impl Iterator<Item = Load> + 'a {
    let (rows, shares) = (nl.rows(), nl.shares());
    let row = rows.row(k);
    // The partners of lower id, one per share slot of `k`, then the others.
    let (slots, below) = (nl.jobs().slots_of(k), lower_partners(p, nl, k));
    let pairs = row.clone().filter_map(move |e| {
        // A partner of lower id has its slot among `k`'s own, which points
        // at the pool's entry 0 unless it holds a force (which spares most
        // pairs, which are apart, the load of the share); any other pair
        // is `k`'s own job ([`higher_pair_load`]).
        let (t, q) = (e - row.start, rows.partner(e));
        if t >= below {
            return higher_pair_load(p, nl, k, e, q);
        }
        let s = slots.start + t;
        if !shares.holds(s) {
            return None;
        }
        let force = slot_force(nl, s, true);
        pair_load(p, k, q, force)
    });
    pairs.chain(wall_loads_of(p, walls, loads, k))
}

/// The force that the pair of entry `e` of owned particle `k`'s row gave
/// `k` in the last force stage, where its partner `q` has the higher id
/// (an entry from [`higher_partners_from`] on), if not zero. The pair's
/// job is then `k`'s own (see [`crate::neighbor::PairJobs`]), whose flag
/// says whether its share slot may hold a force (a job the last force
/// stage left inactive holds a zero share, `PairHistory`'s invariant):
/// most pairs, which are apart, are passed over on the flag alone.
#[inline(always)]
pub(crate) fn higher_pair_load(
    p: &Particles,
    nl: &NeighborList,
    k: usize,
    e: usize,
    q: usize,
) -> Option<Load> {
    let jobs = nl.jobs();
    let j = jobs.job_of(e);
    if !nl.history().is_active(j) {
        return None;
    }
    let force = slot_force(nl, jobs.share_slots()[j] as usize, false);
    pair_load(p, k, q, force)
}

/// The load of a pair that gave owned particle `k` the force `force`
/// (partner `q`), with its branch vector, if the force is not zero.
#[inline(always)]
fn pair_load(p: &Particles, k: usize, q: usize, force: DVec3) -> Option<Load> {
    (force != DVec3::ZERO).then(|| Load {
        partner: Partner::Particle(q),
        branch: -separation(p, k, q),
        force,
        torque: DVec3::ZERO,
    })
}

/// The loads of the walls on the owned particle `k` in the last force
/// stage, walls by index, those not zero: the wall part of [`loads_of`].
pub(crate) fn wall_loads_of<'a>(
    p: &'a Particles,
    walls: &'a [Wall],
    loads: &'a WallLoads,
    k: usize,
) -> impl Iterator<Item = Load> + 'a {
    walls.iter().enumerate().filter_map(move |(w, wall)| {
        let load = loads.get(k, w);
        if load.force == DVec3::ZERO && load.torque == DVec3::ZERO {
            return None;
        }
        // The force stage's own test (`touch` at the same position), so a
        // load always has its contact point.
        let t = wall.touch(p.x[k], p.radius[k], 0.0)?;
        Some(Load {
            partner: Partner::Wall(w),
            branch: -t.dist * t.n,
            force: load.force,
            torque: load.torque,
        })
    })
}
