//! A frame's columns, built with as few copies of the particles as the
//! writer allows: on one rank straight from the particle arrays, on several
//! gathered to rank 0 and decoded one rank's part at a time; then sorted by
//! id, one column at a time.

use crate::io::frames::Frame;
use crate::sim::Simulation;
use crate::state::pack::{Pack, Unpack};

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

    /// The rows as bytes for the gather: per row the id, position, radius,
    /// material, frozen flag and fields.
    pub(super) fn pack(&self) -> Vec<u8> {
        let per_row = 8 * (6 + 3 * self.fields.len());
        let mut buf = Vec::with_capacity(self.id.len() * per_row);
        for k in 0..self.id.len() {
            buf.put_u64(self.id[k]);
            self.position[k].iter().for_each(|&c| buf.put_f64(c));
            buf.put_f64(self.radius[k]);
            buf.put_u64(u64::from(self.material[k]));
            buf.put_u64(u64::from(self.frozen[k]));
            for f in &self.fields {
                f[k].iter().for_each(|&c| buf.put_f64(c));
            }
        }
        buf
    }

    /// The columns of every rank's [`Self::pack`]ed rows, each part
    /// dropped once read; `fields` columns per row.
    pub(super) fn unpack(parts: Vec<Vec<u8>>, fields: usize) -> Self {
        let per_row = 8 * (6 + 3 * fields);
        let n: usize = parts.iter().map(|b| b.len() / per_row).sum();
        let mut out = Self {
            id: Vec::with_capacity(n),
            position: Vec::with_capacity(n),
            radius: Vec::with_capacity(n),
            material: Vec::with_capacity(n),
            frozen: Vec::with_capacity(n),
            fields: (0..fields).map(|_| Vec::with_capacity(n)).collect(),
        };
        for b in parts {
            let mut u = Unpack::new(&b);
            while !u.is_empty() {
                out.id.push(u.u64());
                out.position.push([u.f64(), u.f64(), u.f64()]);
                out.radius.push(u.f64());
                out.material.push(u.u64() as u32);
                out.frozen.push(u8::from(u.u64() != 0));
                for f in &mut out.fields {
                    f.push([u.f64(), u.f64(), u.f64()]);
                }
            }
        }
        out
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
