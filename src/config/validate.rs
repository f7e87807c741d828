//! Validation of a parsed config into a [`Setup`].

use super::schema::*;
use crate::contact::normal::{damping_ratio_from_restitution, HookeDamping};
use crate::contact::stochastic::FrictionLaw;
use crate::contact::tangential::TangentialStiffness;
use crate::contact::{
    ContactLaw, NormalModel, RollingParams, SpinningParams, StochasticFriction, TangentialModel,
};
use crate::error::{GravelError, Result};
use crate::geometry::domain::Domain;
use crate::geometry::walls::{Wall, WallShape};
use crate::insert::{self, Placer, PourSource, RadiusRange};
use crate::integrate::timestep::TimeScales;
use crate::state::particles::ParticleRecord;
use glam::DVec3;
use std::path::{Path, PathBuf};

/// Per-particle fields that `[output] fields` may request.
pub const FIELD_NAMES: [&str; 4] = ["velocity", "omega", "force", "torque"];

/// A validated material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Name.
    pub name: String,
    /// Density.
    pub density: f64,
    /// Young's modulus, if given.
    pub youngs_modulus: Option<f64>,
    /// Poisson's ratio, if given.
    pub poisson_ratio: Option<f64>,
}

/// The contact law of every material pair.
#[derive(Debug, Clone, PartialEq)]
pub struct LawTable {
    /// Number of materials.
    pub n: usize,
    /// `laws[a * n + b]`, symmetric.
    pub laws: Vec<ContactLaw>,
    /// History values per contact (the largest any law needs).
    pub history_len: usize,
}

impl LawTable {
    /// The law between materials `a` and `b`.
    #[inline]
    pub fn get(&self, a: u32, b: u32) -> &ContactLaw {
        &self.laws[a as usize * self.n + b as usize]
    }
}

/// Validated `[output]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSettings {
    /// Output directory.
    pub dir: PathBuf,
    /// Steps between frames (0: only the last).
    pub every: u64,
    /// Extra fields.
    pub fields: Vec<String>,
    /// Steps between thermo rows.
    pub thermo_every: u64,
    /// Steps between checkpoints (0: only the final one).
    pub checkpoint_every: u64,
}

/// Everything a run needs, validated and in SI units.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The config file.
    pub config_path: PathBuf,
    /// The config text as read.
    pub config_text: String,
    /// Output file stem.
    pub name: String,
    /// Time step.
    pub dt: f64,
    /// Number of steps.
    pub steps: u64,
    /// Seed.
    pub seed: u64,
    /// Gravity.
    pub gravity: DVec3,
    /// The box.
    pub domain: Domain,
    /// Neighbour skin.
    pub skin: f64,
    /// Extra interaction range beyond `R_i + R_j` (WCA), added to the skin.
    pub range_pad: f64,
    /// Rayon threads (0 = all).
    pub threads: usize,
    /// Rank grid, if given.
    pub grid: Option<[u32; 3]>,
    /// Materials.
    pub materials: Vec<Material>,
    /// Contact laws.
    pub laws: LawTable,
    /// Walls.
    pub walls: Vec<Wall>,
    /// Particles present at step 0.
    pub initial: Vec<ParticleRecord>,
    /// Pouring sources.
    pub pours: Vec<PourSource>,
    /// The first id free for inserted particles.
    pub next_id: u64,
    /// Largest radius any particle can have.
    pub max_radius: f64,
    /// Derived time scales.
    pub time_scales: TimeScales,
    /// Output settings.
    pub output: OutputSettings,
}

struct Ctx<'a> {
    file: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, msg: impl Into<String>) -> GravelError {
        GravelError::config(self.file, msg)
    }
    fn positive(&self, key: &str, v: f64) -> Result<f64> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(format!("{key}: must be a positive number, got {v}")))
        }
    }
    fn non_negative(&self, key: &str, v: f64) -> Result<f64> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(format!("{key}: must be zero or positive, got {v}")))
        }
    }
    fn material(&self, key: &str, name: &str, mats: &[Material]) -> Result<u32> {
        mats.iter()
            .position(|m| m.name == name)
            .map(|k| k as u32)
            .ok_or_else(|| {
                let known: Vec<&str> = mats.iter().map(|m| m.name.as_str()).collect();
                self.err(format!(
                    "{key}: unknown material `{name}`; defined materials: [{}]",
                    known.join(", ")
                ))
            })
    }
    fn unit(&self, key: &str, v: [f64; 3]) -> Result<DVec3> {
        let d = DVec3::from_array(v);
        let l = d.length();
        if !(l.is_finite() && l > 0.0) {
            return Err(self.err(format!("{key}: must be a non-zero vector, got {v:?}")));
        }
        Ok(d / l)
    }
}

