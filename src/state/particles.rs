//! Structure-of-arrays particle store: owned particles first, then ghosts.
//!
//! Every particle carries a global `u64` id that never changes; all sums that
//! affect the trajectory are ordered by id, never by local index, so the local
//! order is free to change (it is re-sorted spatially at every neighbour-list
//! rebuild for cache locality).

use crate::state::pack::{Pack, Unpack};
use crate::state::room::{Reorder, Room};
use glam::{DVec3, DVec4};
use rayon::prelude::*;

/// A particle's full state, used to insert, migrate and restart particles.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticleRecord {
    /// Global id.
    pub id: u64,
    /// Position.
    pub x: DVec3,
    /// Velocity.
    pub v: DVec3,
    /// Angular velocity.
    pub omega: DVec3,
    /// Radius.
    pub radius: f64,
    /// Mass.
    pub mass: f64,
    /// Material index.
    pub material: u32,
    /// Fixed in place (takes part in contacts, never moves).
    pub frozen: bool,
}

impl ParticleRecord {
    /// A particle at rest of unit mass, material 0, not frozen: the
    /// tests' sphere.
    #[cfg(test)]
    pub(crate) fn resting(id: u64, x: DVec3, radius: f64) -> Self {
        Self {
            id,
            x,
            v: DVec3::ZERO,
            omega: DVec3::ZERO,
            radius,
            mass: 1.0,
            material: 0,
            frozen: false,
        }
    }

    /// Mass of a solid sphere of this radius and density.
    pub fn sphere_mass(radius: f64, density: f64) -> f64 {
        density * 4.0 / 3.0 * std::f64::consts::PI * radius * radius * radius
    }
}

/// The particle arrays of one rank: `0..n_owned` owned, `n_owned..len()` ghosts.
#[derive(Debug, Clone, Default)]
pub struct Particles {
    /// Global ids.
    pub id: Vec<u64>,
    /// Positions (raw: ghosts keep their owner's coordinates; see [`Self::shift`]).
    pub x: Vec<DVec3>,
    /// Velocities.
    pub v: Vec<DVec3>,
    /// Angular velocities.
    pub omega: Vec<DVec3>,
    /// Radii.
    pub radius: Vec<f64>,
    /// Masses.
    pub mass: Vec<f64>,
    /// Inverse masses (0 for frozen particles).
    pub inv_mass: Vec<f64>,
    /// Inverse moments of inertia `1/(0.4 m R²)` (0 for frozen particles).
    pub inv_inertia: Vec<f64>,
    /// Material indices.
    pub material: Vec<u32>,
    /// Frozen flags.
    pub frozen: Vec<bool>,
    /// Periodic image shift `s·L` of each ghost: ghost entry `n_owned + g`
    /// has `shift[g]`; an owned particle's is `+0` and not stored
    /// ([`Self::shift_of`]). A ghost's image sits at `x + shift`, but
    /// separations are always computed as `(x_j − x_i) + (shift_j − shift_i)`
    /// so every rank gets the same bits.
    pub shift: Vec<DVec3>,
    /// Image position `x + shift` and radius of every entry, packed for the
    /// neighbour-candidate test of the force loop. Whoever moves entries
    /// refreshes theirs: the first half step the owned particles' as it
    /// moves them, a halo update the ghosts' as it copies them
    /// ([`crate::parallel::halo::Halo::update`]; on threads the first half
    /// step copies the periodic images, [`crate::state::images`]),
    /// a rebuild or a restart the owned particles' it wraps, sorts or puts
    /// back ([`Self::refresh_packed_owned`]). Dropping the ghosts drops
    /// theirs, so new ghosts have none until refreshed.
    /// Contact decisions use the exact canonical separation, for which an
    /// owned particle's image is exactly its `x` (its shift is zero, and
    /// `x` is stored as it is, with the sign of a zero coordinate).
    pub packed: Vec<DVec4>,
    /// Total force on owned particles.
    pub force: Vec<DVec3>,
    /// Total torque on owned particles.
    pub torque: Vec<DVec3>,
    /// Number of owned particles.
    pub n_owned: usize,
}

