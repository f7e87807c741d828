//! One simulation on one rank: the state and a [`Simulation::step`] that runs
//! named stages in order, each timed.
//!
//! Stages per step: `integrate` (first half kick and drift, with the
//! displacement scan), `neighbor` (a rebuild when any particle anywhere moved
//! more than half the skin or particles were inserted — a global decision —
//! else a halo update), `force`, `integrate` (second half kick).

use crate::comm::Comm;
use crate::config::Setup;
use crate::diagnostics::{self, Thermo};
use crate::domain::Halo;
use crate::error::{GravelError, Result};
use crate::forces::{self, ForceParams};
use crate::insert::Placer;
use crate::integrate;
use crate::neighbor::{self, NeighborList};
use crate::particles::{ParticleRecord, Particles};
use crate::snapshot::{Compat, Snapshot};
use glam::DVec3;
use std::time::{Duration, Instant};

/// Wall-clock time spent per stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timers {
    /// Integration (both halves).
    pub integrate: Duration,
    /// Neighbour-list rebuilds, insertion and halo updates.
    pub neighbor: Duration,
    /// Force computation.
    pub force: Duration,
    /// Number of neighbour-list rebuilds.
    pub rebuilds: u64,
}

/// The state of a run on this rank.
pub struct Simulation {
    /// Validated parameters.
    pub setup: Setup,
    /// Particles (owned then ghosts).
    pub particles: Particles,
    /// Neighbour list with pair history.
    pub neighbors: NeighborList,
    /// Wall-contact history, `walls · history_len` values per owned particle.
    pub wall_history: Vec<f64>,
    /// Steps done.
    pub step: u64,
    /// Next free particle id.
    pub next_id: u64,
    /// Stage timers.
    pub timers: Timers,
    halo: Halo,
    x_ref: Vec<DVec3>,
    comm: Box<dyn Comm>,
}

impl Simulation {
    /// Set up the initial state (particles of the config at step 0) and compute the forces of step 0.
    pub fn new(setup: Setup, comm: Box<dyn Comm>) -> Result<Self> {
        let mut particles = Particles::default();
        for r in &setup.initial {
            particles.push_owned(r);
        }
        let h = setup.laws.history_len;
        let mut sim = Simulation {
            wall_history: vec![0.0; particles.n_owned * setup.walls.len() * h],
            neighbors: NeighborList {
                offsets: vec![0; particles.n_owned + 1],
                history_len: h,
                ..Default::default()
            },
            next_id: setup.next_id,
            particles,
            setup,
            step: 0,
            timers: Timers::default(),
            halo: Halo::default(),
            x_ref: Vec::new(),
            comm,
        };
        sim.insert_due()?;
        sim.rebuild()?;
        sim.compute_forces();
        Ok(sim)
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.step as f64 * self.setup.dt
    }

    /// The transport.
    pub fn comm(&self) -> &dyn Comm {
        self.comm.as_ref()
    }

    /// Advance one time step.
    pub fn step(&mut self) -> Result<()> {
        let t0 = Instant::now();
        let scan = integrate::kick_drift(
            &mut self.particles,
            self.setup.dt,
            &self.x_ref,
            &self.setup.domain,
        );
        if let Some((k, _)) = scan.bad {
            return Err(self.particle_error(k, self.step + 1));
        }
        self.step += 1;
        let t1 = Instant::now();
        self.timers.integrate += t1 - t0;
        let half_skin = 0.5 * self.setup.skin;
        let inserted = self.insert_due()?;
        if inserted || self.comm.max_f64(scan.max_disp2) > half_skin * half_skin {
            self.rebuild()?;
        } else {
            self.halo.update(&mut self.particles);
        }
        let t2 = Instant::now();
        self.timers.neighbor += t2 - t1;
        self.compute_forces();
        let t3 = Instant::now();
        self.timers.force += t3 - t2;
        integrate::kick(&mut self.particles, self.setup.dt);
        self.timers.integrate += t3.elapsed();
        Ok(())
    }

