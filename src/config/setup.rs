//! The validated parameters of a run ([`Setup`]) and the top of the
//! validation: the config's sections in order, each checked by its own
//! module, then what is derived from them (time step, time scales).

use super::context::Ctx;
use super::diagnostics::{diagnostics, DiagnosticSpec};
use super::laws::law_table;
use super::limits::{self, usable, MemoryBudget};
use super::outlets::{check_initial, outlets};
use super::particles::{check_overlaps, particles, BlockSizes};
use super::schema::*;
use super::walls::{check_periodic, walls};
use crate::contact::model::Elastic;
use crate::contact::{ContactLaw, NormalModel};
use crate::error::{GravelError, Result};
use crate::geometry::domain::Domain;
use crate::geometry::motion::{place_walls, MovingWall};
use crate::geometry::outlet::{Lost, Outlet};
use crate::geometry::walls::Wall;
use crate::insert::file::hash_record;
use crate::insert::initial::{Initial, InitialBlock};
use crate::insert::PourSource;
use crate::integrate::timestep::TimeScales;
use crate::key::Key;
use crate::parallel::comm::Comm;
use crate::state::particles::ParticleRecord;
use crate::state::snapshot::{Compat, Fnv};
use glam::DVec3;
use std::path::{Path, PathBuf};

/// Per-particle fields that `[output] fields` may request.
pub const FIELD_NAMES: [&str; 4] = ["velocity", "omega", "force", "torque"];

/// A validated material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Name.
    pub name: String,
    /// Density; NaN when not given, which only a material that no
    /// particle block (but `file` ones, whose rows give it) uses may be.
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
        &self.laws[self.at(a, b)]
    }

    /// The place in `laws` of the law between materials `a` and `b`,
    /// one for `(a, b)` and `(b, a)` (the table is symmetric): that of
    /// the lower material first.
    #[inline]
    pub fn at(&self, a: u32, b: u32) -> usize {
        a.min(b) as usize * self.n + a.max(b) as usize
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
    /// Dynamic load balancing on more than one rank (`None`: off).
    pub balance: Option<Balance>,
    /// Materials.
    pub materials: Vec<Material>,
    /// Contact laws.
    pub laws: LawTable,
    /// Walls.
    pub walls: Vec<Wall>,
    /// The walls' names in the output, by index.
    pub wall_names: Vec<String>,
    /// The walls that move, with their places at rest (`walls` holds
    /// where every wall is at the current time).
    pub moving_walls: Vec<MovingWall>,
    /// Outlets, in config order.
    pub outlets: Vec<Outlet>,
    /// What becomes of a particle out through an open face.
    pub lost: Lost,
    /// Particles present at step 0 (the records held are dropped by the
    /// simulation once it has taken its own: see [`Self::initial_count`]).
    pub initial: Initial,
    /// How many particles are present at step 0.
    pub initial_count: usize,
    /// The hash of the particles present at step 0, for [`Self::compat`].
    pub initial_fingerprint: Fnv,
    /// Pouring sources.
    pub pours: Vec<PourSource>,
    /// The realised radius distribution of each `random` and `pour` block.
    pub sizes: Vec<BlockSizes>,
    /// The first id free for inserted particles.
    pub next_id: u64,
    /// Largest radius any particle can have.
    pub max_radius: f64,
    /// Derived time scales.
    pub time_scales: TimeScales,
    /// Output settings.
    pub output: OutputSettings,
    /// The `[[diagnostics]]` blocks, in config order.
    pub diagnostics: Vec<DiagnosticSpec>,
}

impl Setup {
    /// The simulated time at `step`, `step · dt`: where moving walls are
    /// placed from (the same bits wherever it is asked for).
    pub fn time_at(&self, step: u64) -> f64 {
        step as f64 * self.dt
    }

