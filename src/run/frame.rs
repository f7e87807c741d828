//! A frame straight from the particle arrays: this rank's owned particles
//! in id order, each column built only when the writer asks for it
//! ([`FrameSource`]), so a frame costs one column, not a copy of the
//! particles. On several ranks each writes its own rows into the shared
//! file ([`crate::io::frames::write_frame_collective`]).

use std::borrow::Cow;
use std::path::Path;

use crate::error::{IoError, IoResult};
use crate::io::frames::FrameSource;
use crate::sim::Simulation;

/// One frame of a simulation (see the module documentation).
pub(super) struct SimFrame<'a> {
    sim: &'a Simulation,
    /// Local indices of the owned particles, sorted by id.
    order: Vec<usize>,
    /// The vector fields asked for (`velocity`, `omega`, `force`, `torque`).
    fields: &'a [String],
}

impl<'a> SimFrame<'a> {
    /// The frame of `sim`'s current step with the vector `fields` named.
    pub(super) fn new(sim: &'a Simulation, fields: &'a [String]) -> Self {
        sim.assert_settled("the frame");
        let p = &sim.particles;
        let mut order: Vec<usize> = (0..p.n_owned).collect();
        order.sort_unstable_by_key(|&k| p.id[k]);
        Self { sim, order, fields }
    }

    /// A column: `get` of each owned particle, in id order.
    fn column<T: Clone>(&self, get: impl Fn(usize) -> T) -> Cow<'_, [T]> {
        Cow::Owned(self.order.iter().map(|&k| get(k)).collect())
    }
}

impl FrameSource for SimFrame<'_> {
    fn step(&self) -> u64 {
        self.sim.step
    }
    fn time(&self) -> f64 {
        self.sim.time()
    }
    fn check(&self, path: &Path) -> IoResult<usize> {
        match self
            .fields
            .iter()
            .find(|f| !VECTOR_FIELDS.contains(&f.as_str()))
        {
            Some(f) => Err(IoError::invalid(path, format!("no vector field `{f}`"))),
            None => Ok(self.order.len()),
        }
    }
    fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(String::as_str).collect()
    }
    fn id(&self) -> Cow<'_, [u64]> {
        self.column(|k| self.sim.particles.id[k])
    }
    fn position(&self) -> Cow<'_, [[f64; 3]]> {
        let domain = &self.sim.setup.domain;
        self.column(|k| domain.wrap(self.sim.particles.x[k]).to_array())
    }
    fn radius(&self) -> Cow<'_, [f64]> {
        self.column(|k| self.sim.particles.radius[k])
    }
    fn material(&self) -> Cow<'_, [u32]> {
        self.column(|k| self.sim.particles.material[k])
    }
    fn frozen(&self) -> Cow<'_, [u8]> {
        self.column(|k| u8::from(self.sim.particles.frozen[k]))
    }
    fn field(&self, k: usize) -> Cow<'_, [[f64; 3]]> {
        let p = &self.sim.particles;
        let values = match self.fields[k].as_str() {
            "velocity" => &p.v,
            "omega" => &p.omega,
            "force" => &p.force,
            _ => &p.torque,
        };
        self.column(|i| values[i].to_array())
    }
}

/// The vector fields a frame can hold.
const VECTOR_FIELDS: [&str; 4] = ["velocity", "omega", "force", "torque"];
