//! The TOML schema: serde structs that mirror the config file one to one.
//!
//! Every struct denies unknown keys, so a misspelt key is an error that names
//! the key and the line. Units are SI unless a config chooses reduced units
//! consistently. Validation beyond types produces a [`super::Setup`].

use serde::Deserialize;

pub use super::fixed::Fixed;

/// The contact slots' tables: each model's own `Spec`, gathered by its
/// slot's registry (see [`crate::contact::model`]).
pub use crate::contact::{NormalSpec, RollingSpec, SpinningSpec, StochasticSpec, TangentialSpec};

/// A whole config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[run]`: time stepping, seed, gravity.
    pub run: RunConfig,
    /// `[domain]`: the box and its periodicity.
    pub domain: DomainConfig,
    /// `[parallel]`: ranks and threads.
    #[serde(default)]
    pub parallel: ParallelConfig,
    /// `[[material]]`: named materials.
    #[serde(default)]
    pub material: Vec<MaterialConfig>,
    /// `[contact]`: the contact law for every pair, with per-pair overrides.
    pub contact: ContactConfig,
    /// `[[wall]]`: planes and cylinders.
    #[serde(default)]
    pub wall: Vec<WallConfig>,
    /// `[[particles]]`: insertion blocks.
    #[serde(default)]
    pub particles: Vec<ParticleBlock>,
    /// `[[outlet]]`: regions that delete the particles entering them.
    #[serde(default)]
    pub outlet: Vec<OutletConfig>,
    /// `[output]`: frames, thermo, checkpoints.
    #[serde(default)]
    pub output: OutputConfig,
    /// `[[diagnostics]]`: quantities measured in the run.
    #[serde(default)]
    pub diagnostics: Vec<DiagnosticConfig>,
}

/// `[[diagnostics]]`: a quantity measured in the run, written to
/// `/diagnostics/<name>/`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DiagnosticConfig {
    /// Packing fraction, coordination, velocity, temperature and stress of
    /// a box.
    Region {
        /// Its group's name.
        name: String,
        /// Steps between samples.
        every: u64,
        /// Samples averaged into a row (default 1).
        average: Option<u64>,
        /// The box.
        region: RegionConfig,
    },
    /// The same quantities in bins along an axis.
    Profile {
        /// Its group's name.
        name: String,
        /// Steps between samples.
        every: u64,
        /// Samples averaged into a row (default 1).
        average: Option<u64>,
        /// `x`, `y` or `z`.
        axis: String,
        /// Number of bins.
        bins: u64,
        /// The box the bins divide (default: the domain).
        region: Option<RegionConfig>,
    },
    /// Continuum fields (density, momentum, velocity, stress) on a grid of
    /// cells, smoothed by a kernel.
    CoarseGrain {
        /// Its group's name.
        name: String,
        /// Steps between samples.
        every: u64,
        /// Samples averaged into a row (default 1).
        average: Option<u64>,
        /// The gridded axes, in order: `"z"`, `"xz"`, `"xyz"`, ...
        axes: String,
        /// Cells along each gridded axis: one number for all, or one each.
        bins: CellsSpec,
        /// `"gaussian"` (default) or `"lucy"`.
        kernel: Option<String>,
        /// The kernel's width `w` (m).
        width: f64,
        /// The box the grid divides (default: the domain).
        region: Option<RegionConfig>,
    },
    /// Every touching contact, with its forces.
    Contacts {
        /// Its group's name.
        name: String,
        /// Steps between lists.
        every: u64,
    },
}

/// `bins = 50` or `bins = [40, 20]` (one per gridded axis).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CellsSpec {
    /// The same count along every gridded axis.
    All(u64),
    /// One count per gridded axis, in the order of `axes`.
    Each(Vec<u64>),
}

/// `dt = 1e-5` or `dt = "auto"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DtSpec {
    /// A fixed time step in seconds.
    Fixed(f64),
    /// The string `"auto"`: a safe fraction of the collision/Rayleigh time.
    Word(String),
}