    fn particle_error(&self, k: usize, step: u64) -> GravelError {
        let p = &self.particles;
        let (x, v) = (p.x[k], p.v[k]);
        let cause = if !(x.is_finite() && p.v[k].is_finite() && p.omega[k].is_finite()) {
            "its state became non-finite (NaN or infinity): the time step may be too large for the contact stiffness, or the overlap too deep".to_string()
        } else {
            let a = self.setup.domain.outside_axis(x).unwrap_or(0);
            format!(
                "it left the domain along {} (non-periodic, [{}, {}]) with no wall to stop it",
                ["x", "y", "z"][a],
                self.setup.domain.lo[a],
                self.setup.domain.hi[a]
            )
        };
        GravelError::Run(format!(
            "particle id {} at position {:?} with velocity {:?} on step {step}: {cause}",
            p.id[k],
            x.to_array(),
            v.to_array()
        ))
    }

    fn compute_forces(&mut self) {
        let fp = ForceParams {
            laws: &self.setup.laws,
            walls: &self.setup.walls,
            gravity: self.setup.gravity,
            dt: self.setup.dt,
            range_pad: self.setup.range_pad,
        };
        self.particles.refresh_packed();
        forces::compute(
            &mut self.particles,
            &mut self.neighbors,
            &mut self.wall_history,
            &fp,
        );
    }

    /// Insert the particles the pouring sources owe at the current time. Returns whether any were inserted.
    fn insert_due(&mut self) -> Result<bool> {
        if self.setup.pours.is_empty() {
            return Ok(false);
        }
        let time = self.time();
        let mut any = false;
        for s in 0..self.setup.pours.len() {
            let src = &self.setup.pours[s];
            if self.step % src.interval != 0 || src.owed(time) == 0 {
                continue;
            }
            let mut placer = Placer::new(self.setup.max_radius);
            let margin = DVec3::splat(2.0 * self.setup.max_radius);
            let p = &self.particles;
            for k in 0..p.n_owned {
                let x = p.x[k];
                if x.cmpge(src.lo - margin).all() && x.cmple(src.hi + margin).all() {
                    placer.add(x, p.radius[k]);
                }
            }
            let (seed, step) = (self.setup.seed, self.step);
            let new = self.setup.pours[s].insert(seed, step, time, &mut placer, &mut self.next_id);
            if !new.is_empty() {
                any = true;
                self.particles.truncate_ghosts();
                let stride = self.setup.walls.len() * self.neighbors.history_len;
                for r in &new {
                    self.particles.push_owned(r);
                    self.wall_history.extend(std::iter::repeat_n(0.0, stride));
                }
            }
        }
        Ok(any)
    }

    /// Wrap, sort spatially, rebuild ghosts and the neighbour list (carrying history).
    fn rebuild(&mut self) -> Result<()> {
        self.timers.rebuilds += 1;
        let s = &self.setup;
        let p = &mut self.particles;
        p.truncate_ghosts();
        for k in 0..p.n_owned {
            p.x[k] = s.domain.wrap(p.x[k]);
        }
        let reach = s.range_pad + s.skin;
        let width = 2.0 * s.max_radius + reach;
        let perm = neighbor::spatial_order(p, width);
        p.permute_owned(&perm);
        let stride = s.walls.len() * self.neighbors.history_len;
        if stride > 0 {
            let mut wh = Vec::with_capacity(self.wall_history.len());
            for &o in &perm {
                wh.extend_from_slice(&self.wall_history[o * stride..(o + 1) * stride]);
            }
            self.wall_history = wh;
        }
        self.halo.build(p, &s.domain, width);
        let n_old = self.neighbors.offsets.len() - 1;
        let old_index: Vec<usize> = perm
            .iter()
            .map(|&o| if o < n_old { o } else { usize::MAX })
            .collect();
        self.neighbors = NeighborList::build(
            p,
            reach,
            s.laws.history_len,
            Some((&self.neighbors, &old_index)),
        );
        self.x_ref = p.x[..p.n_owned].to_vec();
        Ok(())
    }

    /// The thermo row of the current state (a collective call).
    pub fn thermo(&self) -> Thermo {
        let s = diagnostics::measure(
            &self.particles,
            &self.neighbors,
            &self.setup.laws,
            &self.setup.walls,
            self.setup.gravity,
            self.comm.as_ref(),
        );
        Thermo {
            step: self.step,
            time: self.time(),
            particles: s[0],
            kinetic_energy: s[1],
            rotational_energy: s[2],
            potential_energy: s[3],
            elastic_energy: s[4],
            contacts: s[5],
            max_overlap: s[6],
        }
    }

