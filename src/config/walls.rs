//! `[[wall]]`: planes and cylinders.

use super::context::Ctx;
use super::schema::*;
use super::setup::Material;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::walls::{PeriodicCut, Wall, WallShape};
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
                    ..
                } => Wall {
                    shape: WallShape::Plane {
                        point: DVec3::from_array(point.0),
                        normal: cx.unit(&format!("{key}.normal"), normal.0)?,
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
                    ..
                } => Wall {
                    shape: WallShape::Cylinder {
                        axis_point: DVec3::from_array(axis_point.0),
                        axis: cx.unit(&format!("{key}.axis"), axis.0)?,
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

/// The walls' names in the output: as given, or `wall<k>` (`k` the wall's
/// index), each under the name rule ([`Ctx::names`]).
pub(super) fn wall_names(cx: &Ctx, cfg: &[WallConfig]) -> Result<Vec<String>> {
    let names: Vec<String> = cfg
        .iter()
        .enumerate()
        .map(|(k, w)| w.name().map_or_else(|| format!("wall{k}"), str::to_owned))
        .collect();
    cx.names(
        "wall",
        names
            .iter()
            .enumerate()
            .map(|(k, n)| (format!("wall[{k}].name"), n.as_str())),
    )?;
    Ok(names)
}

/// Refuse a wall that cuts a periodic axis ([`Wall::periodic_cut`]): a
/// plane whose normal has a component along one, a cylinder oblique to one,
/// or a cylinder perpendicular to one that comes within `reach` (the
/// interaction range) of its periodic faces. Such a wall stands at one place
/// of a box that repeats: particles crossing the periodic face would meet it
/// from behind, or miss it.
pub(super) fn check_periodic(cx: &Ctx, walls: &[Wall], domain: &Domain, reach: f64) -> Result<()> {
    for (k, w) in walls.iter().enumerate() {
        let Some((a, cut)) = w.periodic_cut(domain, reach) else {
            continue;
        };
        let axis = ["x", "y", "z"][a];
        let what = match (w.shape, cut) {
            (WallShape::Plane { normal, .. }, _) => format!(
                "the plane's normal {:?} has a component along the periodic axis {axis}, so the plane cuts it",
                normal.to_array()
            ),
            (WallShape::Cylinder { axis: dir, .. }, PeriodicCut::Crosses) => format!(
                "the cylinder's axis {:?} is oblique to the periodic axis {axis}, so the cylinder cuts it",
                dir.to_array()
            ),
            (WallShape::Cylinder { .. }, PeriodicCut::Near { lo, hi }) => format!(
                "the cylinder spans {axis} = {lo}..{hi}, within the interaction range {reach} of the periodic faces {axis} = {} and {} (it must stay that far inside the box along the periodic axis {axis})",
                domain.lo[a], domain.hi[a]
            ),
        };
        return Err(cx.err(format!(
            "wall[{k}]: {what} (domain.periodic = {:?}); a wall may not cut a periodic axis: a plane's normal must lie along non-periodic axes, a cylinder's axis must be parallel to a periodic axis or perpendicular to it and clear of its faces",
            domain.periodic
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Ctx<'static> {
        Ctx {
            file: std::path::Path::new("unit.toml"),
        }
    }

    fn mats() -> Vec<Material> {
        ["glass", "steel"]
            .map(|name| Material {
                name: name.into(),
                density: 1.0,
                youngs_modulus: None,
                poisson_ratio: None,
            })
            .to_vec()
    }

    #[test]
    fn walls_get_unit_normals_and_their_material_index() {
        let cfg = [
            WallConfig::Plane {
                name: None,
                point: [0.0, 0.0, 1.0].into(),
                normal: [0.0, 0.0, -2.0].into(),
                material: "steel".into(),
            },
            WallConfig::Cylinder {
                name: None,
                axis_point: [1.0, 0.0, 0.0].into(),
                axis: [0.0, 3.0, 4.0].into(),
                radius: 0.5,
                inside: true,
                angular_velocity: -2.0,
                material: "glass".into(),
            },
        ];
        let w = walls(&cx(), &cfg, &mats()).unwrap();
        assert_eq!(
            w[0],
            Wall {
                shape: WallShape::Plane {
                    point: DVec3::Z,
                    normal: DVec3::NEG_Z,
                },
                material: 1,
            }
        );
        assert_eq!(
            w[1],
            Wall {
                shape: WallShape::Cylinder {
                    axis_point: DVec3::X,
                    axis: DVec3::new(0.0, 0.6, 0.8),
                    radius: 0.5,
                    inside: true,
                    angular_velocity: -2.0,
                },
                material: 0,
            }
        );
    }

    #[test]
    fn bad_walls_name_their_key() {
        let plane = |normal: [f64; 3], material: &str| WallConfig::Plane {
            name: None,
            point: [0.0; 3].into(),
            normal: normal.into(),
            material: material.into(),
        };
        let err = |cfg: &[WallConfig]| walls(&cx(), cfg, &mats()).unwrap_err().to_string();
        assert!(
            err(&[plane([0.0, 0.0, 1.0], "glass"), plane([0.0; 3], "glass")])
                .contains("wall[1].normal")
        );
        assert!(err(&[plane([0.0, 0.0, 1.0], "iron")]).contains("wall[0].material"));
        let cylinder = |radius: f64, angular_velocity: f64| WallConfig::Cylinder {
            name: None,
            axis_point: [0.0; 3].into(),
            axis: [0.0, 0.0, 1.0].into(),
            radius,
            inside: false,
            angular_velocity,
            material: "glass".into(),
        };
        assert!(err(&[cylinder(0.0, 1.0)]).contains("wall[0].radius"));
        assert!(err(&[cylinder(1.0, f64::INFINITY)]).contains("wall[0].angular_velocity"));
    }

    #[test]
    fn walls_across_a_periodic_axis_are_refused() {
        let d = |periodic| Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic,
        };
        let plane = |normal: DVec3| Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal,
            },
            material: 0,
        };
        let drum = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::splat(0.5),
                axis: DVec3::X,
                radius: 0.4,
                inside: true,
                angular_velocity: 0.0,
            },
            material: 0,
        };
        let ok = [plane(DVec3::Z), drum];
        assert!(check_periodic(&cx(), &ok, &d([true, false, false]), 0.05).is_ok());
        let e = check_periodic(&cx(), &ok, &d([true, false, true]), 0.05)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wall[0]") && e.contains("periodic axis z"),
            "{e}"
        );
        // The drum (radius 0.4 about y = z = 0.5) perpendicular to y: clear
        // of the faces by 0.1, not by an interaction range of 0.2.
        assert!(check_periodic(&cx(), &ok[1..], &d([false, true, false]), 0.05).is_ok());
        let e = check_periodic(&cx(), &ok[1..], &d([false, true, false]), 0.2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wall[0]") && e.contains("periodic faces y = 0 and 1"),
            "{e}"
        );
    }
}