/// `[run]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Output file stem.
    pub name: String,
    /// Time step.
    pub dt: DtSpec,
    /// Number of steps (or give `time`).
    pub steps: Option<u64>,
    /// Simulated time in seconds (alternative to `steps`).
    pub time: Option<f64>,
    /// Seed for random insertion and stochastic friction.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Gravitational acceleration.
    #[serde(default)]
    pub gravity: Fixed<f64, 3>,
    /// Run even if `dt` exceeds the stable limit (a warning is printed).
    #[serde(default)]
    pub allow_large_dt: bool,
}

fn default_seed() -> u64 {
    1
}

/// `[domain]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainConfig {
    /// Lower corner.
    pub lo: Fixed<f64, 3>,
    /// Upper corner.
    pub hi: Fixed<f64, 3>,
    /// Periodicity per axis.
    #[serde(default)]
    pub periodic: Fixed<bool, 3>,
    /// Neighbour-list skin (length). Default: 10 % of the largest diameter.
    pub skin: Option<f64>,
    /// What becomes of a particle out through an open face: `"error"`
    /// (default) or `"delete"`.
    #[serde(default)]
    pub lost: crate::geometry::outlet::Lost,
}

/// `[[outlet]]`: a region that deletes the particles whose centres enter it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutletConfig {
    /// Its name in messages and the output (default `outlet<k>`, `k` its
    /// index).
    pub name: Option<String>,
    /// Where particles are deleted: any kind of region.
    pub region: RegionConfig,
}

/// `[parallel]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelConfig {
    /// Ranks per axis (used by MPI runs).
    pub grid: Option<Fixed<u32, 3>>,
    /// Rayon threads per rank; 0 = all available.
    #[serde(default)]
    pub threads: usize,
    /// Dynamic load balancing: `false`, `true` or `{ every, tolerance }`.
    pub balance: Option<BalanceSpec>,
}

/// `balance = false`, `balance = true` or `balance = { every = 1000,
/// tolerance = 1.1 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum BalanceSpec {
    /// Off, or on with the defaults.
    Switch(bool),
    /// On, with these settings (defaults for the keys left out).
    Table(BalanceTable),
}

/// The table form of `balance`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BalanceTable {
    /// Check the load at the first rebuild this many steps after the last check.
    pub every: Option<u64>,
    /// Move the cuts when the largest rank's cost exceeds the mean by this factor.
    pub tolerance: Option<f64>,
}

/// `[[material]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialConfig {
    /// Name referenced by particles, walls and pair overrides.
    pub name: String,
    /// Density (kg/m³); required if a particle block (other than `file`)
    /// uses the material.
    pub density: Option<f64>,
    /// Young's modulus (Pa); needed by Hertz and Mindlin.
    pub youngs_modulus: Option<f64>,
    /// Poisson's ratio; needed by Hertz and Mindlin.
    pub poisson_ratio: Option<f64>,
}

/// `[contact]`: one slot per sub-model kind.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactConfig {
    /// Normal force model.
    pub normal: NormalSpec,
    /// Tangential force model (default none).
    #[serde(default)]
    pub tangential: TangentialSpec,
    /// Markovian stochastic friction, replacing the tangential model of
    /// particle–particle contacts (default none).
    #[serde(default)]
    pub stochastic: StochasticSpec,
    /// Rolling resistance model (default none).
    #[serde(default)]
    pub rolling: RollingSpec,
    /// Spinning friction model (default none).
    #[serde(default)]
    pub spinning: SpinningSpec,
    /// Per-material-pair overrides.
    #[serde(default)]
    pub pair: Vec<PairOverride>,
}

/// `[[contact.pair]]`: override sub-models for one pair of materials.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairOverride {
    /// The two material names.
    pub materials: Fixed<String, 2>,
    /// Normal model for this pair.
    pub normal: Option<NormalSpec>,
    /// Tangential model for this pair.
    pub tangential: Option<TangentialSpec>,
    /// Stochastic friction for this pair (`model = "none"` switches it off).
    pub stochastic: Option<StochasticSpec>,
    /// Rolling resistance model for this pair.
    pub rolling: Option<RollingSpec>,
    /// Spinning friction model for this pair.
    pub spinning: Option<SpinningSpec>,
}

