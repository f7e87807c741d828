//! The simulation box and its periodic axes.

use glam::DVec3;

/// An axis-aligned box with per-axis periodicity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    /// Lower corner.
    pub lo: DVec3,
    /// Upper corner.
    pub hi: DVec3,
    /// Periodicity per axis.
    pub periodic: [bool; 3],
}

impl Domain {
    /// Edge lengths.
    pub fn length(&self) -> DVec3 {
        self.hi - self.lo
    }

    /// The box's volume.
    pub fn volume(&self) -> f64 {
        let l = self.length();
        l.x * l.y * l.z
    }

    /// Map a position back into the box along periodic axes (at most one box
    /// length; particles never move that far between rebuilds).
    pub fn wrap(&self, mut x: DVec3) -> DVec3 {
        let l = self.length();
        for a in 0..3 {
            if self.periodic[a] {
                if x[a] >= self.hi[a] {
                    x[a] -= l[a];
                } else if x[a] < self.lo[a] {
                    x[a] += l[a];
                }
            }
        }
        x
    }

    /// `x` wrapped into the box and every periodic image of it that lies
    /// within `margin` of the box (along a periodic axis, the copy one box
    /// length over when `x` is within `margin` of the far face): the
    /// positions at which a sphere near a periodic face is met from inside
    /// the box. At most eight, the wrapped position first.
    pub fn images_within(&self, x: DVec3, margin: f64) -> Vec<DVec3> {
        self.images_within_except(x, margin, &|_| false)
    }

    /// [`Self::images_within`], without images along the axes `skip` names.
    pub fn images_within_except(
        &self,
        x: DVec3,
        margin: f64,
        skip: &dyn Fn(usize) -> bool,
    ) -> Vec<DVec3> {
        let x = self.wrap(x);
        let l = self.length();
        let mut images = vec![x];
        for a in 0..3 {
            if !self.periodic[a] || skip(a) {
                continue;
            }
            let shift = if x[a] - self.lo[a] < margin {
                l[a]
            } else if self.hi[a] - x[a] < margin {
                -l[a]
            } else {
                continue;
            };
            for k in 0..images.len() {
                let mut y = images[k];
                y[a] += shift;
                images.push(y);
            }
        }
        images
    }

    /// Whether `x`, or one of its periodic images, lies in the box
    /// `lo..=hi` (which may run past the domain along periodic axes).
    pub fn in_box_periodic(&self, x: DVec3, lo: DVec3, hi: DVec3) -> bool {
        (0..3).all(|a| self.spans_meet(a, (x[a], x[a]), (lo[a], hi[a])))
    }

    /// Whether the boxes `a` and `b` (each `(lo, hi)`) meet, directly or
    /// through the periodic faces.
    pub fn boxes_meet(&self, a: (DVec3, DVec3), b: (DVec3, DVec3)) -> bool {
        (0..3).all(|k| self.spans_meet(k, (a.0[k], a.1[k]), (b.0[k], b.1[k])))
    }

    /// Whether the intervals `s` and `t` along axis `a` meet, counting
    /// periodic images (up to two box lengths over).
    fn spans_meet(&self, a: usize, s: (f64, f64), t: (f64, f64)) -> bool {
        let meets = |d: f64| s.0 + d <= t.1 && s.1 + d >= t.0;
        if !self.periodic[a] {
            return meets(0.0);
        }
        let l = self.hi[a] - self.lo[a];
        if t.1 - t.0 >= l || s.1 - s.0 >= l {
            return true;
        }
        (-2..=2).any(|k| meets(f64::from(k) * l))
    }