    /// How the walls near each particle are listed at a rebuild
    /// ([`crate::force::NearWalls::find`]): with the skin, the step and
    /// the domain's box, at time 0 (`.at(t)` for another).
    pub fn wall_listing(&self) -> crate::force::near_walls::Listing {
        let bounds = (self.domain.lo, self.domain.hi);
        crate::force::near_walls::Listing::new(self.skin, self.dt, bounds)
    }

    /// The wall-history records each particle keeps: one per wall, a
    /// mesh's slots ([`Wall::history_records`]).
    pub fn wall_records(&self) -> usize {
        self.walls
            .iter()
            .map(|w| w.history_records(self.laws.history_len))
            .sum()
    }

    /// The walls where they are at time `t` (a run keeps its walls in
    /// `walls`, placed at the current time).
    pub fn walls_at(&self, t: f64) -> Vec<Wall> {
        let mut walls = self.walls.clone();
        place_walls(&mut walls, &self.moving_walls, t);
        walls
    }

    /// Read and validate a config file.
    pub fn from_file(path: &Path) -> Result<Self> {
        Self::read(path, None)
    }

    /// Validate config text (`path` is used in messages and to resolve relative file paths).
    pub fn from_str(path: &Path, text: &str) -> Result<Self> {
        Self::parse(path, text, None)
    }

    /// [`Self::from_file`] on every rank of `comm` at once: on several
    /// ranks each `file` block is checked by slices, each rank walking its
    /// own (`config/file_slices.rs`), so that no rank reads a whole file.
    /// The same setup, or the same error, on every rank. Collective.
    pub fn from_file_shared(path: &Path, comm: &dyn Comm) -> Result<Self> {
        Self::read(path, (comm.size() > 1).then_some(comm))
    }

    fn read(path: &Path, comm: Option<&dyn Comm>) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| GravelError::config(path, format!("cannot read the config file: {e}")))?;
        Self::parse(path, &text, comm)
    }

    fn parse(path: &Path, text: &str, comm: Option<&dyn Comm>) -> Result<Self> {
        let cfg: Config = toml::from_str(text)
            .map_err(|e| GravelError::config(path, super::toml_error::explain(text, &e)))?;
        build(path, text, cfg, comm)
    }

    /// The fingerprint of what a checkpoint must share with the config that
    /// continues it ([`Compat`]). `Debug` of `f64` prints the shortest text that reads
    /// back to the same bits, so equal fingerprints mean bit-equal parameters.
    pub fn compat(&self) -> Compat {
        let setup = self;
        let text = |s: String| {
            let mut h = Fnv::default();
            h.str(&s);
            h.finish()
        };
        let mut blocks = setup.initial_fingerprint;
        for s in &setup.pours {
            let mut s = s.clone();
            s.inserted = 0;
            s.waiting.clear();
            blocks.str(&format!("{s:?}"));
        }
        blocks.u64(setup.next_id);
        let walls_at_start = setup.walls_at(0.0);
        let values = [
            text(format!("{:?}", setup.materials)),
            text(format!("{:?} {:?}", setup.laws, setup.range_pad)),
            text(format!("{:?} {:?}", setup.domain, setup.skin)),
            text(format!("{:?} {:?}", walls_at_start, setup.moving_walls)),
            blocks.finish(),
            text(format!("{:?}", setup.dt)),
            text(format!("{:?}", setup.seed)),
            text(format!("{:?}", setup.gravity)),
        ];
        Compat::new(values)
    }
}

