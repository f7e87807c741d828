//! `[[wall]]`: planes, cylinders (a finite drum with its caps) and STL
//! meshes, and how they move.

use super::context::Ctx;
use super::schema::*;
use super::setup::Material;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::mesh::{Pose, TriMesh, DEFAULT_CREASE_ANGLE};
use crate::geometry::motion::{Motion, MovingWall, Path, Translation, Turn};
use crate::geometry::walls::{PeriodicCut, Rigid, Wall, WallShape};
use glam::DVec3;
use std::sync::Arc;

/// The walls of the config, a drum's caps following their drum, with their
/// names in the output and their motions.
#[derive(Debug, Clone, Default)]
pub(super) struct WallSet {
    /// The walls at `t = 0`.
    pub walls: Vec<Wall>,
    /// Their names, by index.
    pub names: Vec<String>,
    /// The `[[wall]]` block each comes from.
    pub block: Vec<usize>,
    /// The walls that move.
    pub moving: Vec<MovingWall>,
}

impl WallSet {
    /// The config key of wall `k`: `wall[i]` of its block, with `.caps`
    /// for a cap.
    pub fn key(&self, k: usize) -> String {
        let i = self.block[k];
        let cap = matches!(self.walls[k].shape, WallShape::Disc { .. });
        format!("wall[{i}]{}", if cap { ".caps" } else { "" })
    }
}

/// Read the `[[wall]]` blocks: each wall's shape, material and motion; a
/// drum with `caps` becomes three walls, its side and the discs that close
/// its ends (`<name>.cap_lo` at `−length/2` along the axis, `<name>.cap_hi`
/// at `+length/2`), which turn and move with it.
pub(super) fn walls(cx: &Ctx, cfg: &[WallConfig], mats: &[Material]) -> Result<WallSet> {
    let mut set = WallSet::default();
    for (i, w) in cfg.iter().enumerate() {
        let key = format!("wall[{i}]");
        let name = w.name().map_or_else(|| format!("wall{i}"), str::to_owned);
        let motion = motion(cx, &key, w)?;
        let mut push = |wall: Wall, name: String| {
            if let Some(motion) = &motion {
                set.moving.push(MovingWall::new(
                    set.walls.len(),
                    wall.clone(),
                    motion.clone(),
                ));
            }
            set.walls.push(wall);
            set.names.push(name);
            set.block.push(i);
        };
        match w {
            WallConfig::Plane {
                point,
                normal,
                material,
                ..
            } => push(
                Wall {
                    shape: WallShape::Plane {
                        point: finite(cx, &format!("{key}.point"), point.0)?,
                        normal: cx.unit(&format!("{key}.normal"), normal.0)?,
                    },
                    material: cx.material(&format!("{key}.material"), material, mats)?,
                    rigid: Rigid::REST,
                },
                name,
            ),
            WallConfig::Cylinder {
                axis_point,
                axis,
                radius,
                inside,
                angular_velocity,
                length,
                caps,
                material,
                ..
            } => {
                let axis_point = finite(cx, &format!("{key}.axis_point"), axis_point.0)?;
                let axis = cx.unit(&format!("{key}.axis"), axis.0)?;
                let radius = cx.positive(&format!("{key}.radius"), *radius)?;
                if !angular_velocity.is_finite() {
                    return Err(cx.err(format!(
                        "{key}.angular_velocity: must be finite, got {angular_velocity}"
                    )));
                }
                let half_length = match length {
                    Some(l) => 0.5 * cx.positive(&format!("{key}.length"), *l)?,
                    None => f64::INFINITY,
                };
                if *caps && !(*inside && length.is_some()) {
                    return Err(cx.err(format!(
                        "{key}.caps: only a finite drum has caps: set `length` and keep `inside = true` (a finite post, inside = false, is closed at its ends already)"
                    )));
                }
                let material = cx.material(&format!("{key}.material"), material, mats)?;
                let rigid = if *angular_velocity == 0.0 {
                    Rigid::REST
                } else {
                    Rigid::turning(*angular_velocity, axis, axis_point)
                };
                let shape = WallShape::Cylinder {
                    axis_point,
                    axis,
                    radius,
                    half_length,
                    inside: *inside,
                };
                push(
                    Wall {
                        shape,
                        material,
                        rigid,
                    },
                    name.clone(),
                );
                if *caps {
                    for (end, suffix) in [(-1.0, "cap_lo"), (1.0, "cap_hi")] {
                        let shape = WallShape::Disc {
                            center: axis_point + end * half_length * axis,
                            normal: -end * axis,
                            radius,
                        };
                        let cap = Wall {
                            shape,
                            material,
                            rigid,
                        };
                        push(cap, format!("{name}.{suffix}"));
                    }
                }
            }
            WallConfig::Mesh {
                path,
                scale,
                offset,
                crease_angle,
                material,
                ..
            } => {
                let scale = cx.positive(&format!("{key}.scale"), *scale)?;
                let offset = match offset {
                    Some(o) => finite(cx, &format!("{key}.offset"), o.0)?,
                    None => DVec3::ZERO,
                };
                let file = cx
                    .file
                    .parent()
                    .unwrap_or(std::path::Path::new("."))
                    .join(path);
                let crease = crease_angle.unwrap_or(DEFAULT_CREASE_ANGLE);
                if !(0.0..90.0).contains(&crease) {
                    return Err(cx.err(format!(
                        "{key}.crease_angle = {crease}: must lie in [0, 90) degrees (contacts whose normals differ by less are merged into one)"
                    )));
                }
                let mut mesh = TriMesh::read_stl(&file, scale, offset)
                    .map_err(|e| cx.err(format!("{key}.path: {e}")))?;
                mesh.set_crease_angle(crease);
                push(
                    Wall {
                        shape: WallShape::Mesh {
                            mesh: Arc::new(mesh),
                            pose: Pose::REST,
                        },
                        material: cx.material(&format!("{key}.material"), material, mats)?,
                        rigid: Rigid::REST,
                    },
                    name,
                );
            }
        }
    }
    cx.names(
        "wall",
        set.names
            .iter()
            .enumerate()
            .map(|(k, n)| (format!("{}.name", set.key(k)), n.as_str())),
    )?;
    Ok(set)
}

