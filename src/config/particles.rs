//! `[[particles]]`: the initial particles and the pouring sources, checked
//! inside the box and free of overlaps.

use super::agree::lowest_rank_error;
use super::context::Ctx;
use super::file_slices;
use super::limits::{usable, MemoryBudget};
use super::region::shaped_region;
use super::schema::*;
use super::setup::Material;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::region::Region;
use crate::geometry::walls::Wall;
use crate::insert::cells::RandomFill;
use crate::insert::earlier::{file_spheres, Earlier, EarlierFile, NearFiles};
use crate::insert::file::{FileWalk, ParticleFile};
use crate::insert::initial::{Initial, InitialBlock, Lattice, Share};
use crate::insert::relax::{relaxed_fill, FillError, FILL_MAX_SWEEPS, FILL_OVERLAP_TOLERANCE};
use crate::insert::{self, Placer, PourSource, RadiusDist, SizeStats};
use crate::parallel::comm::Comm;
use crate::state::particles::ParticleRecord;
use glam::DVec3;
use std::path::Path;
use std::sync::Arc;

/// The radius distribution `key.radius`: each form with its keys, every
/// radius and fraction finite and in range (see [`RadiusSpec`]).
pub(super) fn radius_dist(cx: &Ctx, key: &str, r: &RadiusSpec) -> Result<RadiusDist> {
    let t = match r {
        RadiusSpec::Fixed(v) => {
            return Ok(RadiusDist::Fixed(
                cx.positive(&format!("{key}.radius"), *v)?,
            ))
        }
        RadiusSpec::Table(t) => t,
    };
    let key = format!("{key}.radius");
    let form = match (&t.distribution, &t.values) {
        (Some(_), Some(_)) => {
            return Err(cx.err(format!(
                "{key}: `distribution` and `values` do not go together; give {{ distribution, mean, sd, min, max }} or {{ values, fractions, basis }}"
            )))
        }
        (Some(d), None) => match d.as_str() {
            "normal" | "lognormal" => d.as_str(),
            other => {
                return Err(cx.err(format!(
                    "{key}.distribution: unknown distribution `{other}`; allowed: \"normal\", \"lognormal\" (or leave it out for uniform {{ min, max }})"
                )))
            }
        },
        (None, Some(_)) => "discrete",
        (None, None) => "uniform",
    };
    let given = [
        ("min", t.min.is_some()),
        ("max", t.max.is_some()),
        ("mean", t.mean.is_some()),
        ("sd", t.sd.is_some()),
        ("values", t.values.is_some()),
        ("fractions", t.fractions.is_some()),
    ];
    let takes: &[&str] = match form {
        "uniform" => &["min", "max"],
        "discrete" => &["values", "fractions"],
        _ => &["min", "max", "mean", "sd"],
    };
    for (name, present) in given {
        if present != takes.contains(&name) {
            let why = if present { "does not take" } else { "needs" };
            return Err(cx.err(format!(
                "{key}: a {form} radius distribution {why} `{name}`; its keys are {}",
                takes.join(", ")
            )));
        }
    }
    if t.basis.is_some() && form != "discrete" {
        return Err(cx.err(format!(
            "{key}.basis: only a discrete distribution {{ values, fractions }} takes `basis`"
        )));
    }
    let range = || -> Result<(f64, f64)> {
        let min = cx.positive(&format!("{key}.min"), t.min.unwrap())?;
        let max = cx.positive(&format!("{key}.max"), t.max.unwrap())?;
        if min > max {
            return Err(cx.err(format!("{key}: min ({min}) must not exceed max ({max})")));
        }
        Ok((min, max))
    };
    match form {
        "uniform" => {
            let (min, max) = range()?;
            Ok(RadiusDist::Uniform { min, max })
        }
        "normal" | "lognormal" => {
            let (min, max) = range()?;
            let mean = cx.positive(&format!("{key}.mean"), t.mean.unwrap())?;
            let sd = cx.positive(&format!("{key}.sd"), t.sd.unwrap())?;
            // Rejection draws need the range to carry some of the mass.
            let z = |x: f64| {
                if form == "normal" {
                    (x - mean) / sd
                } else {
                    let (mu, s) = RadiusDist::lognormal_params(mean, sd);
                    (x.ln() - mu) / s
                }
            };
            let p = normal_cdf(z(max)) - normal_cdf(z(min));
            if p.is_nan() || p < 1e-6 {
                return Err(cx.err(format!(
                    "{key}: [min, max] = [{min}, {max}] holds only {p:.1e} of the {form} distribution of mean {mean} and sd {sd}; it must hold at least 1e-6 (radii are drawn by rejection)"
                )));
            }
            Ok(if form == "normal" {
                RadiusDist::Normal { mean, sd, min, max }
            } else {
                RadiusDist::LogNormal { mean, sd, min, max }
            })
        }
        _ => {
            let values = t.values.clone().unwrap();
            let fractions = t.fractions.clone().unwrap();
            if values.is_empty() {
                return Err(cx.err(format!("{key}.values: must list at least one radius")));
            }
            if fractions.len() != values.len() {
                return Err(cx.err(format!(
                    "{key}.fractions: has {} entries but `values` has {}",
                    fractions.len(),
                    values.len()
                )));
            }
            for (i, &v) in values.iter().enumerate() {
                cx.positive(&format!("{key}.values[{i}]"), v)?;
            }
            for (i, &f) in fractions.iter().enumerate() {
                cx.non_negative(&format!("{key}.fractions[{i}]"), f)?;
            }
            let sum: f64 = fractions.iter().sum();
            if sum.is_nan() || (sum - 1.0).abs() > 1e-9 {
                return Err(cx.err(format!(
                    "{key}.fractions: must sum to 1 (within 1e-9), got {sum}"
                )));
            }
            let mass = match t.basis.as_deref() {
                None | Some("number") => false,
                Some("mass") => true,
                Some(other) => {
                    return Err(cx.err(format!(
                    "{key}.basis: unknown basis `{other}`; allowed: \"number\" (default), \"mass\""
                )))
                }
            };
            Ok(RadiusDist::discrete(values, &fractions, mass))
        }
    }
}

/// The standard normal CDF `Φ(z) = erfc(−z/√2)/2`, with
/// `erfc(x) = erfcx(x) e^{−x²}` for `x ≥ 0` and `2 − erfc(−x)` below.
fn normal_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    let tail = |x: f64| 0.5 * crate::math::erfcx::erfcx(x) * (-x * x).exp();
    if x >= 0.0 {
        tail(x)
    } else {
        1.0 - tail(-x)
    }
}

/// The realised radius distribution of one `random` or `pour` block: of
/// the first (up to [`POUR_PREVIEW`]) that a `random` count places or a
/// pour will insert, or of every sphere of a relaxed fill.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSizes {
    /// `particles[k]`.
    pub key: String,
    /// `random` or `pour`.
    pub kind: &'static str,
    /// Count, mean, sd, min and max of the radius.
    pub stats: SizeStats,
}

/// How many of a pour's or a random count's radii its set-up summary
/// describes.
pub const POUR_PREVIEW: u64 = 100_000;

type Inserted = (Initial, Vec<PourSource>, u64, Vec<BlockSizes>);

/// The overlap with a wall an initial particle may have, as a fraction of
/// its radius. A bed settled by an earlier run and read back from a file
/// rests on its floor at its static overlaps, which reach 1.8 % of `R` in
/// the shared dense-pack benchmark (`bench/pack`: 1 mm glass, `E = 1e7` Pa,
/// 60 mm deep); a tenth of `R` leaves room for softer and deeper beds. A
/// sphere half sunk into a wall (50 %) or behind it is refused.
pub const WALL_OVERLAP_TOLERANCE: f64 = 0.1;