impl Setup {
    /// Read and validate a config file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| GravelError::config(path, format!("cannot read the config file: {e}")))?;
        Self::from_str(path, &text)
    }

    /// Validate config text (`path` is used in messages and to resolve relative file paths).
    pub fn from_str(path: &Path, text: &str) -> Result<Self> {
        let cfg: Config = toml::from_str(text)
            .map_err(|e| GravelError::config(path, format!("{e}").trim_end().to_string()))?;
        build(path, text, cfg)
    }
}

fn build(path: &Path, text: &str, cfg: Config) -> Result<Setup> {
    let cx = Ctx { file: path };
    let materials = materials(&cx, &cfg.material)?;
    let lo = DVec3::from_array(cfg.domain.lo);
    let hi = DVec3::from_array(cfg.domain.hi);
    if !(lo.is_finite() && hi.is_finite() && lo.cmplt(hi).all()) {
        return Err(cx.err(format!(
            "domain: `lo` must be below `hi` on every axis, got lo = {:?}, hi = {:?}",
            cfg.domain.lo, cfg.domain.hi
        )));
    }
    let domain = Domain {
        lo,
        hi,
        periodic: cfg.domain.periodic,
    };
    let laws = law_table(&cx, &cfg.contact, &materials)?;
    let walls = walls(&cx, &cfg.wall, &materials)?;
    for (k, w) in walls.iter().enumerate() {
        for a in 0..materials.len() as u32 {
            if !laws.get(a, w.material).normal.has_stiffness() {
                return Err(cx.err(format!("wall[{k}]: walls need an overlap-based normal model (hooke or hertz); the law between `{}` and `{}` is wca", materials[a as usize].name, materials[w.material as usize].name)));
            }
        }
    }
    let (initial, pours, next_id) =
        particles(&cx, &cfg.particles, &materials, &domain, cfg.run.seed)?;
    // Stochastic friction is for particle–particle contacts: refuse it
    // between a wall and any material that particles use.
    for (k, w) in walls.iter().enumerate() {
        let used = initial
            .iter()
            .map(|p| p.material)
            .chain(pours.iter().map(|s| s.material));
        for a in used {
            if laws.get(a, w.material).stochastic.is_some() {
                return Err(cx.err(format!("wall[{k}]: stochastic friction acts on particle–particle contacts only, but the law between `{}` and the wall material `{}` has it; give the wall its own material with a [[contact.pair]] that sets stochastic = {{ model = \"none\" }}", materials[a as usize].name, materials[w.material as usize].name)));
            }
        }
    }
    let max_radius = initial
        .iter()
        .map(|p| p.radius)
        .chain(pours.iter().map(|s| s.radius.max))
        .fold(0.0, f64::max);
    if max_radius == 0.0 {
        return Err(cx.err("particles: no particles are defined (add a [[particles]] block)"));
    }
    let skin = match cfg.domain.skin {
        Some(s) => cx.positive("domain.skin", s)?,
        None => 0.1 * 2.0 * max_radius,
    };
    let min_radius = initial
        .iter()
        .map(|p| p.radius)
        .chain(pours.iter().map(|s| s.radius.min))
        .fold(f64::INFINITY, f64::min);
    let range_pad = laws
        .laws
        .iter()
        .map(|l| (l.normal.range(min_radius, min_radius) - 2.0 * min_radius).max(0.0))
        .fold(0.0, f64::max);
    let reach = 2.0 * max_radius + range_pad + skin;
    let len = domain.length();
    for a in 0..3 {
        if domain.periodic[a] && len[a] <= 2.0 * reach {
            return Err(cx.err(format!(
                "domain: the periodic length along {} ({}) must exceed twice the interaction range 2·(2 R_max + skin) = {}",
                ["x", "y", "z"][a],
                len[a],
                2.0 * reach
            )));
        }
    }
    check_overlaps(&cx, &cfg.particles, &initial, &domain)?;
    let time_scales = time_scales(&laws, &materials, &initial, &pours);
    let dt = match &cfg.run.dt {
        DtSpec::Fixed(v) => cx.positive("run.dt", *v)?,
        DtSpec::Word(w) if w == "auto" => time_scales.auto,
        DtSpec::Word(w) => {
            return Err(cx.err(format!(
                "run.dt: must be a number of seconds or \"auto\", got \"{w}\""
            )))
        }
    };
    if dt > time_scales.stable && !cfg.run.allow_large_dt {
        return Err(cx.err(format!(
            "run.dt: {dt:e} s exceeds the stable limit {:e} s ({} {:e} s); lower dt, use dt = \"auto\", or set run.allow_large_dt = true",
            time_scales.stable, time_scales.kind, time_scales.critical
        )));
    }
    let steps = match (cfg.run.steps, cfg.run.time) {
        (Some(s), None) => s,
        (None, Some(t)) => steps_covering(cx.non_negative("run.time", t)?, dt),
        _ => return Err(cx.err("run: give exactly one of `steps` or `time`")),
    };
    let gravity = DVec3::from_array(cfg.run.gravity);
    if !gravity.is_finite() {
        return Err(cx.err("run.gravity: must be finite"));
    }
    if cfg.run.name.is_empty() || cfg.run.name.contains(['/', '\\']) {
        return Err(cx.err(format!(
            "run.name: must be a non-empty file stem without slashes, got `{}`",
            cfg.run.name
        )));
    }
    let output = output(&cx, &cfg.output)?;
    Ok(Setup {
        config_path: path.to_path_buf(),
        config_text: text.to_string(),
        name: cfg.run.name,
        dt,
        steps,
        seed: cfg.run.seed,
        gravity,
        domain,
        skin,
        range_pad,
        threads: cfg.parallel.threads,
        grid: cfg.parallel.grid,
        materials,
        laws,
        walls,
        initial,
        pours,
        next_id,
        max_radius,
        time_scales,
        output,
    })
}

