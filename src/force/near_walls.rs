//! Which owned particles can reach a wall that never moves before the next
//! rebuild: found at each rebuild, so that the force stage tests only those
//! against such walls (a bed on a floor has a layer of a few hundred
//! spheres against it out of tens of thousands; LAMMPS's `fix wall/gran`
//! tests every particle of its group every step).
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
//! Walls that move ([`crate::geometry::motion`]) are tested for every
//! particle at every step; so is every wall while no list has been found.
//!
//! A mesh wall that never moves also gets, per particle near a wall, the
//! triangles whose bounding boxes lie within its radius plus the skin at
//! the rebuild ([`NearWalls::mesh_candidates`]): the force stage looks for
//! its contacts among those ([`crate::geometry::mesh::TriMesh::contacts_among`])
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

/// Per owned particle, whether it must be tested against the walls that
/// never move ([`Self::find`]).
#[derive(Debug, Clone, Default)]
pub struct NearWalls {
    /// Per wall: whether it never moves (a wall the list speaks for).
    fixed: Vec<bool>,
    /// Whether any wall moves (tested for every particle).
    any_moving: bool,
    /// Per owned particle, in the order of the last rebuild: whether it
    /// lies within its radius plus the skin of a wall that never moves.
    /// Empty while none has been found: every particle is tested.
    near: Vec<bool>,
    /// The walls that are meshes and never move, in order, with the
    /// triangles they were found in (a rank's part of a mesh is cut again
    /// when its subdomain moves: the lists hold for the part they were
    /// found in, and only for that one).
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
    fixed: Vec::new(),
    any_moving: false,
    near: Vec::new(),
    meshes: Vec::new(),
    mesh_slot: Vec::new(),
    starts: Vec::new(),
    triangles: Vec::new(),
};

/// Owned particles per task of [`NearWalls::find`].
const BLOCK: usize = 256;

/// What [`find_block`] finds for a block of owned particles.
struct Block {
    /// Per particle, whether it is near a wall that never moves (or has
    /// a wall record not zero).
    near: Vec<bool>,
    /// Per particle and mesh that never moves, how many of its triangles
    /// it keeps.
    counts: Vec<u32>,
    /// Those triangles.
    triangles: Vec<u32>,
}

/// [`NearWalls::find`] for the owned particles `ks`. A mesh's triangles
/// within a particle's radius plus the skin are found once, and decide
/// both whether the particle is near the mesh (its contacts among them,
/// the same as [`Wall::touch`] would search for) and what it keeps.
fn find_block(
    p: &Particles,
    ks: std::ops::Range<usize>,
    (walls, fixed, meshes): (&[Wall], &[bool], usize),
    records: &WallHistory,
    skin: f64,
) -> Block {
    let mut block = Block {
        near: Vec::with_capacity(ks.len()),
        counts: Vec::with_capacity(ks.len() * meshes),
        triangles: Vec::new(),
    };
    let mut contacts = Contacts::default();
    for k in ks {
        let (x, r) = (p.x[k], p.radius[k]);
        let first = block.triangles.len();
        let mut near = false;
        for (w, wall) in walls.iter().enumerate() {
            if !fixed[w] {
                continue;
            }
            if let WallShape::Mesh { .. } = wall.shape {
                let from = block.triangles.len();
                wall.mesh_near_triangles(x, r + skin, &mut block.triangles);
                block.counts.push((block.triangles.len() - from) as u32);
                if !near && block.triangles.len() > from {
                    // As `Wall::touch(x, r, skin)`: the nearest contact.
                    let mine = &block.triangles[from..];
                    wall.mesh_contacts_among(x, r + skin, mine, &mut contacts);
                    near = (contacts.as_slice().iter()).any(|c| c.dist < r + skin);
                }
            } else {
                near = near || wall.touch(x, r, skin).is_some();
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
    /// Find the owned particles of `p` within their radius plus `skin` of a
    /// wall of `walls` that never moves (`moving` are those that do), at
    /// their current positions, and those with a wall record (`records`)
    /// not zero, and for those the triangles of the meshes that never move
    /// within their radius plus `skin`: call at a rebuild, after the
    /// particles are sorted, or where the last rebuild saw them. The
    /// storage of the last list is reused.
    pub fn find(
        &mut self,
        p: &Particles,
        (walls, moving): (&[Wall], &[MovingWall]),
        records: &WallHistory,
        skin: f64,
    ) {
        self.fixed.clear();
        self.fixed.resize(walls.len(), true);
        for m in moving {
            self.fixed[m.index] = false;
        }
        self.any_moving = self.fixed.iter().any(|&f| !f);
        self.meshes.clear();
        self.mesh_slot.clear();
        for (w, wall) in walls.iter().enumerate() {
            let mesh = match &wall.shape {
                WallShape::Mesh { mesh, .. } if self.fixed[w] => Some(mesh.clone()),
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
        let (fixed, meshes) = (&self.fixed, &self.meshes);
        let blocks: Vec<Block> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let ks = b * BLOCK..((b + 1) * BLOCK).min(n);
                find_block(p, ks, (walls, fixed, meshes.len()), records, skin)
            })
            .collect();
        self.near.clear();
        self.near.reserve(n);
        self.starts.clear();
        self.triangles.clear();
        if !meshes.is_empty() {
            self.starts.reserve(n * meshes.len() + 1);
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

    /// The triangles of wall `w` (`wall`) that owned particle `k` can
    /// touch before the next rebuild (given [`Self::wall_for`]), where `w`
    /// is a mesh that never moves, holding the triangles a list was found
    /// in; else `None` (search the mesh).
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
    /// near a wall that never moves, or a wall moves, or there is no list.
    #[inline(always)]
    pub fn any_for(&self, k: usize) -> bool {
        self.any_moving || self.near.get(k).copied().unwrap_or(true)
    }

    /// Whether owned particle `k` must be tested against wall `w` (given
    /// [`Self::any_for`]): it moves, or the particle is near a wall that
    /// does not, or there is no list.
    #[inline(always)]
    pub fn wall_for(&self, k: usize, w: usize) -> bool {
        !self.fixed.get(w).copied().unwrap_or(false) || self.near.get(k).copied().unwrap_or(true)
    }
}