pub(super) fn build(
    path: &Path,
    text: &str,
    cfg: Config,
    comm: Option<&dyn Comm>,
) -> Result<Setup> {
    let cx = Ctx { file: path };
    let materials = materials(&cx, &cfg.material)?;
    let lo = DVec3::from_array(cfg.domain.lo.0);
    let hi = DVec3::from_array(cfg.domain.hi.0);
    if !(lo.is_finite() && hi.is_finite() && lo.cmplt(hi).all()) {
        return Err(cx.err(format!(
            "domain: `lo` must be below `hi` on every axis, got lo = {:?}, hi = {:?}",
            cfg.domain.lo, cfg.domain.hi
        )));
    }
    let domain = Domain {
        lo,
        hi,
        periodic: cfg.domain.periodic.0,
    };
    let laws = law_table(&cx, &cfg.contact, &materials)?;
    let wall_set = walls(&cx, &cfg.wall, &materials)?;
    // Where the walls are at t = 0 (a path may start off its place at rest).
    let mut walls = wall_set.walls.clone();
    place_walls(&mut walls, &wall_set.moving, 0.0);
    let outlets = outlets(&cx, &cfg.outlet, &domain)?;
    for (k, w) in walls.iter().enumerate() {
        for a in 0..materials.len() as u32 {
            if !laws.get(a, w.material).normal.has_stiffness() {
                return Err(cx.err(format!("{}: walls need an overlap-based normal model (hooke or hertz); the law between `{}` and `{}` is wca", wall_set.key(k), materials[a as usize].name, materials[w.material as usize].name)));
            }
        }
    }
    let threads = limits::check_threads(cfg.parallel.threads)
        .map_err(|m| cx.err(format!("parallel.threads = {}: {m}", cfg.parallel.threads)))?;
    // The particle count is bounded by the memory before any is generated.
    let mut budget = MemoryBudget::new(laws.history_len);
    let (initial, pours, next_id, sizes) = particles(
        &cx,
        &cfg.particles,
        &materials,
        &domain,
        &walls,
        cfg.run.seed,
        &mut budget,
        comm,
    )?;
    // One walk over the initial particles: the materials they use and the
    // extremes of their radii.
    let mut in_use = vec![false; materials.len()];
    let (mut min_radius, mut max_radius) = (f64::INFINITY, 0.0f64);
    initial.for_each_body(|_, p| {
        in_use[p.material as usize] = true;
        min_radius = min_radius.min(p.radius);
        max_radius = max_radius.max(p.radius);
    });
    for s in &pours {
        in_use[s.material as usize] = true;
        min_radius = min_radius.min(s.radius.min());
        max_radius = max_radius.max(s.radius.max());
    }
    // Stochastic friction is for particle–particle contacts: refuse it
    // between a wall and any material that particles use.
    for (k, w) in walls.iter().enumerate() {
        let used = (0..materials.len() as u32).filter(|&a| in_use[a as usize]);
        for a in used {
            if laws.get(a, w.material).stochastic.is_some() {
                return Err(cx.err(format!("{}: stochastic friction acts on particle–particle contacts only, but the law between `{}` and the wall material `{}` has it; give the wall its own material with a [[contact.pair]] that sets stochastic = {{ model = \"none\" }}", wall_set.key(k), materials[a as usize].name, materials[w.material as usize].name)));
            }
        }
    }
    if max_radius == 0.0 {
        return Err(cx.err("particles: no particles are defined (add a [[particles]] block)"));
    }
    let skin = match cfg.domain.skin {
        Some(s) => cx.positive("domain.skin", s)?,
        None => 0.1 * 2.0 * max_radius,
    };
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
    check_periodic(&cx, &wall_set, &domain, reach)?;
    check_overlaps(&cx, &cfg.particles, &initial, &domain, comm)?;
    check_initial(&cx, &outlets, &initial, &domain, comm)?;
    let time_scales = time_scales(&cx, &laws, &materials, &initial, &pours)?;
    let dt = match &cfg.run.dt {
        DtSpec::Fixed(v) => cx.positive("run.dt", *v)?,
        DtSpec::Word(w) if w == "auto" && usable(time_scales.auto) => time_scales.auto,
        DtSpec::Word(w) if w == "auto" => {
            return Err(cx.err(format!(
                "run.dt = \"auto\": no contact law of the particles' materials gives a time scale ({} s); give dt in seconds",
                time_scales.auto
            )))
        }
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
        (Some(s), None) => limits::steps(&cx, "run.steps", s)?,
        (None, Some(t)) => {
            let t = cx.positive("run.time", t)?;
            let ratio = t / dt;
            if !ratio.is_finite() || ratio > limits::MAX_STEPS as f64 {
                return Err(cx.err(format!(
                    "run.time = {t:e}: with dt = {dt:e} s it takes {ratio:e} steps, more than the {} (2^53) a run may take",
                    limits::MAX_STEPS
                )));
            }
            match steps_covering(t, dt) {
                0 => {
                    return Err(cx.err(format!(
                        "run.time = {t:e}: with dt = {dt:e} s it is less than one step; a run needs at least 1 step"
                    )))
                }
                n => n,
            }
        }
        _ => return Err(cx.err("run: give exactly one of `steps` or `time`")),
    };
    let gravity = DVec3::from_array(cfg.run.gravity.0);
    if !gravity.is_finite() {
        return Err(cx.err("run.gravity: must be finite"));
    }
    if cfg.run.name.is_empty() || cfg.run.name.contains(['/', '\\']) {
        return Err(cx.err(format!(
            "run.name: must be a non-empty file stem without slashes, got `{}`",
            cfg.run.name
        )));
    }
    if let Some(g) = &cfg.parallel.grid {
        if g.contains(&0) {
            return Err(cx.err(format!(
                "parallel.grid: every entry must be at least 1 (ranks along x, y, z), got {g:?}"
            )));
        }
    }
    let balance = balance(&cx, cfg.parallel.balance.as_ref())?;
    let output = output(&cx, &cfg.output, dt)?;
    let diagnostics = diagnostics(&cx, &cfg.diagnostics, &domain)?;
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
        threads,
        grid: cfg.parallel.grid.map(|g| g.0),
        balance,
        materials,
        laws,
        walls,
        wall_names: wall_set.names,
        moving_walls: wall_set.moving,
        outlets,
        lost: cfg.domain.lost,
        initial_count: initial.len(),
        initial_fingerprint: fingerprint(&initial),
        initial,
        pours,
        sizes,
        next_id,
        max_radius,
        time_scales,
        output,
        diagnostics,
    })
}

