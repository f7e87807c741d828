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

use crate::geometry::motion::MovingWall;
use crate::geometry::walls::Wall;
use crate::state::history::WallHistory;
use crate::state::particles::Particles;
use rayon::prelude::*;

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
}

/// No list: every particle tested against every wall (for force stages
/// outside a run, such as the tests').
pub static TEST_EVERY_PARTICLE: NearWalls = NearWalls {
    fixed: Vec::new(),
    any_moving: false,
    near: Vec::new(),
};

impl NearWalls {
    /// Find the owned particles of `p` within their radius plus `skin` of a
    /// wall of `walls` that never moves (`moving` are those that do), at
    /// their current positions, and those with a wall record (`records`)
    /// not zero: call at a rebuild, after the particles are sorted, or
    /// where the last rebuild saw them. The storage of the last list is
    /// reused.
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
        let fixed: Vec<&Wall> = (walls.iter().zip(&self.fixed))
            .filter(|(_, &f)| f)
            .map(|(w, _)| w)
            .collect();
        let (x, radius) = (&p.x[..p.n_owned], &p.radius[..p.n_owned]);
        (0..p.n_owned)
            .into_par_iter()
            .map(|k| {
                (fixed.iter()).any(|w| w.touch(x[k], radius[k], skin).is_some())
                    || records.row(k).iter().any(|v| v.to_bits() != 0)
            })
            .collect_into_vec(&mut self.near);
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
