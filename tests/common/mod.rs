//! Shared helpers of the physics validation tests: a small config builder
//! (TOML text, fed to the library exactly as a user's file would be), state
//! look-ups by particle id, a deterministic random generator and the
//! closed-form damping ratio.
//!
//! Each test crate uses only part of this module.
#![allow(dead_code)]

use glam::DVec3;
use gravel::config::Setup;
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;
use std::fmt::Write as _;

/// A `[[wall]]` table of a plane through `point` with the given `normal`.
pub fn plane_wall(point: [f64; 3], normal: [f64; 3], material: &str) -> String {
    format!(
        "\n[[wall]]\nkind = \"plane\"\npoint = {point:?}\nnormal = {normal:?}\nmaterial = \"{material}\"\n"
    )
}

/// `β(e) = −ln e / sqrt(ln² e + π²)` (physics.md), written out independently of the engine.
pub fn beta_of(e: f64) -> f64 {
    let l = e.ln();
    -l / (l * l + std::f64::consts::PI * std::f64::consts::PI).sqrt()
}

/// Mass of a solid sphere.
pub fn sphere_mass(radius: f64, density: f64) -> f64 {
    density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3)
}

/// A plane wall `[[wall]] kind = "plane"`.
#[derive(Debug, Clone, Copy)]
pub struct Plane {
    /// A point on the plane.
    pub point: [f64; 3],
    /// Normal into the particles' side.
    pub normal: [f64; 3],
}

/// One test case: a single material, one contact law, a list of spheres.
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
    /// Inline TOML table of the normal model, e.g. `{ model = "hooke", ... }`.
    pub normal: String,
    /// Inline TOML table of the tangential model.
    pub tangential: String,
    /// Inline TOML table of the stochastic friction (empty: the key is omitted).
    pub stochastic: String,
    /// Further `[contact]` lines, e.g. `rolling = { ... }` (empty: none).
    pub contact_extra: String,
    /// Plane walls.
    pub walls: Vec<Plane>,
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
            tangential: "{ model = \"none\" }".into(),
            stochastic: String::new(),
            contact_extra: String::new(),
            walls: Vec::new(),
            radius: Vec::new(),
            x: Vec::new(),
            v: Vec::new(),
            w: Vec::new(),
            allow_large_dt: false,
        }
    }
}

fn arr(a: &[f64; 3]) -> String {
    // `{:?}` prints the shortest text that parses back to the same f64.
    format!("[{:?}, {:?}, {:?}]", a[0], a[1], a[2])
}

fn arrs(v: &[[f64; 3]]) -> String {
    let items: Vec<String> = v.iter().map(arr).collect();
    format!("[{}]", items.join(", "))
}

impl Case {
    /// Add a sphere.
    pub fn sphere(&mut self, radius: f64, x: [f64; 3], v: [f64; 3], w: [f64; 3]) {
        self.radius.push(radius);
        self.x.push(x);
        self.v.push(v);
        self.w.push(w);
    }

    /// The config text.
    pub fn toml(&self) -> String {
        let mut s = String::new();
        writeln!(
            s,
            "[run]\nname = \"physics\"\ndt = {:?}\nsteps = 1",
            self.dt
        )
        .unwrap();
        writeln!(s, "gravity = {}", arr(&self.gravity)).unwrap();
        writeln!(s, "allow_large_dt = {}\n", self.allow_large_dt).unwrap();
        writeln!(
            s,
            "[domain]\nlo = {}\nhi = {}",
            arr(&self.lo),
            arr(&self.hi)
        )
        .unwrap();
        if let Some(skin) = self.skin {
            writeln!(s, "skin = {skin:?}").unwrap();
        }
        writeln!(
            s,
            "\n[[material]]\nname = \"m\"\ndensity = {:?}",
            self.density
        )
        .unwrap();
        if let Some((e, nu)) = self.elastic {
            writeln!(s, "youngs_modulus = {e:?}\npoisson_ratio = {nu:?}").unwrap();
        }
        writeln!(
            s,
            "\n[contact]\nnormal = {}\ntangential = {}",
            self.normal, self.tangential
        )
        .unwrap();
        if !self.stochastic.is_empty() {
            writeln!(s, "stochastic = {}", self.stochastic).unwrap();
        }
        if !self.contact_extra.is_empty() {
            writeln!(s, "{}", self.contact_extra).unwrap();
        }
        for p in &self.walls {
            writeln!(
                s,
                "\n[[wall]]\nkind = \"plane\"\npoint = {}\nnormal = {}\nmaterial = \"m\"",
                arr(&p.point),
                arr(&p.normal)
            )
            .unwrap();
        }
        let radii: Vec<String> = self.radius.iter().map(|r| format!("{r:?}")).collect();
        writeln!(
            s,
            "\n[[particles]]\nkind = \"list\"\nmaterial = \"m\"\nradius = [{}]\nposition = {}\nvelocity = {}\nomega = {}",
            radii.join(", "),
            arrs(&self.x),
            arrs(&self.v),
            arrs(&self.w)
        )
        .unwrap();
        writeln!(s, "\n[output]\ndir = \"out-physics-tests\"\nevery = 0").unwrap();
        s
    }

    /// Validate the config and set up the simulation (forces of step 0 computed).
    pub fn build(&self) -> Simulation {
        let text = self.toml();
        let setup = Setup::from_str(std::path::Path::new("physics-test.toml"), &text)
            .unwrap_or_else(|e| panic!("config rejected: {e}\n{text}"));
        Simulation::new(setup, Box::new(SerialComm)).expect("simulation set-up")
    }
}

/// Local index of the owned particle with global id `id` (the local order
/// changes at every neighbour-list rebuild).
pub fn local(sim: &Simulation, id: u64) -> usize {
    let p = &sim.particles;
    (0..p.n_owned)
        .find(|&k| p.id[k] == id)
        .unwrap_or_else(|| panic!("no particle with id {id}"))
}

/// `(x, v, ω, force, torque)` of the particle with id `id`.
pub fn body(sim: &Simulation, id: u64) -> (DVec3, DVec3, DVec3, DVec3, DVec3) {
    let k = local(sim, id);
    let p = &sim.particles;
    (p.x[k], p.v[k], p.omega[k], p.force[k], p.torque[k])
}

/// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): a tiny deterministic generator for test inputs.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[a, b)`.
    pub fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
}

/// Run `f` on a one-thread rayon pool. The engine's results do not depend on
/// the thread count (its design promise), and these systems hold a handful of
/// particles, where waking pool threads every stage costs more than the work.
pub fn serial<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("one-thread pool")
        .install(f)
}

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
) -> String {
    let n = (edge * edge * edge) as f64;
    let l = (n * std::f64::consts::PI / 6.0 / phi).cbrt();
    let spacing = l / edge as f64;
    format!(
        r#"[run]
name = "colloid"
dt = {dt:?}
steps = {steps}
seed = {seed}

[domain]
lo = [0.0, 0.0, 0.0]
hi = [{l:?}, {l:?}, {l:?}]
periodic = [true, true, true]

[[material]]
name = "colloid"
density = {density:?}

[contact]
normal = {{ model = "wca", epsilon = 1.0, sigma = 1.0 }}
stochastic = {stochastic}

[[particles]]
kind = "lattice"
material = "colloid"
radius = 0.5
spacing = {spacing:?}
region = {{ lo = [0.0, 0.0, 0.0], hi = [{l:?}, {l:?}, {l:?}] }}

[output]
every = 0
"#,
        density = 6.0 / std::f64::consts::PI
    )
}