#[allow(clippy::too_many_arguments)]
pub(super) fn particles(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    mats: &[Material],
    domain: &Domain,
    walls: &[Wall],
    seed: u64,
    budget: &mut MemoryBudget,
    comm: Option<&dyn Comm>,
) -> Result<Inserted> {
    // Ids: those of files are kept; generated ids follow the largest id of any file.
    let mut files = Initial::default();
    if let Some(comm) = comm {
        files.set_share(Share {
            rank: comm.rank(),
            size: comm.size(),
        });
    }
    let mut file_ids = FileIds::default();
    // On several ranks, each rank's slices' ids, checked together at the end.
    let mut slice_ids: Vec<u64> = Vec::new();
    let mut pending: Vec<(usize, InitialBlock)> = Vec::new();
    let mut pours = Vec::new();
    let mut sizes = Vec::new();
    let max_r_all = max_block_radius(blocks);
    let mut placer = Placer::new(max_r_all).periodic_in(domain);
    // What each random fill avoids: the blocks before it (a held block's
    // spheres are kept for this only if a random block follows it).
    let mut earlier = Earlier::default();
    let random_follows =
        |k: usize| (blocks[k + 1..].iter()).any(|b| matches!(b, ParticleBlock::Random { .. }));
    for (k, b) in blocks.iter().enumerate() {
        let key = format!("particles[{k}]");
        finite_vectors(cx, &key, b)?;
        needs_density(cx, &key, b, mats)?;
        let rec = |x: DVec3, v: DVec3, w: DVec3, r: f64, m: u32, frozen: bool| ParticleRecord {
            id: 0,
            x,
            v,
            omega: w,
            radius: r,
            mass: ParticleRecord::sphere_mass(r, mats[m as usize].density),
            material: m,
            frozen,
        };
        let block: InitialBlock = match b {
            ParticleBlock::Lattice {
                material,
                radius,
                region: reg,
                spacing,
                count,
                velocity,
                frozen,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let r = cx.positive(&format!("{key}.radius"), *radius)?;
                let shape = shaped_region(cx, &key, reg, domain)?;
                let (lo, hi) = shape.bounds();
                let spacing = spacing.unwrap_or(2.0 * r * 1.0001);
                if spacing < 2.0 * r {
                    return Err(cx.err(format!("{key}.spacing: {spacing} is less than the diameter {}; spheres would overlap", 2.0 * r)));
                }
                let sites: f64 = insert::lattice_shape(lo, hi, r, spacing).iter().product();
                budget.add_capped(cx, &key, *count, sites, || {
                    format!(
                        "{key}.region (a {} spanning {:?}..{:?}) with spacing {spacing} ({sites:.3e} sites)",
                        shape.kind(),
                        lo.to_array(),
                        hi.to_array()
                    )
                })?;
                let template = rec(
                    DVec3::ZERO,
                    DVec3::from_array(velocity.0),
                    DVec3::ZERO,
                    r,
                    m,
                    *frozen,
                );
                // On several ranks each rank counts its part of the sites.
                let lattice = Lattice::new_in_parts(shape, spacing, *count, template, comm);
                if lattice.count() == 0 {
                    return Err(cx.err(format!(
                        "{key}.region: too small to hold one sphere of radius {r}"
                    )));
                }
                placer.add_lattice(&lattice);
                earlier.push_lattice(lattice.clone());
                InitialBlock::Lattice(Box::new(lattice))
            }
            ParticleBlock::Random {
                material,
                radius,
                count,
                fill,
                region: reg,
                velocity,
                frozen,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let dist = radius_dist(cx, &key, radius)?;
                let shape = shaped_region(cx, &key, reg, domain)?;
                let template = rec(
                    DVec3::ZERO,
                    DVec3::from_array(velocity.0),
                    DVec3::ZERO,
                    0.0,
                    m,
                    *frozen,
                );
                let density = mats[m as usize].density;
                match (count, fill) {
                    (Some(_), Some(_)) => {
                        return Err(cx.err(format!(
                            "{key}: takes `count` (how many) or `fill` (a packing fraction), not both"
                        )))
                    }
                    (None, None) => {
                        return Err(cx.err(format!(
                            "{key}: needs `count` (how many) or `fill` (a packing fraction of the region)"
                        )))
                    }
                    (Some(n), None) => {
                        budget.add(cx, &format!("{key}.count = {n}"), *n as f64)?;
                        check_room(cx, &key, &shape, dist.max(), walls)?;
                        inside_domain(cx, &key, &shape, domain)?;
                        for r in [dist.min(), dist.max()] {
                            check_body(cx, r, ParticleRecord::sphere_mass(r, density), || {
                                format!(
                                    "material[{m}].density = {density:e} (`{}`, used by {key})",
                                    mats[m as usize].name
                                )
                            })?;
                        }
                        let fill = RandomFill::new(
                            seed,
                            k as u64,
                            *n,
                            shape,
                            dist,
                            template,
                            density,
                            walls,
                            domain,
                            earlier.clone(),
                            comm,
                        );
                        sizes.push(BlockSizes {
                            key: key.clone(),
                            kind: "random",
                            stats: SizeStats::of(
                                (0..(*n).min(POUR_PREVIEW)).map(|i| fill.radius_of(i)),
                            ),
                        });
                        earlier.push_fill(fill.clone());
                        pending.push((k, InitialBlock::Random(Box::new(fill))));
                        continue;
                    }
                    (None, Some(f)) => {
                        // A relaxed fill is held whole: it sees the earlier
                        // random fills' and files' spheres near its region.
                        earlier_near(&earlier, &shape, dist.max(), domain, comm, &mut placer);
                        let mut rng = insert::stream(seed, k as u64, u64::MAX);
                        let placed = random_fill(
                            cx, &key, *f, &dist, &shape, walls, &mut rng, &mut placer, budget,
                        )?;
                        if random_follows(k) {
                            earlier.push_held(Arc::new(placed.clone()));
                        }
                        sizes.push(BlockSizes {
                            key: key.clone(),
                            kind: "random",
                            stats: SizeStats::of(placed.iter().map(|p| p.1)),
                        });
                        InitialBlock::Records(
                            placed
                                .into_iter()
                                .map(|(x, r)| ParticleRecord {
                                    x,
                                    radius: r,
                                    mass: ParticleRecord::sphere_mass(r, density),
                                    ..template.clone()
                                })
                                .collect(),
                        )
                    }
                }
            }
            ParticleBlock::Pour {
                material,
                radius,
                rate,
                until,
                count,
                region: reg,
                velocity,
                interval,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let dist = radius_dist(cx, &key, radius)?;
                let shape = shaped_region(cx, &key, reg, domain)?;
                check_room(cx, &key, &shape, dist.max(), walls)?;
                if interval == &Some(0) {
                    return Err(cx.err(format!("{key}.interval: must be at least 1 step")));
                }
                let rate = cx.positive(&format!("{key}.rate"), *rate)?;
                let until = cx.non_negative(&format!("{key}.until"), *until)?;
                let owed = (rate * until).floor();
                budget.add_capped(cx, &key, *count, owed, || {
                    format!("{key}.rate = {rate:e} (with until = {until} s)")
                })?;
                let density = mats[m as usize].density;
                for r in [dist.min(), dist.max()] {
                    check_body(cx, r, ParticleRecord::sphere_mass(r, density), || {
                        format!(
                            "material[{m}].density = {density:e} (`{}`, poured by {key})",
                            mats[m as usize].name
                        )
                    })?;
                }
                let src = PourSource {
                    block: k as u64,
                    material: m,
                    density,
                    radius: dist,
                    rate,
                    until,
                    count: *count,
                    region: shape,
                    velocity: DVec3::from_array(velocity.0),
                    interval: interval.unwrap_or(50),
                    inserted: 0,
                    waiting: Vec::new(),
                };
                let total = (owed as u64).min(count.unwrap_or(u64::MAX));
                sizes.push(BlockSizes {
                    key: key.clone(),
                    kind: "pour",
                    stats: SizeStats::of(
                        (0..total.min(POUR_PREVIEW)).map(|i| src.radius_of(seed, i)),
                    ),
                });
                pours.push(src);
                continue;
            }
            ParticleBlock::List {
                material,
                radius,
                position,
                velocity,
                omega,
                frozen,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let n = position.len();
                budget.add(cx, &format!("{key}.position ({n} entries)"), n as f64)?;
                let radii: Vec<f64> = match radius {
                    ListRadius::One(r) => vec![*r; n],
                    ListRadius::Each(v) => v.clone(),
                };
                let per = |name: &str, v: &Option<Vec<Fixed<f64, 3>>>| -> Result<Vec<DVec3>> {
                    match v {
                        None => Ok(vec![DVec3::ZERO; n]),
                        Some(v) if v.len() == n => {
                            Ok(v.iter().map(|a| DVec3::from_array(a.0)).collect())
                        }
                        Some(v) => Err(cx.err(format!(
                            "{key}.{name}: has {} entries but `position` has {n}",
                            v.len()
                        ))),
                    }
                };
                if radii.len() != n {
                    return Err(cx.err(format!(
                        "{key}.radius: has {} entries but `position` has {n}",
                        radii.len()
                    )));
                }
                let (vel, om) = (per("velocity", velocity)?, per("omega", omega)?);
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let r = cx.positive(&format!("{key}.radius[{i}]"), radii[i])?;
                    placer.add(DVec3::from_array(position[i].0), r);
                    out.push(rec(
                        DVec3::from_array(position[i].0),
                        vel[i],
                        om[i],
                        r,
                        m,
                        *frozen,
                    ));
                }
                if random_follows(k) {
                    let spheres = out.iter().map(|p| (p.x, p.radius)).collect();
                    earlier.push_held(Arc::new(spheres));
                }
                InitialBlock::Records(out)
            }
            ParticleBlock::File {
                path,
                material,
                step,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let full = cx.file.parent().unwrap_or(Path::new(".")).join(path);
                // One walk: every body usable, the ids counted; the spheres
                // kept only where a random block must avoid them (on
                // several ranks, each rank those of its slice).
                let keep = random_follows(k);
                let mut spheres = Vec::new();
                let mut check = |r: &ParticleRecord| {
                    check_body(cx, r.radius, r.mass, || {
                        format!("{key}.path: `{}`, particle id {}", full.display(), r.id)
                    })?;
                    check_inside(cx, r, domain)?;
                    check_walls(cx, k, r, walls)?;
                    if comm.is_some() {
                        slice_ids.push(r.id);
                    } else if let Some(id) = file_ids.add(r.id) {
                        return Err(FileIds::twice(cx, id));
                    }
                    if keep {
                        spheres.push((r.x, r.radius));
                    }
                    Ok(())
                };
                let file = if let Some(comm) = comm {
                    // Each rank checks its slice; the ranks agree.
                    file_slices::check_by_slices(
                        cx, &key, &full, *step, m, mats, domain, comm, &mut check,
                    )?
                } else {
                    let walked = match file_kind(cx, &key, &full, *step, m, mats)? {
                        FileKind::Csv => ParticleFile::csv(&full, m, &mut check),
                        FileKind::Checkpoint => {
                            ParticleFile::checkpoint(&full, m, *domain, &mut check)
                        }
                        FileKind::Frame { step, density } => {
                            ParticleFile::frame(&full, step, m, density, &mut check)
                        }
                    };
                    match walked {
                        Ok(file) => file,
                        Err(FileWalk::Unread(e)) => return Err(cx.err(format!("{key}.path: {e}"))),
                        Err(FileWalk::Stopped(e)) => return Err(e),
                    }
                };
                let n = file.rows();
                budget.add(
                    cx,
                    &format!("{key}.path = \"{path}\" ({n} particles)"),
                    n as f64,
                )?;
                if keep {
                    earlier.push_file(EarlierFile {
                        block: k,
                        rows: n,
                        r_max: file.extremes().map_or(0.0, |[_, large]| large.radius),
                        spheres: Arc::new(spheres),
                        whole: comm.is_none(),
                    });
                }
                files.push(k, InitialBlock::File(Box::new(file)));
                continue;
            }
        };
        let body = |p: &ParticleRecord| {
            check_body(cx, p.radius, p.mass, || {
                let mat = &mats[p.material as usize];
                format!(
                    "material[{}].density = {:e} (`{}`, used by {key})",
                    p.material, mat.density, mat.name
                )
            })
        };
        match &block {
            InitialBlock::Records(records) => records.iter().try_for_each(body)?,
            InitialBlock::Lattice(lattice) => body(lattice.template())?,
            // Its extremes were checked above; a file's bodies when read.
            InitialBlock::Random(_) | InitialBlock::File(_) => {}
        }
        pending.push((k, block));
    }
    let mut next_id = match comm {
        Some(comm) => file_slices::unique_ids(cx, comm, slice_ids)?,
        None => {
            if let Some(id) = file_ids.finish() {
                return Err(FileIds::twice(cx, id));
            }
            file_ids.next_id()
        }
    };
    let mut all = files;
    for (k, mut block) in pending {
        match &mut block {
            InitialBlock::Records(records) => {
                for r in records {
                    r.id = next_id;
                    next_id += 1;
                }
            }
            InitialBlock::Lattice(lattice) => {
                lattice.set_first_id(next_id);
                next_id += lattice.count() as u64;
            }
            InitialBlock::Random(fill) => {
                fill.set_first_id(next_id);
                next_id += fill.count();
            }
            InitialBlock::File(_) => unreachable!("files keep their ids"),
        }
        all.push(k, block);
    }
    // The files' particles were checked as they were read; on several
    // ranks each rank checks its part of each lattice.
    for (k, b) in all.blocks() {
        let check = |r: &ParticleRecord| {
            check_inside(cx, r, domain)?;
            check_walls(cx, k, r, walls)
        };
        match b {
            InitialBlock::Records(records) => records.iter().try_for_each(check)?,
            InitialBlock::Lattice(l) => lowest_rank_error(cx, comm, l.try_for_each_part(check))?,
            InitialBlock::Random(_) | InitialBlock::File(_) => {}
        }
    }
    Ok((all, pours, next_id, sizes))
}