/// A radius: a number, or a table describing a distribution (by number):
/// `{ min, max }` (uniform), `{ distribution = "normal" | "lognormal",
/// mean, sd, min, max }` (truncated to `[min, max]`), or `{ values,
/// fractions, basis = "number" | "mass" }` (discrete). Which keys go
/// together is checked when the block is read.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RadiusSpec {
    /// Every particle has this radius.
    Fixed(f64),
    /// A distribution.
    Table(RadiusTable),
}

/// The keys of a radius distribution (see [`RadiusSpec`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RadiusTable {
    /// `"normal"` or `"lognormal"` (absent: uniform, or discrete with `values`).
    pub distribution: Option<String>,
    /// Smallest radius.
    pub min: Option<f64>,
    /// Largest radius.
    pub max: Option<f64>,
    /// Mean of the untruncated distribution (of the radius itself).
    pub mean: Option<f64>,
    /// Standard deviation of the untruncated distribution (of the radius).
    pub sd: Option<f64>,
    /// Discrete radii.
    pub values: Option<Vec<f64>>,
    /// Their fractions (summing to 1).
    pub fractions: Option<Vec<f64>>,
    /// `"number"` (default) or `"mass"`: what `fractions` are fractions of.
    pub basis: Option<String>,
}

/// A region: a box `{ lo, hi }` (the default `kind`), a finite cylinder
/// `{ kind = "cylinder", center, axis, radius, length }` or a sphere
/// `{ kind = "sphere", center, radius }`. Which keys a kind takes is
/// checked when the region is read, so that a missing or stray key is an
/// error naming the kind.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionConfig {
    /// `box` (default), `cylinder` or `sphere`.
    #[serde(default)]
    pub kind: RegionKind,
    /// Lower corner (box).
    pub lo: Option<Fixed<f64, 3>>,
    /// Upper corner (box).
    pub hi: Option<Fixed<f64, 3>>,
    /// Centre (cylinder: mid-way between its ends; sphere).
    pub center: Option<Fixed<f64, 3>>,
    /// Axis direction (cylinder).
    pub axis: Option<Fixed<f64, 3>>,
    /// Radius (cylinder, sphere).
    pub radius: Option<f64>,
    /// Length along the axis (cylinder).
    pub length: Option<f64>,
}

/// The kinds of [`RegionConfig`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    /// An axis-aligned box.
    #[default]
    Box,
    /// A finite circular cylinder.
    Cylinder,
    /// A sphere.
    Sphere,
}