/// `[parallel] balance`: when to check the load (see
/// `crate::parallel::balance`), and how much imbalance is
/// tolerated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Balance {
    /// Check at the first rebuild at least this many steps after the last
    /// check (and at the first rebuild of a run or restart).
    pub every: u64,
    /// Rebalance when `max / mean` of the per-rank cost exceeds this.
    pub tolerance: f64,
}

impl Default for Balance {
    fn default() -> Self {
        Self {
            every: 1000,
            tolerance: 1.1,
        }
    }
}

/// The hash of the initial particles that begins the `blocks` entry of
/// [`Setup::compat`].
fn fingerprint(initial: &Initial) -> Fnv {
    let mut blocks = Fnv::default();
    for (_, b) in initial.blocks() {
        if let InitialBlock::Records(records) = b {
            records.iter().for_each(|r| hash_record(&mut blocks, r));
        }
    }
    // A file is the hash of its particles, found when it was checked.
    for (k, file) in initial.files() {
        blocks.u64(k as u64);
        blocks.u64(file.digest());
    }
    // A random fill is its rule: the rule, not the spheres it places.
    for (k, fill) in initial.fills() {
        blocks.u64(k as u64);
        blocks.str(&fill.rule());
    }
    // So is a lattice (the same on any number of ranks, none of which
    // walks it whole).
    for (k, b) in initial.blocks() {
        if let InitialBlock::Lattice(lattice) = b {
            blocks.u64(k as u64);
            blocks.str(&lattice.rule());
        }
    }
    blocks
}

