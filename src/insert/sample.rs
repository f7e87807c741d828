//! Where a generated sphere may go: uniform points in a [`Region`], the
//! region a sphere's centre must stay in, and the wall test every insertion
//! path shares ([`clear_of_walls`]).

use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use glam::DVec3;
use std::f64::consts::TAU;

/// Whether a sphere of radius `r` at `x` clears every wall: on each wall's
/// particles' side with its centre at least `r` from the surface,
/// `wall.clearance(x) ≥ r`. The one wall test of random fills, relaxed
/// fills and pours.
#[inline]
pub fn clear_of_walls(walls: &[Wall], x: DVec3, r: f64) -> bool {
    walls.iter().all(|w| w.clears(x, r))
}

/// Move a sphere of radius `r` at `x` out of every wall it is closer to
/// than `r` (or behind; behind a mesh only within `r` of it), along the
/// gradient of the wall's clearance (by central differences, so any wall
/// with a clearance works), to a clearance of `r (1 + 1e-9)`. A sphere
/// clear of all walls is not moved.
pub fn push_out_of_walls(walls: &[Wall], mut x: DVec3, r: f64) -> DVec3 {
    for w in walls {
        // A mesh that does not come within `r` needs no push: the sphere
        // is clear of it or wholly behind it, which the fills' final test
        // (`clear_of_walls`) refuses; this spares the search of the whole
        // mesh for the sign.
        if !w.reaches(x, r) {
            continue;
        }
        let c = w.clearance(x);
        if c >= r {
            continue;
        }
        let h = 1e-4 * r;
        let g = DVec3::new(
            w.clearance(x + h * DVec3::X) - w.clearance(x - h * DVec3::X),
            w.clearance(x + h * DVec3::Y) - w.clearance(x - h * DVec3::Y),
            w.clearance(x + h * DVec3::Z) - w.clearance(x - h * DVec3::Z),
        ) / (2.0 * h);
        let len = g.length();
        if len > 0.0 {
            x += (r * (1.0 + 1e-9) - c) / len * (g / len);
        }
    }
    x
}

/// The region in which the centre of a sphere of radius `r` keeps the
/// whole sphere inside `region`, or `None` where the sphere does not fit.
pub fn shrunk(region: &Region, r: f64) -> Option<Region> {
    let out = match *region {
        Region::Box { lo, hi } => Region::Box {
            lo: lo + DVec3::splat(r),
            hi: hi - DVec3::splat(r),
        },
        Region::Cylinder {
            center,
            axis,
            radius,
            half_length,
        } => Region::Cylinder {
            center,
            axis,
            radius: radius - r,
            half_length: half_length - r,
        },
        Region::Sphere { center, radius } => Region::Sphere {
            center,
            radius: radius - r,
        },
    };
    let ok = match out {
        Region::Box { lo, hi } => lo.cmple(hi).all(),
        Region::Cylinder {
            radius,
            half_length,
            ..
        } => radius >= 0.0 && half_length >= 0.0,
        Region::Sphere { radius, .. } => radius >= 0.0,
    };
    ok.then_some(out)
}

/// The point of `region` that the unit cube's point `u` maps to: uniform
/// `u` gives points uniform in the region's volume. Box: `lo + u (hi −
/// lo)`. Cylinder: radius `R √u₀`, angle `2π u₁`, axial `(2u₂ − 1) h`.
/// Sphere: radius `R ∛u₀`, `cos θ = 1 − 2u₁`, azimuth `2π u₂`.
pub fn point_in(region: &Region, u: [f64; 3]) -> DVec3 {
    match *region {
        Region::Box { lo, hi } => lo + DVec3::from_array(u) * (hi - lo),
        Region::Cylinder {
            center,
            axis,
            radius,
            half_length,
        } => {
            let (a, b) = axis.any_orthonormal_pair();
            let rho = radius * u[0].sqrt();
            let (s, c) = (TAU * u[1]).sin_cos();
            center + rho * (c * a + s * b) + (2.0 * u[2] - 1.0) * half_length * axis
        }
        Region::Sphere { center, radius } => {
            let rho = radius * u[0].cbrt();
            let ct = 1.0 - 2.0 * u[1];
            let st = (1.0 - ct * ct).max(0.0).sqrt();
            let (s, c) = (TAU * u[2]).sin_cos();
            center + rho * DVec3::new(st * c, st * s, ct)
        }
    }
}

