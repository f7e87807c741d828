//! Walls: infinite planes and circular cylinders (inside or outside, optionally
//! rotating about their axis). A wall is body `j` of its contacts, with
//! infinite mass and radius, and uses the same contact law as particles.

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
}