    /// Owned particles sorted by id: `(id, x, v, ω)`, for comparisons and output.
    pub fn state_by_id(&self) -> Vec<(u64, DVec3, DVec3, DVec3)> {
        let p = &self.particles;
        let mut v: Vec<_> = (0..p.n_owned)
            .map(|k| (p.id[k], p.x[k], p.v[k], p.omega[k]))
            .collect();
        v.sort_by_key(|e| e.0);
        v
    }

    /// Every contact-history record `(id_a, id_b or wall, values)` held by this rank, sorted.
    /// Pair records are listed from each owned side; only records with a non-zero value are listed.
    pub fn history_records(&self) -> Vec<(u64, HistoryPartner, Vec<f64>)> {
        let p = &self.particles;
        let nl = &self.neighbors;
        let h = nl.history_len;
        let mut out = Vec::new();
        for k in 0..p.n_owned {
            for e in nl.offsets[k]..nl.offsets[k + 1] {
                let rec = &nl.history[e * h..(e + 1) * h];
                if rec.iter().any(|&x| x != 0.0) {
                    out.push((
                        p.id[k],
                        HistoryPartner::Particle(nl.partner_id[e]),
                        rec.to_vec(),
                    ));
                }
            }
            let nw = self.setup.walls.len();
            for w in 0..nw {
                let rec = &self.wall_history[(k * nw + w) * h..(k * nw + w + 1) * h];
                if rec.iter().any(|&x| x != 0.0) {
                    out.push((p.id[k], HistoryPartner::Wall(w as u32), rec.to_vec()));
                }
            }
        }
        out.sort_by_key(|a| (a.0, a.1));
        out
    }
}

/// The other side of a contact-history record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HistoryPartner {
    /// A particle, by global id.
    Particle(u64),
    /// A wall, by index.
    Wall(u32),
}

// ---------------------------------------------------------------------------
// Checkpoints: the state as a rank-agnostic [`Snapshot`], and back.

impl Simulation {
    /// The state of the owned particles as a [`Snapshot`]: particles sorted by id
    /// with their reference positions `x_ref`, force and torque, every contact-history
    /// record with a non-zero bit keyed by global ids, and the run's scalars. On one
    /// process this is the whole run; with MPI, the snapshots of all ranks are merged.
    pub fn snapshot(&self) -> Snapshot {
        let p = &self.particles;
        let nl = &self.neighbors;
        let n = p.n_owned;
        let h = nl.history_len;
        let nw = self.setup.walls.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by_key(|&k| p.id[k]);
        let mut s = Snapshot {
            step: self.step,
            time: self.time(),
            seed: self.setup.seed,
            dt: self.setup.dt,
            next_id: self.next_id,
            history_len: h,
            walls: nw,
            pour_inserted: self.setup.pours.iter().map(|s| s.inserted).collect(),
            config_text: self.setup.config_text.clone(),
            compat: Compat::of(&self.setup),
            ..Default::default()
        };
        let nonzero = |rec: &[f64]| rec.iter().any(|v| v.to_bits() != 0);
        for &k in &order {
            s.particles.push(p.record(k));
            s.x_ref.push(self.x_ref[k]);
            s.force.push(p.force[k]);
            s.torque.push(p.torque[k]);
            for e in nl.offsets[k]..nl.offsets[k + 1] {
                let rec = &nl.history[e * h..(e + 1) * h];
                if nonzero(rec) {
                    s.pair_keys.push((p.id[k], nl.partner_id[e]));
                    s.pair_values.extend_from_slice(rec);
                }
            }
            for w in 0..nw {
                let rec = &self.wall_history[(k * nw + w) * h..(k * nw + w + 1) * h];
                if nonzero(rec) {
                    s.wall_keys.push((p.id[k], w as u32));
                    s.wall_values.extend_from_slice(rec);
                }
            }
        }
        s
    }

