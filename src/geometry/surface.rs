//! Walls as triangle surfaces, for drawing (the XDMF sidecar): a plane as
//! the polygon where it cuts the box, a cylinder as a tessellated tube
//! (an infinite one clipped to the box's extent along its axis), a disc
//! as a fan.

use super::domain::Domain;
use super::walls::{Wall, WallShape};
use glam::DVec3;
use std::f64::consts::TAU;

/// Segments around a cylinder or a disc.
pub const SEGMENTS: usize = 48;

/// A triangle surface: points and triangles (indices into `points`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// Vertices.
    pub points: Vec<DVec3>,
    /// Triangles, counter-clockwise seen from no side in particular.
    pub triangles: Vec<[u32; 3]>,
}

impl Surface {
    /// Append `other`, its indices shifted.
    pub fn extend(&mut self, other: Surface) {
        let base = self.points.len() as u32;
        self.points.extend(other.points);
        self.triangles
            .extend(other.triangles.iter().map(|t| t.map(|i| i + base)));
    }

    /// The total area of the triangles.
    pub fn area(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.points[i as usize]);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }
}

/// The corners of the box `domain`.
fn corners(domain: &Domain) -> [DVec3; 8] {
    let (lo, hi) = (domain.lo, domain.hi);
    std::array::from_fn(|c| {
        DVec3::new(
            if c & 1 == 0 { lo.x } else { hi.x },
            if c & 2 == 0 { lo.y } else { hi.y },
            if c & 4 == 0 { lo.z } else { hi.z },
        )
    })
}

/// A fan over the convex polygon `ring` (in order) about its centroid.
fn fan(ring: Vec<DVec3>) -> Surface {
    if ring.len() < 3 {
        return Surface::default();
    }
    let n = ring.len() as u32;
    let centre = ring.iter().sum::<DVec3>() / ring.len() as f64;
    let mut points = ring;
    points.push(centre);
    let triangles = (0..n).map(|k| [n, k, (k + 1) % n]).collect();
    Surface { points, triangles }
}

/// The polygon where the plane through `point` with unit `normal` cuts the
/// box: the crossings of its twelve edges, in order around the normal.
fn plane_in_box(point: DVec3, normal: DVec3, domain: &Domain) -> Surface {
    let c = corners(domain);
    let side = c.map(|x| (x - point).dot(normal));
    let mut ring: Vec<DVec3> = Vec::new();
    for a in 0..8 {
        for bit in [1, 2, 4] {
            let b = a | bit;
            if b == a {
                continue;
            }
            let (da, db) = (side[a], side[b]);
            let crossing = if da == 0.0 {
                Some(c[a])
            } else if db == 0.0 {
                Some(c[b])
            } else if (da < 0.0) != (db < 0.0) {
                Some(c[a] + (c[b] - c[a]) * (da / (da - db)))
            } else {
                None
            };
            if let Some(p) = crossing {
                if ring
                    .iter()
                    .all(|q| (*q - p).length() > 1e-12 * domain.length().length())
                {
                    ring.push(p);
                }
            }
        }
    }
    if ring.len() < 3 {
        return Surface::default();
    }
    let centre = ring.iter().sum::<DVec3>() / ring.len() as f64;
    let (e1, e2) = normal.any_orthonormal_pair();
    ring.sort_by(|p, q| {
        let angle = |x: &DVec3| (*x - centre).dot(e2).atan2((*x - centre).dot(e1));
        angle(p).total_cmp(&angle(q))
    });
    fan(ring)
}

/// The circle of `radius` about `centre` in the plane of unit `axis`.
fn circle(centre: DVec3, axis: DVec3, radius: f64) -> Vec<DVec3> {
    let (e1, e2) = axis.any_orthonormal_pair();
    (0..SEGMENTS)
        .map(|k| {
            let phi = TAU * k as f64 / SEGMENTS as f64;
            centre + radius * (phi.cos() * e1 + phi.sin() * e2)
        })
        .collect()
}

