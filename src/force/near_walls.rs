//! Which owned particles can reach a wall that never moves, or a moving
//! mesh, before the next rebuild: found at each rebuild, so that the force
//! stage tests only those against such walls (a bed on a floor has a
//! layer of a few hundred spheres against it out of tens of thousands;
//! LAMMPS's `fix wall/gran` tests every particle of its group every
//! step).
//!
//! Why a particle left out gives the same bits as when it was tested:
//!
//! - Between rebuilds no particle moves more than the skin, less a hair
//!   for rounding ([`crate::neighbor::trigger::FIXED_REACH`]), so one
//!   farther than its radius plus the skin from a wall at the rebuild stays
//!   farther than its radius from it, and
//!   [`crate::geometry::walls::Wall::touch`] would find no contact at any
//!   step until the next rebuild.
//! - Its record with that wall is zero: a particle with a record not zero
//!   is tested whatever its distance (so a contact that opened by more
//!   than the skin in one step, under a skin that small, still clears its
//!   record); a record starts at zero (at step 0, after a restart, whose
//!   checkpoint holds what the tested steps left, and after a migration,
//!   which carries the records with the particle).
//! - A wall with no contact adds `+0` to the particle's force and torque,
//!   which never changes the bits of the contact sum (never `−0`), and
//!   leaves its wall load at zero.
//!
//! A moving mesh ([`crate::geometry::motion`]) is listed the same way in
//! its own frame, where it stands still. A particle's distance from the
//! mesh shrinks by at most its own displacement plus the mesh's drift
//! since the list was found
//! ([`crate::geometry::motion::Motion::frame_drift`]: the translation, and
//! the turn's angle times the lesser of two distances from the axis: the
//! box's farthest corner's, which bounds how far a particle moves in the
//! mesh's frame, and the mesh's own farthest point's, which bounds how
//! far each point of the mesh moves: a point of the mesh at one time lies
//! that near to one at the other). It is listed within its radius plus
//! [`MOVING_REACH_SKINS`] skins, and the rebuild rule rebuilds before the
//! largest displacement plus that drift passes them (less the hair), so a
//! particle left out stays farther than its radius from the mesh, as
//! above; a listed particle's triangles hold every one it can touch
//! until then, by the same bound for each triangle. A mesh that drifts by more than
//! [`MOVING_STEP_SHARE`] of the skin in the step after a rebuild is not
//! listed until a later rebuild finds it slower (the rebuilds it would
//! call for cost more than its search). Other walls that move are tested
//! for every particle at every step (a plane's test costs less than a
//! rebuild it would call for); so is every wall while no list has been
//! found.
//!
//! A listed mesh wall also gets, per particle near a wall, the triangles
//! whose bounding boxes lie within its reach at the rebuild
//! ([`NearWalls::mesh_candidates`]): the force stage looks for its
//! contacts among those ([`crate::geometry::mesh::TriMesh::contacts_among`])
//! instead of searching the mesh at every step, with the same bits, since
//! by the rule above they hold every triangle whose box comes within the
//! radius until the next rebuild. (LIGGGHTS keeps such per-particle
//! triangle lists for its mesh walls, rebuilt with the neighbour list.) On
//! the hopper of `configs/hopper.toml` the search at every step was a
//! third of the force stage.

use crate::geometry::mesh::{Contacts, TriMesh};
use crate::geometry::motion::MovingWall;
use crate::geometry::walls::{Wall, WallShape};
use crate::state::history::WallHistory;
use crate::state::particles::Particles;
use glam::DVec3;
use rayon::prelude::*;
use std::sync::Arc;

