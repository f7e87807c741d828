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

pub(super) fn region(
    cx: &Ctx,
    key: &str,
    r: &RegionConfig,
    domain: &Domain,
) -> Result<(DVec3, DVec3)> {
    let (lo, hi) = (DVec3::from_array(r.lo.0), DVec3::from_array(r.hi.0));
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
                point: [0.0, 0.0, 1.0].into(),
                normal: [0.0, 0.0, -2.0].into(),
                material: "steel".into(),
            },
            WallConfig::Cylinder {
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
    fn regions_lie_inside_the_domain() {
        let d = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic: [false; 3],
        };
        let r = |lo: [f64; 3], hi: [f64; 3]| {
            region(
                &cx(),
                "particles[2]",
                &RegionConfig {
                    lo: lo.into(),
                    hi: hi.into(),
                },
                &d,
            )
        };
        assert_eq!(
            r([0.0; 3], [1.0; 3]).unwrap(),
            (DVec3::ZERO, DVec3::ONE),
            "the whole domain is a region"
        );
        let e = r([0.5; 3], [0.5, 0.6, 0.6]).unwrap_err().to_string();
        assert!(
            e.contains("particles[2].region") && e.contains("below"),
            "{e}"
        );
        let e = r([0.0; 3], [1.0, 1.0, 1.5]).unwrap_err().to_string();
        assert!(e.contains("inside the domain"), "{e}");
    }
}