fn materials(cx: &Ctx, cfg: &[MaterialConfig]) -> Result<Vec<Material>> {
    if cfg.is_empty() {
        return Err(cx.err("material: at least one [[material]] is required"));
    }
    let mut out: Vec<Material> = Vec::new();
    for (k, m) in cfg.iter().enumerate() {
        let key = format!("material[{k}]");
        if out.iter().any(|o| o.name == m.name) {
            return Err(cx.err(format!(
                "{key}.name: material `{}` is defined twice",
                m.name
            )));
        }
        cx.positive(&format!("{key}.density"), m.density)?;
        if let Some(e) = m.youngs_modulus {
            cx.positive(&format!("{key}.youngs_modulus"), e)?;
        }
        if let Some(nu) = m.poisson_ratio {
            if !(-1.0 < nu && nu <= 0.5) {
                return Err(cx.err(format!(
                    "{key}.poisson_ratio: must lie in (-1, 0.5], got {nu}"
                )));
            }
        }
        out.push(Material {
            name: m.name.clone(),
            density: m.density,
            youngs_modulus: m.youngs_modulus,
            poisson_ratio: m.poisson_ratio,
        });
    }
    Ok(out)
}

fn elastic(cx: &Ctx, key: &str, m: &Material) -> Result<(f64, f64)> {
    match (m.youngs_modulus, m.poisson_ratio) {
        (Some(e), Some(nu)) => Ok((e, nu)),
        _ => Err(cx.err(format!(
            "{key}: needs `youngs_modulus` and `poisson_ratio` of material `{}`",
            m.name
        ))),
    }
}

/// The number of steps of `dt` that covers `time`: `time/dt` rounded up,
/// except that a ratio within a few ulps of a whole number (2e-3 / 1e-6 =
/// 2000.0000000000002 in floating point) is that whole number.
fn steps_covering(time: f64, dt: f64) -> u64 {
    let ratio = time / dt;
    let whole = ratio.round();
    if (ratio - whole).abs() <= 4.0 * f64::EPSILON * whole.max(1.0) {
        whole as u64
    } else {
        ratio.ceil() as u64
    }
}

