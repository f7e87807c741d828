//! Walls: infinite planes, circular cylinders (infinite, or finite and
//! closed or open at their ends) and discs (a drum's end caps). A wall is
//! body `j` of its contacts, with infinite mass and radius, and uses the
//! same contact law as particles. Its surface moves rigidly ([`Rigid`]):
//! a drum turning about its axis, a plane sliding or turning; where it is
//! at each step is [`super::motion`]'s business.

use super::domain::Domain;
use super::mesh::{Contacts, MeshContact, Pose, TriMesh};
use glam::DVec3;
use std::sync::Arc;

/// The geometry of one wall.
#[derive(Debug, Clone, PartialEq)]
pub enum WallShape {
    /// Plane through `point` with unit `normal` pointing into the particles' side.
    Plane {
        /// A point on the plane.
        point: DVec3,
        /// Unit normal towards the particles.
        normal: DVec3,
    },
    /// Circular cylinder about the line through `axis_point` along unit
    /// `axis`, reaching `half_length` either side of `axis_point`
    /// (infinite: `f64::INFINITY`).
    ///
    /// Particles inside a finite cylinder (a tube) meet its side, and the
    /// rim of an open end; its ends are closed by [`WallShape::Disc`] walls
    /// where the config asks for caps. Particles outside a finite cylinder
    /// (a post) meet a closed solid: side, flat end faces and rims, one
    /// contact at the nearest point of its surface.
    Cylinder {
        /// A point on the axis, mid-way between the ends of a finite one.
        axis_point: DVec3,
        /// Unit axis direction.
        axis: DVec3,
        /// Radius.
        radius: f64,
        /// Half the length along the axis (`f64::INFINITY`: infinite).
        half_length: f64,
        /// Particles inside (drum) or outside (post).
        inside: bool,
    },
    /// The disc of `radius` about `center` in the plane of unit `normal`,
    /// which points into the particles' side: a face where the sphere's
    /// centre projects inside the disc, its rim beyond.
    Disc {
        /// Centre.
        center: DVec3,
        /// Unit normal towards the particles.
        normal: DVec3,
        /// Radius.
        radius: f64,
    },
    /// A triangle mesh (an STL file), placed by `pose`
    /// ([`super::mesh`]): a sphere meets each face, edge and vertex
    /// nearest to it once, from either side.
    Mesh {
        /// The triangles at rest, shared by every copy of the wall.
        mesh: Arc<TriMesh>,
        /// Where the mesh is now.
        pose: Pose,
    },
}

/// The rigid motion of a wall's surface at one instant: the surface point
/// `p` moves at `velocity + omega × (p − pivot)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rigid {
    /// Velocity of the point `pivot`.
    pub velocity: DVec3,
    /// Angular velocity (rad/s).
    pub omega: DVec3,
    /// The point whose velocity is `velocity`.
    pub pivot: DVec3,
}

impl Rigid {
    /// A wall at rest.
    pub const REST: Rigid = Rigid {
        velocity: DVec3::ZERO,
        omega: DVec3::ZERO,
        pivot: DVec3::ZERO,
    };

    /// A turn at `rate` (rad/s) about the line through `pivot` along unit
    /// `axis` (right-handed).
    pub fn turning(rate: f64, axis: DVec3, pivot: DVec3) -> Rigid {
        Rigid {
            velocity: DVec3::ZERO,
            omega: rate * axis,
            pivot,
        }
    }

    /// The velocity of the surface point `p`. The translation is added only
    /// where it is non-zero, so a wall that only turns has exactly the
    /// velocity `omega × (p − pivot)`.
    #[inline]
    pub fn velocity_at(&self, p: DVec3) -> DVec3 {
        let v = self.omega.cross(p - self.pivot);
        if self.velocity == DVec3::ZERO {
            v
        } else {
            v + self.velocity
        }
    }
}

/// A wall with its material and the motion of its surface.
#[derive(Debug, Clone, PartialEq)]
pub struct Wall {
    /// Shape (where the wall is now).
    pub shape: WallShape,
    /// Material index.
    pub material: u32,
    /// How the surface moves now.
    pub rigid: Rigid,
}

