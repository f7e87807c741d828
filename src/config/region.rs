//! `region = { ... }`: a box, a finite cylinder or a sphere, inside the
//! domain.

use super::context::Ctx;
use super::schema::{RegionConfig, RegionKind};
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::region::Region;
use glam::DVec3;

/// The keys each kind of region takes; every other key is refused.
fn keys_of(kind: RegionKind) -> &'static [&'static str] {
    match kind {
        RegionKind::Box => &["lo", "hi"],
        RegionKind::Cylinder => &["center", "axis", "radius", "length"],
        RegionKind::Sphere => &["center", "radius"],
    }
}

/// The region `key.region`: each kind with its keys, finite, of positive
/// size, and lying inside the domain (its bounding box does).
pub(super) fn shaped_region(
    cx: &Ctx,
    key: &str,
    r: &RegionConfig,
    domain: &Domain,
) -> Result<Region> {
    let key = format!("{key}.region");
    let given = [
        ("lo", r.lo.is_some()),
        ("hi", r.hi.is_some()),
        ("center", r.center.is_some()),
        ("axis", r.axis.is_some()),
        ("radius", r.radius.is_some()),
        ("length", r.length.is_some()),
    ];
    let takes = keys_of(r.kind);
    let kind = format!("{:?}", r.kind).to_lowercase();
    for (name, present) in given {
        if present != takes.contains(&name) {
            let why = if present { "does not take" } else { "needs" };
            return Err(cx.err(format!(
                "{key}: a {kind} region {why} `{name}`; its keys are {}",
                takes.join(", ")
            )));
        }
    }
    let point = |name: &str, v: Option<&super::fixed::Fixed<f64, 3>>| -> Result<DVec3> {
        let v = DVec3::from_array(v.expect("checked above").0);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(cx.err(format!(
                "{key}.{name}: must be finite, got {:?}",
                v.to_array()
            )))
        }
    };
    let positive = |name: &str, v: Option<f64>| cx.positive(&format!("{key}.{name}"), v.unwrap());
    let region = match r.kind {
        RegionKind::Box => {
            let (lo, hi) = (point("lo", r.lo.as_ref())?, point("hi", r.hi.as_ref())?);
            if !lo.cmplt(hi).all() {
                return Err(cx.err(format!(
                    "{key}: `lo` must be below `hi` on every axis, got lo = {:?}, hi = {:?}",
                    lo.to_array(),
                    hi.to_array()
                )));
            }
            Region::Box { lo, hi }
        }
        RegionKind::Cylinder => Region::Cylinder {
            center: point("center", r.center.as_ref())?,
            axis: cx.unit(&format!("{key}.axis"), r.axis.as_ref().unwrap().0)?,
            radius: positive("radius", r.radius)?,
            half_length: 0.5 * positive("length", r.length)?,
        },
        RegionKind::Sphere => Region::Sphere {
            center: point("center", r.center.as_ref())?,
            radius: positive("radius", r.radius)?,
        },
    };
    let (lo, hi) = region.bounds();
    if lo.cmplt(domain.lo).any() || hi.cmpgt(domain.hi).any() {
        return Err(cx.err(format!(
            "{key}: must lie inside the domain {:?}..{:?}; this {kind} spans {:?}..{:?}",
            domain.lo.to_array(),
            domain.hi.to_array(),
            lo.to_array(),
            hi.to_array()
        )));
    }
    Ok(region)
}

/// The box `key.region` (where only a box is allowed): its corners.
pub(super) fn region(
    cx: &Ctx,
    key: &str,
    r: &RegionConfig,
    domain: &Domain,
) -> Result<(DVec3, DVec3)> {
    match shaped_region(cx, key, r, domain)? {
        Region::Box { lo, hi } => Ok((lo, hi)),
        other => Err(cx.err(format!(
            "{key}.region: must be a box `{{ lo, hi }}` here, got a {}",
            other.kind()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Ctx<'static> {
        Ctx {
            file: std::path::Path::new("unit.toml"),
        }
    }

    fn unit_box() -> Domain {
        Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic: [false; 3],
        }
    }

    #[test]
    fn regions_lie_inside_the_domain() {
        let d = unit_box();
        let r = |lo: [f64; 3], hi: [f64; 3]| {
            region(
                &cx(),
                "particles[2]",
                &RegionConfig {
                    lo: Some(lo.into()),
                    hi: Some(hi.into()),
                    ..Default::default()
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

    #[test]
    fn cylinders_and_spheres_take_their_keys_only() {
        let d = unit_box();
        let cyl = RegionConfig {
            kind: RegionKind::Cylinder,
            center: Some([0.5; 3].into()),
            axis: Some([0.0, 0.0, 2.0].into()),
            radius: Some(0.25),
            length: Some(0.5),
            ..Default::default()
        };
        assert_eq!(
            shaped_region(&cx(), "outlet[0]", &cyl, &d).unwrap(),
            Region::Cylinder {
                center: DVec3::splat(0.5),
                axis: DVec3::Z,
                radius: 0.25,
                half_length: 0.25
            }
        );
        let e = region(&cx(), "outlet[0]", &cyl, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a box") && e.contains("cylinder"), "{e}");
        let stray = RegionConfig {
            lo: Some([0.0; 3].into()),
            ..cyl.clone()
        };
        let e = shaped_region(&cx(), "outlet[0]", &stray, &d)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("outlet[0].region: a cylinder region does not take `lo`"),
            "{e}"
        );
        let sphere = RegionConfig {
            kind: RegionKind::Sphere,
            center: Some([0.5; 3].into()),
            ..Default::default()
        };
        let e = shaped_region(&cx(), "p", &sphere, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a sphere region needs `radius`"), "{e}");
        let big = RegionConfig {
            radius: Some(0.6),
            ..sphere
        };
        let e = shaped_region(&cx(), "p", &big, &d).unwrap_err().to_string();
        assert!(e.contains("inside the domain"), "{e}");
        let flat = RegionConfig {
            length: Some(0.0),
            ..cyl
        };
        let e = shaped_region(&cx(), "p", &flat, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.region.length"), "{e}");
    }
}