/// One sub-model slot of a material pair: the `[[contact.pair]]` override's
/// spec if it sets this slot, else `[contact]`'s, with the key that messages name.
fn slot<'a, T>(
    over: Option<(usize, &'a PairOverride)>,
    name: &str,
    pick: impl Fn(&'a PairOverride) -> Option<&'a T>,
    default: &'a T,
) -> (String, &'a T) {
    match over.and_then(|(k, p)| pick(p).map(|s| (k, s))) {
        Some((k, s)) => (format!("contact.pair[{k}].{name}"), s),
        None => (format!("contact.{name}"), default),
    }
}

fn law_table(cx: &Ctx, c: &ContactConfig, mats: &[Material]) -> Result<LawTable> {
    let n = mats.len();
    let mut laws = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            let over = c.pair.iter().enumerate().find(|(_, p)| {
                (p.materials[0] == mats[a].name && p.materials[1] == mats[b].name)
                    || (p.materials[0] == mats[b].name && p.materials[1] == mats[a].name)
            });
            let (nkey, normal) = slot(over, "normal", |p| p.normal.as_ref(), &c.normal);
            let (tkey, tangential) =
                slot(over, "tangential", |p| p.tangential.as_ref(), &c.tangential);
            let (stkey, stochastic) =
                slot(over, "stochastic", |p| p.stochastic.as_ref(), &c.stochastic);
            let (rkey, rolling) = slot(over, "rolling", |p| p.rolling.as_ref(), &c.rolling);
            let (skey, spinning) = slot(over, "spinning", |p| p.spinning.as_ref(), &c.spinning);
            let normal = normal_model(cx, &nkey, normal, &mats[a], &mats[b])?;
            let tangential = tangential_model(cx, &tkey, tangential, &normal, &mats[a], &mats[b])?;
            let stochastic = stochastic_model(cx, &stkey, stochastic)?;
            if stochastic.is_some() && tangential != TangentialModel::None {
                return Err(cx.err(format!(
                    "{stkey}: stochastic friction replaces the tangential model, but {tkey} is also set for materials `{}` and `{}`; \
                     set tangential = {{ model = \"none\" }} or stochastic = {{ model = \"none\" }} (in a [[contact.pair]] for this pair)",
                    mats[a].name, mats[b].name
                )));
            }
            let rolling = rolling_model(cx, &rkey, rolling, &normal)?;
            let spinning = spinning_model(cx, &skey, spinning, &normal)?;
            laws.push(ContactLaw {
                normal,
                tangential,
                stochastic,
                rolling,
                spinning,
            });
        }
    }
    for (k, p) in c.pair.iter().enumerate() {
        for name in &p.materials {
            cx.material(&format!("contact.pair[{k}].materials"), name, mats)?;
        }
    }
    let history_len = laws.iter().map(|l| l.history_len()).max().unwrap_or(0);
    Ok(LawTable {
        n,
        laws,
        history_len,
    })
}

fn stochastic_model(cx: &Ctx, key: &str, s: &StochasticSpec) -> Result<Option<StochasticFriction>> {
    let kt = |v: f64| cx.non_negative(&format!("{key}.kT"), v);
    let gamma = |v: f64| cx.non_negative(&format!("{key}.gamma"), v);
    let kappa = |v: f64| cx.non_negative(&format!("{key}.kappa"), v);
    Ok(match *s {
        StochasticSpec::None => None,
        StochasticSpec::Linear { gamma: g, kt: t } => Some(StochasticFriction {
            law: FrictionLaw::Linear { gamma: gamma(g)? },
            kt: kt(t)?,
        }),
        StochasticSpec::Coulomb { kappa: k, kt: t } => Some(StochasticFriction {
            law: FrictionLaw::Coulomb { kappa: kappa(k)? },
            kt: kt(t)?,
        }),
        StochasticSpec::CoulombNewton {
            gamma: g,
            kappa: k,
            kt: t,
        } => Some(StochasticFriction {
            law: FrictionLaw::CoulombNewton {
                gamma: gamma(g)?,
                kappa: kappa(k)?,
            },
            kt: kt(t)?,
        }),
    })
}