/// Where a sphere meets a wall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallTouch {
    /// Unit normal from the sphere's centre towards the wall.
    pub n: DVec3,
    /// Distance from the centre to the wall surface.
    pub dist: f64,
    /// Wall velocity at the contact point.
    pub velocity: DVec3,
    /// Wall angular velocity.
    pub omega: DVec3,
}

/// The nearest point of a circle (centre `c`, unit normal `axis`, radius
/// `radius`) to `x`, as (distance, unit vector from `x` towards it), for
/// `x` off the circle's axis: `radial` is `x`'s offset from the axis.
#[inline]
fn rim(x: DVec3, c: DVec3, radial: DVec3, rho: f64, radius: f64) -> (f64, DVec3) {
    let q = c + (radius / rho) * radial;
    let d = q - x;
    let dist = d.length();
    (dist, d / dist)
}

impl Wall {
    /// The signed distance from `x` to the wall's surface and the unit
    /// normal from `x` towards it: positive on the particles' side, negative
    /// behind the wall (a plane's or a disc face's far side, outside a
    /// drum, inside a post). `None` where the direction is undefined (on a
    /// cylinder's axis, on a rim's axis beyond a disc or tube end), and
    /// for a mesh, which may have several contacts ([`Wall::mesh_contacts`]).
    #[inline]
    pub fn surface(&self, x: DVec3) -> Option<(f64, DVec3)> {
        match self.shape {
            WallShape::Mesh { .. } => None,
            WallShape::Plane { point, normal } => Some(((x - point).dot(normal), -normal)),
            WallShape::Cylinder {
                axis_point,
                axis,
                radius,
                half_length,
                inside,
            } => {
                let rel = x - axis_point;
                let along = rel.dot(axis);
                let radial = rel - along * axis;
                let rho = radial.length();
                if along.abs() <= half_length {
                    if rho == 0.0 {
                        return None;
                    }
                    return Some(if inside {
                        (radius - rho, radial / rho)
                    } else {
                        (rho - radius, -radial / rho)
                    });
                }
                // Beyond an end: a post's flat end face, else the rim.
                let end = axis_point + along.signum() * half_length * axis;
                if !inside && rho <= radius {
                    return Some((along.abs() - half_length, -along.signum() * axis));
                }
                (rho > 0.0).then(|| rim(x, end, radial, rho, radius))
            }
            WallShape::Disc {
                center,
                normal,
                radius,
            } => {
                let rel = x - center;
                let h = rel.dot(normal);
                let radial = rel - h * normal;
                let rho = radial.length();
                if rho <= radius {
                    Some((h, -normal))
                } else {
                    Some(rim(x, center, radial, rho, radius))
                }
            }
        }
    }

    /// Contact geometry of a sphere at `x` with radius `r`, if it overlaps the
    /// wall by more than zero (or lies within `extra` of it).
    /// A mesh gives its nearest contact (the force stage takes them all,
    /// [`Wall::mesh_contacts`]).
    #[inline]
    pub fn touch(&self, x: DVec3, r: f64, extra: f64) -> Option<WallTouch> {
        self.touch_among(x, r, extra, None)
    }

    /// [`Self::touch`], with a mesh's contacts sought among `triangles`
    /// only where given (those [`Self::mesh_near_triangles`] found within
    /// `r + extra`, which hold every contact nearer than that); the same
    /// for another shape.
    #[inline]
    pub fn touch_among(
        &self,
        x: DVec3,
        r: f64,
        extra: f64,
        triangles: Option<&[u32]>,
    ) -> Option<WallTouch> {
        let (dist, n) = match &self.shape {
            WallShape::Mesh { .. } => {
                let mut out = Contacts::default();
                match triangles {
                    Some(among) => self.mesh_contacts_among(x, r + extra, among, &mut out),
                    None => self.mesh_contacts(x, r + extra, &mut out),
                }
                let c = out
                    .as_slice()
                    .iter()
                    .min_by(|a, b| a.dist.total_cmp(&b.dist))?;
                (c.dist, c.n)
            }
            _ => self.surface(x)?,
        };
        (dist < r + extra).then(|| WallTouch {
            n,
            dist,
            velocity: if self.rigid == Rigid::REST {
                DVec3::ZERO
            } else {
                self.rigid.velocity_at(x + dist * n)
            },
            omega: self.rigid.omega,
        })
    }
}