/// A finite point.
fn finite(cx: &Ctx, key: &str, v: [f64; 3]) -> Result<DVec3> {
    let p = DVec3::from_array(v);
    if p.is_finite() {
        Ok(p)
    } else {
        Err(cx.err(format!("{key}: must be finite, got {v:?}")))
    }
}

/// The motion of wall `key` (`velocity` or `path`, and `rotation`), or
/// `None` where it stays.
fn motion(cx: &Ctx, key: &str, w: &WallConfig) -> Result<Option<Motion>> {
    let (velocity, path, rotation) = w.motion();
    let translation = match (velocity, path) {
        (Some(_), Some(_)) => {
            return Err(cx.err(format!(
                "{key}: give `velocity` or `path`, not both (a translation is one or the other)"
            )))
        }
        (Some(v), None) => Translation::Velocity(finite(cx, &format!("{key}.velocity"), v.0)?),
        (None, Some(p)) => {
            let path_key = if matches!(w, WallConfig::Mesh { .. }) {
                "trajectory"
            } else {
                "path"
            };
            let times_ok = p.times.iter().all(|t| t.is_finite());
            let offsets = p
                .offsets
                .iter()
                .enumerate()
                .map(|(j, o)| finite(cx, &format!("{key}.{path_key}.offsets[{j}]"), o.0))
                .collect::<Result<Vec<_>>>()?;
            match Path::new(p.times.clone(), offsets).filter(|_| times_ok) {
                Some(path) => Translation::Path(path),
                None => {
                    return Err(cx.err(format!(
                        "{key}.{path_key}: `times` must be finite and strictly increasing, with one offset per time and at least one; got {} times {:?} and {} offsets",
                        p.times.len(),
                        p.times,
                        p.offsets.len()
                    )))
                }
            }
        }
        (None, None) => Translation::Still,
    };
    let turn = match rotation {
        Some(r) => {
            if !r.angular_velocity.is_finite() {
                return Err(cx.err(format!(
                    "{key}.rotation.angular_velocity: must be finite, got {}",
                    r.angular_velocity
                )));
            }
            Some(Turn {
                axis: cx.unit(&format!("{key}.rotation.axis"), r.axis.0)?,
                point: finite(cx, &format!("{key}.rotation.point"), r.point.0)?,
                rate: r.angular_velocity,
            })
        }
        None => None,
    };
    Ok((translation != Translation::Still || turn.is_some())
        .then_some(Motion { translation, turn }))
}