/// Refuse a random fill's region that reaches outside the box along an
/// axis that is not periodic: its spheres would start outside the domain.
fn inside_domain(cx: &Ctx, key: &str, shape: &Region, domain: &Domain) -> Result<()> {
    let (lo, hi) = shape.bounds();
    for a in 0..3 {
        if !domain.periodic[a] && (lo[a] < domain.lo[a] || hi[a] > domain.hi[a]) {
            return Err(cx.err(format!(
                "{key}.region: this {} spans {}..{} along {}, outside the domain's {}..{}; a random block's region must lie inside the domain",
                shape.kind(),
                lo[a],
                hi[a],
                ["x", "y", "z"][a],
                domain.lo[a],
                domain.hi[a]
            )));
        }
    }
    Ok(())
}

/// Record in `placer` the spheres of the earlier random counts and files
/// that a relaxed fill of `shape` (radii up to `r_max`) may touch: those
/// of the cells and files near the region, widened by the largest radius
/// of both. The rule does not depend on the number of ranks; on several
/// ranks the files' spheres come from the ranks' slices (collective). A
/// count that cannot place its spheres adds none (the run refuses it).
fn earlier_near(
    earlier: &Earlier,
    shape: &Region,
    r_max: f64,
    domain: &Domain,
    comm: Option<&dyn Comm>,
    placer: &mut Placer,
) {
    let (lo, hi) = shape.bounds();
    let reach = DVec3::splat(r_max + earlier.r_max());
    let (lo, hi) = (lo - reach, hi + reach);
    let files = earlier.files();
    let near = files.iter().any(|f| !f.whole).then(|| {
        let asked: Vec<_> = files.iter().map(|f| (f.block, lo, hi)).collect();
        NearFiles::fetch(comm, files, &asked, domain)
    });
    for f in files {
        for (x, r) in file_spheres(f, lo, hi, domain, near.as_ref()) {
            placer.add(x, r);
        }
    }
    for e in earlier.fills() {
        if let Ok(placed) = e.place_near_fetching(lo, hi, comm) {
            placed.into_iter().for_each(|(_, x, r)| placer.add(x, r));
        }
    }
}