/// The particles as the force stage reads them, every array but the force
/// and torque, which it writes beside them ([`Particles::split_loads`]).
/// The fields are those of [`Particles`], borrowed.
#[derive(Debug, Clone, Copy)]
pub struct ParticleView<'a> {
    /// Global ids.
    pub id: &'a [u64],
    /// Positions.
    pub x: &'a [DVec3],
    /// Velocities.
    pub v: &'a [DVec3],
    /// Angular velocities.
    pub omega: &'a [DVec3],
    /// Radii.
    pub radius: &'a [f64],
    /// Masses.
    pub mass: &'a [f64],
    /// Inverse masses.
    pub inv_mass: &'a [f64],
    /// Inverse moments of inertia.
    pub inv_inertia: &'a [f64],
    /// Material indices.
    pub material: &'a [u32],
    /// Frozen flags.
    pub frozen: &'a [bool],
    /// Periodic image shifts of the ghosts ([`Particles::shift`]).
    pub shift: &'a [DVec3],
    /// Packed image positions and radii.
    pub packed: &'a [DVec4],
    /// Number of owned particles.
    pub n_owned: usize,
}

impl ParticleView<'_> {
    /// [`Particles::packed_image`].
    #[inline(always)]
    pub fn packed_image(&self, k: usize) -> DVec4 {
        packed_image(self.x, self.shift, self.radius, self.n_owned, k)
    }

    /// [`Particles::shift_of`].
    #[inline(always)]
    pub fn shift_of(&self, k: usize) -> DVec3 {
        shift_of(self.shift, self.n_owned, k)
    }
}

/// The image `x + shift` of entry `k` (an owned particle's `x` itself) and
/// its radius.
#[inline(always)]
fn packed_image(x: &[DVec3], shift: &[DVec3], radius: &[f64], n_owned: usize, k: usize) -> DVec4 {
    let image = if k < n_owned {
        x[k]
    } else {
        x[k] + shift[k - n_owned]
    };
    image.extend(radius[k])
}

/// The periodic image shift of entry `k`: `+0` for an owned particle, a
/// ghost's from `shift` (the ghosts' shifts, in entry order).
#[inline(always)]
fn shift_of(shift: &[DVec3], n_owned: usize, k: usize) -> DVec3 {
    if k < n_owned {
        DVec3::ZERO
    } else {
        shift[k - n_owned]
    }
}

/// The [`ParticleView`] of the particles `$p` (a place expression, so that
/// its fields are borrowed one by one, apart from the force and torque).
macro_rules! view_of {
    ($p:expr) => {
        ParticleView {
            id: &$p.id,
            x: &$p.x,
            v: &$p.v,
            omega: &$p.omega,
            radius: &$p.radius,
            mass: &$p.mass,
            inv_mass: &$p.inv_mass,
            inv_inertia: &$p.inv_inertia,
            material: &$p.material,
            frozen: &$p.frozen,
            shift: &$p.shift,
            packed: &$p.packed,
            n_owned: $p.n_owned,
        }
    };
}