    /// Continue a run from `snap` with the (compatible) `setup`: the particles, their
    /// forces and history are restored exactly, and the ghosts and the neighbour list
    /// are rebuilt from the reference positions `x_ref` — exactly the list of the last
    /// rebuild before the snapshot, without wrapping and without resetting `x_ref` —
    /// so the next rebuild falls on the same step as in an uninterrupted run.
    ///
    /// Checking that `setup` is compatible (see [`Compat`]) is the caller's job; this
    /// only refuses a snapshot that does not fit it. Returns what is wrong.
    pub fn from_snapshot(
        mut setup: Setup,
        comm: Box<dyn Comm>,
        snap: &Snapshot,
    ) -> std::result::Result<Self, String> {
        snap.check()?;
        let h = setup.laws.history_len;
        let nw = setup.walls.len();
        if snap.history_len != h
            || snap.walls != nw
            || snap.pour_inserted.len() != setup.pours.len()
        {
            return Err(format!(
                "the checkpoint has {} history values per contact, {} walls and {} pouring sources; the config has {h}, {nw} and {}",
                snap.history_len,
                snap.walls,
                snap.pour_inserted.len(),
                setup.pours.len()
            ));
        }
        if let Some(r) = snap
            .particles
            .iter()
            .find(|r| r.material as usize >= setup.materials.len())
        {
            return Err(format!(
                "particle id {} has material index {}, but the config defines {} materials",
                r.id,
                r.material,
                setup.materials.len()
            ));
        }
        for (src, &done) in setup.pours.iter_mut().zip(&snap.pour_inserted) {
            src.inserted = done;
        }
        let mut particles = Particles::default();
        for (r, &x_ref) in snap.particles.iter().zip(&snap.x_ref) {
            particles.push_owned(&ParticleRecord {
                x: x_ref,
                ..r.clone()
            });
        }
        let n = particles.n_owned;
        particles.force.copy_from_slice(&snap.force);
        particles.torque.copy_from_slice(&snap.torque);
        // The last rebuild saw the particles at x_ref: the same spatial order, ghosts
        // and list follow (the order does not change the trajectory, but the order of
        // diagnostic sums follows it).
        let reach = setup.range_pad + setup.skin;
        let width = 2.0 * setup.max_radius + reach;
        let perm = neighbor::spatial_order(&particles, width);
        particles.permute_owned(&perm);
        let mut halo = Halo::default();
        halo.build(&mut particles, &setup.domain, width);
        let mut neighbors = NeighborList::build(&particles, reach, h, None);
        let x_ref = particles.x[..n].to_vec();
        for (k, &i) in perm.iter().enumerate() {
            particles.x[k] = snap.particles[i].x;
        }
        halo.update(&mut particles);
        // Pair history: rows and records are both sorted by partner id.
        let mut first = vec![0usize; snap.particles.len() + 1];
        let mut r = 0;
        for (i, p) in snap.particles.iter().enumerate() {
            while r < snap.pair_keys.len() && snap.pair_keys[r].0 == p.id {
                r += 1;
            }
            first[i + 1] = r;
        }
        for (k, &i) in perm.iter().enumerate() {
            let id = particles.id[k];
            let (mut e, end) = (neighbors.offsets[k], neighbors.offsets[k + 1]);
            for r in first[i]..first[i + 1] {
                let partner = snap.pair_keys[r].1;
                while e < end && neighbors.partner_id[e] < partner {
                    e += 1;
                }
                if e == end || neighbors.partner_id[e] != partner {
                    return Err(format!(
                        "the contact-history record of particles {id} and {partner} has no pair in the rebuilt neighbour list"
                    ));
                }
                neighbors.history[e * h..(e + 1) * h]
                    .copy_from_slice(&snap.pair_values[r * h..(r + 1) * h]);
            }
        }
        let mut local = vec![0usize; n];
        for (k, &i) in perm.iter().enumerate() {
            local[i] = k;
        }
        let mut wall_history = vec![0.0; n * nw * h];
        for (r, &(id, w)) in snap.wall_keys.iter().enumerate() {
            let i = snap
                .particles
                .binary_search_by_key(&id, |p| p.id)
                .map_err(|_| format!("wall-history record of unknown particle {id}"))?;
            let at = (local[i] * nw + w as usize) * h;
            wall_history[at..at + h].copy_from_slice(&snap.wall_values[r * h..(r + 1) * h]);
        }
        Ok(Simulation {
            setup,
            particles,
            neighbors,
            wall_history,
            step: snap.step,
            next_id: snap.next_id,
            timers: Timers::default(),
            halo,
            x_ref,
            comm,
        })
    }
}
