//! The periodic images a rank makes of its own particles: the first ghosts
//! (`n_owned..n_owned + m`), each a copy of an owned particle (its
//! "source") moved by a whole period (its shift, [`Particles::shift`]).
//! Every step they copy their sources' position, velocity and angular
//! velocity, and write their packed image ([`Particles::packed`]) on the
//! way: the halo update copies them ([`crate::parallel::halo::Halo`]), or
//! the first half step does, run by run, right after it moved the sources
//! ([`crate::integrate::kick_drift`]). The sources ascend (the halo build
//! makes the images in a walk over the owned particles), so the images of
//! a range of owned particles are one range of images ([`Images::split_by_sources`]).

use crate::state::particles::Particles;
use glam::{DVec3, DVec4};

/// The images' state and what they copy it by: their sources (owned
/// indices, ascending), and per image its position, velocity, angular
/// velocity and packed image (written) and its shift and radius (read).
pub struct Images<'a> {
    /// Owned index of each image's source.
    pub sources: &'a [u32],
    /// Positions.
    pub x: &'a mut [DVec3],
    /// Velocities.
    pub v: &'a mut [DVec3],
    /// Angular velocities.
    pub omega: &'a mut [DVec3],
    /// Packed images (`x + shift`, radius).
    pub packed: &'a mut [DVec4],
    /// Image shifts.
    pub shift: &'a [DVec3],
    /// Radii.
    pub radius: &'a [f64],
}

/// The owned particles' state an image copies: positions, velocities and
/// angular velocities of owned particles `first..first + x.len()`.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// Owned index of the first.
    pub first: usize,
    /// Positions.
    pub x: &'a [DVec3],
    /// Velocities.
    pub v: &'a [DVec3],
    /// Angular velocities.
    pub omega: &'a [DVec3],
}

impl<'a> Images<'a> {
    /// The ghost arrays of `p` past `owned` (positions, velocities,
    /// angular velocities, packed images, already split off the owned
    /// particles' by the caller, which keeps those), as the images of
    /// `sources`. `p` must have room for every image's packed image
    /// ([`Particles::size_packed`]).
    ///
    /// # Panics
    /// If there are fewer ghosts than images (ghosts that are not the
    /// halo's since its last build).
    pub fn of(
        sources: &'a [u32],
        (x, v, omega, packed): (
            &'a mut [DVec3],
            &'a mut [DVec3],
            &'a mut [DVec3],
            &'a mut [DVec4],
        ),
        (shift, radius): (&'a [DVec3], &'a [f64]),
    ) -> Self {
        let m = sources.len();
        assert!(
            [x.len(), v.len(), omega.len(), packed.len(), radius.len()]
                .iter()
                .all(|&len| len >= m),
            "fewer ghosts than periodic images"
        );
        Self {
            sources,
            x: &mut x[..m],
            v: &mut v[..m],
            omega: &mut omega[..m],
            packed: &mut packed[..m],
            shift: &shift[..m],
            radius: &radius[..m],
        }
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The images cut where their sources reach each of `bounds` (owned
    /// indices, ascending): piece `i` holds the images whose sources are
    /// below `bounds[i]` and not below `bounds[i − 1]`; the last piece
    /// holds the images of sources at or past the last bound.
    pub fn split_by_sources(self, bounds: impl IntoIterator<Item = usize>) -> Vec<Images<'a>> {
        debug_assert!(
            self.sources.is_sorted(),
            "images out of their sources' order"
        );
        let mut pieces = Vec::new();
        let mut rest = self;
        for b in bounds {
            let at = rest.sources.partition_point(|&s| (s as usize) < b);
            let (head, tail) = rest.cut(at);
            pieces.push(head);
            rest = tail;
        }
        pieces.push(rest);
        pieces
    }

    /// The images in pieces of `size` (the last may be shorter; none when
    /// there are no images).
    pub fn chunks(self, size: usize) -> Vec<Images<'a>> {
        let mut pieces = Vec::new();
        let mut rest = self;
        while rest.len() > size {
            let (head, tail) = rest.cut(size);
            pieces.push(head);
            rest = tail;
        }
        if !rest.is_empty() {
            pieces.push(rest);
        }
        pieces
    }

    /// The first `at` images and the others.
    fn cut(self, at: usize) -> (Self, Self) {
        let (s0, s1) = self.sources.split_at(at);
        let (x0, x1) = self.x.split_at_mut(at);
        let (v0, v1) = self.v.split_at_mut(at);
        let (w0, w1) = self.omega.split_at_mut(at);
        let (p0, p1) = self.packed.split_at_mut(at);
        let (h0, h1) = self.shift.split_at(at);
        let (r0, r1) = self.radius.split_at(at);
        let head = Self {
            sources: s0,
            x: x0,
            v: v0,
            omega: w0,
            packed: p0,
            shift: h0,
            radius: r0,
        };
        let tail = Self {
            sources: s1,
            x: x1,
            v: v1,
            omega: w1,
            packed: p1,
            shift: h1,
            radius: r1,
        };
        (head, tail)
    }

    /// Copy each image's state from its source in `from`, which must hold
    /// every source of these images, and write its packed image: `x +
    /// shift` of the copied `x` and the radius (the same bits as
    /// [`Particles::refresh_packed_of`]).
    pub fn copy_from(&mut self, from: Sources) {
        let images = (self.x.iter_mut().zip(self.v.iter_mut()))
            .zip(self.omega.iter_mut().zip(self.packed.iter_mut()))
            .zip(self.sources.iter().zip(self.shift.iter().zip(self.radius)));
        for (((x, v), (w, packed)), (&s, (&shift, &radius))) in images {
            let s = s as usize - from.first;
            (*x, *v, *w) = (from.x[s], from.v[s], from.omega[s]);
            *packed = (from.x[s] + shift).extend(radius);
        }
    }
}

impl Particles {
    /// The owned particles' positions, velocities and angular velocities as
    /// what images copy, and the images of `sources` among the ghosts
    /// (with room for their packed images).
    pub fn sources_and_images<'a>(&'a mut self, sources: &'a [u32]) -> (Sources<'a>, Images<'a>) {
        self.size_packed();
        let n = self.n_owned;
        let (x, gx) = self.x.split_at_mut(n);
        let (v, gv) = self.v.split_at_mut(n);
        let (w, gw) = self.omega.split_at_mut(n);
        let from = Sources {
            first: 0,
            x,
            v,
            omega: w,
        };
        let ghosts = (gx, gv, gw, &mut self.packed[n..]);
        let images = Images::of(sources, ghosts, (&self.shift, &self.radius[n..]));
        (from, images)
    }
}