impl Wall {
    /// The records of `h` values that a particle keeps for this wall's
    /// contacts: one; for a mesh, [`super::mesh::MESH_SLOTS`] slots, each
    /// a key (the contact's normal, 3 values padded to whole records,
    /// [`Wall::mesh_key_records`]) and a record. (None hold anything when
    /// `h = 0`: one empty record.)
    pub fn history_records(&self, h: usize) -> usize {
        match self.shape {
            WallShape::Mesh { .. } if h > 0 => {
                super::mesh::MESH_SLOTS * (Self::mesh_key_records(h) + 1)
            }
            _ => 1,
        }
    }

    /// The records of `h > 0` values that hold a mesh contact's key (3 values).
    pub fn mesh_key_records(h: usize) -> usize {
        3usize.div_ceil(h.max(1))
    }

    /// The contacts of a sphere centred at `x` with a mesh wall, nearer
    /// than `reach`, where the wall is now (none for another shape).
    #[inline]
    pub fn mesh_contacts(&self, x: DVec3, reach: f64, out: &mut Contacts) {
        self.in_mesh_frame(x, out, |mesh, x, out| mesh.contacts(x, reach, out));
    }

    /// [`Self::mesh_contacts`] among the triangles `candidates` alone
    /// ([`TriMesh::contacts_among`]: the same contacts where they hold
    /// every triangle within `reach`).
    pub fn mesh_contacts_among(
        &self,
        x: DVec3,
        reach: f64,
        candidates: &[u32],
        out: &mut Contacts,
    ) {
        self.in_mesh_frame(x, out, |mesh, x, out| {
            mesh.contacts_among(x, reach, candidates, out);
        });
    }

    /// Appends to `out` the triangles of a mesh wall whose bounding boxes
    /// lie nearer than `reach` to `x` where the mesh is now
    /// ([`TriMesh::near_triangles`]); none for another shape.
    pub fn mesh_near_triangles(&self, x: DVec3, reach: f64, out: &mut Vec<u32>) {
        if let WallShape::Mesh { mesh, pose } = &self.shape {
            // In the mesh's frame as `in_mesh_frame` brings it there.
            let x = if pose.is_rest() { x } else { pose.back(x) };
            mesh.near_triangles(x, reach, out);
        }
    }

    /// `contacts` of the mesh with a sphere at `x` brought into the mesh's
    /// frame, placed where the mesh is now (none for another shape).
    #[inline]
    fn in_mesh_frame(
        &self,
        x: DVec3,
        out: &mut Contacts,
        contacts: impl FnOnce(&TriMesh, DVec3, &mut Contacts),
    ) {
        let WallShape::Mesh { mesh, pose } = &self.shape else {
            out.clear();
            return;
        };
        if pose.is_rest() {
            return contacts(mesh, x, out);
        }
        contacts(mesh, pose.back(x), out);
        for c in out.as_mut_slice() {
            *c = MeshContact {
                point: pose.place(c.point),
                n: pose.turn(c.n),
                ..*c
            };
        }
    }

    /// Whether a mesh wall comes nearer than `r` to `x` (a local search);
    /// true for every other shape, whose clearance costs as little.
    pub fn reaches(&self, x: DVec3, r: f64) -> bool {
        match &self.shape {
            WallShape::Mesh { mesh, pose } => mesh.reaches(pose.back(x), r),
            _ => true,
        }
    }

    /// Whether a mesh wall's bounding box comes within `reach` of `x`
    /// (false for another shape).
    #[inline]
    pub fn mesh_within(&self, x: DVec3, reach: f64) -> bool {
        match &self.shape {
            WallShape::Mesh { mesh, pose } if pose.is_rest() => mesh.within(x, reach),
            WallShape::Mesh { mesh, pose } => mesh.within(pose.back(x), reach),
            _ => false,
        }
    }