/// `[parallel] balance`: on by default, with [`Balance::default`]'s
/// settings for the keys left out.
fn balance(cx: &Ctx, spec: Option<&BalanceSpec>) -> Result<Option<Balance>> {
    let table = match spec {
        None | Some(BalanceSpec::Switch(true)) => return Ok(Some(Balance::default())),
        Some(BalanceSpec::Switch(false)) => return Ok(None),
        Some(BalanceSpec::Table(t)) => t,
    };
    let mut b = Balance::default();
    if let Some(every) = table.every {
        if every == 0 {
            return Err(cx.err(
                "parallel.balance.every = 0: must be at least 1 (steps between load checks); use balance = false to turn balancing off",
            ));
        }
        b.every = every;
    }
    if let Some(t) = table.tolerance {
        if !(t.is_finite() && t >= 1.0) {
            return Err(cx.err(format!(
                "parallel.balance.tolerance = {t}: must be a number of at least 1 (the largest rank's cost over the mean that starts a rebalance)"
            )));
        }
        b.tolerance = t;
    }
    Ok(Some(b))
}

pub(super) fn materials(cx: &Ctx, cfg: &[MaterialConfig]) -> Result<Vec<Material>> {
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
        if let Some(rho) = m.density {
            cx.positive(&format!("{key}.density"), rho)?;
        }
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
            density: m.density.unwrap_or(f64::NAN),
            youngs_modulus: m.youngs_modulus,
            poisson_ratio: m.poisson_ratio,
        });
    }
    Ok(out)
}

impl Elastic for Material {
    fn elastic(&self, key: &Key) -> Result<(f64, f64)> {
        match (self.youngs_modulus, self.poisson_ratio) {
            (Some(e), Some(nu)) => Ok((e, nu)),
            _ => Err(key.err(format!(
                "needs `youngs_modulus` and `poisson_ratio` of material `{}`",
                self.name
            ))),
        }
    }
}

/// The number of steps of `dt` that covers `time`: `time/dt` rounded up,
/// except that a ratio within a few ulps of a whole number (2e-3 / 1e-6 =
/// 2000.0000000000002 in floating point) is that whole number.
pub(super) fn steps_covering(time: f64, dt: f64) -> u64 {
    let ratio = time / dt;
    let whole = ratio.round();
    if (ratio - whole).abs() <= 4.0 * f64::EPSILON * whole.max(1.0) {
        whole as u64
    } else {
        ratio.ceil() as u64
    }
}

/// The material's density, or, for one without (whose particles all come
/// from files), that of its particle of radius `r` and mass `m`.
fn density_of(mat: &Material, r: f64, m: f64) -> f64 {
    if mat.density.is_nan() {
        m / ((4.0 / 3.0) * std::f64::consts::PI * r * r * r)
    } else {
        mat.density
    }
}