/// Per owned particle, whether it must be tested against the walls the
/// list speaks for ([`Self::find`]).
#[derive(Debug, Clone, Default)]
pub struct NearWalls {
    /// Per wall: whether the list speaks for it (it never moves, or it is
    /// a moving mesh listed at this rebuild).
    listed: Vec<bool>,
    /// Whether any wall is not listed (tested for every particle).
    any_unlisted: bool,
    /// The moving meshes listed, by their index in the moving walls.
    moving: Vec<usize>,
    /// What the last list was found for (its time and skin, the box).
    listing: Listing,
    /// Per owned particle, in the order of the last rebuild: whether it
    /// lies within its reach of a wall the list speaks for. Empty while
    /// none has been found: every particle is tested.
    near: Vec<bool>,
    /// The listed walls that are meshes, in order, with the triangles
    /// they were found in (a rank's part of a mesh is cut again when its
    /// subdomain moves: the lists hold for the part they were found in,
    /// and only for that one).
    meshes: Vec<Arc<TriMesh>>,
    /// Per wall, its place in `meshes` (`u32::MAX`: not there).
    mesh_slot: Vec<u32>,
    /// Per owned particle `k` and place `m` in `meshes`, where its
    /// triangles start in `triangles` (at `k · meshes + m`), and their
    /// end after the last.
    starts: Vec<u32>,
    /// The triangles of those meshes whose bounding boxes lie within each
    /// near particle's radius plus the skin (none for the others, which are
    /// not tested).
    triangles: Vec<u32>,
}

/// No list: every particle tested against every wall (for force stages
/// outside a run, such as the tests').
pub static TEST_EVERY_PARTICLE: NearWalls = NearWalls {
    listed: Vec::new(),
    any_unlisted: false,
    moving: Vec::new(),
    listing: Listing::new(0.0, 0.0, (DVec3::ZERO, DVec3::ZERO)),
    near: Vec::new(),
    meshes: Vec::new(),
    mesh_slot: Vec::new(),
    starts: Vec::new(),
    triangles: Vec::new(),
};

/// How far beyond its radius a particle lists a moving mesh, in skins: the
/// skin its own displacement may take and as much again for the mesh's
/// motion. The rebuild rule rebuilds before the two together pass it
/// ([`crate::neighbor::trigger::RebuildRule::with_moving_meshes`]).
pub const MOVING_REACH_SKINS: f64 = 2.0;

/// A moving mesh is listed at a rebuild only where it drifts
/// ([`crate::geometry::motion::Motion::frame_drift`]) by at most this
/// share of the skin over the next step: a faster one would call for a
/// rebuild every few steps, which costs more than searching it for every
/// particle at every step.
pub const MOVING_STEP_SHARE: f64 = 0.125;

/// When and over what a list is found: the skin, the time the walls are
/// placed for, the step `dt`, and the box every particle lies in (`lo,
/// hi`; the domain's).
#[derive(Debug, Clone, Copy, Default)]
pub struct Listing {
    /// The neighbour skin.
    pub skin: f64,
    /// The time the walls are placed for.
    pub time: f64,
    /// The time step.
    pub dt: f64,
    /// The box every particle lies in.
    pub bounds: (DVec3, DVec3),
}

impl Listing {
    /// A listing with skin `skin` at time 0 in a step of `dt` over the
    /// box `bounds`.
    pub const fn new(skin: f64, dt: f64, bounds: (DVec3, DVec3)) -> Self {
        Self {
            skin,
            time: 0.0,
            dt,
            bounds,
        }
    }

    /// The same at time `time`.
    pub fn at(self, time: f64) -> Self {
        Self { time, ..self }
    }
}

/// Owned particles per task of [`NearWalls::find`].
const BLOCK: usize = 256;

/// What [`find_block`] finds for a block of owned particles.
struct Block {
    /// Per particle, whether it is near a listed wall (or has a wall
    /// record not zero).
    near: Vec<bool>,
    /// Per particle and listed mesh, how many of its triangles it keeps.
    counts: Vec<u32>,
    /// Those triangles.
    triangles: Vec<u32>,
}