/// The error for an id met twice in the particle files.
pub(super) fn id_twice(cx: &Ctx, id: u64) -> crate::error::GravelError {
    FileIds::twice(cx, id)
}

/// Whether `path` begins with HDF5's signature.
fn is_hdf5(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *b"\x89HDF\r\n\x1a\n")
}

/// What the file of a `file` block is. A gravel output file gives its
/// frame (`step`, or the last) or its checkpoint's state: ids, positions
/// (a checkpoint's wrapped into the box), radii, frozen flags, and
/// velocities and angular velocities where the file has them (a frame's
/// `velocity` and `omega` fields; zero otherwise). A checkpoint gives the
/// masses; a frame's come from the block material's density. One run's
/// settled bed seeds the next.
pub(super) enum FileKind {
    /// A particle CSV file.
    Csv,
    /// A checkpoint.
    Checkpoint,
    /// The frame at `step`, whose masses come from `density`.
    Frame { step: u64, density: f64 },
}

/// What the file `path` of the block `key` (of material `m`) is: a CSV
/// file (no `step` then), a checkpoint (no `step` either), or an output
/// file that has the frame the block asks for (`step`, or the last), with
/// a material whose density gives the frame's masses.
pub(super) fn file_kind(
    cx: &Ctx,
    key: &str,
    path: &Path,
    step: Option<u64>,
    m: u32,
    mats: &[Material],
) -> Result<FileKind> {
    let shown = path.display();
    if !is_hdf5(path) {
        if step.is_some() {
            return Err(cx.err(format!(
                "{key}.step: only a gravel output file (HDF5) has frames; `{shown}` is not one"
            )));
        }
        return Ok(FileKind::Csv);
    }
    if crate::io::checkpoint::is_checkpoint(path) {
        if step.is_some() {
            return Err(cx.err(format!(
                "{key}.step: `{shown}` is a checkpoint (one state, no frames); leave `step` out"
            )));
        }
        return Ok(FileKind::Checkpoint);
    }
    let density = mats[m as usize].density;
    if density.is_nan() || density <= 0.0 {
        return Err(cx.err(format!(
            "{key}.material: `{}` has no density, and a frame of `{shown}` holds no masses; give the material a density",
            mats[m as usize].name
        )));
    }
    let steps =
        crate::io::read::list_frames(path).map_err(|e| cx.err(format!("{key}.path: {e}")))?;
    let Some(&last) = steps.last() else {
        return Err(cx.err(format!("{key}.path: `{shown}` holds no frame")));
    };
    let step = step.unwrap_or(last);
    crate::io::read::frame_len(path, step).map_err(|e| cx.err(format!("{key}.step: {e}")))?;
    Ok(FileKind::Frame { step, density })
}

/// The ids of the particle files, checked unique as the walks that check
/// the files meet them: one bit per id up to the largest while the ids are
/// dense (at most 64 per particle, so at most 8 B per particle), a list of
/// 8 B per particle, sorted at the end, once they are sparser.
#[derive(Default)]
struct FileIds {
    largest: Option<u64>,
    count: u64,
    bits: Vec<u64>,
    sparse: Option<Vec<u64>>,
}

impl FileIds {
    /// Note `id`; `Some(id)` if it was met before (known at once while the
    /// ids are dense, else from [`Self::finish`]).
    fn add(&mut self, id: u64) -> Option<u64> {
        self.largest = self.largest.max(Some(id));
        self.count += 1;
        if let Some(list) = &mut self.sparse {
            list.push(id);
            return None;
        }
        let word = id / 64;
        if word > self.count + 1024 {
            let mut list = Vec::with_capacity(self.count as usize);
            for (w, &b) in self.bits.iter().enumerate() {
                list.extend(
                    (0..64)
                        .filter(|i| b >> i & 1 != 0)
                        .map(|i| w as u64 * 64 + i),
                );
            }
            list.push(id);
            self.bits = Vec::new();
            self.sparse = Some(list);
            return None;
        }
        let (word, bit) = (word as usize, 1u64 << (id % 64));
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        let seen = self.bits[word] & bit != 0;
        self.bits[word] |= bit;
        seen.then_some(id)
    }

    /// An id met twice among those of the sparse list, if any.
    fn finish(&mut self) -> Option<u64> {
        let list = self.sparse.as_mut()?;
        list.sort_unstable();
        list.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
    }

    /// The first free id: one above the largest, 0 without files.
    fn next_id(&self) -> u64 {
        self.largest.map_or(0, |l| l + 1)
    }

    /// The error for an id met twice.
    fn twice(cx: &Ctx, id: u64) -> crate::error::GravelError {
        cx.err(format!(
            "particles: id {id} appears twice in the particle files"
        ))
    }
}

/// The most spheres a relaxed `fill` places: one process relaxes them
/// and every rank holds them, so that the set-up's cost per rank stays
/// bounded whatever the total (98,706 spheres at φ = 0.55 relaxed in
/// 12 s on the development machine, 2026-11-27).
pub const RELAXED_FILL_MAX: u64 = 100_000;

