//! Walls: infinite planes and circular cylinders (inside or outside, optionally
//! rotating about their axis). A wall is body `j` of its contacts, with
//! infinite mass and radius, and uses the same contact law as particles.

use super::domain::Domain;
use glam::DVec3;

/// The geometry and motion of one wall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WallShape {
    /// Plane through `point` with unit `normal` pointing into the particles' side.
    Plane {
        /// A point on the plane.
        point: DVec3,
        /// Unit normal towards the particles.
        normal: DVec3,
    },
    /// Circular cylinder about the line through `axis_point` along unit `axis`.
    Cylinder {
        /// A point on the axis.
        axis_point: DVec3,
        /// Unit axis direction.
        axis: DVec3,
        /// Radius.
        radius: f64,
        /// Particles inside (drum) or outside (post).
        inside: bool,
        /// Angular velocity about `axis` (rad/s).
        angular_velocity: f64,
    },
}

/// A wall with its material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wall {
    /// Shape and motion.
    pub shape: WallShape,
    /// Material index.
    pub material: u32,
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

impl Wall {
    /// Contact geometry of a sphere at `x` with radius `r`, if it overlaps the
    /// wall by more than zero (or lies within `extra` of it).
    #[inline]
    pub fn touch(&self, x: DVec3, r: f64, extra: f64) -> Option<WallTouch> {
        match self.shape {
            WallShape::Plane { point, normal } => {
                let dist = (x - point).dot(normal);
                (dist < r + extra).then_some(WallTouch {
                    n: -normal,
                    dist,
                    velocity: DVec3::ZERO,
                    omega: DVec3::ZERO,
                })
            }
            WallShape::Cylinder {
                axis_point,
                axis,
                radius,
                inside,
                angular_velocity,
            } => {
                let rel = x - axis_point;
                let radial = rel - rel.dot(axis) * axis;
                let rho = radial.length();
                let (dist, n) = if inside {
                    (radius - rho, radial / rho)
                } else {
                    (rho - radius, -radial / rho)
                };
                let touching = dist < r + extra;
                if !touching || rho == 0.0 {
                    return None;
                }
                let omega = angular_velocity * axis;
                let contact_point = x + dist * n;
                Some(WallTouch {
                    n,
                    dist,
                    velocity: omega.cross(contact_point - axis_point),
                    omega,
                })
            }
        }
    }
}

impl Wall {
    /// The point the diagnostics take a wall's torque about: a plane's
    /// `point`, a cylinder's `axis_point`.
    pub fn reference_point(&self) -> DVec3 {
        match self.shape {
            WallShape::Plane { point, .. } => point,
            WallShape::Cylinder { axis_point, .. } => axis_point,
        }
    }

    /// Signed distance from `x` to the wall's surface, positive on the
    /// particles' side: a sphere of radius `r` at `x` clears the wall when it
    /// is at least `r`. (The distance [`Wall::touch`] measures, read only.)
    pub fn clearance(&self, x: DVec3) -> f64 {
        match self.shape {
            WallShape::Plane { point, normal } => (x - point).dot(normal),
            WallShape::Cylinder {
                axis_point,
                axis,
                radius,
                inside,
                ..
            } => {
                let rel = x - axis_point;
                let rho = (rel - rel.dot(axis) * axis).length();
                if inside {
                    radius - rho
                } else {
                    rho - radius
                }
            }
        }
    }

    /// The least [`Wall::clearance`] of any point of the box `lo..hi`: a
    /// sphere wholly inside the box clears the wall by its radius when this
    /// is at least 0. A plane's and a drum's least clearance is at a corner
    /// (the distance to a plane is linear, the distance from an axis convex);
    /// a post's is the distance from its axis to the box, less its radius.
    pub fn box_clearance(&self, lo: DVec3, hi: DVec3) -> f64 {
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
    /// along ([`PeriodicCut::Crosses`]); a cylinder is uniform along the
    /// axis it is parallel to, crosses an axis its own axis is oblique to,
    /// and spans `centre ± radius` along an axis it is perpendicular to,
    /// which must lie at least `margin` (the interaction range) inside the
    /// box ([`PeriodicCut::Near`]), so that no particle meets it through a
    /// periodic face.
    pub fn periodic_cut(&self, domain: &Domain, margin: f64) -> Option<(usize, PeriodicCut)> {
        (0..3).filter(|&a| domain.periodic[a]).find_map(|a| {
            let cut = match self.shape {
                WallShape::Plane { normal, .. } => {
                    (normal[a] != 0.0).then_some(PeriodicCut::Crosses)
                }
                WallShape::Cylinder {
                    axis_point,
                    axis,
                    radius,
                    ..
                } => {
                    let parallel = (0..3).all(|b| b == a || axis[b] == 0.0);
                    let (lo, hi) = (axis_point[a] - radius, axis_point[a] + radius);
                    if parallel {
                        None
                    } else if axis[a] != 0.0 {
                        Some(PeriodicCut::Crosses)
                    } else if lo < domain.lo[a] + margin || hi > domain.hi[a] - margin {
                        Some(PeriodicCut::Near { lo, hi })
                    } else {
                        None
                    }
                }
            };
            cut.map(|c| (a, c))
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
                angular_velocity: 3.0,
            },
            material: 0,
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
                angular_velocity: 0.0,
            },
            material: 0,
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
                angular_velocity: 0.0,
            },
            material: 0,
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
}
