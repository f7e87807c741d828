//! The config builder: a test's config is built from typed values,
//! section by section, and written as the TOML file a user would write
//! (sections in the usual order, keys in the order they were set), then
//! fed to gravel exactly as a user's file is.
//!
//! ```ignore
//! let text = Config::new("pour")
//!     .run("dt", 1e-5)
//!     .run("steps", 2000)
//!     .domain([0.0; 3], [0.012, 0.012, 0.03])
//!     .material(glass())
//!     .contact("normal", hertz(0.5))
//!     .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
//!     .particles(pour("glass", radius_range(5e-4, 7e-4), 6e4, 0.01, region(lo, hi)))
//!     .output("every", 0)
//!     .text();
//! ```
//!
//! [`Case`] is the physics tests' short form: one material `m`, one
//! contact law, a list of spheres; it writes its config through [`Config`].

use gravel::config::Setup;
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;
use std::fmt;

/// One TOML value, written inline.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float, written with `{:?}` (the shortest text that reads back to the same bits).
    Float(f64),
    /// A quoted string.
    Str(String),
    /// `[a, b, ...]`.
    Array(Vec<Value>),
    /// `{ key = value, ... }`.
    Table(Table),
    /// TOML text written as given, e.g. `{ model = "hertz", restitution = 0.5 }`.
    Raw(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                assert!(x.is_finite(), "a config float must be finite, got {x}");
                write!(f, "{x:?}")
            }
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Array(items) => {
                write!(f, "[")?;
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Table(t) => write!(f, "{t}"),
            Value::Raw(s) => write!(f, "{s}"),
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v.into())
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v.into())
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(i64::try_from(v).expect("a TOML integer fits in i64"))
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(i64::try_from(v).expect("a TOML integer fits in i64"))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

impl From<Table> for Value {
    fn from(v: Table) -> Self {
        Value::Table(v)
    }
}