/// The point of `region` nearest to `x` (`x` itself inside).
pub fn project(region: &Region, x: DVec3) -> DVec3 {
    match *region {
        Region::Box { lo, hi } => x.clamp(lo, hi),
        Region::Cylinder {
            center,
            axis,
            radius,
            half_length,
        } => {
            let rel = x - center;
            let along = rel.dot(axis);
            let radial = rel - along * axis;
            let rho = radial.length();
            if rho <= radius && along.abs() <= half_length {
                return x;
            }
            let radial = if rho > radius {
                radial * (radius / rho)
            } else {
                radial
            };
            center + along.clamp(-half_length, half_length) * axis + radial
        }
        Region::Sphere { center, radius } => {
            let rel = x - center;
            let d = rel.length();
            if d > radius {
                center + rel * (radius / d)
            } else {
                x
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::walls::{Rigid, WallShape};
    use crate::insert::{stream, uniform};

    fn regions() -> [Region; 3] {
        [
            Region::Box {
                lo: DVec3::new(-1.0, 0.0, 2.0),
                hi: DVec3::new(1.0, 3.0, 2.5),
            },
            Region::Cylinder {
                center: DVec3::new(0.5, -0.5, 1.0),
                axis: DVec3::new(0.0, 0.6, 0.8),
                radius: 0.7,
                half_length: 1.2,
            },
            Region::Sphere {
                center: DVec3::new(1.0, 2.0, 3.0),
                radius: 0.9,
            },
        ]
    }

    #[test]
    fn points_are_inside_and_uniform_in_volume() {
        // The fraction of points in the inner half-size copy of the region
        // is that copy's share of the volume: 1/8 for every shape (scaled
        // by 1/2 about its centre). 40,000 points: sd √(pq/n) = 0.0017.
        for region in regions() {
            let mut rng = stream(5, 0, 0);
            let (lo, hi) = region.bounds();
            let mid = 0.5 * (lo + hi);
            let n = 40_000;
            let mut inner = 0;
            for _ in 0..n {
                let x = point_in(
                    &region,
                    [uniform(&mut rng), uniform(&mut rng), uniform(&mut rng)],
                );
                assert!(region.depth(x) >= -1e-12, "{region:?} {x}");
                if region.contains(mid + 2.0 * (x - mid)) {
                    inner += 1;
                }
            }
            let f = inner as f64 / n as f64;
            assert!((f - 0.125).abs() < 5.0 * 0.0017, "{} {f}", region.kind());
        }
    }

    #[test]
    fn shrunk_regions_hold_whole_spheres_and_projection_lands_inside() {
        for region in regions() {
            let s = shrunk(&region, 0.2).unwrap();
            let mut rng = stream(6, 0, 0);
            for _ in 0..1000 {
                let x = point_in(
                    &s,
                    [uniform(&mut rng), uniform(&mut rng), uniform(&mut rng)],
                );
                assert!(region.holds_sphere(x, 0.2 - 1e-12));
                let far = x + 10.0 * DVec3::new(uniform(&mut rng) - 0.5, 0.3, -0.2);
                let p = project(&s, far);
                assert!(s.depth(p) >= -1e-12, "{p}");
                assert_eq!(project(&s, x), x);
            }
            assert!(shrunk(&region, 5.0).is_none());
        }
    }

    #[test]
    fn pushing_out_of_walls_reaches_the_clearance() {
        let floor = Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::new(0.0, 0.6, 0.8),
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let drum = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::ZERO,
                axis: DVec3::X,
                radius: 1.0,
                inside: true,
                half_length: f64::INFINITY,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        for (w, x) in [
            (floor, DVec3::new(0.3, -0.5, 0.1)),
            (drum, DVec3::new(0.2, 1.3, 0.4)),
        ] {
            let walls = [w.clone()];
            assert!(!clear_of_walls(&walls, x, 0.1));
            let y = push_out_of_walls(&walls, x, 0.1);
            assert!(clear_of_walls(&walls, y, 0.1), "{y}");
            assert!((w.clearance(y) - 0.1).abs() < 1e-8);
            assert_eq!(push_out_of_walls(&walls, y, 0.1), y);
        }
    }
}