/// A `random` block with `fill = f`: radii drawn from the block's stream
/// until their volume reaches `f` of the region's (the count whose total
/// is nearest), placed largest first by a relaxed fill
/// ([`insert::relax`]).
#[allow(clippy::too_many_arguments)]
fn random_fill(
    cx: &Ctx,
    key: &str,
    f: f64,
    dist: &RadiusDist,
    shape: &Region,
    walls: &[Wall],
    rng: &mut rand_pcg::Pcg64,
    placer: &mut Placer,
    budget: &mut MemoryBudget,
) -> Result<Vec<(DVec3, f64)>> {
    if !(f > 0.0 && f < 0.74) {
        return Err(cx.err(format!(
            "{key}.fill: must be a packing fraction above 0 and below 0.74 (the densest packing of equal spheres, π/√18), got {f}; random packings jam near 0.64"
        )));
    }
    check_room(cx, key, shape, dist.max(), walls)?;
    let target = f * shape.volume();
    let estimate = target / dist.mean_volume();
    if estimate > RELAXED_FILL_MAX as f64 + 0.5 {
        return Err(cx.err(format!(
            "{key}.fill: {f} of this region is about {estimate:.3e} spheres; a relaxed fill places at most {RELAXED_FILL_MAX} (one process relaxes them, and every rank holds them): give `count` for a larger random block (placed cell by cell, each rank its share), or relax a smaller bed and read it back with a `file` block"
        )));
    }
    budget.add(
        cx,
        &format!("{key}.fill = {f} (about {estimate:.3e} spheres)"),
        estimate,
    )?;
    let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    let mut radii = Vec::with_capacity(estimate as usize + 16);
    let mut volume = 0.0;
    loop {
        let r = dist.draw(rng);
        // Stop at the count whose total volume is nearest the target.
        if volume + 0.5 * ball(r) > target {
            break;
        }
        volume += ball(r);
        radii.push(r);
    }
    if radii.is_empty() {
        return Err(cx.err(format!(
            "{key}.fill: {f} of this region is less than half a sphere; enlarge the region or raise `fill`"
        )));
    }
    insert::largest_first(&mut radii);
    match relaxed_fill(rng, shape, walls, &radii, placer) {
        Ok(x) => {
            for (&p, &r) in x.iter().zip(&radii) {
                placer.add(p, r);
            }
            Ok(x.into_iter().zip(radii).collect())
        }
        Err(FillError::NoRoom { radius }) => Err(cx.err(format!(
            "{key}.region: no place in it holds a sphere of radius {radius:e} clear of the walls"
        ))),
        Err(FillError::NotConverged {
            largest_overlap,
            reached,
        }) => Err(cx.err(format!(
            "{key}.fill = {f}: the relaxed fill of {} spheres did not converge in {FILL_MAX_SWEEPS} sweeps: the largest overlap left is {largest_overlap:.2e} of a radius (the tolerance is {FILL_OVERLAP_TOLERANCE:e}); without overlaps the spheres fill only {reached:.3} of the region; lower `fill` (random packings jam near 0.64, less with walls and small regions)",
            radii.len()
        ))),
    }
}

/// Refuse a `random` or `pour` region (of block `key`) in which no sphere
/// of the largest radius `r` fits wholly inside and clear of every wall
/// ([`insert::has_room`]), naming the walls that reach into the region's
/// bounding box.
fn check_room(cx: &Ctx, key: &str, shape: &Region, r: f64, walls: &[Wall]) -> Result<()> {
    if insert::has_room(shape, walls, r) {
        return Ok(());
    }
    let (lo, hi) = shape.bounds();
    let cut: Vec<String> = walls
        .iter()
        .enumerate()
        .filter(|(_, w)| w.box_clearance(lo, hi) < r)
        .map(|(i, _)| format!("wall[{i}]"))
        .collect();
    let why = if cut.is_empty() {
        "the region is too small for it".to_string()
    } else {
        format!("the region lies in or behind {}", cut.join(", "))
    };
    Err(cx.err(format!(
        "{key}.region: no place in this {} region holds a sphere of radius {r:e} (the largest of the block) wholly inside it and clear of every wall: {why}; enlarge the region or move it to the particles' side of the walls",
        shape.kind()
    )))
}

/// Refuse a particle of radius `r` whose mass `mass` or moment of inertia
/// `0.4 m r²` is not a finite positive (normal) number, naming `source`,
/// the input that gave it.
fn check_body(cx: &Ctx, r: f64, mass: f64, source: impl FnOnce() -> String) -> Result<()> {
    let inertia = 0.4 * mass * r * r;
    let bad = if !usable(mass) {
        format!("a particle mass of {mass:e} kg")
    } else if !usable(inertia) {
        format!("a moment of inertia of {inertia:e} kg m²")
    } else {
        return Ok(());
    };
    Err(cx.err(format!(
        "{} gives a sphere of radius {r:e} m {bad}; masses and moments of inertia must be finite, positive and not subnormal",
        source()
    )))
}

pub(super) fn max_block_radius(blocks: &[ParticleBlock]) -> f64 {
    let spec = |r: &RadiusSpec| match r {
        RadiusSpec::Fixed(v) => *v,
        RadiusSpec::Table(t) => t
            .max
            .into_iter()
            .chain(t.values.iter().flatten().copied())
            .fold(0.0, f64::max),
    };
    blocks
        .iter()
        .map(|b| match b {
            ParticleBlock::Lattice { radius, .. } => *radius,
            ParticleBlock::Random { radius, .. } | ParticleBlock::Pour { radius, .. } => {
                spec(radius)
            }
            ParticleBlock::List {
                radius: ListRadius::One(r),
                ..
            } => *r,
            ParticleBlock::List {
                radius: ListRadius::Each(v),
                ..
            } => v.iter().copied().fold(0.0, f64::max),
            ParticleBlock::File { .. } => 0.0,
        })
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max)
}

/// A block that makes its particles' masses from its material's density
/// (every kind but `file`) needs a material that has one.
fn needs_density(cx: &Ctx, key: &str, b: &ParticleBlock, mats: &[Material]) -> Result<()> {
    let name = match b {
        ParticleBlock::Lattice { material, .. }
        | ParticleBlock::Random { material, .. }
        | ParticleBlock::Pour { material, .. }
        | ParticleBlock::List { material, .. } => material,
        ParticleBlock::File { .. } => return Ok(()),
    };
    match mats
        .iter()
        .position(|m| &m.name == name && m.density.is_nan())
    {
        Some(i) => Err(cx.err(format!(
            "material[{i}].density is required: {key} uses `{name}` (a particle's mass is (4/3) π R³ ρ); only a material no particle block uses, or only `file` blocks, may leave it out"
        ))),
        None => Ok(()),
    }
}

/// Every position, velocity and angular velocity a block gives must be
/// finite: the message names the key, not a position it would spoil.
fn finite_vectors(cx: &Ctx, key: &str, b: &ParticleBlock) -> Result<()> {
    let mut named: Vec<(String, [f64; 3])> = Vec::new();
    match b {
        ParticleBlock::Lattice { velocity, .. }
        | ParticleBlock::Random { velocity, .. }
        | ParticleBlock::Pour { velocity, .. } => {
            named.push((format!("{key}.velocity"), velocity.0));
        }
        ParticleBlock::List {
            position,
            velocity,
            omega,
            ..
        } => {
            for (name, list) in [
                ("position", Some(position)),
                ("velocity", velocity.as_ref()),
                ("omega", omega.as_ref()),
            ] {
                for (i, v) in list.into_iter().flatten().enumerate() {
                    named.push((format!("{key}.{name}[{i}]"), v.0));
                }
            }
        }
        ParticleBlock::File { .. } => {}
    }
    match named
        .into_iter()
        .find(|(_, v)| !v.iter().all(|c| c.is_finite()))
    {
        Some((k, v)) => Err(cx.err(format!(
            "{k} = {v:?}: every component must be a finite number (not nan or inf)"
        ))),
        None => Ok(()),
    }
}

pub(super) fn check_inside(cx: &Ctx, r: &ParticleRecord, d: &Domain) -> Result<()> {
    let finite = r.x.is_finite() && r.v.is_finite() && r.omega.is_finite();
    let inside = (0..3).all(|a| {
        if d.periodic[a] {
            r.x[a] >= d.lo[a] && r.x[a] < d.hi[a]
        } else {
            r.x[a] >= d.lo[a] && r.x[a] <= d.hi[a]
        }
    });
    if !finite || !inside {
        return Err(cx.err(format!(
            "particles: particle id {} at {:?} lies outside the domain {:?}..{:?} (or has a non-finite value)",
            r.id,
            r.x.to_array(),
            d.lo.to_array(),
            d.hi.to_array()
        )));
    }
    Ok(())
}