/// `[[wall]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WallConfig {
    /// An infinite plane; particles live on the side the normal points to.
    Plane {
        /// Its name in the output (default `wall<k>`, `k` its index).
        #[serde(default)]
        name: Option<String>,
        /// A point on the plane.
        point: Fixed<f64, 3>,
        /// Normal pointing into the particles' side.
        normal: Fixed<f64, 3>,
        /// Material name.
        material: String,
        /// Constant velocity (m/s) (default: none).
        velocity: Option<Fixed<f64, 3>>,
        /// Piecewise-linear offsets in time (default: none); also
        /// `trajectory`, the name a mesh gives it.
        #[serde(alias = "trajectory")]
        path: Option<PathConfig>,
        /// A turn about a fixed axis (default: none).
        rotation: Option<RotationConfig>,
    },
    /// An infinite circular cylinder, optionally rotating about its axis.
    Cylinder {
        /// Its name in the output (default `wall<k>`, `k` its index).
        #[serde(default)]
        name: Option<String>,
        /// A point on the axis.
        axis_point: Fixed<f64, 3>,
        /// Axis direction.
        axis: Fixed<f64, 3>,
        /// Radius.
        radius: f64,
        /// Particles inside (a drum, default) or outside (a post).
        #[serde(default = "default_true")]
        inside: bool,
        /// Angular velocity about `axis` (rad/s, right-handed): the surface
        /// turns, the shape stays.
        #[serde(default)]
        angular_velocity: f64,
        /// Length along the axis, centred on `axis_point` (default:
        /// infinite).
        length: Option<f64>,
        /// Close a finite drum (`inside`) with two discs that turn with it
        /// (default false).
        #[serde(default)]
        caps: bool,
        /// Material name.
        material: String,
        /// Constant velocity (m/s) (default: none).
        velocity: Option<Fixed<f64, 3>>,
        /// Piecewise-linear offsets in time (default: none); also
        /// `trajectory`, the name a mesh gives it.
        #[serde(alias = "trajectory")]
        path: Option<PathConfig>,
        /// A turn about a fixed axis (default: none).
        rotation: Option<RotationConfig>,
    },
    /// A triangle mesh read from an STL file (ASCII or binary).
    Mesh {
        /// Its name in the output (default `wall<k>`, `k` its index).
        #[serde(default)]
        name: Option<String>,
        /// The STL file, relative to the config file's folder.
        path: String,
        /// Each coordinate of the file times `scale` (default 1; 0.001 for
        /// a file in millimetres).
        #[serde(default = "default_one")]
        scale: f64,
        /// Then moved by `offset` (m) (default none).
        offset: Option<Fixed<f64, 3>>,
        /// Contacts whose normals differ by less than this (degrees) are
        /// one, the deepest (default 20): a tessellated curve's facets.
        crease_angle: Option<f64>,
        /// Material name.
        material: String,
        /// Constant velocity (m/s) (default: none).
        velocity: Option<Fixed<f64, 3>>,
        /// Piecewise-linear offsets in time (default: none): a mesh's
        /// `path` is its file.
        trajectory: Option<PathConfig>,
        /// A turn about a fixed axis (default: none).
        rotation: Option<RotationConfig>,
    },
}

fn default_one() -> f64 {
    1.0
}

/// `path = { times, offsets }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathConfig {
    /// Times (s), strictly increasing.
    pub times: Vec<f64>,
    /// The wall's offset (m) at each time.
    pub offsets: Vec<Fixed<f64, 3>>,
}

/// `rotation = { axis, point, angular_velocity }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationConfig {
    /// Axis direction.
    pub axis: Fixed<f64, 3>,
    /// A point on the axis (at t = 0).
    pub point: Fixed<f64, 3>,
    /// Angular velocity (rad/s, right-handed).
    pub angular_velocity: f64,
}

impl WallConfig {
    /// The wall's name as given, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Plane { name, .. } | Self::Cylinder { name, .. } | Self::Mesh { name, .. } => {
                name.as_deref()
            }
        }
    }

    /// The wall's motion keys: `velocity`, `path` and `rotation`.
    pub fn motion(
        &self,
    ) -> (
        Option<&Fixed<f64, 3>>,
        Option<&PathConfig>,
        Option<&RotationConfig>,
    ) {
        match self {
            Self::Plane {
                velocity,
                path,
                rotation,
                ..
            }
            | Self::Cylinder {
                velocity,
                path,
                rotation,
                ..
            } => (velocity.as_ref(), path.as_ref(), rotation.as_ref()),
            Self::Mesh {
                velocity,
                trajectory,
                rotation,
                ..
            } => (velocity.as_ref(), trajectory.as_ref(), rotation.as_ref()),
        }
    }
}

fn default_true() -> bool {
    true
}