/// The time scales of the stiffest contact; each pair's must be finite and
/// positive, else the error names the inputs it came from.
pub(super) fn time_scales(
    cx: &Ctx,
    laws: &LawTable,
    mats: &[Material],
    initial: &Initial,
    pours: &[PourSource],
) -> Result<TimeScales> {
    // The smallest particle of each material sets the stiffest time scale.
    let n = mats.len();
    let mut smallest = vec![(f64::INFINITY, f64::INFINITY); n];
    initial.for_each_body(|_, p| {
        let s = &mut smallest[p.material as usize];
        if p.radius < s.0 {
            *s = (p.radius, p.mass);
        }
    });
    for s in pours {
        let e = &mut smallest[s.material as usize];
        if s.radius.min() < e.0 {
            *e = (
                s.radius.min(),
                ParticleRecord::sphere_mass(s.radius.min(), s.density),
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
            let (ts, inputs) = match laws.get(a as u32, b as u32).normal {
                NormalModel::Hertz(_) => match (mats[a].youngs_modulus, mats[a].poisson_ratio) {
                    (Some(e), Some(nu)) => (
                        TimeScales::rayleigh(r, density_of(&mats[a], r, m), e, nu),
                        format!("material[{a}].density = {:e}, material[{a}].youngs_modulus = {e:e}, material[{a}].poisson_ratio = {nu}", mats[a].density),
                    ),
                    _ => continue,
                },
                NormalModel::Hooke(h) => {
                    let m_eff = 0.5 * m;
                    let gamma = h.gamma(m_eff);
                    (
                        TimeScales::hooke(h.stiffness, gamma, m_eff),
                        format!("normal.stiffness = {:e}, damping γ_n = {gamma:e} N s/m, mass {m:e} kg", h.stiffness),
                    )
                }
                NormalModel::Wca(w) => (
                    TimeScales::wca(w.sigma, w.epsilon, m),
                    format!("normal.sigma = {:e}, normal.epsilon = {:e}, mass {m:e} kg", w.sigma, w.epsilon),
                ),
            };
            if ![ts.critical, ts.stable, ts.auto].into_iter().all(usable) {
                return Err(cx.err(format!(
                    "contact between `{}` and `{}`: {inputs} give a {} of {:e} s for a sphere of radius {r:e} m; it must be finite, positive and not subnormal",
                    mats[a].name, mats[b].name, ts.kind, ts.critical
                )));
            }
            best = Some(match best {
                Some(b) => b.min(ts),
                None => ts,
            });
        }
    }
    Ok(best.unwrap_or(TimeScales {
        critical: f64::INFINITY,
        stable: f64::INFINITY,
        auto: f64::INFINITY,
        kind: "none",
    }))
}

pub(super) fn output(cx: &Ctx, o: &OutputConfig, dt: f64) -> Result<OutputSettings> {
    let every = match (o.every, o.every_time) {
        (Some(_), Some(_)) => {
            return Err(cx.err(
                "output: give at most one of `every` (steps) and `every_time` (simulated time)",
            ))
        }
        (Some(n), None) => n,
        (None, None) => DEFAULT_EVERY,
        (None, Some(t)) => {
            let t = cx.positive("output.every_time", t)?;
            let steps = (t / dt).round();
            if steps < 1.0 {
                return Err(cx.err(format!(
                    "output.every_time = {t:e}: with dt = {dt:e} it rounds to {steps} steps; give at least dt (frames are written at steps)"
                )));
            }
            // Beyond 2^53 steps the run ends first: only the last frame.
            steps.min(limits::MAX_STEPS as f64) as u64
        }
    };
    for (k, f) in o.fields.iter().enumerate() {
        if !FIELD_NAMES.contains(&f.as_str()) {
            return Err(cx.err(format!(
                "output.fields[{k}]: unknown field `{f}`; allowed: {}",
                FIELD_NAMES.join(", ")
            )));
        }
        if let Some(first) = o.fields[..k].iter().position(|g| g == f) {
            return Err(cx.err(format!(
                "output.fields[{k}]: `{f}` is already output.fields[{first}]; each field may be listed once"
            )));
        }
    }
    if o.dir.is_empty() {
        return Err(cx.err(
            "output.dir: must not be empty; give a folder (\".\" for the working directory)",
        ));
    }
    if o.thermo_every == 0 {
        return Err(cx.err("output.thermo_every: must be at least 1"));
    }
    Ok(OutputSettings {
        dir: PathBuf::from(&o.dir),
        every,
        fields: o.fields.clone(),
        thermo_every: o.thermo_every,
        checkpoint_every: o.checkpoint_every,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::timestep::TimeScales;

    fn setup(text: &str) -> Setup {
        Setup::from_str(Path::new("unit.toml"), text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// Two materials, Hertz, `dt = "auto"`, a run given by its duration.
    const TWO_GLASSES: &str = r#"
[run]
name = "unit"
dt = "auto"
time = 1e-3
gravity = [0.0, 0.0, -9.81]

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.01, 0.01, 0.01]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[[material]]
name = "steel"
density = 7800.0
youngs_modulus = 2.0e8
poisson_ratio = 0.25

[contact]
normal = { model = "hertz", restitution = 0.5 }

[[particles]]
kind = "list"
material = "steel"
radius = [0.001, 0.0005]
position = [[0.002, 0.002, 0.002], [0.005, 0.005, 0.005]]
velocity = [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]

[[particles]]
kind = "list"
material = "glass"
radius = 0.0004
position = [[0.008, 0.008, 0.008]]
"#;

    #[test]
    fn derived_values_of_a_small_config() {
        let s = setup(TWO_GLASSES);
        assert_eq!(s.name, "unit");
        assert_eq!(s.seed, 1, "the default seed");
        assert_eq!(s.gravity, DVec3::new(0.0, 0.0, -9.81));
        // Ids in block order, masses from each material's density.
        let ids: Vec<u64> = s.initial.to_vec().iter().map(|p| p.id).collect();
        assert_eq!(ids, [0, 1, 2]);
        assert_eq!(s.next_id, 3);
        let expect = [(0.001, 7800.0, 1), (0.0005, 7800.0, 1), (0.0004, 2500.0, 0)];
        for (p, (r, rho, m)) in s.initial.to_vec().iter().zip(expect) {
            assert_eq!((p.radius, p.material), (r, m));
            assert_eq!(p.mass, rho * 4.0 / 3.0 * std::f64::consts::PI * r * r * r);
            assert!(!p.frozen);
        }
        assert_eq!(s.initial.to_vec()[0].v, DVec3::X);
        assert_eq!(s.initial.to_vec()[2].v, DVec3::ZERO);
        assert_eq!(s.max_radius, 0.001);
        // Default skin: a tenth of the largest diameter.
        assert_eq!(s.skin, 0.1 * 2.0 * 0.001);
        assert_eq!(s.range_pad, 0.0);
        // dt = "auto": 0.15 of the smallest Rayleigh time over the materials
        // in use, each at its smallest particle: steel's 0.5 mm sphere here,
        // stiffer than the smaller glass one.
        let glass = TimeScales::rayleigh(0.0004, 2500.0, 5.0e6, 0.3);
        let steel = TimeScales::rayleigh(0.0005, 7800.0, 2.0e8, 0.25);
        assert!(steel.stable < glass.stable);
        assert_eq!(s.time_scales, steel);
        assert_eq!(s.dt, 0.15 * steel.critical);
        // time = 1e-3: the whole number of steps that covers it.
        assert_eq!(s.steps, (1e-3 / s.dt).ceil() as u64);
        // Output defaults.
        assert_eq!(s.output.dir, PathBuf::from("out"));
        assert_eq!(
            (
                s.output.every,
                s.output.thermo_every,
                s.output.checkpoint_every
            ),
            (1000, 100, 0)
        );
        assert!(s.walls.is_empty() && s.pours.is_empty());
        assert_eq!(s.laws.n, 2);
        assert_eq!(s.laws.history_len, 0);
    }

    #[test]
    fn auto_dt_of_hooke_is_a_fiftieth_of_the_lightest_collision() {
        let text = TWO_GLASSES
            .replace(
                r#"normal = { model = "hertz", restitution = 0.5 }"#,
                r#"normal = { model = "hooke", stiffness = 1e4, restitution = 0.5 }"#,
            )
            .replace("time = 1e-3", "steps = 7");
        let s = setup(&text);
        // The lightest pair: two of the 0.4 mm glass spheres, m* = m/2.
        let m = s.initial.to_vec()[2].mass;
        let m_eff = 0.5 * m;
        let beta = crate::contact::normal::damping_ratio_from_restitution(0.5);
        let expect = TimeScales::hooke(1e4, 2.0 * beta * (1e4 * m_eff).sqrt(), m_eff);
        assert_eq!(s.time_scales, expect);
        assert_eq!(s.dt, expect.auto);
        assert_eq!(s.dt, expect.critical / 50.0);
        assert_eq!(s.steps, 7);
    }

    #[test]
    fn wca_widens_the_interaction_range_and_sets_the_time_scale() {
        let text = r#"
[run]
name = "wca"
dt = "auto"
steps = 1

[domain]
lo = [0.0, 0.0, 0.0]
hi = [10.0, 10.0, 10.0]

[[material]]
name = "colloid"
density = 1.0

[contact]
normal = { model = "wca", epsilon = 2.0, sigma = 1.0 }

[[particles]]
kind = "list"
material = "colloid"
radius = 0.5
position = [[2.0, 2.0, 2.0]]
"#;
        let s = setup(text);
        // The WCA cut-off 2^(1/6) σ reaches beyond the diameter 2R = σ.
        let cutoff = crate::contact::normal::WCA_CUTOFF_FACTOR * 1.0;
        assert_eq!(s.range_pad, cutoff - 1.0);
        let m = s.initial.to_vec()[0].mass;
        assert_eq!(s.dt, 0.002 * (m / 2.0f64).sqrt());
    }

    #[test]
    fn steps_covering_rounds_up_except_round_off() {
        assert_eq!(steps_covering(4.5e-4, 1e-5), 45);
        assert_eq!(steps_covering(1.05e-4, 1e-5), 11);
        // 2e-3 / 1e-6 = 2000.0000000000002 in floating point.
        let (time, dt) = (std::hint::black_box(2e-3), 1e-6);
        assert!(time / dt > 2000.0);
        assert_eq!(steps_covering(time, dt), 2000);
        assert_eq!(steps_covering(2.0001e-3, 1e-6), 2001);
        assert_eq!(steps_covering(0.0, 1e-6), 0);
        assert_eq!(steps_covering(1e-7, 1e-6), 1);
    }

    #[test]
    fn every_time_is_rounded_to_whole_steps() {
        let with = |extra: &str| {
            Setup::from_str(
                Path::new("unit.toml"),
                &format!("{TWO_GLASSES}\n[output]\n{extra}\n")
                    .replace("dt = \"auto\"", "dt = 1e-6"),
            )
        };
        let every = |extra: &str| with(extra).unwrap().output.every;
        assert_eq!(every(""), 1000);
        assert_eq!(every("every = 7"), 7);
        assert_eq!(every("every_time = 2.5e-5"), 25);
        assert_eq!(every("every_time = 2.46e-5"), 25);
        assert_eq!(every("every_time = 0.6e-6"), 1);
        let err = |extra: &str| with(extra).unwrap_err().to_string();
        assert!(err("every_time = 0.4e-6").contains("output.every_time = 4e-7"));
        assert!(err("every_time = 0.4e-6").contains("rounds to 0 steps"));
        assert!(err("every_time = 1e-3\nevery = 5").contains("at most one of `every`"));
        assert!(err("every_time = -1.0").contains("output.every_time"));
    }

    #[test]
    fn materials_are_checked_one_by_one() {
        let cx = Ctx {
            file: Path::new("unit.toml"),
        };
        let m = |name: &str, density: f64, nu: Option<f64>| MaterialConfig {
            name: name.into(),
            density: Some(density),
            youngs_modulus: Some(1e6),
            poisson_ratio: nu,
        };
        let ok = materials(&cx, &[m("a", 1.0, Some(0.5)), m("b", 2.0, None)]).unwrap();
        assert_eq!(ok[1].name, "b");
        assert_eq!(ok[1].poisson_ratio, None);
        let err = |cfg: &[MaterialConfig]| materials(&cx, cfg).unwrap_err().to_string();
        assert!(err(&[]).contains("at least one [[material]]"));
        assert!(err(&[m("a", 1.0, None), m("a", 1.0, None)]).contains("material[1].name"));
        assert!(err(&[m("a", 0.0, None)]).contains("material[0].density"));
        assert!(err(&[m("a", 1.0, Some(0.6))]).contains("material[0].poisson_ratio"));
        assert!(err(&[m("a", 1.0, Some(-1.0))]).contains("(-1, 0.5]"));
    }
}