    /// The velocity of the wall's surface at `p` and its angular velocity,
    /// as a contact there sees them.
    #[inline]
    pub fn surface_motion(&self, p: DVec3) -> (DVec3, DVec3) {
        if self.rigid == Rigid::REST {
            (DVec3::ZERO, DVec3::ZERO)
        } else {
            (self.rigid.velocity_at(p), self.rigid.omega)
        }
    }

    /// The point the diagnostics take a wall's torque about: a plane's
    /// `point`, a cylinder's `axis_point`, a disc's `center`, the centre
    /// of a mesh's bounding box at rest, placed.
    pub fn reference_point(&self) -> DVec3 {
        match &self.shape {
            WallShape::Plane { point, .. } => *point,
            WallShape::Cylinder { axis_point, .. } => *axis_point,
            WallShape::Disc { center, .. } => *center,
            WallShape::Mesh { mesh, pose } => {
                let (lo, hi) = mesh.bounds();
                pose.place(0.5 * (lo + hi))
            }
        }
    }

    /// Signed distance from `x` to the wall's surface, positive on the
    /// particles' side: a sphere of radius `r` at `x` clears the wall when it
    /// is at least `r`. (The distance [`Wall::touch`] measures, read only;
    /// on a cylinder's axis, where it has no direction, the distance from
    /// the axis.)
    pub fn clearance(&self, x: DVec3) -> f64 {
        if let WallShape::Mesh { mesh, pose } = &self.shape {
            return mesh.signed_distance(pose.back(x));
        }
        if let Some((d, _)) = self.surface(x) {
            return d;
        }
        // On a cylinder's axis: the radius within the ends, else every
        // point of the rim is as far.
        match self.shape {
            WallShape::Cylinder {
                axis_point,
                axis,
                radius,
                half_length,
                inside,
            } => {
                let beyond = (x - axis_point).dot(axis).abs() - half_length;
                match (beyond > 0.0, inside) {
                    (true, _) => radius.hypot(beyond),
                    (false, true) => radius,
                    (false, false) => -radius,
                }
            }
            _ => unreachable!("only a cylinder's surface has no direction"),
        }
    }

    /// Whether a sphere of radius `r` at `x` clears the wall:
    /// [`Wall::clearance`] `≥ r` (for a mesh, a search that stops at the
    /// first triangle nearer than `r`).
    pub fn clears(&self, x: DVec3, r: f64) -> bool {
        match &self.shape {
            WallShape::Mesh { mesh, pose } => mesh.clears(pose.back(x), r),
            _ => self.clearance(x) >= r,
        }
    }