/// `[[particles]]`: an insertion block.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ParticleBlock {
    /// A simple cubic lattice filling a region.
    Lattice {
        /// Material name.
        material: String,
        /// Radius.
        radius: f64,
        /// Region to fill.
        region: RegionConfig,
        /// Lattice spacing (default: the diameter times 1.0001).
        spacing: Option<f64>,
        /// At most this many particles (default: fill the region).
        count: Option<u64>,
        /// Initial velocity.
        #[serde(default)]
        velocity: Fixed<f64, 3>,
        /// Fixed particles that take part in contacts.
        #[serde(default)]
        frozen: bool,
    },
    /// Random non-overlapping positions in a region.
    Random {
        /// Material name.
        material: String,
        /// Radius or distribution.
        radius: RadiusSpec,
        /// How many (or `fill`).
        count: Option<u64>,
        /// The packing fraction of the region to fill (or `count`).
        fill: Option<f64>,
        /// Region the particles lie inside (whole spheres).
        region: RegionConfig,
        /// Initial velocity.
        #[serde(default)]
        velocity: Fixed<f64, 3>,
        /// Fixed particles that take part in contacts.
        #[serde(default)]
        frozen: bool,
    },
    /// Pouring: particles inserted at a rate from a region.
    Pour {
        /// Material name.
        material: String,
        /// Radius or distribution.
        radius: RadiusSpec,
        /// Particles per second.
        rate: f64,
        /// Stop inserting at this time (s).
        until: f64,
        /// Stop after this many (default unlimited until `until`).
        count: Option<u64>,
        /// Region the particles appear in.
        region: RegionConfig,
        /// Initial velocity.
        #[serde(default)]
        velocity: Fixed<f64, 3>,
        /// Steps between insertion attempts (default 50).
        interval: Option<u64>,
    },
    /// Explicit particles.
    List {
        /// Material name.
        material: String,
        /// One radius for all, or one per particle.
        radius: ListRadius,
        /// Positions.
        position: Vec<Fixed<f64, 3>>,
        /// Velocities (default zero).
        velocity: Option<Vec<Fixed<f64, 3>>>,
        /// Angular velocities (default zero).
        omega: Option<Vec<Fixed<f64, 3>>>,
        /// Fixed particles that take part in contacts.
        #[serde(default)]
        frozen: bool,
    },
    /// A CSV file with columns `id, frozen, x, y, z, radius, density, vx, vy, vz, wx, wy, wz`.
    File {
        /// Path, relative to the config file: a CSV file, or a gravel output
        /// or checkpoint file (HDF5).
        path: String,
        /// Material name (contact properties; the mass comes from the CSV's
        /// density column, a checkpoint's masses, or this material's density
        /// for a frame).
        material: String,
        /// The frame to read from an output file (default: its last).
        step: Option<u64>,
    },
}

/// Radius of a `list` block: one for all or one per particle.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ListRadius {
    /// Same radius for every particle.
    One(f64),
    /// One radius per position.
    Each(Vec<f64>),
}

/// `[output]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Output directory (relative to the working directory).
    #[serde(default = "default_out_dir")]
    pub dir: String,
    /// Steps between frames (0 = no frames but the last); default 1000.
    pub every: Option<u64>,
    /// Simulated time between frames (exclusive with `every`): `every` is
    /// `round(every_time / dt)` steps, at least 1.
    pub every_time: Option<f64>,
    /// Extra per-particle fields: velocity, omega, force, torque.
    #[serde(default)]
    pub fields: Vec<String>,
    /// Steps between thermo rows.
    #[serde(default = "default_thermo_every")]
    pub thermo_every: u64,
    /// Steps between checkpoints (0: only the final checkpoint at the end of the run).
    #[serde(default)]
    pub checkpoint_every: u64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            dir: default_out_dir(),
            every: None,
            every_time: None,
            fields: Vec::new(),
            thermo_every: default_thermo_every(),
            checkpoint_every: 0,
        }
    }
}

fn default_out_dir() -> String {
    "out".into()
}
/// Steps between frames when neither `every` nor `every_time` is given.
pub const DEFAULT_EVERY: u64 = 1000;
fn default_thermo_every() -> u64 {
    100
}

#[cfg(test)]
mod tests {
    /// Every fixed-size key is a [`super::Fixed`], which refuses any other
    /// length: no field of this file is a bare `[T; N]` array.
    #[test]
    fn every_fixed_size_key_is_a_fixed() {
        for (k, line) in include_str!("schema.rs").lines().enumerate() {
            let field = line.trim_start();
            let bare = field.contains(": ") && field.contains("; ") && field.contains('[');
            assert!(
                !bare || field.starts_with("//") || field.starts_with("let "),
                "schema.rs line {}: a bare array; use Fixed<T, N>: {line}",
                k + 1
            );
        }
    }
}