/// [`NearWalls::find`] for the owned particles `ks`, where wall `w` is
/// listed within `reach[w]` beyond a particle's radius (`f64::NAN`: not
/// listed). A mesh's triangles within that distance are found once, and
/// decide both whether the particle is near the mesh (its contacts among
/// them, the same as [`Wall::touch`] would search for) and what it keeps.
fn find_block(
    p: &Particles,
    ks: std::ops::Range<usize>,
    (walls, reach, meshes): (&[Wall], &[f64], usize),
    records: &WallHistory,
) -> Block {
    let mut block = Block {
        near: Vec::with_capacity(ks.len()),
        counts: Vec::with_capacity(ks.len() * meshes),
        triangles: Vec::new(),
    };
    for k in ks {
        let (x, r) = (p.x[k], p.radius[k]);
        let first = block.triangles.len();
        let mut near = false;
        for (wall, &reach) in walls.iter().zip(reach) {
            if reach.is_nan() {
                continue;
            }
            if let WallShape::Mesh { .. } = wall.shape {
                let from = block.triangles.len();
                wall.mesh_near_triangles(x, r + reach, &mut block.triangles);
                block.counts.push((block.triangles.len() - from) as u32);
                if !near && block.triangles.len() > from {
                    let mine = Some(&block.triangles[from..]);
                    near = wall.touch_among(x, r, reach, mine).is_some();
                }
            } else {
                near = near || wall.touch(x, r, reach).is_some();
            }
        }
        near = near || records.row(k).iter().any(|v| v.to_bits() != 0);
        if !near {
            // Not tested: keeps no triangles.
            block.triangles.truncate(first);
            let counts = block.counts.len();
            block.counts[counts - meshes..].fill(0);
        }
        block.near.push(near);
    }
    block
}