impl Particles {
    /// Every array but the force and torque, borrowed.
    pub fn view(&self) -> ParticleView<'_> {
        view_of!(self)
    }

    /// The particles to read ([`Self::view`]) beside their force and
    /// torque (of the owned particles) to write.
    pub fn split_loads(&mut self) -> (ParticleView<'_>, &mut [DVec3], &mut [DVec3]) {
        (view_of!(self), &mut self.force, &mut self.torque)
    }

    /// Number of entries, owned and ghost.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether there are no particles at all.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// Room for `total` entries in all (owned and ghosts) in every array,
    /// reserved exactly ([`Room::room_for`]); the force and torque, which
    /// only the owned particles have, get room for `owned`.
    pub fn room_for(&mut self, total: usize, owned: usize) {
        self.id.room_for(total);
        self.x.room_for(total);
        self.v.room_for(total);
        self.omega.room_for(total);
        self.radius.room_for(total);
        self.mass.room_for(total);
        self.inv_mass.room_for(total);
        self.inv_inertia.room_for(total);
        self.material.room_for(total);
        self.frozen.room_for(total);
        self.shift.room_for(total.saturating_sub(owned));
        self.packed.room_for(total);
        self.force.room_for(owned);
        self.torque.room_for(owned);
    }

    /// Append an owned particle (only valid while there are no ghosts).
    pub fn push_owned(&mut self, r: &ParticleRecord) {
        assert_eq!(
            self.n_owned,
            self.len(),
            "ghosts must be dropped before adding owned particles"
        );
        self.push_entry(r);
        self.force.push(DVec3::ZERO);
        self.torque.push(DVec3::ZERO);
        self.n_owned += 1;
    }

    /// Append a ghost: a copy of `r` seen through the image shift `shift`.
    pub fn push_ghost(&mut self, r: &ParticleRecord, shift: DVec3) {
        self.push_entry(r);
        self.shift.push(shift);
    }

    /// Append periodic images of owned entries: for each `(k, shift)` a
    /// ghost of entry `k` with image shift `shift`, the same as
    /// [`Self::push_ghost`] of its record (the inverse mass and inertia
    /// are copied, not computed again: the same division gives the same
    /// bits).
    pub fn push_images(&mut self, images: &[(u32, DVec3)]) {
        // Each array extended by one thread, the arrays side by side.
        fn extend<'s, T: Copy + Send + Sync>(
            s: &rayon::Scope<'s>,
            v: &'s mut Vec<T>,
            images: &'s [(u32, DVec3)],
        ) {
            s.spawn(move |_| {
                v.reserve(images.len());
                for &(k, _) in images {
                    let copy = v[k as usize];
                    v.push(copy);
                }
            });
        }
        assert!(images.iter().all(|&(k, _)| (k as usize) < self.n_owned));
        rayon::scope(|s| {
            extend(s, &mut self.id, images);
            extend(s, &mut self.x, images);
            extend(s, &mut self.v, images);
            extend(s, &mut self.omega, images);
            extend(s, &mut self.radius, images);
            extend(s, &mut self.mass, images);
            extend(s, &mut self.inv_mass, images);
            extend(s, &mut self.inv_inertia, images);
            extend(s, &mut self.material, images);
            extend(s, &mut self.frozen, images);
        });
        self.shift.extend(images.iter().map(|&(_, shift)| shift));
    }

    /// Append `r` to every array an owned particle and a ghost both have.
    fn push_entry(&mut self, r: &ParticleRecord) {
        let inertia = 0.4 * r.mass * r.radius * r.radius;
        self.id.push(r.id);
        self.x.push(r.x);
        self.v.push(r.v);
        self.omega.push(r.omega);
        self.radius.push(r.radius);
        self.mass.push(r.mass);
        self.inv_mass
            .push(if r.frozen { 0.0 } else { 1.0 / r.mass });
        self.inv_inertia
            .push(if r.frozen { 0.0 } else { 1.0 / inertia });
        self.material.push(r.material);
        self.frozen.push(r.frozen);
    }

    /// The record of entry `k`.
    pub fn record(&self, k: usize) -> ParticleRecord {
        ParticleRecord {
            id: self.id[k],
            x: self.x[k],
            v: self.v[k],
            omega: self.omega[k],
            radius: self.radius[k],
            mass: self.mass[k],
            material: self.material[k],
            frozen: self.frozen[k],
        }
    }

    /// Drop every ghost entry (and its packed image).
    pub fn truncate_ghosts(&mut self) {
        let n = self.n_owned;
        self.packed.truncate(n);
        self.id.truncate(n);
        self.x.truncate(n);
        self.v.truncate(n);
        self.omega.truncate(n);
        self.radius.truncate(n);
        self.mass.truncate(n);
        self.inv_mass.truncate(n);
        self.inv_inertia.truncate(n);
        self.material.truncate(n);
        self.frozen.truncate(n);
        self.shift.clear();
    }

    /// Reorder the owned particles: new entry `k` is old entry `perm[k]`
    /// (ghosts must have been dropped).
    pub fn permute_owned(&mut self, perm: &[usize]) {
        assert_eq!(perm.len(), self.n_owned);
        self.reorder_owned(perm);
    }

    /// Keep only the owned particles `keep[0], keep[1], …` (ascending local
    /// indices of those that stay), in that order: the deletion of the
    /// others. Ghosts must have been dropped; the packed images go too
    /// (the rebuild that follows a deletion writes them whole).
    pub fn retain_owned(&mut self, keep: &[usize]) {
        debug_assert!(keep.windows(2).all(|w| w[0] < w[1]));
        self.reorder_owned(keep);
        self.n_owned = keep.len();
        self.packed.clear();
    }

    /// New owned entry `k` is old entry `order[k]`, where `order` is a
    /// permutation of the owned entries or an ascending selection of them
    /// (ghosts must have been dropped); the packed images are left as they
    /// are. In place: no array is copied whole, so a rebuild leaves no
    /// array-sized holes in the allocator's heap (the chute's arrays are
    /// below the size that gets pages of its own).
    fn reorder_owned(&mut self, order: &[usize]) {
        assert_eq!(self.len(), self.n_owned);
        let reorder = Reorder::new(order, self.n_owned);
        // Each array moved by one thread, the arrays side by side.
        fn apply<'s, T: Copy + Send>(s: &rayon::Scope<'s>, v: &'s mut Vec<T>, r: &'s Reorder) {
            s.spawn(move |_| r.apply(v, 1));
        }
        let r = &reorder;
        rayon::scope(|s| {
            apply(s, &mut self.id, r);
            apply(s, &mut self.x, r);
            apply(s, &mut self.v, r);
            apply(s, &mut self.omega, r);
            apply(s, &mut self.radius, r);
            apply(s, &mut self.mass, r);
            apply(s, &mut self.inv_mass, r);
            apply(s, &mut self.inv_inertia, r);
            apply(s, &mut self.material, r);
            apply(s, &mut self.frozen, r);
            apply(s, &mut self.force, r);
            apply(s, &mut self.torque, r);
        });
    }

    /// Recompute [`Self::packed`] from positions, shifts and radii.
    pub fn refresh_packed(&mut self) {
        self.refresh_packed_of(0..self.len());
    }

    /// Recompute [`Self::packed`] of the owned particles (after moving or
    /// reordering them other than by the first half step, which refreshes
    /// them itself).
    pub fn refresh_packed_owned(&mut self) {
        self.refresh_packed_of(0..self.n_owned);
    }

    /// Give [`Self::packed`] one image per entry (those it lacks zero,
    /// until refreshed; a restart puts the particles back without them).
    pub fn size_packed(&mut self) {
        self.packed.room_for(self.len());
        self.packed.resize(self.len(), DVec4::ZERO);
    }

    /// Recompute [`Self::packed`] of the entries `range`, with room for
    /// every entry.
    pub fn refresh_packed_of(&mut self, range: std::ops::Range<usize>) {
        self.size_packed();
        let (x, shift, radius, n) = (&self.x, &self.shift, &self.radius, self.n_owned);
        let first = range.start;
        (self.packed[range].par_iter_mut().enumerate())
            .with_min_len(4096)
            .for_each(|(i, out)| *out = packed_image(x, shift, radius, n, first + i));
    }

    /// What [`Self::packed`] holds for entry `k` at the current positions:
    /// its image `x + shift` (an owned particle's `x` itself) and radius.
    pub fn packed_image(&self, k: usize) -> DVec4 {
        packed_image(&self.x, &self.shift, &self.radius, self.n_owned, k)
    }

    /// The periodic image shift of entry `k`: `+0` for an owned particle
    /// (see [`Self::shift`]).
    #[inline(always)]
    pub fn shift_of(&self, k: usize) -> DVec3 {
        shift_of(&self.shift, self.n_owned, k)
    }

    /// Largest radius among all entries (0 if empty).
    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}