    /// The least [`Wall::clearance`] of any point of the box `lo..hi`: a
    /// sphere wholly inside the box clears the wall by its radius when this
    /// is at least 0. A plane's and a drum's least clearance is at a corner
    /// (the distance to a plane is linear, the distance from an axis convex);
    /// a post's is the distance from its axis to the box, less its radius.
    /// A mesh's is bounded below by its clearance at the box's centre less
    /// half the box's diagonal (a distance changes no faster than the point).
    pub fn box_clearance(&self, lo: DVec3, hi: DVec3) -> f64 {
        if let WallShape::Mesh { .. } = self.shape {
            return self.clearance(0.5 * (lo + hi)) - 0.5 * (hi - lo).length();
        }
        let corners = (0..8).map(|c| {
            DVec3::new(
                if c & 1 == 0 { lo.x } else { hi.x },
                if c & 2 == 0 { lo.y } else { hi.y },
                if c & 4 == 0 { lo.z } else { hi.z },
            )
        });
        match self.shape {
            WallShape::Cylinder {
                axis_point,
                axis,
                radius,
                inside: false,
                ..
            } => {
                // The distance from the point at `t` along the axis to the
                // box is convex in `t`; its minimum lies where the axis
                // passes the box, between the corners' projections.
                let along = |c: DVec3| (c - axis_point).dot(axis);
                let (mut a, mut b) = corners
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| {
                        (a.min(along(c)), b.max(along(c)))
                    });
                let dist = |t: f64| {
                    let q = axis_point + t * axis;
                    (lo - q).max(q - hi).max(DVec3::ZERO).length()
                };
                let g = 0.5 * (5f64.sqrt() - 1.0);
                for _ in 0..200 {
                    let (c, d) = (b - g * (b - a), a + g * (b - a));
                    if dist(c) <= dist(d) {
                        b = d;
                    } else {
                        a = c;
                    }
                }
                dist(0.5 * (a + b)) - radius
            }
            _ => corners
                .map(|c| self.clearance(c))
                .fold(f64::INFINITY, f64::min),
        }
    }

    /// The first periodic axis of `domain` this wall cuts, if any, and how.
    /// A wall is at one place of a box that repeats, so along a periodic
    /// axis it must look the same everywhere, or stay away from the
    /// periodic faces: a plane cuts every axis its normal has a component
    /// along, an infinite cylinder every axis its own axis is oblique to
    /// ([`PeriodicCut::Crosses`]); an infinite cylinder is uniform along
    /// the axis it is parallel to; otherwise a cylinder or a disc spans an
    /// extent along the axis that must lie at least `margin` (the
    /// interaction range) inside the box ([`PeriodicCut::Near`]), so that
    /// no particle meets it through a periodic face.
    pub fn periodic_cut(&self, domain: &Domain, margin: f64) -> Option<(usize, PeriodicCut)> {
        (0..3).filter(|&a| domain.periodic[a]).find_map(|a| {
            // How far a disc of `radius` with unit normal `dir`, swept
            // `half_length` along `dir`, reaches along axis `a`.
            // (An infinite cylinder perpendicular to `a` reaches its radius.)
            let reach = |dir: DVec3, half_length: f64, radius: f64| {
                let along = if dir[a] == 0.0 {
                    0.0
                } else {
                    half_length * dir[a].abs()
                };
                along + radius * (1.0 - dir[a] * dir[a]).max(0.0).sqrt()
            };
            let (centre, extent) = match self.shape.clone() {
                WallShape::Mesh { mesh, pose } => {
                    let (lo, hi) = mesh
                        .vertices()
                        .iter()
                        .map(|&v| pose.place(v)[a])
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                            (l.min(v), h.max(v))
                        });
                    (0.5 * (lo + hi), 0.5 * (hi - lo))
                }
                WallShape::Plane { normal, .. } => {
                    return (normal[a] != 0.0).then_some((a, PeriodicCut::Crosses));
                }
                WallShape::Cylinder {
                    axis_point,
                    axis,
                    radius,
                    half_length,
                    ..
                } => {
                    if half_length.is_infinite() {
                        let parallel = (0..3).all(|b| b == a || axis[b] == 0.0);
                        if parallel {
                            return None;
                        }
                        if axis[a] != 0.0 {
                            return Some((a, PeriodicCut::Crosses));
                        }
                    }
                    (axis_point[a], reach(axis, half_length, radius))
                }
                WallShape::Disc {
                    center,
                    normal,
                    radius,
                } => (center[a], reach(normal, 0.0, radius)),
            };
            let (lo, hi) = (centre - extent, centre + extent);
            (lo < domain.lo[a] + margin || hi > domain.hi[a] - margin)
                .then_some((a, PeriodicCut::Near { lo, hi }))
        })
    }
}