/// Refuse an initial particle (of block `particles[k]`) that is not on the
/// particles' side of every wall by at least its radius, less
/// [`WALL_OVERLAP_TOLERANCE`] of it: behind a wall, or sunk into one.
pub(super) fn check_walls(cx: &Ctx, k: usize, r: &ParticleRecord, walls: &[Wall]) -> Result<()> {
    for (i, w) in walls.iter().enumerate() {
        let d = w.clearance(r.x);
        if d >= r.radius * (1.0 - WALL_OVERLAP_TOLERANCE) {
            continue;
        }
        let where_ = if d < 0.0 {
            format!(
                "lies behind wall[{i}] (its centre {:e} m on the far side)",
                -d
            )
        } else {
            format!(
                "overlaps wall[{i}] by {:e} m ({:.3} % of its radius; its centre is {d:e} m from the surface)",
                r.radius - d,
                100.0 * (r.radius - d) / r.radius
            )
        };
        return Err(cx.err(format!(
            "particles[{k}]: particle id {} at {:?} with radius {:e} m {where_}; every initial particle must lie on the particles' side of every wall, its centre at least its radius from the surface (an overlap of at most {} % of the radius is accepted)",
            r.id,
            r.x.to_array(),
            r.radius,
            100.0 * WALL_OVERLAP_TOLERANCE
        )));
    }
    Ok(())
}

/// Refuse overlapping initial particles, periodic images included (two
/// spheres near opposite faces of a periodic axis touch through the
/// boundary): between the held records when a `list` block is present
/// (`random` blocks avoid whatever was placed before them, and a file is a
/// bed the user vouches for), and between every lattice and every other
/// block (a lattice does not look where it goes).
pub(super) fn check_overlaps(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    initial: &Initial,
    domain: &Domain,
    comm: Option<&dyn Comm>,
) -> Result<()> {
    if blocks
        .iter()
        .any(|b| matches!(b, ParticleBlock::List { .. }))
    {
        let mut held: Vec<&ParticleRecord> = Vec::new();
        for (_, b) in initial.blocks() {
            if let InitialBlock::Records(r) = b {
                held.extend(r);
            }
        }
        check_record_overlaps(cx, &held, domain)?;
    }
    check_lattice_overlaps(cx, initial, domain, comm)?;
    check_file_overlaps(cx, blocks, initial, domain, comm)?;
    check_fill_overlaps(cx, blocks, initial, domain, comm)
}

/// Each file's particles against the lattices and the `list` blocks, which
/// do not look where they go (a walk over the file; a file's particles
/// among themselves are the bed the user vouches for, and a random block
/// avoids the blocks before it).
fn check_file_overlaps(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    initial: &Initial,
    domain: &Domain,
    comm: Option<&dyn Comm>,
) -> Result<()> {
    if initial.files().next().is_none() {
        return Ok(());
    }
    let listed = |k: usize| matches!(blocks[k], ParticleBlock::List { .. });
    let mut max_r = 0.0f64;
    for (k, b) in initial.blocks() {
        match b {
            InitialBlock::Records(records) if listed(k) => {
                records.iter().for_each(|r| max_r = max_r.max(r.radius));
            }
            InitialBlock::Lattice(l) => max_r = max_r.max(l.radius()),
            InitialBlock::Records(_) | InitialBlock::Random(_) | InitialBlock::File(_) => {}
        }
    }
    let mut placer = Placer::new(max_r).periodic_in(domain);
    for (k, b) in initial.blocks() {
        match b {
            InitialBlock::Records(records) if listed(k) => {
                records.iter().for_each(|r| placer.add(r.x, r.radius));
            }
            InitialBlock::Lattice(l) => placer.add_lattice(l),
            InitialBlock::Records(_) | InitialBlock::Random(_) | InitialBlock::File(_) => {}
        }
    }
    if placer.is_empty() {
        return Ok(());
    }
    for (k, file) in initial.files() {
        let against = |p: &ParticleRecord| {
            match placer.first_overlapping(p.x, p.radius) {
            None => Ok(()),
            Some((y, s)) => Err(cx.err(format!(
                "particles[{k}]: particle id {} of `{}` at {:?} overlaps a sphere of radius {s:e} m at {:?} of a `list` or `lattice` block (distance {:e} < sum of radii {:e}, periodic images included); initial particles must not overlap: move or shrink one of the blocks",
                p.id,
                file.path().display(),
                p.x.to_array(),
                y.to_array(),
                (y - p.x).length(),
                s + p.radius
            ))),
        }
        };
        let key = format!("particles[{k}]");
        file_slices::walk_checking(cx, &key, file, comm, against)?;
    }
    Ok(())
}

