//! One simulation on one rank: the state and a [`Simulation::step`] that runs
//! named stages in order, each timed.
//!
//! Stages per step: `integrate` (first half kick and drift, with the
//! displacement scan), `neighbor` (a rebuild when any particle anywhere moved
//! more than half the skin or particles were inserted — a global decision —
//! else a halo update), `force`, `integrate` (second half kick).
//!
//! A rebuild wraps positions at periodic boundaries, migrates particles that
//! left this rank's subdomain to their new owner together with their contact
//! history (pair records keyed by partner id, wall records), sorts the owned
//! particles spatially, creates the ghosts and builds the neighbour list,
//! putting every history record back by partner id.

use crate::config::Setup;
use crate::diagnostics::{self, Thermo};
use crate::error::{GravelError, Result};
use crate::force::{self, ForceParams};
use crate::insert::Placer;
use crate::integrate;
use crate::neighbor::carry::{HistoryRows, PairRecords};
use crate::neighbor::{self, NeighborList};
use crate::parallel::comm::Comm;
use crate::parallel::grid::{halo_width, Decomposition};
use crate::parallel::halo::Halo;
use crate::rng::{PairNoise, Stream};
use crate::state::pack::{Pack, Unpack};
use crate::state::particles::{pack_record, unpack_record, ParticleRecord, Particles};
use crate::state::snapshot::{Compat, Snapshot};
use glam::DVec3;
use std::time::{Duration, Instant};

/// Wall-clock time spent per stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timers {
    /// Integration (both halves).
    pub integrate: Duration,
    /// Neighbour-list rebuilds, insertion and halo updates (communication included).
    pub neighbor: Duration,
    /// Force computation.
    pub force: Duration,
    /// Of the above, time spent waiting in communication (halo, migration, reductions).
    pub comm: Duration,
    /// Number of neighbour-list rebuilds.
    pub rebuilds: u64,
}

/// The contact history on its way through a rebuild: by pair on a single
/// rank, where no particle leaves ([`PairRecords`]), else in per-particle
/// rows that migrate with their particles ([`HistoryRows`]).
enum Carried {
    Rows(HistoryRows),
    Pairs(PairRecords),
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
    /// The grid of subdomains.
    pub decomp: Decomposition,
    pub(crate) halo: Halo,
    pub(crate) x_ref: Vec<DVec3>,
    pair_results: force::PairResults,
    comm: Box<dyn Comm>,
}