fn restitution(cx: &Ctx, key: &str, e: f64) -> Result<f64> {
    if e > 0.0 && e <= 1.0 {
        Ok(damping_ratio_from_restitution(e))
    } else {
        Err(cx.err(format!("{key}.restitution: must lie in (0, 1], got {e}")))
    }
}

fn normal_model(
    cx: &Ctx,
    key: &str,
    s: &NormalSpec,
    a: &Material,
    b: &Material,
) -> Result<NormalModel> {
    Ok(match *s {
        NormalSpec::Hooke {
            stiffness,
            restitution: e,
            damping_rate,
            no_tension,
        } => {
            let stiffness = cx.positive(&format!("{key}.stiffness"), stiffness)?;
            let damping = match (e, damping_rate) {
                (Some(e), None) => HookeDamping::Restitution {
                    beta: restitution(cx, key, e)?,
                },
                (None, Some(r)) => HookeDamping::Rate {
                    rate: cx.non_negative(&format!("{key}.damping_rate"), r)?,
                },
                _ => return Err(cx.err(format!("{key}: give exactly one of `restitution` or `damping_rate` for model \"hooke\""))),
            };
            NormalModel::Hooke {
                stiffness,
                damping,
                no_tension,
            }
        }
        NormalSpec::Hertz {
            restitution: e,
            no_tension,
        } => {
            let (ea, na) = elastic(cx, key, a)?;
            let (eb, nb) = elastic(cx, key, b)?;
            NormalModel::Hertz {
                e_star: 1.0 / ((1.0 - na * na) / ea + (1.0 - nb * nb) / eb),
                beta: restitution(cx, key, e)?,
                no_tension,
            }
        }
        NormalSpec::Wca { epsilon, sigma } => NormalModel::Wca {
            epsilon: cx.positive(&format!("{key}.epsilon"), epsilon)?,
            sigma: cx.positive(&format!("{key}.sigma"), sigma)?,
        },
    })
}

fn tangential_model(
    cx: &Ctx,
    key: &str,
    s: &TangentialSpec,
    normal: &NormalModel,
    a: &Material,
    b: &Material,
) -> Result<TangentialModel> {
    Ok(match *s {
        TangentialSpec::None => TangentialModel::None,
        TangentialSpec::DashpotSlider { friction, damping } => TangentialModel::DashpotSlider {
            friction: cx.non_negative(&format!("{key}.friction"), friction)?,
            damping: cx.non_negative(&format!("{key}.damping"), damping)?,
        },
        TangentialSpec::SpringSlider {
            friction,
            stiffness_ratio,
            mindlin,
            damping_ratio,
        } => {
            let friction = cx.non_negative(&format!("{key}.friction"), friction)?;
            let damping_ratio = cx.non_negative(&format!("{key}.damping_ratio"), damping_ratio)?;
            let stiffness = match (stiffness_ratio, mindlin) {
                (Some(_), true) => return Err(cx.err(format!("{key}: give either `stiffness_ratio` or `mindlin = true`, not both"))),
                (Some(r), false) => TangentialStiffness::Linear {
                    ratio: cx.positive(&format!("{key}.stiffness_ratio"), r)?,
                },
                (None, true) => {
                    let (ea, na) = elastic(cx, key, a)?;
                    let (eb, nb) = elastic(cx, key, b)?;
                    TangentialStiffness::Mindlin {
                        g_star: 1.0 / (2.0 * (2.0 - na) * (1.0 + na) / ea + 2.0 * (2.0 - nb) * (1.0 + nb) / eb),
                    }
                }
                (None, false) => {
                    return Err(cx.err(format!("{key}: model \"spring_slider\" needs `stiffness_ratio = k_t/k_n` or `mindlin = true`")))
                }
            };
            if matches!(stiffness, TangentialStiffness::Linear { .. }) && !normal.has_stiffness() {
                return Err(cx.err(format!("{key}: `stiffness_ratio` needs a normal model with a stiffness (hooke or hertz), not wca")));
            }
            if matches!(normal, NormalModel::Wca { .. }) {
                return Err(cx.err(format!("{key}: model \"spring_slider\" needs an overlap-based normal model (hooke or hertz), not wca")));
            }
            TangentialModel::SpringSlider {
                friction,
                stiffness,
                damping_ratio,
            }
        }
    })
}