/// `wall` as a triangle surface within `domain`.
pub fn tessellate(wall: &Wall, domain: &Domain) -> Surface {
    match wall.shape.clone() {
        WallShape::Mesh { mesh, pose } => Surface {
            points: mesh.vertices().iter().map(|&v| pose.place(v)).collect(),
            triangles: mesh.triangles().to_vec(),
        },
        WallShape::Plane { point, normal } => plane_in_box(point, normal, domain),
        WallShape::Cylinder {
            axis_point,
            axis,
            radius,
            half_length,
            inside,
        } => {
            // An infinite cylinder is drawn across the box's extent along it.
            let along = corners(domain).map(|c| (c - axis_point).dot(axis));
            let (t0, t1) = if half_length.is_finite() {
                (-half_length, half_length)
            } else {
                let lo = along.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = along.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, hi)
            };
            let mut points = circle(axis_point + t0 * axis, axis, radius);
            points.extend(circle(axis_point + t1 * axis, axis, radius));
            let n = SEGMENTS as u32;
            let triangles = (0..n)
                .flat_map(|k| {
                    let next = (k + 1) % n;
                    [[k, next, n + k], [next, n + next, n + k]]
                })
                .collect();
            let mut tube = Surface { points, triangles };
            // A finite post is closed at its ends.
            if half_length.is_finite() && !inside {
                for t in [t0, t1] {
                    tube.extend(fan(circle(axis_point + t * axis, axis, radius)));
                }
            }
            tube
        }
        WallShape::Disc {
            center,
            normal,
            radius,
        } => fan(circle(center, normal, radius)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::walls::Rigid;
    use std::f64::consts::PI;

    fn unit_box() -> Domain {
        Domain {
            lo: DVec3::ZERO,
            hi: DVec3::new(1.0, 2.0, 3.0),
            periodic: [false; 3],
        }
    }

    fn wall(shape: WallShape) -> Wall {
        Wall {
            shape,
            material: 0,
            rigid: Rigid::REST,
        }
    }

    #[test]
    fn a_plane_is_drawn_where_it_cuts_the_box() {
        // z = 1 cuts the 1 × 2 × 3 box in a 1 × 2 rectangle.
        let s = tessellate(
            &wall(WallShape::Plane {
                point: DVec3::new(0.0, 0.0, 1.0),
                normal: DVec3::Z,
            }),
            &unit_box(),
        );
        assert!((s.area() - 2.0).abs() < 1e-14, "{}", s.area());
        assert!(s.points.iter().all(|p| (p.z - 1.0).abs() < 1e-15));
        // A floor on the box's face: the whole face.
        let s = tessellate(
            &wall(WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::Z,
            }),
            &unit_box(),
        );
        assert!((s.area() - 2.0).abs() < 1e-14, "{}", s.area());
        // The diagonal plane x = y/2 through the box: a 3 × √5 rectangle.
        let s = tessellate(
            &wall(WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::new(2.0, -1.0, 0.0).normalize(),
            }),
            &unit_box(),
        );
        assert!((s.area() - 3.0 * 5f64.sqrt()).abs() < 1e-13, "{}", s.area());
        // A plane that misses the box draws nothing.
        let s = tessellate(
            &wall(WallShape::Plane {
                point: DVec3::new(0.0, 0.0, 5.0),
                normal: DVec3::Z,
            }),
            &unit_box(),
        );
        assert!(s.triangles.is_empty());
    }

    #[test]
    fn cylinders_and_discs_are_drawn_to_the_tessellation_error() {
        // The inscribed polygon's area falls short by sin(2π/n)/(2π/n).
        let polygon = (TAU / SEGMENTS as f64).sin() / (TAU / SEGMENTS as f64);
        let drum = wall(WallShape::Cylinder {
            axis_point: DVec3::new(0.5, 1.0, 1.5),
            axis: DVec3::Z,
            radius: 0.4,
            half_length: f64::INFINITY,
            inside: true,
        });
        let s = tessellate(&drum, &unit_box());
        // Drawn across the box along z: length 3, no ends.
        let side = 2.0 * PI * 0.4 * 3.0 * ((PI / SEGMENTS as f64).sin() / (PI / SEGMENTS as f64));
        assert!((s.area() - side).abs() < 1e-12, "{} {side}", s.area());
        let post = wall(WallShape::Cylinder {
            axis_point: DVec3::new(0.5, 1.0, 1.5),
            axis: DVec3::Z,
            radius: 0.4,
            half_length: 0.5,
            inside: false,
        });
        let s = tessellate(&post, &unit_box());
        let want = side / 3.0 + 2.0 * PI * 0.16 * polygon;
        assert!((s.area() - want).abs() < 1e-12, "{} {want}", s.area());
        let cap = wall(WallShape::Disc {
            center: DVec3::ONE,
            normal: DVec3::new(1.0, 1.0, 0.0).normalize(),
            radius: 0.3,
        });
        let s = tessellate(&cap, &unit_box());
        assert!((s.area() - PI * 0.09 * polygon).abs() < 1e-14);
    }
}