impl<T: Into<Value>, const N: usize> From<[T; N]> for Value {
    fn from(v: [T; N]) -> Self {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Self {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value> + Clone> From<&[T]> for Value {
    fn from(v: &[T]) -> Self {
        Value::Array(v.iter().cloned().map(Into::into).collect())
    }
}

/// TOML text written as given (an inline table written by hand).
pub fn raw(text: &str) -> Value {
    Value::Raw(text.to_string())
}

/// A table: keys in the order they were set; written inline as a value,
/// or as the body of a `[section]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table(Vec<(String, Value)>);

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The table with `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value);
        self
    }

    /// Set `key` (in place if it is there, else at the end).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// `key = value` lines, the body of a `[section]`.
    fn lines(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k} = {v}\n")).collect()
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "{{}}");
        }
        write!(f, "{{ ")?;
        for (k, (key, v)) in self.0.iter().enumerate() {
            if k > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{key} = {v}")?;
        }
        write!(f, " }}")
    }
}

/// A table as the inline TOML text that [`Case`]'s model fields hold.
impl From<Table> for String {
    fn from(t: Table) -> Self {
        t.to_string()
    }
}

/// The sections of a config file, in the order they are written.
const SECTION_ORDER: [&str; 8] = [
    "run",
    "domain",
    "material",
    "contact",
    "wall",
    "particles",
    "parallel",
    "output",
];

/// A whole config file: `[section]` tables and `[[array]]` tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    tables: Vec<(String, Table)>,
    arrays: Vec<(String, Vec<Table>)>,
}

impl Config {
    /// A config whose `[run]` starts with `name`.
    pub fn new(name: &str) -> Self {
        Self::default().run("name", name)
    }

    /// Set `key` of the `[section]` table.
    pub fn set(mut self, section: &str, key: &str, value: impl Into<Value>) -> Self {
        match self.tables.iter_mut().find(|(s, _)| s == section) {
            Some((_, t)) => t.set(key, value),
            None => self
                .tables
                .push((section.to_string(), Table::new().with(key, value))),
        }
        self
    }

    /// Append a `[[array]]` table.
    pub fn push(mut self, array: &str, table: Table) -> Self {
        match self.arrays.iter_mut().find(|(s, _)| s == array) {
            Some((_, v)) => v.push(table),
            None => self.arrays.push((array.to_string(), vec![table])),
        }
        self
    }

    /// The `[section]` table, if set.
    pub fn section(&self, section: &str) -> Option<&Table> {
        self.tables
            .iter()
            .find(|(s, _)| s == section)
            .map(|(_, t)| t)
    }

    /// Set `key` of `[run]`.
    pub fn run(self, key: &str, value: impl Into<Value>) -> Self {
        self.set("run", key, value)
    }

    /// `[domain]` from `lo` to `hi`.
    pub fn domain(self, lo: [f64; 3], hi: [f64; 3]) -> Self {
        self.set("domain", "lo", lo).set("domain", "hi", hi)
    }

    /// `domain.periodic`.
    pub fn periodic(self, periodic: [bool; 3]) -> Self {
        self.set("domain", "periodic", periodic)
    }

    /// Set `key` of `[contact]` (`normal`, `tangential`, `rolling`, ...).
    pub fn contact(self, key: &str, value: impl Into<Value>) -> Self {
        self.set("contact", key, value)
    }

    /// Set `key` of `[output]`.
    pub fn output(self, key: &str, value: impl Into<Value>) -> Self {
        self.set("output", key, value)
    }

    /// Append a `[[material]]`.
    pub fn material(self, table: Table) -> Self {
        self.push("material", table)
    }

    /// Append a `[[wall]]`.
    pub fn wall(self, table: Table) -> Self {
        self.push("wall", table)
    }

    /// Append a `[[particles]]` block.
    pub fn particles(self, table: Table) -> Self {
        self.push("particles", table)
    }

    /// The config file's text.
    pub fn text(&self) -> String {
        let mut names: Vec<&str> = SECTION_ORDER.to_vec();
        let given = self.tables.iter().map(|(s, _)| s);
        for s in given.chain(self.arrays.iter().map(|(s, _)| s)) {
            if !names.contains(&s.as_str()) {
                names.push(s);
            }
        }
        let mut out = Vec::new();
        for name in names {
            if let Some(t) = self.section(name) {
                out.push(format!("[{name}]\n{}", t.lines()));
            }
            if let Some((_, tables)) = self.arrays.iter().find(|(s, _)| s == name) {
                for t in tables {
                    out.push(format!("[[{name}]]\n{}", t.lines()));
                }
            }
        }
        out.join("\n")
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.text())
    }
}

// ------------------------------------------------------------ materials

/// `[[material]]` with a name and a density.
pub fn material(name: &str, density: f64) -> Table {
    Table::new().with("name", name).with("density", density)
}

/// The glass of most tests: ρ = 2500, E = 5 MPa, ν = 0.3.
pub fn glass() -> Table {
    material("glass", 2500.0)
        .with("youngs_modulus", 5.0e6)
        .with("poisson_ratio", 0.3)
}

// ------------------------------------------------------------ contact models

/// A sub-model table `{ model = "name" }`, to be completed with [`Table::with`].
pub fn model(name: &str) -> Table {
    Table::new().with("model", name)
}

/// `{ model = "hertz", restitution = e }`.
pub fn hertz(restitution: f64) -> Table {
    model("hertz").with("restitution", restitution)
}

/// `{ model = "spring_slider", friction = μ, mindlin = true }`.
pub fn mindlin(friction: f64) -> Table {
    model("spring_slider")
        .with("friction", friction)
        .with("mindlin", true)
}

// ------------------------------------------------------------ walls

/// `[[wall]]`: a plane through `point` with `normal` into the particles' side.
pub fn plane(point: [f64; 3], normal: [f64; 3], material: &str) -> Table {
    Table::new()
        .with("kind", "plane")
        .with("point", point)
        .with("normal", normal)
        .with("material", material)
}

/// `[[wall]]`: a cylinder about the line through `axis_point` along `axis`;
/// particles inside it (`inside`) or outside.
pub fn cylinder(
    axis_point: [f64; 3],
    axis: [f64; 3],
    radius: f64,
    inside: bool,
    material: &str,
) -> Table {
    Table::new()
        .with("kind", "cylinder")
        .with("axis_point", axis_point)
        .with("axis", axis)
        .with("radius", radius)
        .with("inside", inside)
        .with("material", material)
}

// ------------------------------------------------------------ particles

/// `{ lo = ..., hi = ... }`.
pub fn region(lo: [f64; 3], hi: [f64; 3]) -> Table {
    Table::new().with("lo", lo).with("hi", hi)
}

/// A radius drawn uniformly from `{ min = ..., max = ... }`.
pub fn radius_range(min: f64, max: f64) -> Table {
    Table::new().with("min", min).with("max", max)
}

/// `kind = "list"`: spheres at `positions` (`radius`: one value or one per sphere).
pub fn list(material: &str, radius: impl Into<Value>, positions: Vec<[f64; 3]>) -> Table {
    Table::new()
        .with("kind", "list")
        .with("material", material)
        .with("radius", radius)
        .with("position", positions)
}

/// `kind = "random"`: `count` non-overlapping spheres in `region`.
pub fn random(material: &str, radius: impl Into<Value>, count: u64, region: Table) -> Table {
    Table::new()
        .with("kind", "random")
        .with("material", material)
        .with("radius", radius)
        .with("count", count)
        .with("region", region)
}

/// `kind = "lattice"`: a simple cubic lattice of `spacing` filling `region`.
pub fn lattice(material: &str, radius: f64, spacing: f64, region: Table) -> Table {
    Table::new()
        .with("kind", "lattice")
        .with("material", material)
        .with("radius", radius)
        .with("region", region)
        .with("spacing", spacing)
}

/// `kind = "pour"`: `rate` spheres per second into `region` until `until`.
pub fn pour(
    material: &str,
    radius: impl Into<Value>,
    rate: f64,
    until: f64,
    region: Table,
) -> Table {
    Table::new()
        .with("kind", "pour")
        .with("material", material)
        .with("radius", radius)
        .with("rate", rate)
        .with("until", until)
        .with("region", region)
}

/// `kind = "file"`: spheres read from the CSV file at `path` (relative to the config).
pub fn file(material: &str, path: &str) -> Table {
    Table::new()
        .with("kind", "file")
        .with("path", path)
        .with("material", material)
}

// ------------------------------------------------------------ shared configs

/// A periodic WCA colloid (ε = σ = 1, R = 1/2, unit mass: density 6/π) of
/// `edge³` spheres on a simple cubic lattice at packing fraction `phi`,
/// started at rest, with `stochastic` (an inline TOML table) as its only
/// thermostat: every velocity comes from the pair noise.
pub fn colloid_lattice(
    edge: usize,
    phi: f64,
    dt: f64,
    steps: u64,
    seed: u64,
    stochastic: &str,
) -> Config {
    let n = (edge * edge * edge) as f64;
    let l = (n * std::f64::consts::PI / 6.0 / phi).cbrt();
    let spacing = l / edge as f64;
    Config::new("colloid")
        .run("dt", dt)
        .run("steps", steps)
        .run("seed", seed)
        .domain([0.0; 3], [l; 3])
        .periodic([true; 3])
        .material(material("colloid", 6.0 / std::f64::consts::PI))
        .contact(
            "normal",
            model("wca").with("epsilon", 1.0).with("sigma", 1.0),
        )
        .contact("stochastic", raw(stochastic))
        .particles(lattice("colloid", 0.5, spacing, region([0.0; 3], [l; 3])))
        .output("every", 0)
}

/// A channel periodic along x (12 mm long, 10 mm wide, 30 mm high) with
/// side walls in y and a floor, gravity tilted along x so that grains cross
/// the periodic face; glass, Hertz (e = 0.5) with Mindlin friction
/// (μ = 0.5), seed 5, dt 10 µs. No particles yet: a test adds its pour.
pub fn channel(steps: u64) -> Config {
    Config::new("pour")
        .run("dt", 1e-5)
        .run("steps", steps)
        .run("seed", 5)
        .run("gravity", [4.0, 0.0, -9.81])
        .domain([0.0; 3], [0.012, 0.01, 0.03])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], "glass"))
        .wall(plane([0.0, 0.01, 0.0], [0.0, -1.0, 0.0], "glass"))
}

// ------------------------------------------------------------ physics cases

/// One test case of the physics tests: a single material `m`, one contact
/// law, a list of spheres.
#[derive(Debug, Clone)]
pub struct Case {
    /// Time step (s).
    pub dt: f64,
    /// Gravity.
    pub gravity: [f64; 3],
    /// Domain lower corner.
    pub lo: [f64; 3],
    /// Domain upper corner.
    pub hi: [f64; 3],
    /// Neighbour skin (None: the engine default).
    pub skin: Option<f64>,
    /// Density.
    pub density: f64,
    /// `(E, ν)` of the material, if any.
    pub elastic: Option<(f64, f64)>,
    /// Inline TOML table of the normal model, e.g. `{ model = "hooke", ... }`
    /// (a [`Table`] converts with `.into()`).
    pub normal: String,
    /// Inline TOML table of the tangential model.
    pub tangential: String,
    /// Inline TOML table of the stochastic friction (empty: the key is omitted).
    pub stochastic: String,
    /// Inline TOML table of the rolling resistance (empty: the key is omitted).
    pub rolling: String,
    /// Inline TOML table of the spinning friction (empty: the key is omitted).
    pub spinning: String,
    /// `[[wall]]` tables ([`plane`], [`cylinder`]) of material `m`.
    pub walls: Vec<Table>,
    /// Radii, one per sphere.
    pub radius: Vec<f64>,
    /// Positions.
    pub x: Vec<[f64; 3]>,
    /// Velocities.
    pub v: Vec<[f64; 3]>,
    /// Angular velocities.
    pub w: Vec<[f64; 3]>,
    /// `run.allow_large_dt`.
    pub allow_large_dt: bool,
}

impl Default for Case {
    fn default() -> Self {
        Self {
            dt: 1e-6,
            gravity: [0.0; 3],
            lo: [-1.0; 3],
            hi: [1.0; 3],
            skin: None,
            density: 2500.0,
            elastic: None,
            normal: String::new(),
            tangential: model("none").into(),
            stochastic: String::new(),
            rolling: String::new(),
            spinning: String::new(),
            walls: Vec::new(),
            radius: Vec::new(),
            x: Vec::new(),
            v: Vec::new(),
            w: Vec::new(),
            allow_large_dt: false,
        }
    }
}

impl Case {
    /// Add a sphere.
    pub fn sphere(&mut self, radius: f64, x: [f64; 3], v: [f64; 3], w: [f64; 3]) {
        self.radius.push(radius);
        self.x.push(x);
        self.v.push(v);
        self.w.push(w);
    }

    /// The config.
    pub fn config(&self) -> Config {
        let mut c = Config::new("physics")
            .run("dt", self.dt)
            .run("steps", 1)
            .run("gravity", self.gravity)
            .run("allow_large_dt", self.allow_large_dt)
            .domain(self.lo, self.hi);
        if let Some(skin) = self.skin {
            c = c.set("domain", "skin", skin);
        }
        let mut m = material("m", self.density);
        if let Some((e, nu)) = self.elastic {
            m = m.with("youngs_modulus", e).with("poisson_ratio", nu);
        }
        c = c
            .material(m)
            .contact("normal", raw(&self.normal))
            .contact("tangential", raw(&self.tangential));
        for (key, spec) in [
            ("stochastic", &self.stochastic),
            ("rolling", &self.rolling),
            ("spinning", &self.spinning),
        ] {
            if !spec.is_empty() {
                c = c.contact(key, raw(spec));
            }
        }
        for w in &self.walls {
            c = c.wall(w.clone());
        }
        c.particles(
            list("m", self.radius.clone(), self.x.clone())
                .with("velocity", self.v.clone())
                .with("omega", self.w.clone()),
        )
        .output("dir", "out-physics-tests")
        .output("every", 0)
    }

    /// The config text.
    pub fn toml(&self) -> String {
        self.config().text()
    }

    /// Validate the config and set up the simulation (forces of step 0 computed).
    pub fn build(&self) -> Simulation {
        build(&self.config())
    }
}

/// Validate `config` and set up the simulation (forces of step 0 computed).
pub fn build(config: &Config) -> Simulation {
    Simulation::new(setup(config), Box::new(SerialComm)).expect("simulation set-up")
}

/// Validate `config` (named `test.toml` in messages).
pub fn setup(config: &Config) -> Setup {
    setup_text(&config.text())
}

/// Validate config text (named `test.toml` in messages).
pub fn setup_text(text: &str) -> Setup {
    Setup::from_str(std::path::Path::new("test.toml"), text)
        .unwrap_or_else(|e| panic!("config rejected: {e}\n{text}"))
}
