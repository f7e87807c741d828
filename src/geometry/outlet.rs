//! Outlets: regions that delete the particles entering them, and what
//! becomes of a particle that leaves the domain through an open face
//! ([`Lost`]). The deletion itself is a stage of the step
//! (`sim::delete`).

use super::domain::Domain;
use super::region::Region;
use glam::DVec3;
use serde::Deserialize;

/// An `[[outlet]]`: a particle whose centre lies inside `region` (its
/// surface included) at the deletion point of a step is deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlet {
    /// Its name in the output and in messages (default `outlet<k>`).
    pub name: String,
    /// Where particles are deleted; it lies inside the domain.
    pub region: Region,
    /// The region's bounding box (`Region::bounds`), the cheap test
    /// that turns most particles away before the exact one.
    bounds: (DVec3, DVec3),
}

impl Outlet {
    /// The outlet `name` over `region`.
    pub fn new(name: String, region: Region) -> Self {
        Self {
            name,
            bounds: region.bounds(),
            region,
        }
    }

    /// Whether the point `x` (inside the box) lies in the outlet.
    #[inline]
    pub fn contains(&self, x: DVec3) -> bool {
        let (lo, hi) = self.bounds;
        (x.cmpge(lo) & x.cmple(hi)).all() && self.region.contains(x)
    }
}

/// `[domain] lost`: what happens to a particle whose centre leaves the
/// domain through a face that is not periodic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lost {
    /// The run stops with an error naming the particle (the default).
    #[default]
    Error,
    /// The particle is deleted and counted, as an outlet deletes.
    Delete,
}

/// Why a particle is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// It left the domain through an open face (`lost = "delete"`).
    Lost,
    /// Its centre lies in outlet `k` (the first, in config order, that holds
    /// it).
    Outlet(usize),
}

/// The deletion rule of a run: its outlets and its `lost` setting.
#[derive(Debug, Clone, Copy)]
pub struct Outflow<'a> {
    /// The box.
    pub domain: &'a Domain,
    /// The outlets, in config order.
    pub outlets: &'a [Outlet],
    /// What becomes of a particle out through an open face.
    pub lost: Lost,
}

impl Outflow<'_> {
    /// Whether any particle can be deleted at all (outlets, or
    /// `lost = "delete"`).
    pub fn deletes(&self) -> bool {
        !self.outlets.is_empty() || self.lost == Lost::Delete
    }

    /// Whether a particle at the finite position `x` (not wrapped: along a
    /// periodic axis it may lie up to one box length out) is deleted, and
    /// why: out of the domain through an open face comes first, then the
    /// outlets in config order, each tested at `x` wrapped into the box.
    pub fn deletion(&self, x: DVec3) -> Option<Deletion> {
        if self.lost == Lost::Delete && self.domain.outside_axis(x).is_some() {
            return Some(Deletion::Lost);
        }
        if self.outlets.is_empty() {
            return None;
        }
        let at = self.domain.wrap(x);
        self.outlets
            .iter()
            .position(|o| o.contains(at))
            .map(Deletion::Outlet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_comes_first_then_outlets_in_order_at_the_wrapped_position() {
        let domain = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic: [true, false, false],
        };
        let outlets = [
            Outlet::new(
                "low".into(),
                Region::Box {
                    lo: DVec3::ZERO,
                    hi: DVec3::new(1.0, 1.0, 0.1),
                },
            ),
            Outlet::new(
                "corner".into(),
                Region::Sphere {
                    center: DVec3::new(0.1, 0.5, 0.1),
                    radius: 0.1,
                },
            ),
        ];
        let rule = |lost| Outflow {
            domain: &domain,
            outlets: &outlets,
            lost,
        };
        let (keep, delete) = (rule(Lost::Error), rule(Lost::Delete));
        assert!(keep.deletes() && delete.deletes());
        // Below the floor: lost only when lost = "delete".
        let below = DVec3::new(0.5, 0.5, -0.01);
        assert_eq!(delete.deletion(below), Some(Deletion::Lost));
        assert_eq!(keep.deletion(below), None);
        // Out along periodic x by less than a box: wrapped into outlet 0.
        let x = DVec3::new(1.3, 0.5, 0.05);
        assert_eq!(keep.deletion(x), Some(Deletion::Outlet(0)));
        // In both outlets: the first counts. On the surface is inside.
        assert_eq!(
            keep.deletion(DVec3::new(0.1, 0.5, 0.1)),
            Some(Deletion::Outlet(0))
        );
        assert_eq!(
            keep.deletion(DVec3::new(0.1, 0.5, 0.2)),
            Some(Deletion::Outlet(1))
        );
        assert_eq!(keep.deletion(DVec3::new(0.5, 0.5, 0.5)), None);
        let none = Outflow {
            domain: &domain,
            outlets: &[],
            lost: Lost::Error,
        };
        assert!(!none.deletes());
        assert_eq!(none.deletion(below), None);
    }
}
