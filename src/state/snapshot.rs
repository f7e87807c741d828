//! The state a run needs to continue bit for bit, as plain rank-agnostic data.
//!
//! A [`Snapshot`] is produced by [`crate::sim::Simulation::snapshot`], written and
//! read by [`crate::io::checkpoint`], and consumed by
//! [`crate::sim::Simulation::from_snapshot`]. It holds no local indices: particles
//! are sorted by global id and contact-history records are keyed by global ids
//! (and wall index), so a snapshot taken on any number of ranks or threads can be
//! restored on any other (the MPI layer gathers and scatters it).
//!
//! [`Compat`] fingerprints the parts of a [`Setup`] that a continuation must not
//! change (materials, contact laws, domain, walls, particle blocks, time step,
//! seed, gravity), so that a restart with an incompatible config is refused with a
//! message that names what changed.

use crate::config::Setup;
use crate::state::pack::{Pack, Unpack};
use crate::state::particles::ParticleRecord;
use crate::state::particles::{pack_record, unpack_record};
use glam::DVec3;

/// Everything a run needs to continue from step [`Snapshot::step`].
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Steps done.
    pub step: u64,
    /// Simulated time (`step · dt`).
    pub time: f64,
    /// The run's seed (insertion streams and stochastic friction are keyed by seed and step).
    pub seed: u64,
    /// Time step.
    pub dt: f64,
    /// Next free particle id.
    pub next_id: u64,
    /// History values per contact record.
    pub history_len: usize,
    /// Number of walls.
    pub walls: usize,
    /// Owned particles, sorted by id (positions as integrated, not wrapped).
    pub particles: Vec<ParticleRecord>,
    /// Position of each particle at the last neighbour-list rebuild (same order).
    pub x_ref: Vec<DVec3>,
    /// Force on each particle at `step` (same order).
    pub force: Vec<DVec3>,
    /// Torque on each particle at `step` (same order).
    pub torque: Vec<DVec3>,
    /// Pair-history keys `(id, partner id)`, sorted; each particle's own copy of a pair's record.
    pub pair_keys: Vec<(u64, u64)>,
    /// Pair-history values, `history_len` per key.
    pub pair_values: Vec<f64>,
    /// Wall-history keys `(id, wall index)`, sorted.
    pub wall_keys: Vec<(u64, u32)>,
    /// Wall-history values, `history_len` per key.
    pub wall_values: Vec<f64>,
    /// Particles each pouring source has inserted so far, in config order.
    pub pour_inserted: Vec<u64>,
    /// The config text the run was started or last restarted with.
    pub config_text: String,
    /// Fingerprints of what a continuation must not change.
    pub compat: Compat,
}

impl Snapshot {
    /// Serialise the per-particle part (particles, `x_ref`, forces, torques
    /// and history records), for gathering the snapshots of all ranks.
    pub fn pack_particles(&self) -> Vec<u8> {
        let h = self.history_len;
        let mut b = Vec::new();
        b.put_u64(self.particles.len() as u64);
        for (k, r) in self.particles.iter().enumerate() {
            pack_record(r, &mut b);
            b.put_vec3(self.x_ref[k]);
            b.put_vec3(self.force[k]);
            b.put_vec3(self.torque[k]);
        }
        b.put_u64(self.pair_keys.len() as u64);
        for (k, &(a, c)) in self.pair_keys.iter().enumerate() {
            b.put_u64(a);
            b.put_u64(c);
            self.pair_values[k * h..(k + 1) * h]
                .iter()
                .for_each(|&v| b.put_f64(v));
        }
        b.put_u64(self.wall_keys.len() as u64);
        for (k, &(a, w)) in self.wall_keys.iter().enumerate() {
            b.put_u64(a);
            b.put_u64(w as u64);
            self.wall_values[k * h..(k + 1) * h]
                .iter()
                .for_each(|&v| b.put_f64(v));
        }
        b
    }

    /// Replace the per-particle part by the union of `parts` (each written by
    /// [`Self::pack_particles`]), sorted by id as a snapshot must be.
    pub fn merge_particles(&mut self, parts: &[Vec<u8>]) {
        let h = self.history_len;
        type Row = (ParticleRecord, DVec3, DVec3, DVec3);
        let mut rows: Vec<Row> = Vec::new();
        let mut pairs: Vec<((u64, u64), Vec<f64>)> = Vec::new();
        let mut walls: Vec<((u64, u32), Vec<f64>)> = Vec::new();
        for part in parts {
            let mut u = Unpack::new(part);
            for _ in 0..u.u64() {
                let r = unpack_record(&mut u);
                rows.push((r, u.vec3(), u.vec3(), u.vec3()));
            }
            for _ in 0..u.u64() {
                let key = (u.u64(), u.u64());
                pairs.push((key, (0..h).map(|_| u.f64()).collect()));
            }
            for _ in 0..u.u64() {
                let key = (u.u64(), u.u64() as u32);
                walls.push((key, (0..h).map(|_| u.f64()).collect()));
            }
        }
        rows.sort_by_key(|r| r.0.id);
        pairs.sort_by_key(|r| r.0);
        walls.sort_by_key(|r| r.0);
        self.x_ref = rows.iter().map(|r| r.1).collect();
        self.force = rows.iter().map(|r| r.2).collect();
        self.torque = rows.iter().map(|r| r.3).collect();
        self.particles = rows.into_iter().map(|r| r.0).collect();
        self.pair_keys = pairs.iter().map(|r| r.0).collect();
        self.pair_values = pairs.into_iter().flat_map(|r| r.1).collect();
        self.wall_keys = walls.iter().map(|r| r.0).collect();
        self.wall_values = walls.into_iter().flat_map(|r| r.1).collect();
    }