    /// The first non-periodic axis along which `x` lies outside the box, if any.
    pub fn outside_axis(&self, x: DVec3) -> Option<usize> {
        (0..3).find(|&a| {
            let inside = x[a] >= self.lo[a] && x[a] <= self.hi[a];
            !self.periodic[a] && !inside
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(periodic: [bool; 3]) -> Domain {
        Domain {
            lo: DVec3::new(-1.0, 0.0, 2.0),
            hi: DVec3::new(1.0, 4.0, 3.0),
            periodic,
        }
    }

    #[test]
    fn images_within_a_margin_cross_periodic_faces_only() {
        // x periodic over [-1, 1), y periodic over [0, 4), z not.
        let d = domain([true, true, false]);
        let near_corner = DVec3::new(0.95, 0.05, 2.5);
        let mut got = d.images_within(near_corner, 0.1);
        got.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).unwrap());
        assert_eq!(
            got,
            vec![
                DVec3::new(-1.05, 0.05, 2.5),
                DVec3::new(-1.05, 4.05, 2.5),
                DVec3::new(0.95, 0.05, 2.5),
                DVec3::new(0.95, 4.05, 2.5),
            ]
        );
        // Unwrapped input is wrapped first; the middle of the box has no image.
        assert_eq!(
            d.images_within(DVec3::new(1.02, 2.0, 2.01), 0.1),
            vec![DVec3::new(-0.98, 2.0, 2.01), DVec3::new(1.02, 2.0, 2.01)]
        );
        assert_eq!(
            d.images_within(DVec3::new(0.0, 2.0, 2.01), 0.1),
            vec![DVec3::new(0.0, 2.0, 2.01)]
        );
    }

    #[test]
    fn wrap_maps_periodic_axes_into_lo_to_hi() {
        let d = domain([true, true, false]);
        assert_eq!(d.length(), DVec3::new(2.0, 4.0, 1.0));
        // Inside: unchanged, bit for bit.
        let x = DVec3::new(0.3, 3.9, 2.5);
        assert_eq!(d.wrap(x), x);
        // The upper face belongs to the next image, the lower one to the box.
        assert_eq!(
            d.wrap(DVec3::new(1.0, 4.0, 2.5)),
            DVec3::new(-1.0, 0.0, 2.5)
        );
        assert_eq!(
            d.wrap(DVec3::new(-1.0, 0.0, 2.5)),
            DVec3::new(-1.0, 0.0, 2.5)
        );
        // Out by less than a box length on either side.
        assert_eq!(
            d.wrap(DVec3::new(1.5, -0.5, 2.5)),
            DVec3::new(-0.5, 3.5, 2.5)
        );
        assert_eq!(
            d.wrap(DVec3::new(-1.25, 5.0, 2.5)),
            DVec3::new(0.75, 1.0, 2.5)
        );
        // A closed axis is left alone, even outside the box.
        assert_eq!(d.wrap(DVec3::new(0.0, 1.0, 7.0)), DVec3::new(0.0, 1.0, 7.0));
        assert_eq!(
            domain([false; 3]).wrap(DVec3::new(5.0, -5.0, 0.0)),
            DVec3::new(5.0, -5.0, 0.0)
        );
    }

    #[test]
    fn outside_axis_names_the_first_closed_axis_left() {
        let d = domain([true, false, false]);
        assert_eq!(d.outside_axis(DVec3::new(0.0, 1.0, 2.5)), None);
        // The faces of a closed axis are inside.
        assert_eq!(d.outside_axis(DVec3::new(0.0, 0.0, 3.0)), None);
        assert_eq!(d.outside_axis(DVec3::new(0.0, 4.0, 2.0)), None);
        // A periodic axis is never "outside".
        assert_eq!(d.outside_axis(DVec3::new(9.0, 1.0, 2.5)), None);
        assert_eq!(d.outside_axis(DVec3::new(9.0, 4.5, 2.5)), Some(1));
        assert_eq!(d.outside_axis(DVec3::new(0.0, 1.0, 1.999)), Some(2));
        // The first of several.
        assert_eq!(d.outside_axis(DVec3::new(0.0, -1.0, 9.0)), Some(1));
        // NaN is outside.
        assert_eq!(d.outside_axis(DVec3::new(0.0, f64::NAN, 2.5)), Some(1));
    }
}
