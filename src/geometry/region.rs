//! Regions of space: boxes, finite cylinders and spheres, for insertion and
//! outlets. A region answers whether a point, or a whole sphere, lies
//! inside it, and how large it is.

use glam::DVec3;

/// A closed region of space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Region {
    /// The axis-aligned box `lo..hi`.
    Box {
        /// Lower corner.
        lo: DVec3,
        /// Upper corner.
        hi: DVec3,
    },
    /// The finite circular cylinder of `radius` about unit `axis` through
    /// `center`, reaching `half_length` either side of it along the axis.
    Cylinder {
        /// Centre of the cylinder (mid-way between its ends, on the axis).
        center: DVec3,
        /// Unit axis direction.
        axis: DVec3,
        /// Radius.
        radius: f64,
        /// Half the length along the axis.
        half_length: f64,
    },
    /// The ball of `radius` about `center`.
    Sphere {
        /// Centre.
        center: DVec3,
        /// Radius.
        radius: f64,
    },
}

impl Region {
    /// The depth of `x` inside the region: the distance from `x` to the
    /// region's surface where `x` is inside (so a sphere of radius `r` at
    /// `x` lies wholly inside iff the depth is at least `r`), negative or
    /// zero outside. For a box and a cylinder outside, the value is
    /// negative but not the true distance (the largest of the per-face
    /// signed distances).
    pub fn depth(&self, x: DVec3) -> f64 {
        match *self {
            Region::Box { lo, hi } => (x - lo).min(hi - x).min_element(),
            Region::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                let rel = x - center;
                let along = rel.dot(axis);
                let rho = (rel - along * axis).length();
                (radius - rho).min(half_length - along.abs())
            }
            Region::Sphere { center, radius } => radius - (x - center).length(),
        }
    }

    /// Whether the point `x` lies inside the region (its surface included).
    #[inline]
    pub fn contains(&self, x: DVec3) -> bool {
        self.depth(x) >= 0.0
    }

    /// Whether the sphere of radius `r` at `x` lies wholly inside.
    #[inline]
    pub fn holds_sphere(&self, x: DVec3, r: f64) -> bool {
        self.depth(x) >= r
    }

    /// The region's volume.
    pub fn volume(&self) -> f64 {
        match *self {
            Region::Box { lo, hi } => (hi - lo).element_product(),
            Region::Cylinder {
                radius,
                half_length,
                ..
            } => std::f64::consts::PI * radius * radius * 2.0 * half_length,
            Region::Sphere { radius, .. } => 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3),
        }
    }

    /// The smallest axis-aligned box that holds the region.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        match *self {
            Region::Box { lo, hi } => (lo, hi),
            Region::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                // Per axis: the ends' reach half_length·|a_i| plus the end
                // discs' reach radius·sqrt(1 − a_i²).
                let reach = DVec3::new(
                    half_length * axis.x.abs() + radius * (1.0 - axis.x * axis.x).max(0.0).sqrt(),
                    half_length * axis.y.abs() + radius * (1.0 - axis.y * axis.y).max(0.0).sqrt(),
                    half_length * axis.z.abs() + radius * (1.0 - axis.z * axis.z).max(0.0).sqrt(),
                );
                (center - reach, center + reach)
            }
            Region::Sphere { center, radius } => {
                (center - DVec3::splat(radius), center + DVec3::splat(radius))
            }
        }
    }

    /// The region's kind as the config names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Region::Box { .. } => "box",
            Region::Cylinder { .. } => "cylinder",
            Region::Sphere { .. } => "sphere",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_the_distance_to_the_surface_inside() {
        let b = Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::new(2.0, 4.0, 6.0),
        };
        assert_eq!(b.depth(DVec3::new(1.0, 1.5, 3.0)), 1.0);
        assert!(b.holds_sphere(DVec3::new(1.0, 2.0, 3.0), 1.0));
        assert!(!b.holds_sphere(DVec3::new(1.0, 2.0, 0.5), 1.0));
        assert!(!b.contains(DVec3::new(-0.1, 2.0, 3.0)));
        let c = Region::Cylinder {
            center: DVec3::new(1.0, 1.0, 1.0),
            axis: DVec3::Z,
            radius: 2.0,
            half_length: 3.0,
        };
        assert_eq!(c.depth(DVec3::new(2.5, 1.0, 1.0)), 0.5);
        assert_eq!(c.depth(DVec3::new(1.0, 1.0, 3.5)), 0.5);
        assert!(!c.contains(DVec3::new(1.0, 1.0, 4.5)));
        assert!(!c.contains(DVec3::new(3.5, 1.0, 1.0)));
        let s = Region::Sphere {
            center: DVec3::ZERO,
            radius: 2.0,
        };
        assert_eq!(s.depth(DVec3::new(0.0, 1.5, 0.0)), 0.5);
        assert!(!s.contains(DVec3::splat(1.2)));
    }

    #[test]
    fn volumes_and_bounds() {
        let c = Region::Cylinder {
            center: DVec3::ZERO,
            axis: DVec3::new(0.0, 0.6, 0.8),
            radius: 1.0,
            half_length: 2.0,
        };
        assert!((c.volume() - 4.0 * std::f64::consts::PI).abs() < 1e-14);
        let (lo, hi) = c.bounds();
        // Along x the axis has no component: the discs reach the radius.
        assert!((hi.x - 1.0).abs() < 1e-15 && (lo.x + 1.0).abs() < 1e-15);
        // Along z: 2·0.8 + 1·0.6.
        assert!((hi.z - 2.2).abs() < 1e-15);
        // Every point of a dense sample of the cylinder lies in the bounds.
        for i in 0..20 {
            for j in 0..20 {
                let (t, phi) = (-2.0 + 0.2 * i as f64, 0.1 * std::f64::consts::PI * j as f64);
                let u = DVec3::X;
                let v = DVec3::new(0.0, 0.6, 0.8).cross(u);
                let p = t * DVec3::new(0.0, 0.6, 0.8) + phi.cos() * u + phi.sin() * v;
                assert!(p.cmpge(lo - 1e-12).all() && p.cmple(hi + 1e-12).all());
            }
        }
        let s = Region::Sphere {
            center: DVec3::ONE,
            radius: 0.5,
        };
        assert!((s.volume() - std::f64::consts::PI / 6.0).abs() < 1e-15);
        assert_eq!(s.bounds(), (DVec3::splat(0.5), DVec3::splat(1.5)));
    }
}