impl Simulation {
    /// Set up the initial state (this rank's particles of the config at
    /// step 0) and compute the forces of step 0. Collective.
    pub fn new(setup: Setup, comm: Box<dyn Comm>) -> Result<Self> {
        let decomp = if comm.size() == 1 {
            Decomposition::single(&setup.domain)
        } else {
            Decomposition::choose(&setup, comm.size(), comm.rank())?
        };
        let mut particles = Particles::default();
        for r in &setup.initial {
            if decomp.owner(setup.domain.wrap(r.x)) == decomp.rank {
                particles.push_owned(r);
            }
        }
        let h = setup.laws.history_len;
        let mut sim = Simulation {
            wall_history: vec![0.0; particles.n_owned * setup.walls.len() * h],
            neighbors: NeighborList::empty(particles.n_owned, h),
            next_id: setup.next_id,
            particles,
            setup,
            step: 0,
            timers: Timers::default(),
            decomp,
            halo: Halo::default(),
            x_ref: Vec::new(),
            pair_results: force::PairResults::default(),
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

    /// Number of ghosts on this rank.
    pub fn ghosts(&self) -> usize {
        self.halo.len()
    }

    /// Advance one time step. Collective.
    pub fn step(&mut self) -> Result<()> {
        let t0 = Instant::now();
        let scan = integrate::kick_drift(
            &mut self.particles,
            self.setup.dt,
            &self.x_ref,
            &self.setup.domain,
        );
        // One reduction decides both: the lowest bad id (as MAX − id, so the
        // maximum wins; 0 = none) and the largest displacement (its bits).
        let tc = Instant::now();
        let mut global = [
            scan.bad.map_or(0, |b| u64::MAX - b.1),
            scan.max_disp2.max(0.0).to_bits(),
        ];
        self.comm.max_u64s(&mut global);
        let max_disp2 = f64::from_bits(global[1]);
        self.timers.comm += tc.elapsed();
        if global[0] != 0 {
            let bad = u64::MAX - global[0];
            return Err(match scan.bad {
                Some((k, id)) if id == bad => self.particle_error(k, self.step + 1),
                _ => GravelError::Elsewhere(format!(
                    "particle id {bad} on another rank went bad on step {}",
                    self.step + 1
                )),
            });
        }
        self.step += 1;
        let t1 = Instant::now();
        self.timers.integrate += t1 - t0;
        let half_skin = 0.5 * self.setup.skin;
        let inserted = self.insert_due()?;
        if inserted || max_disp2 > half_skin * half_skin {
            self.rebuild()?;
        } else {
            let tc = Instant::now();
            self.halo.update(&mut self.particles, self.comm.as_ref());
            self.timers.comm += tc.elapsed();
            let n = self.particles.n_owned;
            self.particles.refresh_packed_from(n);
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
        let rank = if self.comm.size() > 1 {
            format!(" (rank {})", self.comm.rank())
        } else {
            String::new()
        };
        GravelError::Run(format!(
            "particle id {}{rank} at position {:?} with velocity {:?} on step {step}: {cause}",
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
            step: self.step,
            noise: PairNoise::new(self.setup.seed, Stream::StochasticFriction),
        };
        force::compute(
            &mut self.particles,
            &mut self.neighbors,
            &mut self.wall_history,
            &mut self.pair_results,
            &fp,
        );
    }

    /// Insert the particles the pouring sources owe at the current time.
    /// Every rank draws the same candidates against the same (gathered)
    /// neighbourhood and keeps those it owns. Returns whether any particle
    /// was inserted anywhere. Collective when a source is due.
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
            let margin = DVec3::splat(2.0 * self.setup.max_radius);
            let p = &self.particles;
            let mut near = Vec::new();
            for k in 0..p.n_owned {
                let x = p.x[k];
                if x.cmpge(src.lo - margin).all() && x.cmple(src.hi + margin).all() {
                    near.put_vec3(x);
                    near.put_f64(p.radius[k]);
                }
            }
            let mut placer = Placer::new(self.setup.max_radius);
            let tc = Instant::now();
            let all = if self.comm.size() > 1 {
                self.comm.all_gather(&near)
            } else {
                vec![near]
            };
            self.timers.comm += tc.elapsed();
            for b in &all {
                let mut u = Unpack::new(b);
                while !u.is_empty() {
                    let x = u.vec3();
                    placer.add(x, u.f64());
                }
            }
            let (seed, step) = (self.setup.seed, self.step);
            let new = self.setup.pours[s].insert(seed, step, time, &mut placer, &mut self.next_id);
            if !new.is_empty() {
                any = true;
                self.particles.truncate_ghosts();
                let stride = self.setup.walls.len() * self.neighbors.history_len;
                for r in &new {
                    if self.decomp.owner(self.setup.domain.wrap(r.x)) == self.decomp.rank {
                        self.particles.push_owned(r);
                        self.wall_history.extend(std::iter::repeat_n(0.0, stride));
                    }
                }
            }
        }
        Ok(any)
    }

    /// Wrap, migrate, sort spatially, rebuild ghosts and the neighbour list
    /// (carrying history). Collective.
    fn rebuild(&mut self) -> Result<()> {
        self.timers.rebuilds += 1;
        let mut carried = match self.halo.image_sources() {
            Some(sources) if self.comm.size() == 1 => {
                Carried::Pairs(PairRecords::from_list(&self.neighbors, sources))
            }
            _ => Carried::Rows(HistoryRows::from_list(
                &self.neighbors,
                self.particles.n_owned,
            )),
        };
        let p = &mut self.particles;
        p.truncate_ghosts();
        for k in 0..p.n_owned {
            p.x[k] = self.setup.domain.wrap(p.x[k]);
        }
        if self.comm.size() > 1 {
            if let Carried::Rows(rows) = carried {
                let tc = Instant::now();
                carried = Carried::Rows(self.migrate(rows)?);
                self.timers.comm += tc.elapsed();
            }
        }
        let s = &self.setup;
        let p = &mut self.particles;
        let width = halo_width(s);
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
        let tc = Instant::now();
        self.halo
            .build(p, &s.domain, &self.decomp, self.comm.as_ref(), width);
        self.timers.comm += tc.elapsed();
        self.neighbors
            .rebuild(p, s.range_pad + s.skin, s.laws.history_len);
        match carried {
            Carried::Rows(rows) => rows.select(&perm).fill_list(&mut self.neighbors),
            Carried::Pairs(pairs) => pairs.fill_list(&mut self.neighbors, &perm, &p.id),
        }
        p.refresh_packed();
        self.x_ref = p.x[..p.n_owned].to_vec();
        Ok(())
    }

    /// Send every owned particle outside this rank's subdomain to its owner,
    /// with its wall and pair history, and take in the ones arriving.
    /// Returns the history rows of the particles now owned, in their order.
    fn migrate(&mut self, rows: HistoryRows) -> Result<HistoryRows> {
        let peers = self.decomp.peers();
        let me = self.decomp.rank;
        let stride = self.setup.walls.len() * self.neighbors.history_len;
        let p = &mut self.particles;
        let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); peers.len()];
        let mut keep = Vec::with_capacity(p.n_owned);
        let mut stray: Option<(usize, usize)> = None;
        for k in 0..p.n_owned {
            let owner = self.decomp.owner(p.x[k]);
            if owner == me {
                keep.push(k);
                continue;
            }
            let Ok(q) = peers.binary_search(&owner) else {
                if stray.is_none_or(|(j, _)| p.id[k] < p.id[j]) {
                    stray = Some((k, owner));
                }
                continue;
            };
            let b = &mut bufs[q];
            pack_record(&p.record(k), b);
            b.put_f64s(&self.wall_history[k * stride..(k + 1) * stride]);
            rows.pack_row(k, b);
        }
        let first_stray = self.comm.min_u64(stray.map_or(u64::MAX, |(k, _)| p.id[k]));
        if first_stray != u64::MAX {
            return Err(match stray {
                Some((k, owner)) if p.id[k] == first_stray => GravelError::Run(format!(
                    "particle id {} at position {:?} on step {} moved from rank {me} to rank {owner}, which is not adjacent: it travelled farther than one subdomain between neighbour-list rebuilds",
                    p.id[k],
                    p.x[k].to_array(),
                    self.step
                )),
                _ => GravelError::Elsewhere(format!(
                    "particle id {first_stray} on another rank left the neighbourhood of its subdomain on step {}",
                    self.step
                )),
            });
        }
        let recv = self.comm.exchange(&peers, &bufs);
        let mut out = rows.select(&keep);
        let mut records: Vec<_> = keep.iter().map(|&k| p.record(k)).collect();
        let mut wall: Vec<f64> = Vec::with_capacity(self.wall_history.len());
        for &k in &keep {
            wall.extend_from_slice(&self.wall_history[k * stride..(k + 1) * stride]);
        }
        for b in &recv {
            let mut u = Unpack::new(b);
            while !u.is_empty() {
                records.push(unpack_record(&mut u));
                wall.extend(u.f64s());
                out.unpack_row(&mut u);
            }
        }
        let mut fresh = Particles::default();
        for r in &records {
            fresh.push_owned(r);
        }
        // Forces start at zero: they are recomputed before their next use.
        *p = fresh;
        self.wall_history = wall;
        Ok(out)
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
            temperature: s[7],
            rotational_temperature: s[8],
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
                let rec = nl.record(e);
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

    /// The whole state of every rank, on rank 0 (`None` elsewhere), as text
    /// with exact bits: a line per particle (`p id x y z vx vy vz wx wy wz`,
    /// floats as hexadecimal bit patterns), then a line per non-zero history
    /// record (`h id partner values…`, the partner `p<id>` or `w<wall>`),
    /// sorted. Bitwise-identical runs give identical dumps whatever their
    /// rank and thread counts. Collective.
    pub fn dump_state(&self) -> Option<String> {
        let hex = |v: &[f64]| -> String {
            v.iter()
                .map(|x| format!("{:016x}", x.to_bits()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut lines = Vec::new();
        for (id, x, v, w) in self.state_by_id() {
            let vals = [x.to_array(), v.to_array(), w.to_array()].concat();
            lines.push(format!("p {id:020} {}", hex(&vals)));
        }
        for (id, partner, vals) in self.history_records() {
            let who = match partner {
                HistoryPartner::Particle(q) => format!("p{q:020}"),
                HistoryPartner::Wall(w) => format!("w{w:010}"),
            };
            lines.push(format!("h {id:020} {who} {}", hex(&vals)));
        }
        let text = lines.join("\n");
        let all = self.comm.gather(text.as_bytes())?;
        let mut lines: Vec<String> = all
            .iter()
            .flat_map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|l| !l.is_empty())
            .collect();
        lines.sort();
        Some(lines.join("\n") + "\n")
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
    /// The state of the run as a [`Snapshot`]: particles sorted by id with their
    /// reference positions `x_ref`, force and torque, every contact-history record
    /// with a non-zero bit keyed by global ids, and the run's scalars. With several
    /// ranks the per-particle parts of all ranks are gathered and merged on rank 0;
    /// the other ranks get only their own part. Collective.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.local_snapshot();
        if self.comm.size() > 1 {
            if let Some(parts) = self.comm.gather(&s.pack_particles()) {
                s.merge_particles(&parts);
            }
        }
        s
    }

    fn local_snapshot(&self) -> Snapshot {
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
                let rec = nl.record(e);
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
        let decomp = if comm.size() == 1 {
            Decomposition::single(&setup.domain)
        } else {
            Decomposition::choose(&setup, comm.size(), comm.rank()).map_err(|e| e.to_string())?
        };
        // This rank's particles: those whose position at the last rebuild (when
        // ownership was last decided) lies in its subdomain.
        let mine: Vec<usize> = (0..snap.particles.len())
            .filter(|&i| decomp.owner(setup.domain.wrap(snap.x_ref[i])) == decomp.rank)
            .collect();
        let mut particles = Particles::default();
        for &i in &mine {
            particles.push_owned(&ParticleRecord {
                x: snap.x_ref[i],
                ..snap.particles[i].clone()
            });
        }
        let n = particles.n_owned;
        for (k, &i) in mine.iter().enumerate() {
            particles.force[k] = snap.force[i];
            particles.torque[k] = snap.torque[i];
        }
        // The last rebuild saw the particles at x_ref: the same spatial order, ghosts
        // and list follow (the order does not change the trajectory, but the order of
        // diagnostic sums follows it).
        let reach = setup.range_pad + setup.skin;
        let width = halo_width(&setup);
        let perm = neighbor::spatial_order(&particles, width);
        particles.permute_owned(&perm);
        // Snapshot index of each local particle.
        let source: Vec<usize> = perm.iter().map(|&k| mine[k]).collect();
        let mut halo = Halo::default();
        halo.build(&mut particles, &setup.domain, &decomp, comm.as_ref(), width);
        let mut neighbors = NeighborList::build(&particles, reach, h);
        let x_ref = particles.x[..n].to_vec();
        for (k, &i) in source.iter().enumerate() {
            particles.x[k] = snap.particles[i].x;
        }
        halo.update(&mut particles, comm.as_ref());
        // Pair history: rows and records are both sorted by partner id.
        let mut first = vec![0usize; snap.particles.len() + 1];
        let mut r = 0;
        for (i, p) in snap.particles.iter().enumerate() {
            while r < snap.pair_keys.len() && snap.pair_keys[r].0 == p.id {
                r += 1;
            }
            first[i + 1] = r;
        }
        let mut problem = None;
        'rows: for (k, &i) in source.iter().enumerate() {
            let id = particles.id[k];
            let (mut e, end) = (neighbors.offsets[k], neighbors.offsets[k + 1]);
            for r in first[i]..first[i + 1] {
                let partner = snap.pair_keys[r].1;
                while e < end && neighbors.partner_id[e] < partner {
                    e += 1;
                }
                if e == end || neighbors.partner_id[e] != partner {
                    problem = Some(format!(
                        "the contact-history record of particles {id} and {partner} has no pair in the rebuilt neighbour list"
                    ));
                    break 'rows;
                }
                neighbors
                    .record_mut(e)
                    .copy_from_slice(&snap.pair_values[r * h..(r + 1) * h]);
            }
        }
        neighbors.refresh_active();
        // Every rank must agree to go on (a refusal on one rank stops them all).
        let mut refused = [problem.is_some() as u64];
        comm.max_u64s(&mut refused);
        if refused[0] != 0 {
            return Err(problem.unwrap_or_else(|| {
                "another rank found a contact-history record it cannot place".to_string()
            }));
        }
        let mut local = vec![usize::MAX; snap.particles.len()];
        for (k, &i) in source.iter().enumerate() {
            local[i] = k;
        }
        let mut wall_history = vec![0.0; n * nw * h];
        for (r, &(id, w)) in snap.wall_keys.iter().enumerate() {
            let i = snap
                .particles
                .binary_search_by_key(&id, |p| p.id)
                .map_err(|_| format!("wall-history record of unknown particle {id}"))?;
            if local[i] == usize::MAX {
                continue; // another rank's particle
            }
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
            decomp,
            halo,
            x_ref,
            pair_results: force::PairResults::default(),
            comm,
        })
    }
}