/// A `[0, 1]` setting (damping ratios and factors).
fn unit_interval(cx: &Ctx, key: &str, v: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(cx.err(format!("{key}: must lie in [0, 1], got {v}")))
    }
}

fn rolling_model(
    cx: &Ctx,
    key: &str,
    s: &RollingSpec,
    normal: &NormalModel,
) -> Result<Option<RollingParams>> {
    let p = match *s {
        RollingSpec::None => return Ok(None),
        RollingSpec::Epsd {
            friction,
            damping,
            torsion_torque,
            mobilised_damping_factor,
        } => RollingParams {
            torsion_torque,
            mobilised_damping_factor: unit_interval(
                cx,
                &format!("{key}.mobilised_damping_factor"),
                mobilised_damping_factor,
            )?,
            ..RollingParams::epsd(
                cx.non_negative(&format!("{key}.friction"), friction)?,
                unit_interval(cx, &format!("{key}.damping"), damping)?,
            )
        },
        RollingSpec::TypeC {
            friction,
            damping,
            stiffness_factor,
            rolling_radius,
        } => RollingParams::type_c(
            cx.non_negative(&format!("{key}.friction"), friction)?,
            unit_interval(cx, &format!("{key}.damping"), damping)?,
            cx.positive(&format!("{key}.stiffness_factor"), stiffness_factor)?,
            match rolling_radius {
                Some(r) => Some(cx.positive(&format!("{key}.rolling_radius"), r)?),
                None => None,
            },
        ),
    };
    if !normal.has_stiffness() {
        return Err(cx.err(format!(
            "{key}: a rolling resistance model needs a normal model with a stiffness \
             (hooke or hertz), not wca"
        )));
    }
    p.validate().map_err(|e| cx.err(format!("{key}: {e}")))?;
    Ok(Some(p))
}

fn spinning_model(
    cx: &Ctx,
    key: &str,
    s: &SpinningSpec,
    normal: &NormalModel,
) -> Result<Option<SpinningParams>> {
    let p = match *s {
        SpinningSpec::None => return Ok(None),
        SpinningSpec::Edem { friction } => SpinningParams {
            friction: cx.non_negative(&format!("{key}.friction"), friction)?,
        },
    };
    if matches!(normal, NormalModel::Wca { .. }) {
        return Err(cx.err(format!(
            "{key}: model \"edem\" needs an overlap-based normal model (hooke or hertz), \
             not wca"
        )));
    }
    p.validate().map_err(|e| cx.err(format!("{key}: {e}")))?;
    Ok(Some(p))
}