/// How a wall cuts a periodic axis ([`Wall::periodic_cut`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PeriodicCut {
    /// It extends across the periodic faces (a plane with a normal
    /// component along the axis, a cylinder oblique to it).
    Crosses,
    /// A cylinder perpendicular to the axis spans `lo..hi` along it, too
    /// near a periodic face.
    Near {
        /// Lowest coordinate along the axis.
        lo: f64,
        /// Highest coordinate along the axis.
        hi: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_and_cylinder_geometry() {
        let plane = Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::Z,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let t = plane.touch(DVec3::new(1.0, 2.0, 0.4), 0.5, 0.0).unwrap();
        assert_eq!(t.n, -DVec3::Z);
        assert!((t.dist - 0.4).abs() < 1e-15);
        assert!(plane.touch(DVec3::new(0.0, 0.0, 0.6), 0.5, 0.0).is_none());

        let drum = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::ZERO,
                axis: DVec3::Y,
                radius: 2.0,
                inside: true,
                half_length: f64::INFINITY,
            },
            material: 0,
            rigid: Rigid::turning(3.0, DVec3::Y, DVec3::ZERO),
        };
        let t = drum.touch(DVec3::new(0.0, 5.0, -1.6), 0.5, 0.0).unwrap();
        assert!((t.dist - 0.4).abs() < 1e-15);
        assert!((t.n - (-DVec3::Z)).length() < 1e-15);
        // Contact point (0, 5, −2): velocity ω ŷ × (0, 0, −2) = (−6, 0, 0)·... = 3·(ŷ × −2ẑ) = (−6, 0, 0).
        assert!((t.velocity - DVec3::new(-6.0, 0.0, 0.0)).length() < 1e-14);
    }

    fn cylinder(inside: bool) -> Wall {
        Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::ZERO,
                axis: DVec3::Y,
                radius: 2.0,
                inside,
                half_length: f64::INFINITY,
            },
            material: 0,
            rigid: Rigid::REST,
        }
    }

    #[test]
    fn clearance_is_the_signed_distance_on_the_particles_side() {
        let floor = Wall {
            shape: WallShape::Plane {
                point: DVec3::new(0.0, 0.0, 1.0),
                normal: DVec3::Z,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        assert_eq!(floor.clearance(DVec3::new(5.0, -3.0, 1.25)), 0.25);
        assert_eq!(floor.clearance(DVec3::new(0.0, 0.0, 0.5)), -0.5);
        let x = DVec3::new(0.0, 7.0, 1.5);
        assert_eq!(cylinder(true).clearance(x), 0.5);
        assert_eq!(cylinder(false).clearance(x), -0.5);
        // The same distance the force stage's `touch` measures.
        assert_eq!(cylinder(true).touch(x, 1.0, 0.0).unwrap().dist, 0.5);
    }

    #[test]
    fn box_clearance_is_the_least_over_the_box() {
        let floor = Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::new(0.0, 0.6, 0.8),
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let (lo, hi) = (DVec3::new(-1.0, 1.0, 1.0), DVec3::new(1.0, 2.0, 3.0));
        assert!((floor.box_clearance(lo, hi) - 1.4).abs() < 1e-15);
        // A drum: the farthest corner from the axis, sqrt(1 + 1) from it.
        let (lo, hi) = (DVec3::new(-1.0, 0.0, -1.0), DVec3::new(1.0, 5.0, 1.0));
        assert!((cylinder(true).box_clearance(lo, hi) - (2.0 - 2f64.sqrt())).abs() < 1e-15);
        // A post: the nearest point of the box, here a face 3 from the axis.
        let (lo, hi) = (DVec3::new(3.0, -1.0, -1.0), DVec3::new(4.0, 1.0, 1.0));
        assert!((cylinder(false).box_clearance(lo, hi) - 1.0).abs() < 1e-12);
        // A post through the box.
        let (lo, hi) = (DVec3::new(-1.0, 2.0, -1.0), DVec3::new(1.0, 3.0, 1.0));
        assert!((cylinder(false).box_clearance(lo, hi) + 2.0).abs() < 1e-12);
        // A skew post passing an edge: the axis (1, 1, 0)/√2 through
        // (0, 0, 5) passes the box [3, 4]×[-4, -3]×[0, 1] nearest at its
        // point (3, -3, 1).
        let skew = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::new(0.0, 0.0, 5.0),
                axis: DVec3::new(1.0, 1.0, 0.0).normalize(),
                radius: 1.0,
                inside: false,
                half_length: f64::INFINITY,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let (lo, hi) = (DVec3::new(3.0, -4.0, 0.0), DVec3::new(4.0, -3.0, 1.0));
        // (3, -3, 1) lies at distance sqrt(((3 + 3)/√2)² + 4²) = sqrt(18 + 16) from the axis.
        let want = 34f64.sqrt() - 1.0;
        assert!(
            (skew.box_clearance(lo, hi) - want).abs() < 1e-9,
            "{}",
            skew.box_clearance(lo, hi)
        );
    }

    #[test]
    fn walls_cut_periodic_axes_unless_uniform_along_them_or_clear_of_the_faces() {
        let plane = |normal: DVec3| Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let d = |periodic| Domain {
            lo: DVec3::splat(-5.0),
            hi: DVec3::splat(5.0),
            periodic,
        };
        let xy = d([true, true, false]);
        assert_eq!(plane(DVec3::Z).periodic_cut(&xy, 0.5), None);
        assert_eq!(
            plane(DVec3::Y).periodic_cut(&xy, 0.5),
            Some((1, PeriodicCut::Crosses))
        );
        assert_eq!(
            plane(DVec3::new(0.6, 0.0, 0.8)).periodic_cut(&xy, 0.5),
            Some((0, PeriodicCut::Crosses))
        );
        // A cylinder along y (radius 2 about x = z = 0): uniform along y;
        // along x it spans [-2, 2], clear of the faces at ±5 by 3.
        assert_eq!(
            cylinder(true).periodic_cut(&d([false, true, false]), 0.5),
            None
        );
        assert_eq!(cylinder(false).periodic_cut(&xy, 3.0), None);
        assert_eq!(
            cylinder(false).periodic_cut(&xy, 3.5),
            Some((0, PeriodicCut::Near { lo: -2.0, hi: 2.0 }))
        );
        assert_eq!(cylinder(false).periodic_cut(&d([false; 3]), 9.0), None);
        // Oblique to a periodic axis: it crosses it.
        let mut skew = cylinder(false);
        if let WallShape::Cylinder { axis, .. } = &mut skew.shape {
            *axis = DVec3::new(0.6, 0.8, 0.0);
        }
        assert_eq!(
            skew.periodic_cut(&d([true, false, false]), 0.5),
            Some((0, PeriodicCut::Crosses))
        );
    }
    fn post(half_length: f64) -> Wall {
        Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::ZERO,
                axis: DVec3::Z,
                radius: 1.0,
                half_length,
                inside: false,
            },
            material: 0,
            rigid: Rigid::REST,
        }
    }

    #[test]
    fn a_finite_post_is_a_closed_solid_met_at_its_nearest_point() {
        let p = post(2.0);
        // The side, within the ends: as an infinite post.
        let (d, n) = p.surface(DVec3::new(1.5, 0.0, 1.0)).unwrap();
        assert_eq!((d, n), (0.5, -DVec3::X));
        // Beyond the top end, over the face: the distance to the face.
        let (d, n) = p.surface(DVec3::new(0.3, -0.2, 2.25)).unwrap();
        assert!((d - 0.25).abs() < 1e-15 && n == -DVec3::Z, "{d} {n}");
        // Beyond the bottom end and the radius: the rim, here the point
        // (1, 0, −2) seen from (1.3, 0, −2.4): distance 0.5.
        let (d, n) = p.surface(DVec3::new(1.3, 0.0, -2.4)).unwrap();
        assert!((d - 0.5).abs() < 1e-15, "{d}");
        assert!((n - DVec3::new(-0.6, 0.0, 0.8)).length() < 1e-15, "{n}");
        // The distance is continuous across the edge of the side's span.
        let below = p.clearance(DVec3::new(1.5, 0.0, 2.0));
        let above = p.clearance(DVec3::new(1.5, 0.0, 2.0 + 1e-12));
        assert!((below - above).abs() < 1e-11);
        // On the axis beyond an end: the face.
        assert_eq!(p.clearance(DVec3::new(0.0, 0.0, 3.0)), 1.0);
        // An infinite post has no ends.
        assert_eq!(
            post(f64::INFINITY).clearance(DVec3::new(1.5, 0.0, 1e9)),
            0.5
        );
    }

    #[test]
    fn an_open_tube_end_is_met_at_its_rim() {
        let tube = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::ZERO,
                axis: DVec3::Z,
                radius: 1.0,
                half_length: 1.0,
                inside: true,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        // Inside, within the ends: the side.
        assert_eq!(tube.clearance(DVec3::new(0.5, 0.0, 0.9)), 0.5);
        // Beyond the end, near the rim point (1, 0, 1): the rim.
        let (d, n) = tube.surface(DVec3::new(0.7, 0.0, 1.4)).unwrap();
        assert!((d - 0.5).abs() < 1e-15 && (n - DVec3::new(0.6, 0.0, -0.8)).length() < 1e-15);
        // On the axis beyond the end: every rim point is as far.
        assert_eq!(tube.clearance(DVec3::new(0.0, 0.0, 1.75)), 1.25);
    }

    #[test]
    fn a_disc_is_a_face_within_its_radius_and_a_rim_beyond() {
        let cap = Wall {
            shape: WallShape::Disc {
                center: DVec3::new(0.0, 0.0, 1.0),
                normal: -DVec3::Z,
                radius: 2.0,
            },
            material: 0,
            rigid: Rigid::turning(4.0, DVec3::Z, DVec3::ZERO),
        };
        let t = cap.touch(DVec3::new(1.0, 0.0, 0.8), 0.5, 0.0).unwrap();
        assert!((t.dist - 0.2).abs() < 1e-15 && t.n == DVec3::Z);
        // The surface turns with it: at the contact point (1, 0, 1) the
        // velocity is 4 ẑ × (1, 0, 1) = (0, 4, 0).
        assert!((t.velocity - DVec3::new(0.0, 4.0, 0.0)).length() < 1e-15);
        assert_eq!(t.omega, DVec3::new(0.0, 0.0, 4.0));
        // Behind the face: negative.
        assert!((cap.clearance(DVec3::new(0.5, 0.5, 1.5)) + 0.5).abs() < 1e-15);
        // Beyond the radius: the rim point (2, 0, 1) from (2.3, 0, 0.6).
        assert!((cap.clearance(DVec3::new(2.3, 0.0, 0.6)) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn a_rigid_surface_moves_as_one_body() {
        let r = Rigid {
            velocity: DVec3::new(1.0, 0.0, 0.0),
            omega: DVec3::new(0.0, 0.0, 2.0),
            pivot: DVec3::new(0.0, 1.0, 0.0),
        };
        // v + ω × (p − pivot) = (1, 0, 0) + 2 ẑ × (1, −1, 0) = (1, 0, 0) + (2, 2, 0).
        assert_eq!(
            r.velocity_at(DVec3::new(1.0, 0.0, 0.0)),
            DVec3::new(3.0, 2.0, 0.0)
        );
        // A sliding plane: the contact's wall velocity is its translation.
        let floor = Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::Z,
            },
            material: 0,
            rigid: Rigid {
                velocity: DVec3::new(0.5, 0.0, 0.0),
                omega: DVec3::ZERO,
                pivot: DVec3::ZERO,
            },
        };
        let t = floor.touch(DVec3::new(3.0, 1.0, 0.4), 0.5, 0.0).unwrap();
        assert_eq!(t.velocity, DVec3::new(0.5, 0.0, 0.0));
    }

    #[test]
    fn finite_cylinders_and_discs_stay_clear_of_periodic_faces() {
        let d = Domain {
            lo: DVec3::splat(-5.0),
            hi: DVec3::splat(5.0),
            periodic: [false, false, true],
        };
        // A finite post along the periodic z reaches ±2 along it: clear at
        // margin 2.5, not at 3.5.
        assert_eq!(post(2.0).periodic_cut(&d, 2.5), None);
        assert_eq!(
            post(2.0).periodic_cut(&d, 3.5),
            Some((2, PeriodicCut::Near { lo: -2.0, hi: 2.0 }))
        );
        assert_eq!(post(f64::INFINITY).periodic_cut(&d, 3.5), None);
        let cap = |normal: DVec3| Wall {
            shape: WallShape::Disc {
                center: DVec3::ZERO,
                normal,
                radius: 2.0,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        assert_eq!(cap(DVec3::Z).periodic_cut(&d, 4.0), None);
        assert_eq!(
            cap(DVec3::X).periodic_cut(&d, 4.0),
            Some((2, PeriodicCut::Near { lo: -2.0, hi: 2.0 }))
        );
    }
}