/// The bytes [`pack_record`] writes for one record.
pub const RECORD_BYTES: usize = 104;

/// Serialise a particle record.
pub fn pack_record(r: &ParticleRecord, buf: &mut Vec<u8>) {
    buf.put_u64(r.id);
    buf.put_vec3(r.x);
    buf.put_vec3(r.v);
    buf.put_vec3(r.omega);
    buf.put_f64(r.radius);
    buf.put_f64(r.mass);
    buf.put_u64(r.material as u64 | (r.frozen as u64) << 32);
}

/// Read a record written by [`pack_record`].
pub fn unpack_record(u: &mut Unpack) -> ParticleRecord {
    let id = u.u64();
    let (x, v, omega) = (u.vec3(), u.vec3(), u.vec3());
    let (radius, mass) = (u.f64(), u.f64());
    let tag = u.u64();
    ParticleRecord {
        id,
        x,
        v,
        omega,
        radius,
        mass,
        material: tag as u32,
        frozen: (tag >> 32) != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_record_has_its_stated_length_and_reads_back() {
        let r = ParticleRecord {
            id: 7,
            x: DVec3::new(1.0, 2.0, 3.0),
            v: DVec3::new(-1.0, 0.5, 0.0),
            omega: DVec3::new(0.0, 0.0, 9.0),
            radius: 0.001,
            mass: 2e-6,
            material: 3,
            frozen: true,
        };
        let mut buf = Vec::new();
        pack_record(&r, &mut buf);
        assert_eq!(buf.len(), RECORD_BYTES);
        assert_eq!(unpack_record(&mut Unpack::new(&buf)), r);
    }

    #[test]
    fn images_pushed_together_equal_ghosts_pushed_one_by_one() {
        let mut p = Particles::default();
        for k in 0..5u64 {
            p.push_owned(&ParticleRecord {
                id: 10 + k,
                x: DVec3::new(k as f64, 0.1 * k as f64, 0.0),
                v: DVec3::new(0.3, -(k as f64), 0.0),
                omega: DVec3::new(0.0, k as f64, 1.0),
                radius: 0.1 + 0.03 * k as f64,
                mass: 0.7 + 0.11 * k as f64,
                material: k as u32 % 2,
                frozen: k == 3,
            });
        }
        let images = [
            (4u32, DVec3::X),
            (0, -DVec3::Y),
            (3, DVec3::Z),
            (4, DVec3::ONE),
        ];
        let mut by_one = p.clone();
        for &(k, shift) in &images {
            let r = by_one.record(k as usize);
            by_one.push_ghost(&r, shift);
        }
        p.push_images(&images);
        assert_eq!(p.len(), 9);
        assert_eq!(p.id, by_one.id);
        assert_eq!(p.x, by_one.x);
        assert_eq!(p.v, by_one.v);
        assert_eq!(p.omega, by_one.omega);
        assert_eq!(p.radius, by_one.radius);
        assert_eq!(p.mass, by_one.mass);
        assert_eq!(p.inv_mass, by_one.inv_mass);
        assert_eq!(p.inv_inertia, by_one.inv_inertia);
        assert_eq!(p.material, by_one.material);
        assert_eq!(p.frozen, by_one.frozen);
        assert_eq!(p.shift, by_one.shift);
        p.refresh_packed();
        assert_eq!(p.packed[7], (p.x[3] + DVec3::Z).extend(p.radius[3]));
    }

    #[test]
    fn reordering_in_place_permutes_and_selects_every_array() {
        let mut p = Particles::default();
        for k in 0..6u64 {
            p.push_owned(&ParticleRecord {
                id: k,
                x: DVec3::splat(k as f64),
                v: DVec3::X * k as f64,
                omega: DVec3::Y * k as f64,
                radius: 1.0 + k as f64,
                mass: 2.0 + k as f64,
                material: k as u32,
                frozen: k % 2 == 0,
            });
        }
        p.force = (0..6).map(|k| DVec3::Z * k as f64).collect();
        p.permute_owned(&[5, 3, 4, 0, 1, 2]);
        assert_eq!(p.id, [5, 3, 4, 0, 1, 2]);
        assert_eq!(p.x[1], DVec3::splat(3.0));
        assert_eq!(p.force[0], DVec3::Z * 5.0);
        assert_eq!(p.frozen, [false, false, true, true, false, true]);
        p.retain_owned(&[1, 2, 5]);
        assert_eq!(p.id, [3, 4, 2]);
        assert_eq!(p.radius, [4.0, 5.0, 3.0]);
        assert_eq!(p.torque.len(), 3);
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn room_for_reserves_every_array() {
        let mut p = Particles::default();
        p.room_for(100, 60);
        assert!(p.x.capacity() >= 100 && p.packed.capacity() >= 100);
        assert!(p.force.capacity() >= 60 && p.force.capacity() < 100);
    }
}