fn walls(cx: &Ctx, cfg: &[WallConfig], mats: &[Material]) -> Result<Vec<Wall>> {
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

fn region(cx: &Ctx, key: &str, r: &RegionConfig, domain: &Domain) -> Result<(DVec3, DVec3)> {
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

fn radius_range(cx: &Ctx, key: &str, r: &RadiusSpec) -> Result<RadiusRange> {
    match *r {
        RadiusSpec::Fixed(v) => {
            let v = cx.positive(&format!("{key}.radius"), v)?;
            Ok(RadiusRange { min: v, max: v })
        }
        RadiusSpec::Range { min, max } => {
            let (min, max) = (
                cx.positive(&format!("{key}.radius.min"), min)?,
                cx.positive(&format!("{key}.radius.max"), max)?,
            );
            if min > max {
                return Err(cx.err(format!(
                    "{key}.radius: min ({min}) must not exceed max ({max})"
                )));
            }
            Ok(RadiusRange { min, max })
        }
    }
}

type Inserted = (Vec<ParticleRecord>, Vec<PourSource>, u64);

fn particles(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    mats: &[Material],
    domain: &Domain,
    seed: u64,
) -> Result<Inserted> {
    // Ids: those of files are kept; generated ids follow the largest id of any file.
    let mut records: Vec<ParticleRecord> = Vec::new();
    let mut pending: Vec<(usize, Vec<ParticleRecord>)> = Vec::new();
    let mut pours = Vec::new();
    let max_r_all = max_block_radius(blocks);
    let mut placer = Placer::new(max_r_all);
    for (k, b) in blocks.iter().enumerate() {
        let key = format!("particles[{k}]");
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
        let block: Vec<ParticleRecord> = match b {
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
                let (lo, hi) = region(cx, &key, reg, domain)?;
                let spacing = spacing.unwrap_or(2.0 * r * 1.0001);
                if spacing < 2.0 * r {
                    return Err(cx.err(format!("{key}.spacing: {spacing} is less than the diameter {}; spheres would overlap", 2.0 * r)));
                }
                let pts = insert::lattice_positions(lo, hi, r, spacing, *count);
                if pts.is_empty() {
                    return Err(cx.err(format!(
                        "{key}.region: too small to hold one sphere of radius {r}"
                    )));
                }
                pts.into_iter()
                    .map(|x| {
                        placer.add(x, r);
                        rec(x, DVec3::from_array(*velocity), DVec3::ZERO, r, m, *frozen)
                    })
                    .collect()
            }
            ParticleBlock::Random {
                material,
                radius,
                count,
                region: reg,
                velocity,
                frozen,
            } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let rr = radius_range(cx, &key, radius)?;
                let (lo, hi) = region(cx, &key, reg, domain)?;
                let mut rng = insert::stream(seed, k as u64, u64::MAX);
                let placed = insert::random_spheres(&mut rng, lo, hi, rr, *count, &mut placer);
                if (placed.len() as u64) < *count {
                    return Err(cx.err(format!(
                        "{key}: could place only {} of {count} non-overlapping spheres in the region; enlarge the region or lower `count`",
                        placed.len()
                    )));
                }
                placed
                    .into_iter()
                    .map(|(x, r)| rec(x, DVec3::from_array(*velocity), DVec3::ZERO, r, m, *frozen))
                    .collect()
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
                let rr = radius_range(cx, &key, radius)?;
                let (lo, hi) = region(cx, &key, reg, domain)?;
                if interval == &Some(0) {
                    return Err(cx.err(format!("{key}.interval: must be at least 1 step")));
                }
                pours.push(PourSource {
                    block: k as u64,
                    material: m,
                    density: mats[m as usize].density,
                    radius: rr,
                    rate: cx.positive(&format!("{key}.rate"), *rate)?,
                    until: cx.non_negative(&format!("{key}.until"), *until)?,
                    count: *count,
                    lo,
                    hi,
                    velocity: DVec3::from_array(*velocity),
                    interval: interval.unwrap_or(50),
                    inserted: 0,
                });
                Vec::new()
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
                let radii: Vec<f64> = match radius {
                    ListRadius::One(r) => vec![*r; n],
                    ListRadius::Each(v) => v.clone(),
                };
                let per = |name: &str, v: &Option<Vec<[f64; 3]>>| -> Result<Vec<DVec3>> {
                    match v {
                        None => Ok(vec![DVec3::ZERO; n]),
                        Some(v) if v.len() == n => {
                            Ok(v.iter().map(|a| DVec3::from_array(*a)).collect())
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
                    placer.add(DVec3::from_array(position[i]), r);
                    out.push(rec(
                        DVec3::from_array(position[i]),
                        vel[i],
                        om[i],
                        r,
                        m,
                        *frozen,
                    ));
                }
                out
            }
            ParticleBlock::File { path, material } => {
                let m = cx.material(&format!("{key}.material"), material, mats)?;
                let full = cx.file.parent().unwrap_or(Path::new(".")).join(path);
                let text = std::fs::read_to_string(&full).map_err(|e| {
                    cx.err(format!("{key}.path: cannot read `{}`: {e}", full.display()))
                })?;
                let recs = insert::parse_csv(&text, m)
                    .map_err(|e| cx.err(format!("{key}.path: `{}` {e}", full.display())))?;
                for r in &recs {
                    placer.add(r.x, r.radius);
                }
                records.extend(recs);
                continue;
            }
        };
        pending.push((k, block));
    }
    let mut seen = std::collections::HashSet::with_capacity(records.len());
    for r in &records {
        if !seen.insert(r.id) {
            return Err(cx.err(format!(
                "particles: id {} appears twice in the particle files",
                r.id
            )));
        }
    }
    let mut next_id = records.iter().map(|r| r.id + 1).max().unwrap_or(0);
    let mut all = records;
    for (_, block) in pending {
        for mut r in block {
            r.id = next_id;
            next_id += 1;
            all.push(r);
        }
    }
    for r in &all {
        check_inside(cx, r, domain)?;
    }
    Ok((all, pours, next_id))
}

fn max_block_radius(blocks: &[ParticleBlock]) -> f64 {
    let spec = |r: &RadiusSpec| match *r {
        RadiusSpec::Fixed(v) => v,
        RadiusSpec::Range { max, .. } => max,
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

fn check_inside(cx: &Ctx, r: &ParticleRecord, d: &Domain) -> Result<()> {
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

/// Refuse overlapping initial particles when a `list` block is present
/// (generated blocks never overlap), periodic images included: two spheres
/// near opposite faces of a periodic axis touch through the boundary.
fn check_overlaps(
    cx: &Ctx,
    blocks: &[ParticleBlock],
    all: &[ParticleRecord],
    domain: &Domain,
) -> Result<()> {
    if !blocks
        .iter()
        .any(|b| matches!(b, ParticleBlock::List { .. }))
    {
        return Ok(());
    }
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
                            let o = &all[q];
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

fn time_scales(
    laws: &LawTable,
    mats: &[Material],
    initial: &[ParticleRecord],
    pours: &[PourSource],
) -> TimeScales {
    // The smallest particle of each material sets the stiffest time scale.
    let n = mats.len();
    let mut smallest = vec![(f64::INFINITY, f64::INFINITY); n];
    for p in initial {
        let s = &mut smallest[p.material as usize];
        if p.radius < s.0 {
            *s = (p.radius, p.mass);
        }
    }
    for s in pours {
        let e = &mut smallest[s.material as usize];
        if s.radius.min < e.0 {
            *e = (
                s.radius.min,
                ParticleRecord::sphere_mass(s.radius.min, s.density),
            );
        }
    }
    let mut best: Option<TimeScales> = None;
    for a in 0..n {
        let (r, m) = smallest[a];
        if !r.is_finite() {
            continue;
        }
        for b in 0..n {
            let ts = match laws.get(a as u32, b as u32).normal {
                NormalModel::Hertz { .. } => {
                    match (mats[a].youngs_modulus, mats[a].poisson_ratio) {
                        (Some(e), Some(nu)) => TimeScales::rayleigh(r, mats[a].density, e, nu),
                        _ => continue,
                    }
                }
                NormalModel::Hooke {
                    stiffness, damping, ..
                } => {
                    let m_eff = 0.5 * m;
                    let gamma = match damping {
                        HookeDamping::Restitution { beta } => {
                            2.0 * beta * (stiffness * m_eff).sqrt()
                        }
                        HookeDamping::Rate { rate } => rate * m_eff,
                    };
                    TimeScales::hooke(stiffness, gamma, m_eff)
                }
                NormalModel::Wca { epsilon, sigma } => TimeScales::wca(sigma, epsilon, m),
            };
            best = Some(match best {
                Some(b) => b.min(ts),
                None => ts,
            });
        }
    }
    best.unwrap_or(TimeScales {
        critical: f64::INFINITY,
        stable: f64::INFINITY,
        auto: f64::INFINITY,
        kind: "none",
    })
}

fn output(cx: &Ctx, o: &OutputConfig) -> Result<OutputSettings> {
    for (k, f) in o.fields.iter().enumerate() {
        if !FIELD_NAMES.contains(&f.as_str()) {
            return Err(cx.err(format!(
                "output.fields[{k}]: unknown field `{f}`; allowed: {}",
                FIELD_NAMES.join(", ")
            )));
        }
    }
    if o.thermo_every == 0 {
        return Err(cx.err("output.thermo_every: must be at least 1"));
    }
    Ok(OutputSettings {
        dir: PathBuf::from(&o.dir),
        every: o.every,
        fields: o.fields.clone(),
        thermo_every: o.thermo_every,
        checkpoint_every: o.checkpoint_every,
    })
}