/// Refuse a wall that cuts a periodic axis ([`Wall::periodic_cut`]), at
/// rest or as it moves: a plane whose normal has a component along one, an
/// infinite cylinder oblique to one, or a wall whose extent along one comes
/// within `reach` (the interaction range) of its periodic faces. Such a
/// wall stands at one place of a box that repeats: particles crossing the
/// periodic face would meet it from behind, or miss it.
///
/// A moving wall must keep to the rule at every instant, which one test at
/// `t = 0` and two on the motion decide: along a periodic axis it may
/// travel only where it is uniform along that axis (a plane, an infinite
/// cylinder parallel to it); it may turn only where the turn keeps a
/// plane's normal off every periodic axis, or leaves a cylinder or a cap
/// where it is (a turn about its own axis).
pub(super) fn check_periodic(cx: &Ctx, set: &WallSet, domain: &Domain, reach: f64) -> Result<()> {
    let rule = "a wall may not cut a periodic axis: a plane's normal must lie along non-periodic axes, an infinite cylinder's axis must be parallel to a periodic axis or perpendicular to it and clear of its faces, a finite cylinder and a cap must lie clear of the periodic faces; a moving wall must keep to this as it moves";
    for (k, w) in set.walls.iter().enumerate() {
        let key = set.key(k);
        if let Some((a, cut)) = w.periodic_cut(domain, reach) {
            let axis = ["x", "y", "z"][a];
            let what = match (&w.shape, cut) {
                (WallShape::Plane { normal, .. }, _) => format!(
                    "the plane's normal {:?} has a component along the periodic axis {axis}, so the plane cuts it",
                    normal.to_array()
                ),
                (WallShape::Cylinder { axis: dir, .. }, PeriodicCut::Crosses) => format!(
                    "the cylinder's axis {:?} is oblique to the periodic axis {axis}, so the cylinder cuts it",
                    dir.to_array()
                ),
                (_, PeriodicCut::Crosses) => {
                    unreachable!("only planes and infinite cylinders cross a periodic axis")
                }
                (_, PeriodicCut::Near { lo, hi }) => format!(
                    "the wall spans {axis} = {lo}..{hi}, within the interaction range {reach} of the periodic faces {axis} = {} and {} (it must stay that far inside the box along the periodic axis {axis})",
                    domain.lo[a], domain.hi[a]
                ),
            };
            return Err(cx.err(format!(
                "{key}: {what} (domain.periodic = {:?}); {rule}",
                domain.periodic
            )));
        }
    }
    for m in &set.moving {
        let key = set.key(m.index);
        if let Some(why) = periodic_motion(&m.base, &m.motion, domain) {
            return Err(cx.err(format!(
                "{key}: {why} (domain.periodic = {:?}); {rule}",
                domain.periodic
            )));
        }
    }
    Ok(())
}