    /// Check the internal consistency of the arrays (lengths, sort order, keys that
    /// name existing particles and walls). Returns what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let n = self.particles.len();
        for (name, len) in [
            ("x_ref", self.x_ref.len()),
            ("force", self.force.len()),
            ("torque", self.torque.len()),
        ] {
            if len != n {
                return Err(format!("{name} has {len} rows for {n} particles"));
            }
        }
        if !self.particles.windows(2).all(|w| w[0].id < w[1].id) {
            return Err("particle ids are not strictly increasing".into());
        }
        if let Some(p) = self.particles.iter().find(|p| p.id >= self.next_id) {
            return Err(format!(
                "particle id {} is not below next_id {}",
                p.id, self.next_id
            ));
        }
        let h = self.history_len;
        if self.pair_values.len() != self.pair_keys.len() * h {
            return Err(format!(
                "{} pair-history values for {} records of {h}",
                self.pair_values.len(),
                self.pair_keys.len()
            ));
        }
        if self.wall_values.len() != self.wall_keys.len() * h {
            return Err(format!(
                "{} wall-history values for {} records of {h}",
                self.wall_values.len(),
                self.wall_keys.len()
            ));
        }
        if !self.pair_keys.windows(2).all(|w| w[0] < w[1])
            || !self.wall_keys.windows(2).all(|w| w[0] < w[1])
        {
            return Err("history records are not sorted by id".into());
        }
        let known = |id: u64| self.particles.binary_search_by_key(&id, |p| p.id).is_ok();
        if let Some(&(a, b)) = self
            .pair_keys
            .iter()
            .find(|&&(a, b)| a == b || !known(a) || !known(b))
        {
            return Err(format!(
                "pair-history record ({a}, {b}) names a particle that is not in the checkpoint"
            ));
        }
        if let Some(&(a, w)) = self
            .wall_keys
            .iter()
            .find(|&&(a, w)| !known(a) || w as usize >= self.walls)
        {
            return Err(format!(
                "wall-history record ({a}, wall {w}) names a particle or wall that is not in the checkpoint"
            ));
        }
        Ok(())
    }
}

/// 64-bit FNV-1a, a fixed, documented hash (unlike std's `DefaultHasher`).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Mix in bytes.
    pub fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Mix in a u64 (little-endian).
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// Mix in the bits of an f64.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// Mix in text (length first, so that concatenations differ).
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Fingerprints of the parts of a setup that a continuation must keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compat {
    /// `(what, hash)` pairs, in [`Compat::KEYS`] order.
    pub entries: Vec<(String, u64)>,
}

impl Compat {
    /// The parts compared, as named in messages.
    pub const KEYS: [&'static str; 8] = [
        "materials",
        "contact laws",
        "domain (box, periodicity, skin)",
        "walls",
        "particle blocks",
        "time step",
        "seed",
        "gravity",
    ];

    /// Fingerprint `setup`. `Debug` of `f64` prints the shortest text that reads
    /// back to the same bits, so equal fingerprints mean bit-equal parameters.
    pub fn of(setup: &Setup) -> Self {
        let text = |s: String| {
            let mut h = Fnv::default();
            h.str(&s);
            h.finish()
        };
        let mut blocks = Fnv::default();
        for r in &setup.initial {
            blocks.u64(r.id);
            for v in [r.x, r.v, r.omega] {
                v.to_array().iter().for_each(|&c| blocks.f64(c));
            }
            blocks.f64(r.radius);
            blocks.f64(r.mass);
            blocks.u64(u64::from(r.material));
            blocks.u64(u64::from(r.frozen));
        }
        for s in &setup.pours {
            let mut s = s.clone();
            s.inserted = 0;
            blocks.str(&format!("{s:?}"));
        }
        blocks.u64(setup.next_id);
        let values = [
            text(format!("{:?}", setup.materials)),
            text(format!("{:?} {:?}", setup.laws, setup.range_pad)),
            text(format!("{:?} {:?}", setup.domain, setup.skin)),
            text(format!("{:?}", setup.walls)),
            blocks.finish(),
            text(format!("{:?}", setup.dt)),
            text(format!("{:?}", setup.seed)),
            text(format!("{:?}", setup.gravity)),
        ];
        Self {
            entries: Self::KEYS
                .iter()
                .zip(values)
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

    /// The names of the parts that differ between `self` (the checkpoint's) and
    /// `new` (the config's); a part missing on either side counts as changed.
    pub fn changed(&self, new: &Compat) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &new.entries {
            match self.entries.iter().find(|(j, _)| j == k) {
                Some((_, w)) if w == v => {}
                _ => out.push(k.clone()),
            }
        }
        for (k, _) in &self.entries {
            if !new.entries.iter().any(|(j, _)| j == k) {
                out.push(k.clone());
            }
        }
        out
    }
}