/// A random fill avoids the blocks before it; the `list` and `lattice`
/// blocks after it, which do not look where they go, are checked against
/// its spheres here: those of the fill's cells near the later block (its
/// box widened by the largest radius of both), in the fill's order, so
/// the first overlap named is the first in id order. On several ranks the
/// spheres of files the fill avoids come from the ranks' slices
/// (collective: every rank checks the same).
fn check_fill_overlaps(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    initial: &Initial,
    domain: &Domain,
    comm: Option<&dyn Comm>,
) -> Result<()> {
    for (k, fill) in initial.fills() {
        for (later, b) in initial.blocks().filter(|(j, _)| *j > k) {
            let mut placer = Placer::new(fill.dist().max()).periodic_in(domain);
            let (kind, (lo, hi), r_later) = match b {
                InitialBlock::Lattice(l) => {
                    placer.add_lattice(l);
                    ("lattice", l.bounds(), l.radius())
                }
                InitialBlock::Records(r) if matches!(blocks[later], ParticleBlock::List { .. }) => {
                    r.iter().for_each(|p| placer.add(p.x, p.radius));
                    let lo = r.iter().fold(DVec3::INFINITY, |a, p| a.min(p.x - p.radius));
                    let hi = r
                        .iter()
                        .fold(DVec3::NEG_INFINITY, |a, p| a.max(p.x + p.radius));
                    let r_max = r.iter().map(|p| p.radius).fold(0.0, f64::max);
                    ("list", (lo, hi), r_max)
                }
                _ => continue,
            };
            if !lo.cmple(hi).all() {
                continue;
            }
            let reach = DVec3::splat(fill.dist().max() + r_later);
            let (lo, hi) = (lo - reach, hi + reach);
            let spheres = (fill.place_near_fetching(lo, hi, comm))
                .map_err(|u| cx.err(insert::cells::unplaced_message(k, &u)))?;
            for (i, x, r) in spheres {
                if let Some((y, s)) = placer.first_overlapping(x, r) {
                    return Err(cx.err(format!(
                        "particles[{later}]: {kind} particle at {:?} (radius {s:e} m) overlaps a sphere of radius {r:e} m at {:?}, particle id {} of the random block particles[{k}] (distance {:e} < sum of radii {:e}, periodic images included); initial particles must not overlap: a random block avoids only the blocks before it, so list this block first, or move one of the regions",
                        y.to_array(),
                        x.to_array(),
                        fill.record(i, x, r).id,
                        (y - x).length(),
                        s + r
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Each lattice's sites against the held records and the lattices before
/// it, asked of a [`Placer`] (the lattices by index arithmetic); on
/// several ranks each rank checks its part of the sites.
fn check_lattice_overlaps(
    cx: &Ctx,
    initial: &Initial,
    domain: &Domain,
    comm: Option<&dyn Comm>,
) -> Result<()> {
    let lattices = (initial.blocks())
        .filter(|(_, b)| matches!(b, InitialBlock::Lattice(_)))
        .count();
    if lattices == 0 || initial.blocks().count() < 2 {
        return Ok(());
    }
    let mut max_r = 0.0f64;
    initial.for_each_body(|_, p| max_r = max_r.max(p.radius));
    let mut placer = Placer::new(max_r).periodic_in(domain);
    for (_, b) in initial.blocks() {
        if let InitialBlock::Records(records) = b {
            records.iter().for_each(|r| placer.add(r.x, r.radius));
        }
    }
    for (k, b) in initial.blocks() {
        let InitialBlock::Lattice(lattice) = b else {
            continue;
        };
        let walked = lattice.try_for_each_part(|p| {
            match placer.first_overlapping(p.x, p.radius) {
                None => Ok(()),
                Some((y, s)) => Err(cx.err(format!(
                    "particles[{k}]: lattice particle id {} at {:?} overlaps a sphere of radius {s:e} m at {:?} of another block (distance {:e} < sum of radii {:e}, periodic images included); initial particles must not overlap: move or shrink one of the regions",
                    p.id,
                    p.x.to_array(),
                    y.to_array(),
                    (y - p.x).length(),
                    s + p.radius
                ))),
            }
        });
        lowest_rank_error(cx, comm, walked)?;
        placer.add_lattice(lattice);
    }
    Ok(())
}

/// The records of `all` pairwise (a hash grid), periodic images included.
fn check_record_overlaps(cx: &Ctx, all: &[&ParticleRecord], domain: &Domain) -> Result<()> {
    let max_r = all.iter().map(|p| p.radius).fold(0.0, f64::max);
    let mut grid: std::collections::HashMap<[i64; 3], Vec<usize>> =
        std::collections::HashMap::new();
    let cell = 2.0 * max_r;
    let key = |x: DVec3| {
        let c = (x / cell).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    };
    for (k, p) in all.iter().enumerate() {
        grid.entry(key(p.x)).or_default().push(k);
    }
    let len = domain.length();
    for (k, p) in all.iter().enumerate() {
        // The particle and its periodic images near a periodic face.
        let mut shifts = vec![DVec3::ZERO];
        for a in 0..3 {
            if !domain.periodic[a] {
                continue;
            }
            let mut axis = DVec3::ZERO;
            if p.x[a] - domain.lo[a] < cell {
                axis[a] = len[a];
            } else if domain.hi[a] - p.x[a] < cell {
                axis[a] = -len[a];
            } else {
                continue;
            }
            let images: Vec<DVec3> = shifts.iter().map(|&s| s + axis).collect();
            shifts.extend(images);
        }
        for (si, &shift) in shifts.iter().enumerate() {
            let y = p.x + shift;
            let c = key(y);
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        for &q in grid
                            .get(&[c[0] + dx, c[1] + dy, c[2] + dz])
                            .into_iter()
                            .flatten()
                        {
                            let o = all[q];
                            let later = if si == 0 { q > k } else { q != k };
                            let d = (o.x - y).length();
                            if later && d < o.radius + p.radius {
                                let through = if si == 0 {
                                    String::new()
                                } else {
                                    " through a periodic boundary".to_string()
                                };
                                return Err(cx.err(format!(
                                    "particles: particles id {} at {:?} and id {} at {:?} overlap{through} (distance {d} < sum of radii {}); initial particles must not overlap",
                                    p.id,
                                    p.x.to_array(),
                                    o.id,
                                    o.x.to_array(),
                                    o.radius + p.radius
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Setup;

    #[test]
    fn file_ids_find_a_repeat_dense_or_sparse_and_the_next_free_id() {
        // Dense: a repeat is found at once.
        let mut ids = FileIds::default();
        assert_eq!(ids.next_id(), 0);
        assert!((0..1000).all(|i| ids.add(i).is_none()));
        assert_eq!(ids.add(500), Some(500));
        // A far id turns the bitmap into a list; the ids met before go
        // with it, so a repeat of one of them is found at the end.
        let mut ids = FileIds::default();
        assert!((0..100).all(|i| ids.add(i).is_none()));
        assert!(ids.add(1 << 40).is_none());
        assert!(ids.sparse.is_some() && ids.bits.is_empty());
        assert!(ids.add(7).is_none());
        assert_eq!(ids.finish(), Some(7));
        assert_eq!(ids.next_id(), (1 << 40) + 1);
        // No repeat: none at the end either.
        let mut ids = FileIds::default();
        assert!([3, 1 << 30, 9, 2].into_iter().all(|i| ids.add(i).is_none()));
        assert_eq!(ids.finish(), None);
        assert_eq!(ids.next_id(), (1 << 30) + 1);
    }

    /// A 1 cm box, two materials, Hooke, with `particles` as its blocks.
    fn config(particles: &str) -> String {
        format!(
            r#"
[run]
name = "blocks"
dt = 1e-7
steps = 1
seed = 9
allow_large_dt = true

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.01, 0.01, 0.01]
periodic = [true, false, false]

[[material]]
name = "light"
density = 1000.0

[[material]]
name = "heavy"
density = 8000.0

[contact]
normal = {{ model = "hooke", stiffness = 1e3, restitution = 0.5 }}

{particles}
"#
        )
    }

    fn setup_in(dir: &Path, particles: &str) -> Setup {
        let text = config(particles);
        Setup::from_str(&dir.join("blocks.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A lattice is held as a rule, not a list, and a random block after it
    /// places its spheres clear of every site (the placer asks the lattice
    /// by index arithmetic), periodic images across x included.
    #[test]
    fn a_random_block_after_a_lattice_avoids_it_and_neither_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let s = setup_in(
            dir.path(),
            r#"
[[particles]]
kind = "lattice"
material = "light"
radius = 0.0005
spacing = 0.0015
region = { lo = [0.0, 0.0, 0.0], hi = [0.01, 0.01, 0.004] }

[[particles]]
kind = "random"
material = "heavy"
radius = { min = 0.0003, max = 0.0006 }
count = 60
region = { lo = [0.0, 0.0, 0.0], hi = [0.01, 0.01, 0.01] }
"#,
        );
        let all = s.initial.to_vec();
        let lattice = all.len() - 60;
        assert!(lattice >= 100, "{lattice} sites");
        assert_eq!(
            s.initial.held(),
            0,
            "a lattice and a random count are rules"
        );
        assert!(all[..lattice].iter().all(|p| p.material == 0));
        let length = s.domain.length().x;
        let mut near = 0;
        for p in &all[lattice..] {
            for q in &all[..lattice] {
                let mut d = (p.x - q.x).abs();
                d.x = d.x.min(length - d.x);
                let gap = d.length() - p.radius - q.radius;
                assert!(
                    gap >= 0.0,
                    "ids {} and {} overlap by {:e}",
                    p.id,
                    q.id,
                    -gap
                );
                near += usize::from(gap < 0.0005);
            }
        }
        // The random spheres do reach into the lattice's layer.
        assert!(near > 0);
    }

    #[test]
    fn file_ids_are_kept_and_generated_ids_follow_them_in_block_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("two.csv"),
            "id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n\
             41,1,0.002,0.002,0.002,0.0005,3000,0,0,0,0,0,0\n\
             7,0,0.004,0.002,0.002,0.0005,3000,1,2,3,4,5,6\n",
        )
        .unwrap();
        let s = setup_in(
            dir.path(),
            r#"
[[particles]]
kind = "list"
material = "heavy"
radius = 0.0005
position = [[0.008, 0.008, 0.008]]

[[particles]]
kind = "file"
path = "two.csv"
material = "light"

[[particles]]
kind = "lattice"
material = "light"
radius = 0.0005
spacing = 0.002
region = { lo = [0.0, 0.006, 0.0], hi = [0.004, 0.01, 0.002] }
count = 3
"#,
        );
        let ids: Vec<(u64, u32)> = s
            .initial
            .to_vec()
            .iter()
            .map(|p| (p.id, p.material))
            .collect();
        // The file's records first (ids as given), then the other blocks in
        // order, numbered from the largest file id up.
        assert_eq!(ids, [(41, 0), (7, 0), (42, 1), (43, 0), (44, 0), (45, 0)]);
        assert_eq!(s.next_id, 46);
        let file = &s.initial.to_vec()[1];
        assert!(s.initial.to_vec()[0].frozen && !file.frozen);
        assert_eq!(file.v, DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(file.omega, DVec3::new(4.0, 5.0, 6.0));
        // A file's masses use its own density column; blocks their material's.
        assert_eq!(file.mass, ParticleRecord::sphere_mass(0.0005, 3000.0));
        assert_eq!(
            s.initial.to_vec()[2].mass,
            ParticleRecord::sphere_mass(0.0005, 8000.0)
        );
        // The lattice: x-fastest from the region's corner, `count` of them.
        let lattice: Vec<DVec3> = s.initial.to_vec()[3..].iter().map(|p| p.x).collect();
        let site = |i: f64, j: f64| {
            DVec3::new(0.0, 0.006, 0.0) + DVec3::splat(0.0005) + 0.002 * DVec3::new(i, j, 0.0)
        };
        assert_eq!(lattice, [site(0.0, 0.0), site(1.0, 0.0), site(0.0, 1.0)]);
    }

    /// A `list` block of one sphere of radius 1 mm at height `z` above a
    /// floor `z = 0`.
    fn on_floor(z: f64) -> String {
        format!(
            r#"
[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "light"

[[particles]]
kind = "list"
material = "light"
radius = 0.001
position = [[0.005, 0.005, {z}]]
"#
        )
    }

    #[test]
    fn a_sphere_at_a_settled_overlap_with_a_wall_is_accepted_a_deeper_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blocks.toml");
        // 2 % of R: a settled bed's static overlap (the dense pack's is 1.8 %).
        assert!(Setup::from_str(&path, &config(&on_floor(0.00098))).is_ok());
        // Just inside and just beyond the tolerance of a tenth of R.
        assert!(Setup::from_str(&path, &config(&on_floor(0.000901))).is_ok());
        let e = Setup::from_str(&path, &config(&on_floor(0.000899)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("overlaps wall[0]"), "{e}");
        // Half sunk (behind the wall: tests/bad/geometry.toml).
        let e = Setup::from_str(&path, &config(&on_floor(0.0005)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("particles[0]") && e.contains("wall[0]"), "{e}");
    }

    #[test]
    fn list_blocks_take_one_radius_or_one_each_and_default_to_rest() {
        let dir = tempfile::tempdir().unwrap();
        let s = setup_in(
            dir.path(),
            r#"
[[particles]]
kind = "list"
material = "light"
radius = [0.001, 0.0015]
position = [[0.002, 0.002, 0.002], [0.006, 0.006, 0.006]]
omega = [[0.0, 0.0, 1.0], [0.0, 2.0, 0.0]]
frozen = true
"#,
        );
        let p = &s.initial.to_vec();
        assert_eq!((p[0].radius, p[1].radius), (0.001, 0.0015));
        assert_eq!((p[0].v, p[1].v), (DVec3::ZERO, DVec3::ZERO));
        assert_eq!(p[1].omega, DVec3::new(0.0, 2.0, 0.0));
        assert!(p[0].frozen && p[1].frozen);
        assert_eq!(s.max_radius, 0.0015);
    }

    #[test]
    fn pour_blocks_become_sources_with_their_settings() {
        let dir = tempfile::tempdir().unwrap();
        let s = setup_in(
            dir.path(),
            r#"
[[particles]]
kind = "list"
material = "light"
radius = 0.0005
position = [[0.002, 0.002, 0.002]]

[[particles]]
kind = "pour"
material = "heavy"
radius = { min = 0.0004, max = 0.0008 }
rate = 1000.0
until = 0.5
count = 20
region = { lo = [0.0, 0.0, 0.005], hi = [0.01, 0.01, 0.01] }
velocity = [0.0, 0.0, -1.0]
"#,
        );
        assert_eq!(s.initial.len(), 1);
        assert_eq!(s.next_id, 1, "poured ids follow the initial ones");
        let src = &s.pours[0];
        assert_eq!((src.block, src.material, src.density), (1, 1, 8000.0));
        assert_eq!(
            src.radius,
            RadiusDist::Uniform {
                min: 0.0004,
                max: 0.0008
            }
        );
        assert_eq!((src.rate, src.until, src.count), (1000.0, 0.5, Some(20)));
        assert_eq!(src.interval, 50, "the default interval");
        assert_eq!(src.velocity, DVec3::new(0.0, 0.0, -1.0));
        assert_eq!(
            (
                src.region.bounds().0.z,
                src.region.bounds().1.z,
                src.inserted
            ),
            (0.005, 0.01, 0)
        );
        // The largest radius any particle can have includes the pour's.
        assert_eq!(s.max_radius, 0.0008);
    }

    #[test]
    fn random_blocks_are_drawn_from_the_seed_and_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let block = r#"
[[particles]]
kind = "random"
material = "light"
radius = 0.0005
count = 10
region = { lo = [0.0, 0.0, 0.0], hi = [0.01, 0.01, 0.01] }
"#;
        let one = setup_in(dir.path(), block);
        let again = setup_in(dir.path(), block);
        assert_eq!(one.initial.to_vec(), again.initial.to_vec());
        assert_eq!(one.initial.len(), 10);
        // The same block in second place draws from another stream.
        let second = setup_in(
            dir.path(),
            &format!(
                "[[particles]]\nkind = \"list\"\nmaterial = \"light\"\nradius = 0.0001\nposition = [[0.0099, 0.0099, 0.0099]]\n{block}"
            ),
        );
        assert_ne!(one.initial.to_vec()[0].x, second.initial.to_vec()[1].x);
    }

    #[test]
    fn the_upper_face_is_outside_on_periodic_axes_only() {
        let cx = Ctx {
            file: Path::new("unit.toml"),
        };
        let d = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
            periodic: [true, false, false],
        };
        let at = |x: DVec3| ParticleRecord {
            id: 3,
            x,
            v: DVec3::ZERO,
            omega: DVec3::ZERO,
            radius: 0.1,
            mass: 1.0,
            material: 0,
            frozen: false,
        };
        assert!(check_inside(&cx, &at(DVec3::new(0.0, 1.0, 1.0)), &d).is_ok());
        let e = check_inside(&cx, &at(DVec3::new(1.0, 0.5, 0.5)), &d).unwrap_err();
        assert!(e.to_string().contains("particle id 3"), "{e}");
        assert!(check_inside(&cx, &at(DVec3::new(0.5, 1.0 + 1e-12, 0.5)), &d).is_err());
        let mut nan = at(DVec3::splat(0.5));
        nan.v.x = f64::NAN;
        assert!(check_inside(&cx, &nan, &d).is_err());
    }

    #[test]
    fn the_largest_block_radius_ignores_files() {
        let blocks: Vec<ParticleBlock> = toml::from_str::<Config>(&config(
            r#"
[[particles]]
kind = "file"
path = "none.csv"
material = "light"

[[particles]]
kind = "list"
material = "light"
radius = [0.001, 0.003]
position = [[0.002, 0.002, 0.002], [0.006, 0.006, 0.006]]

[[particles]]
kind = "random"
material = "light"
radius = { min = 0.001, max = 0.002 }
count = 1
region = { lo = [0.0, 0.0, 0.0], hi = [0.01, 0.01, 0.01] }
"#,
        ))
        .unwrap()
        .particles;
        assert_eq!(max_block_radius(&blocks), 0.003);
        assert_eq!(max_block_radius(&blocks[2..]), 0.002);
        assert_eq!(max_block_radius(&blocks[..1]), 0.0);
    }
}