impl NearWalls {
    /// Find the owned particles of `p` within their radius plus the skin
    /// of a wall of `walls` that never moves (`moving` are those that do)
    /// or within their radius plus [`MOVING_REACH_SKINS`] skins of a
    /// moving mesh slow enough to list ([`MOVING_STEP_SHARE`]), at their
    /// current positions and the walls' place at `at.time`, and those with
    /// a wall record (`records`) not zero; and for those the triangles of
    /// the listed meshes within the same reach. Call at a rebuild, after
    /// the particles are sorted, or where the last rebuild saw them (with
    /// the walls where they were then). The storage of the last list is
    /// reused.
    pub fn find(
        &mut self,
        p: &Particles,
        (walls, moving): (&[Wall], &[MovingWall]),
        records: &WallHistory,
        at: Listing,
    ) {
        let skin = at.skin;
        let mut reach = vec![skin; walls.len()];
        self.moving.clear();
        for (i, m) in moving.iter().enumerate() {
            reach[m.index] = f64::NAN;
            if !matches!(m.base.shape, WallShape::Mesh { .. }) {
                continue;
            }
            let step = (at.time, at.time + at.dt);
            let drift = m.motion.frame_drift(step, at.bounds, m.turn_extent());
            if drift <= MOVING_STEP_SHARE * skin {
                self.moving.push(i);
                reach[m.index] = MOVING_REACH_SKINS * skin;
            }
        }
        self.listing = at;
        self.listed.clear();
        self.listed.extend(reach.iter().map(|r| !r.is_nan()));
        self.any_unlisted = self.listed.iter().any(|&l| !l);
        self.meshes.clear();
        self.mesh_slot.clear();
        for (w, wall) in walls.iter().enumerate() {
            let mesh = match &wall.shape {
                WallShape::Mesh { mesh, .. } if self.listed[w] => Some(mesh.clone()),
                _ => None,
            };
            self.mesh_slot.push(match mesh {
                Some(_) => self.meshes.len() as u32,
                None => u32::MAX,
            });
            if let Some(mesh) = mesh {
                self.meshes.push(mesh);
            }
        }
        let n = p.n_owned;
        let meshes = self.meshes.len();
        let blocks: Vec<Block> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let ks = b * BLOCK..((b + 1) * BLOCK).min(n);
                find_block(p, ks, (walls, &reach, meshes), records)
            })
            .collect();
        self.near.clear();
        self.near.reserve(n);
        self.starts.clear();
        self.triangles.clear();
        if meshes > 0 {
            self.starts.reserve(n * meshes + 1);
            self.starts.push(0);
        }
        let mut at = 0u32;
        for block in blocks {
            self.near.extend_from_slice(&block.near);
            for c in block.counts {
                at = at
                    .checked_add(c)
                    .expect("fewer than 2^32 candidate triangles on a rank");
                self.starts.push(at);
            }
            self.triangles.extend_from_slice(&block.triangles);
        }
    }

    /// For the moving meshes the list speaks for: the reach beyond a
    /// particle's radius they were listed within, and how far they have
    /// drifted since (the largest
    /// [`crate::geometry::motion::Motion::frame_drift`] at `time`, over
    /// the box the list was found for). `None` where none is listed. The list
    /// holds while every particle's displacement since it was found plus
    /// this drift stays within the reach: nothing that was farther comes
    /// within a radius of a listed mesh.
    pub fn moving_meshes_drift(&self, moving: &[MovingWall], time: f64) -> Option<(f64, f64)> {
        if self.moving.is_empty() {
            return None;
        }
        let at = &self.listing;
        let drift = (self.moving.iter())
            .map(|&i| {
                (moving[i].motion).frame_drift((at.time, time), at.bounds, moving[i].turn_extent())
            })
            .fold(0.0, f64::max);
        Some((MOVING_REACH_SKINS * at.skin, drift))
    }

    /// The triangles of wall `w` (`wall`) that owned particle `k` can
    /// touch before the next rebuild (given [`Self::wall_for`]), where `w`
    /// is a listed mesh (one that never moves, or a moving one listed at
    /// the last rebuild), holding the triangles a list was found in; else
    /// `None` (search the mesh).
    #[inline]
    pub fn mesh_candidates(&self, k: usize, w: usize, wall: &Wall) -> Option<&[u32]> {
        let m = *self.mesh_slot.get(w)?;
        let found_in = self.meshes.get(m as usize)?;
        match &wall.shape {
            WallShape::Mesh { mesh, .. } if Arc::ptr_eq(mesh, found_in) => {}
            _ => return None,
        }
        let at = k * self.meshes.len() + m as usize;
        let (start, end) = (*self.starts.get(at)?, *self.starts.get(at + 1)?);
        Some(&self.triangles[start as usize..end as usize])
    }

    /// The contacts of owned particle `k` (at `x`, radius `r`) with the
    /// mesh wall `w` (`wall`), into `out`: among its listed triangles
    /// ([`Self::mesh_candidates`]) where there are, else by searching the
    /// mesh; the same contacts either way.
    #[inline]
    pub fn mesh_contacts(
        &self,
        (k, w): (usize, usize),
        wall: &Wall,
        (x, r): (DVec3, f64),
        out: &mut Contacts,
    ) {
        match self.mesh_candidates(k, w, wall) {
            Some(listed) => wall.mesh_contacts_among(x, r, listed, out),
            None => wall.mesh_contacts(x, r, out),
        }
    }

    /// Whether owned particle `k` must be tested against any wall: it is
    /// near a listed wall, or a wall is not listed, or there is no list.
    #[inline(always)]
    pub fn any_for(&self, k: usize) -> bool {
        self.any_unlisted || self.near.get(k).copied().unwrap_or(true)
    }

    /// Whether owned particle `k` must be tested against wall `w` (given
    /// [`Self::any_for`]): the wall is not listed, or the particle is near
    /// a wall that is, or there is no list.
    #[inline(always)]
    pub fn wall_for(&self, k: usize, w: usize) -> bool {
        !self.listed.get(w).copied().unwrap_or(false) || self.near.get(k).copied().unwrap_or(true)
    }
}
