//! A frame's columns: this rank's owned particles, copied once from the
//! particle arrays and sorted by id, one column at a time. On several
//! ranks each writes its own rows into the shared file
//! ([`crate::io::frames::write_frame_collective`]).

use crate::io::frames::Frame;
use crate::sim::Simulation;

/// One frame's columns (see [`Frame`]).
#[derive(Debug, Default)]
pub(super) struct FrameColumns {
    id: Vec<u64>,
    position: Vec<[f64; 3]>,
    radius: Vec<f64>,
    material: Vec<u32>,
    frozen: Vec<u8>,
    /// One column per requested field, in the order asked.
    fields: Vec<Vec<[f64; 3]>>,
}

impl FrameColumns {
    /// This rank's owned particles (positions wrapped into the box), in
    /// local order, with the vector `fields` named (`velocity`, `omega`,
    /// `force`, `torque`).
    pub(super) fn local(sim: &Simulation, fields: &[String]) -> Self {
        let p = &sim.particles;
        let n = p.n_owned;
        let domain = &sim.setup.domain;
        Self {
            id: p.id[..n].to_vec(),
            position: p.x[..n]
                .iter()
                .map(|&x| domain.wrap(x).to_array())
                .collect(),
            radius: p.radius[..n].to_vec(),
            material: p.material[..n].to_vec(),
            frozen: p.frozen[..n].iter().map(|&f| u8::from(f)).collect(),
            fields: fields
                .iter()
                .map(|f| {
                    let column = match f.as_str() {
                        "velocity" => &p.v,
                        "omega" => &p.omega,
                        "force" => &p.force,
                        _ => &p.torque,
                    };
                    column[..n].iter().map(|v| v.to_array()).collect()
                })
                .collect(),
        }
    }

    /// Sort the rows by id, one column at a time.
    pub(super) fn sort_by_id(&mut self) {
        let mut order: Vec<usize> = (0..self.id.len()).collect();
        order.sort_unstable_by_key(|&k| self.id[k]);
        fn apply<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            *v = order.iter().map(|&k| v[k]).collect();
        }
        apply(&mut self.id, &order);
        apply(&mut self.position, &order);
        apply(&mut self.radius, &order);
        apply(&mut self.material, &order);
        apply(&mut self.frozen, &order);
        for f in &mut self.fields {
            apply(f, &order);
        }
    }

    /// The frame of step `step` at `time`, the fields named `names` (in
    /// the order of [`Self::local`]'s).
    pub(super) fn frame<'a>(&'a self, step: u64, time: f64, names: &'a [String]) -> Frame<'a> {
        Frame {
            step,
            time,
            id: &self.id,
            position: &self.position,
            radius: &self.radius,
            material: &self.material,
            frozen: &self.frozen,
            fields: names
                .iter()
                .zip(&self.fields)
                .map(|(k, v)| (k.as_str(), v.as_slice()))
                .collect(),
        }
    }
}
