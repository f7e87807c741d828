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

    /// The first non-periodic axis along which `x` lies outside the box, if any.
    pub fn outside_axis(&self, x: DVec3) -> Option<usize> {
        (0..3).find(|&a| {
            let inside = x[a] >= self.lo[a] && x[a] <= self.hi[a];
            !self.periodic[a] && !inside
        })
    }
}