/// Why `motion` takes `wall` (which keeps to the periodic rule at rest)
/// across a periodic axis of `domain`, if it does.
fn periodic_motion(wall: &Wall, motion: &Motion, domain: &Domain) -> Option<String> {
    let periodic: Vec<usize> = (0..3).filter(|&a| domain.periodic[a]).collect();
    let name = ["x", "y", "z"];
    let tiny = 1e-12;
    for &a in &periodic {
        let uniform = match wall.shape {
            WallShape::Plane { .. } => true,
            WallShape::Cylinder {
                axis, half_length, ..
            } => half_length.is_infinite() && (axis[a].abs() - 1.0).abs() <= tiny,
            WallShape::Disc { .. } | WallShape::Mesh { .. } => false,
        };
        let travels = match &motion.translation {
            Translation::Still => false,
            Translation::Velocity(v) => v[a] != 0.0,
            Translation::Path(p) => p.offsets().iter().any(|o| o[a] != p.offsets()[0][a]),
        };
        if travels && !uniform {
            return Some(format!(
                "it travels along the periodic axis {}, along which it is not uniform",
                name[a]
            ));
        }
    }
    let turn = motion.turn?;
    if periodic.is_empty() {
        return None;
    }
    let (u, c) = (turn.axis, turn.point);
    match wall.shape {
        WallShape::Mesh { .. } => Some(format!(
            "it turns about {:?}, and a turning mesh is not uniform along a periodic axis",
            u.to_array()
        )),
        WallShape::Plane { normal: n, .. } => {
            // n(θ)·e_a = (n·e_a − (u·e_a)(u·n)) cos θ + ((u × n)·e_a) sin θ
            // + (u·e_a)(u·n): zero for every θ when each term is.
            let cut = periodic
                .iter()
                .find(|&&a| (u[a] * u.dot(n)).abs() > tiny || u.cross(n)[a].abs() > tiny);
            cut.map(|&a| {
                format!(
                    "its turn about {:?} brings its normal onto the periodic axis {}",
                    u.to_array(),
                    name[a]
                )
            })
        }
        WallShape::Cylinder {
            axis_point: p,
            axis: d,
            ..
        }
        | WallShape::Disc {
            center: p,
            normal: d,
            ..
        } => {
            let scale = 1.0 + (p - c).length();
            let own_axis = u.cross(d).length() <= tiny && (p - c).cross(d).length() <= tiny * scale;
            (!own_axis).then(|| {
                format!(
                    "it turns about {:?} through {:?}, not about its own axis, in a domain with a periodic axis",
                    u.to_array(),
                    c.to_array()
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

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

    /// The `[[wall]]` blocks of `text`, read.
    fn read(text: &str) -> Result<WallSet> {
        #[derive(Deserialize)]
        struct Walls {
            wall: Vec<WallConfig>,
        }
        let cfg: Walls = toml::from_str(text).expect("unit-test TOML parses");
        walls(&cx(), &cfg.wall, &mats())
    }

    fn err(text: &str) -> String {
        read(text).unwrap_err().to_string()
    }

    #[test]
    fn walls_get_unit_normals_and_their_material_index() {
        let set = read(
            r#"
            [[wall]]
            kind = "plane"
            point = [0, 0, 1]
            normal = [0, 0, -2]
            material = "steel"
            [[wall]]
            kind = "cylinder"
            axis_point = [1, 0, 0]
            axis = [0, 3, 4]
            radius = 0.5
            angular_velocity = -2.0
            material = "glass"
            "#,
        )
        .unwrap();
        assert_eq!(
            set.walls[0],
            Wall {
                shape: WallShape::Plane {
                    point: DVec3::Z,
                    normal: DVec3::NEG_Z,
                },
                material: 1,
                rigid: Rigid::REST,
            }
        );
        let axis = DVec3::new(0.0, 0.6, 0.8);
        assert_eq!(
            set.walls[1],
            Wall {
                shape: WallShape::Cylinder {
                    axis_point: DVec3::X,
                    axis,
                    radius: 0.5,
                    half_length: f64::INFINITY,
                    inside: true,
                },
                material: 0,
                rigid: Rigid::turning(-2.0, axis, DVec3::X),
            }
        );
        assert_eq!(set.names, ["wall0", "wall1"]);
        assert!(set.moving.is_empty());
    }

    #[test]
    fn a_capped_drum_is_its_side_and_two_discs_that_turn_with_it() {
        let set = read(
            r#"
            [[wall]]
            kind = "cylinder"
            name = "drum"
            axis_point = [0, 0, 0]
            axis = [0, 1, 0]
            radius = 0.5
            length = 0.2
            caps = true
            angular_velocity = 3.0
            material = "glass"
            "#,
        )
        .unwrap();
        assert_eq!(set.names, ["drum", "drum.cap_lo", "drum.cap_hi"]);
        let spin = Rigid::turning(3.0, DVec3::Y, DVec3::ZERO);
        assert_eq!(
            set.walls[1].shape,
            WallShape::Disc {
                center: DVec3::new(0.0, -0.1, 0.0),
                normal: DVec3::Y,
                radius: 0.5
            }
        );
        assert_eq!(
            set.walls[2].shape,
            WallShape::Disc {
                center: DVec3::new(0.0, 0.1, 0.0),
                normal: -DVec3::Y,
                radius: 0.5
            }
        );
        assert!(set.walls.iter().all(|w| w.rigid == spin));
        assert_eq!(set.key(2), "wall[0].caps");
    }

    #[test]
    fn motions_are_read_for_every_wall_of_a_block() {
        let set = read(
            r#"
            [[wall]]
            kind = "plane"
            point = [0, 0, 0]
            normal = [0, 0, 1]
            material = "glass"
            path = { times = [0, 1], offsets = [[0, 0, 0], [0, 0, 0.5]] }
            [[wall]]
            kind = "cylinder"
            axis_point = [0, 0, 0]
            axis = [0, 1, 0]
            radius = 0.5
            length = 0.2
            caps = true
            material = "glass"
            velocity = [0.1, 0, 0]
            rotation = { axis = [0, 0, 2], point = [1, 0, 0], angular_velocity = 0.5 }
            "#,
        )
        .unwrap();
        let indices: Vec<usize> = set.moving.iter().map(|m| m.index).collect();
        assert_eq!(indices, [0, 1, 2, 3]);
        let m = &set.moving[1].motion;
        assert_eq!(
            m.translation,
            Translation::Velocity(DVec3::new(0.1, 0.0, 0.0))
        );
        assert_eq!(
            m.turn,
            Some(Turn {
                axis: DVec3::Z,
                point: DVec3::X,
                rate: 0.5
            })
        );
    }

    #[test]
    fn bad_walls_name_their_key() {
        let plane = |normal: &str, material: &str, extra: &str| {
            format!(
                "[[wall]]\nkind = \"plane\"\npoint = [0, 0, 0]\nnormal = {normal}\nmaterial = \"{material}\"\n{extra}\n"
            )
        };
        let good = plane("[0, 0, 1]", "glass", "");
        assert!(err(&(good.clone() + &plane("[0, 0, 0]", "glass", ""))).contains("wall[1].normal"));
        assert!(err(&plane("[0, 0, 1]", "iron", "")).contains("wall[0].material"));
        let e = err(&plane(
            "[0, 0, 1]",
            "glass",
            "velocity = [1, 0, 0]\npath = { times = [0], offsets = [[0, 0, 0]] }",
        ));
        assert!(
            e.contains("wall[0]: give `velocity` or `path`, not both"),
            "{e}"
        );
        let e = err(&plane(
            "[0, 0, 1]",
            "glass",
            "path = { times = [1, 0], offsets = [[0, 0, 0], [1, 0, 0]] }",
        ));
        assert!(
            e.contains("wall[0].path") && e.contains("strictly increasing"),
            "{e}"
        );
        let e = err(&plane(
            "[0, 0, 1]",
            "glass",
            "path = { times = [0, 1], offsets = [[0, 0, 0]] }",
        ));
        assert!(e.contains("wall[0].path") && e.contains("2 times"), "{e}");
        let e = err(&plane(
            "[0, 0, 1]",
            "glass",
            "rotation = { axis = [0, 0, 0], point = [0, 0, 0], angular_velocity = 1 }",
        ));
        assert!(e.contains("wall[0].rotation.axis"), "{e}");
        let e = err(&plane(
            "[0, 0, 1]",
            "glass",
            "rotation = { axis = [0, 0, 1], point = [0, 0, 0], angular_velocity = inf }",
        ));
        assert!(e.contains("wall[0].rotation.angular_velocity"), "{e}");
        let cylinder = |extra: &str| {
            format!(
                "[[wall]]\nkind = \"cylinder\"\naxis_point = [0, 0, 0]\naxis = [0, 0, 1]\nmaterial = \"glass\"\n{extra}\n"
            )
        };
        assert!(err(&cylinder("radius = 0")).contains("wall[0].radius"));
        assert!(err(&cylinder("radius = 1\nangular_velocity = inf"))
            .contains("wall[0].angular_velocity"));
        assert!(err(&cylinder("radius = 1\nlength = -1")).contains("wall[0].length"));
        let e = err(&cylinder("radius = 1\ncaps = true"));
        assert!(e.contains("wall[0].caps: only a finite drum"), "{e}");
        let e = err(&cylinder(
            "radius = 1\nlength = 1\ninside = false\ncaps = true",
        ));
        assert!(e.contains("wall[0].caps"), "{e}");
        // The caps' names follow the name rule too.
        let long = "n".repeat(60);
        let e = err(&cylinder(&format!(
            "radius = 1\nlength = 1\ncaps = true\nname = \"{long}\""
        )));
        assert!(e.contains("wall[0].caps.name"), "{e}");
    }

    fn domain(periodic: [bool; 3]) -> Domain {
        Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic,
        }
    }

    #[test]
    fn walls_across_a_periodic_axis_are_refused() {
        let set = read(
            r#"
            [[wall]]
            kind = "plane"
            point = [0, 0, 0]
            normal = [0, 0, 1]
            material = "glass"
            [[wall]]
            kind = "cylinder"
            axis_point = [0.5, 0.5, 0.5]
            axis = [1, 0, 0]
            radius = 0.4
            material = "glass"
            "#,
        )
        .unwrap();
        let check =
            |set: &WallSet, periodic, reach| check_periodic(&cx(), set, &domain(periodic), reach);
        assert!(check(&set, [true, false, false], 0.05).is_ok());
        let e = check(&set, [true, false, true], 0.05)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wall[0]") && e.contains("periodic axis z"),
            "{e}"
        );
        // The drum (radius 0.4 about y = z = 0.5) perpendicular to y: clear
        // of the faces by 0.1, not by an interaction range of 0.2.
        assert!(check(&set, [false, true, false], 0.05).is_ok());
        let e = check(&set, [false, true, false], 0.2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wall[1]") && e.contains("periodic faces y = 0 and 1"),
            "{e}"
        );
    }

    #[test]
    fn moving_walls_keep_to_the_periodic_rule_as_they_move() {
        let wall = |extra: &str| {
            read(&format!(
                "[[wall]]\nkind = \"plane\"\npoint = [0, 0, 0]\nnormal = [0, 0, 1]\nmaterial = \"glass\"\n{extra}\n"
            ))
            .unwrap()
        };
        let check = |set: &WallSet| check_periodic(&cx(), set, &domain([true, true, false]), 0.05);
        // A floor sliding along periodic x, or rising: fine.
        assert!(check(&wall("velocity = [1, 0, 0.1]")).is_ok());
        // Turning in its own plane (a turntable): fine.
        assert!(check(&wall(
            "rotation = { axis = [0, 0, 1], point = [0.5, 0.5, 0], angular_velocity = 2 }"
        ))
        .is_ok());
        // Tilting about x: its normal gains a y component.
        let e = check(&wall(
            "rotation = { axis = [1, 0, 0], point = [0, 0, 0], angular_velocity = 2 }",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("wall[0]") && e.contains("brings its normal onto the periodic axis y"),
            "{e}"
        );
        // With y alone periodic, tilting about y keeps the normal off it.
        assert!(check_periodic(
            &cx(),
            &wall("rotation = { axis = [0, 1, 0], point = [0, 0, 0], angular_velocity = 2 }"),
            &domain([false, true, false]),
            0.05
        )
        .is_ok());
        // A finite post along periodic z may not travel along z, nor orbit.
        let post = |extra: &str| {
            read(&format!(
                "[[wall]]\nkind = \"cylinder\"\naxis_point = [0.5, 0.5, 0.5]\naxis = [0, 0, 1]\nradius = 0.1\nlength = 0.2\ninside = false\nmaterial = \"glass\"\n{extra}\n"
            ))
            .unwrap()
        };
        let z = |set: &WallSet| check_periodic(&cx(), set, &domain([false, false, true]), 0.05);
        assert!(z(&post("velocity = [0.1, 0, 0]")).is_ok());
        let e = z(&post("velocity = [0, 0, 0.1]")).unwrap_err().to_string();
        assert!(e.contains("travels along the periodic axis z"), "{e}");
        assert!(z(&post(
            "rotation = { axis = [0, 0, 1], point = [0.5, 0.5, 0], angular_velocity = 2 }"
        ))
        .is_ok());
        let e = z(&post(
            "rotation = { axis = [0, 0, 1], point = [0.4, 0.5, 0], angular_velocity = 2 }",
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("not about its own axis"), "{e}");
    }
}
