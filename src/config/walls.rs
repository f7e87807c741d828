//! `[[wall]]`: planes and cylinders.

use super::context::Ctx;
use super::schema::*;
use super::setup::Material;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::walls::{Wall, WallShape};
use glam::DVec3;

pub(super) fn walls(cx: &Ctx, cfg: &[WallConfig], mats: &[Material]) -> Result<Vec<Wall>> {
    cfg.iter()
        .enumerate()
        .map(|(k, w)| {
            let key = format!("wall[{k}]");
            Ok(match w {
                WallConfig::Plane {
                    point,
                    normal,
                    material,
                } => Wall {
                    shape: WallShape::Plane {
                        point: DVec3::from_array(*point),
                        normal: cx.unit(&format!("{key}.normal"), *normal)?,
                    },
                    material: cx.material(&format!("{key}.material"), material, mats)?,
                },
                WallConfig::Cylinder {
                    axis_point,
                    axis,
                    radius,
                    inside,
                    angular_velocity,
                    material,
                } => Wall {
                    shape: WallShape::Cylinder {
                        axis_point: DVec3::from_array(*axis_point),
                        axis: cx.unit(&format!("{key}.axis"), *axis)?,
                        radius: cx.positive(&format!("{key}.radius"), *radius)?,
                        inside: *inside,
                        angular_velocity: if angular_velocity.is_finite() {
                            *angular_velocity
                        } else {
                            return Err(cx.err(format!("{key}.angular_velocity: must be finite")));
                        },
                    },
                    material: cx.material(&format!("{key}.material"), material, mats)?,
                },
            })
        })
        .collect()
}

pub(super) fn region(
    cx: &Ctx,
    key: &str,
    r: &RegionConfig,
    domain: &Domain,
) -> Result<(DVec3, DVec3)> {
    let (lo, hi) = (DVec3::from_array(r.lo), DVec3::from_array(r.hi));
    if !(lo.is_finite() && hi.is_finite() && lo.cmplt(hi).all()) {
        return Err(cx.err(format!(
            "{key}.region: `lo` must be below `hi` on every axis, got lo = {:?}, hi = {:?}",
            r.lo, r.hi
        )));
    }
    if lo.cmplt(domain.lo).any() || hi.cmpgt(domain.hi).any() {
        return Err(cx.err(format!(
            "{key}.region: must lie inside the domain {:?}..{:?}",
            domain.lo.to_array(),
            domain.hi.to_array()
        )));
    }
    Ok((lo, hi))
}
