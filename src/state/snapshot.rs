//! The state a run needs to continue bit for bit, as plain rank-agnostic data.
//!
//! A [`Snapshot`] is produced by [`crate::sim::Simulation::snapshot`], written and
//! read by [`crate::io::checkpoint`], and consumed by
//! [`crate::sim::Simulation::from_snapshot`]. It holds no local indices: particles
//! are sorted by global id and contact-history records are keyed by global ids
//! (and wall index), so a snapshot taken on any number of ranks or threads can be
//! restored on any other (the MPI layer gathers and scatters it).
//!
//! [`Compat`] fingerprints the parts of a [`Setup`](crate::config::Setup) that a continuation must not
//! change (materials, contact laws, domain, walls, particle blocks, time step,
//! seed, gravity), so that a restart with an incompatible config is refused with a
//! message that names what changed.

use crate::state::pack::{Pack, Unpack};
use crate::state::particles::ParticleRecord;
use crate::state::particles::{pack_record, unpack_record};
use crate::state::rows::{RowView, StateRows};
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
    /// The particles each source has drawn that wait for room: `[source,
    /// first number, one past the last]`, by source, in number order.
    pub pour_waiting: Vec<[u64; 3]>,
    /// The step of the last neighbour-list rebuild.
    pub rebuilt_at: u64,
    /// The bed's displacement gradient per step fitted at that rebuild,
    /// column by column ([`crate::neighbor::flow`]; zero in a checkpoint
    /// written before 2026-12-05).
    pub flow: [f64; 9],
    /// Particles deleted so far (outlets, open faces), over all ranks.
    pub deleted: u64,
    /// Their total mass (kg), with the bits the run's thermo shows.
    pub deleted_mass: f64,
    /// The config text the run was started or last restarted with.
    pub config_text: String,
    /// Fingerprints of what a continuation must not change.
    pub compat: Compat,
}

impl Snapshot {
    /// The contact-history records of each particle row: row `i`'s pair
    /// records are `pairs[i]..pairs[i + 1]` of `pair_keys`, its wall
    /// records `walls[i]..walls[i + 1]` of `wall_keys`. A row's records
    /// follow each other, in the order of the rows, as every snapshot and
    /// every checkpoint keeps them; records that do not belong to the row
    /// where they stand end the grouping (and [`Self::check_rows`] names
    /// them).
    #[must_use]
    pub fn record_ranges(&self) -> RecordRanges {
        let n = self.particles.len();
        let mut pairs = Vec::with_capacity(n + 1);
        let mut walls = Vec::with_capacity(n + 1);
        let (mut pr, mut wr) = (0, 0);
        pairs.push(0);
        walls.push(0);
        for p in &self.particles {
            while pr < self.pair_keys.len() && self.pair_keys[pr].0 == p.id {
                pr += 1;
            }
            while wr < self.wall_keys.len() && self.wall_keys[wr].0 == p.id {
                wr += 1;
            }
            pairs.push(pr);
            walls.push(wr);
        }
        RecordRanges { pairs, walls }
    }

    /// Serialise the per-particle part (particles, `x_ref`, forces, torques
    /// and history records), for gathering the snapshots of all ranks.
    #[must_use]
    pub fn pack_particles(&self) -> Vec<u8> {
        let all: Vec<usize> = (0..self.particles.len()).collect();
        self.pack_rows(&all, &self.record_ranges())
    }

    /// Serialise the particle rows `rows` with their history records (see
    /// [`Self::record_ranges`]), for [`Self::merge_particles`].
    #[must_use]
    pub fn pack_rows(&self, rows: &[usize], ranges: &RecordRanges) -> Vec<u8> {
        let h = self.history_len;
        let mut b = Vec::new();
        b.put_u64(rows.len() as u64);
        for &k in rows {
            pack_record(&self.particles[k], &mut b);
            b.put_vec3(self.x_ref[k]);
            b.put_vec3(self.force[k]);
            b.put_vec3(self.torque[k]);
        }
        let pairs = rows.iter().map(|&k| ranges.pairs[k]..ranges.pairs[k + 1]);
        b.put_u64(pairs.clone().map(|r| r.len()).sum::<usize>() as u64);
        for r in pairs.flatten() {
            let (a, c) = self.pair_keys[r];
            b.put_u64(a);
            b.put_u64(c);
            self.pair_values[r * h..(r + 1) * h]
                .iter()
                .for_each(|&v| b.put_f64(v));
        }
        let walls = rows.iter().map(|&k| ranges.walls[k]..ranges.walls[k + 1]);
        b.put_u64(walls.clone().map(|r| r.len()).sum::<usize>() as u64);
        for r in walls.flatten() {
            let (a, w) = self.wall_keys[r];
            b.put_u64(a);
            b.put_u64(u64::from(w));
            self.wall_values[r * h..(r + 1) * h]
                .iter()
                .for_each(|&v| b.put_f64(v));
        }
        b
    }

    /// The run's scalars and texts without any particle rows or records.
    #[must_use]
    pub fn without_rows(&self) -> Snapshot {
        Snapshot {
            step: self.step,
            time: self.time,
            seed: self.seed,
            dt: self.dt,
            next_id: self.next_id,
            history_len: self.history_len,
            walls: self.walls,
            pour_inserted: self.pour_inserted.clone(),
            pour_waiting: self.pour_waiting.clone(),
            rebuilt_at: self.rebuilt_at,
            flow: self.flow,
            deleted: self.deleted,
            deleted_mass: self.deleted_mass,
            config_text: self.config_text.clone(),
            compat: self.compat.clone(),
            ..Snapshot::default()
        }
    }

    /// Sort the rows by id, each particle's records after it (the order of
    /// a snapshot taken on one rank).
    pub fn sort_by_id(&mut self) {
        let packed = self.pack_particles();
        self.merge_particles(&[packed]);
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
        self.check_order()?;
        self.check_rows()?;
        let known = |id: u64| self.particles.binary_search_by_key(&id, |p| p.id).is_ok();
        if let Some(&(a, b)) = self.pair_keys.iter().find(|&&(_, b)| !known(b)) {
            return Err(format!(
                "pair-history record ({a}, {b}) names a particle that is not in the checkpoint"
            ));
        }
        Ok(())
    }

    /// The rows sorted by id, without repeats, and the records by key.
    pub fn check_order(&self) -> Result<(), String> {
        if !self.particles.windows(2).all(|w| w[0].id < w[1].id) {
            return Err("particle ids are not strictly increasing".into());
        }
        if !self.pair_keys.windows(2).all(|w| w[0] < w[1])
            || !self.wall_keys.windows(2).all(|w| w[0] < w[1])
        {
            return Err("history records are not sorted by id".into());
        }
        Ok(())
    }

    /// [`Self::check`] for one rank's part of the state, in any row order:
    /// lengths, ids below `next_id`, every record beside its particle's
    /// row (see [`Self::record_ranges`]), no pair of a particle with
    /// itself, wall indices in range. The partners of the pair records,
    /// which may be another rank's, are not checked.
    pub fn check_rows(&self) -> Result<(), String> {
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
        let ranges = self.record_ranges();
        let stray_pair = self.pair_keys.get(ranges.pairs[n]);
        if let Some(&(a, b)) = stray_pair.or(self.pair_keys.iter().find(|&&(a, b)| a == b)) {
            return Err(format!(
                "pair-history record ({a}, {b}) names a particle that is not in the checkpoint"
            ));
        }
        let stray_wall = self.wall_keys.get(ranges.walls[n]);
        let out_of_range = self
            .wall_keys
            .iter()
            .find(|&&(_, w)| w as usize >= self.walls);
        if let Some(&(a, w)) = stray_wall.or(out_of_range) {
            return Err(format!(
                "wall-history record ({a}, wall {w}) names a particle or wall that is not in the checkpoint"
            ));
        }
        Ok(())
    }
}

impl StateRows for Snapshot {
    fn counts(&self) -> [usize; 3] {
        [
            self.particles.len(),
            self.pair_keys.len(),
            self.wall_keys.len(),
        ]
    }

    fn for_each_particle(&self, f: &mut dyn FnMut(&RowView)) {
        for (k, p) in self.particles.iter().enumerate() {
            f(&RowView {
                particle: p.clone(),
                x_ref: self.x_ref[k],
                force: self.force[k],
                torque: self.torque[k],
            });
        }
    }

    fn for_each_record_count(&self, f: &mut dyn FnMut(usize, usize)) {
        let r = self.record_ranges();
        for k in 0..self.particles.len() {
            f(r.pairs[k + 1] - r.pairs[k], r.walls[k + 1] - r.walls[k]);
        }
    }

    fn for_each_pair(&self, f: &mut dyn FnMut(u64, u64, &[f64])) {
        let h = self.history_len;
        for (k, &(a, b)) in self.pair_keys.iter().enumerate() {
            f(a, b, &self.pair_values[k * h..(k + 1) * h]);
        }
    }

    fn for_each_wall(&self, f: &mut dyn FnMut(u64, u32, &[f64])) {
        let h = self.history_len;
        for (k, &(a, w)) in self.wall_keys.iter().enumerate() {
            f(a, w, &self.wall_values[k * h..(k + 1) * h]);
        }
    }
}

/// Where each particle row's history records are (see
/// [`Snapshot::record_ranges`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRanges {
    /// Row `i`'s pair records: `pairs[i]..pairs[i + 1]`.
    pub pairs: Vec<usize>,
    /// Row `i`'s wall records: `walls[i]..walls[i + 1]`.
    pub walls: Vec<usize>,
}

/// 64-bit FNV-1a, a fixed, documented hash (unlike std's `DefaultHasher`).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

/// The 64-bit FNV offset basis (Fowler, Noll, Vo).
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// The 64-bit FNV prime, `2^40 + 2^8 + 0xb3`.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Default for Fnv {
    fn default() -> Self {
        Self(FNV_OFFSET_BASIS)
    }
}

impl Fnv {
    /// Mix in bytes.
    pub fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
    }

    /// Mix in a whole 64-bit word in one step, `h ← (h ⊕ w) · p`: FNV-1a's
    /// step over words instead of bytes, eight times fewer multiplies, and
    /// a hash of its own (not [`Self::u64`]'s). For a given word the step is
    /// a bijection of `h`, so two sequences of words that differ in one
    /// place never hash alike.
    pub fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(FNV_PRIME);
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
    /// The fingerprint of the parts named by [`Self::KEYS`], in that order
    /// (made by [`crate::config::Setup::compat`]).
    pub fn new(values: [u64; 8]) -> Self {
        Self {
            entries: Self::KEYS
                .iter()
                .zip(values)
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(id: u64) -> ParticleRecord {
        let f = id as f64;
        ParticleRecord {
            id,
            x: DVec3::new(f, -f, 0.5 * f),
            v: DVec3::new(0.1 * f, 0.0, -0.0),
            omega: DVec3::new(0.0, f, 1e-300),
            radius: 0.001 * (1.0 + f),
            mass: 2.0 + f,
            material: (id % 3) as u32,
            frozen: id.is_multiple_of(2),
        }
    }

    /// A snapshot of particles 0..5 with history records (2 values each)
    /// and two walls.
    fn snapshot() -> Snapshot {
        let ids = [0u64, 1, 2, 3, 4];
        let v3 = |id: u64, k: f64| DVec3::new(k * id as f64, f64::MIN_POSITIVE, -k);
        Snapshot {
            step: 17,
            time: 1.7e-4,
            seed: 5,
            dt: 1e-5,
            next_id: 5,
            history_len: 2,
            walls: 2,
            particles: ids.iter().map(|&i| particle(i)).collect(),
            x_ref: ids.iter().map(|&i| v3(i, 1.0)).collect(),
            force: ids.iter().map(|&i| v3(i, 2.0)).collect(),
            torque: ids.iter().map(|&i| v3(i, -3.0)).collect(),
            pair_keys: vec![(0, 3), (1, 2), (2, 1), (3, 0)],
            pair_values: vec![1.0, 2.0, 3.0, 4.0, -3.0, -4.0, -1.0, -2.0],
            wall_keys: vec![(1, 0), (4, 1)],
            wall_values: vec![0.5, -0.5, 0.25, f64::EPSILON],
            pour_inserted: vec![3],
            pour_waiting: vec![[0, 3, 5]],
            rebuilt_at: 11,
            flow: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.5e-5, 0.0, -2e-7],
            deleted: 2,
            deleted_mass: 1.5e-3,
            config_text: "name = \"x\"".into(),
            compat: Compat::default(),
        }
    }

    /// The part of `s` a rank owning the particles `ids` holds: its particles
    /// and the history records keyed by them.
    fn part(s: &Snapshot, ids: &[u64]) -> Snapshot {
        let h = s.history_len;
        let rows: Vec<usize> = (0..s.particles.len())
            .filter(|&k| ids.contains(&s.particles[k].id))
            .collect();
        let pairs: Vec<usize> = (0..s.pair_keys.len())
            .filter(|&k| ids.contains(&s.pair_keys[k].0))
            .collect();
        let walls: Vec<usize> = (0..s.wall_keys.len())
            .filter(|&k| ids.contains(&s.wall_keys[k].0))
            .collect();
        Snapshot {
            particles: rows.iter().map(|&k| s.particles[k].clone()).collect(),
            x_ref: rows.iter().map(|&k| s.x_ref[k]).collect(),
            force: rows.iter().map(|&k| s.force[k]).collect(),
            torque: rows.iter().map(|&k| s.torque[k]).collect(),
            pair_keys: pairs.iter().map(|&k| s.pair_keys[k]).collect(),
            pair_values: pairs
                .iter()
                .flat_map(|&k| s.pair_values[k * h..(k + 1) * h].to_vec())
                .collect(),
            wall_keys: walls.iter().map(|&k| s.wall_keys[k]).collect(),
            wall_values: walls
                .iter()
                .flat_map(|&k| s.wall_values[k * h..(k + 1) * h].to_vec())
                .collect(),
            ..s.clone()
        }
    }

    #[test]
    fn pack_and_merge_put_the_ranks_parts_back_together() {
        let whole = snapshot();
        assert_eq!(whole.check(), Ok(()));
        // Three "ranks", each with an interleaved share of the particles.
        let parts: Vec<Vec<u8>> = [vec![3, 0], vec![4, 1], vec![2]]
            .iter()
            .map(|ids| part(&whole, ids).pack_particles())
            .collect();
        let mut merged = Snapshot {
            particles: Vec::new(),
            x_ref: Vec::new(),
            force: Vec::new(),
            torque: Vec::new(),
            pair_keys: Vec::new(),
            pair_values: Vec::new(),
            wall_keys: Vec::new(),
            wall_values: Vec::new(),
            ..whole.clone()
        };
        merged.merge_particles(&parts);
        // Debug prints every f64 exactly (-0.0 and subnormals included).
        assert_eq!(format!("{merged:?}"), format!("{whole:?}"));
        assert_eq!(merged.check(), Ok(()));
        // One part holding everything gives the same.
        let mut alone = merged.clone();
        alone.merge_particles(&[whole.pack_particles()]);
        assert_eq!(format!("{alone:?}"), format!("{whole:?}"));
    }

    #[test]
    fn check_names_what_is_wrong() {
        let bad = |f: &dyn Fn(&mut Snapshot)| {
            let mut s = snapshot();
            f(&mut s);
            s.check().unwrap_err()
        };
        assert!(bad(&|s| {
            s.force.pop();
        })
        .contains("force has 4 rows for 5 particles"));
        assert!(bad(&|s| s.particles.swap(1, 2)).contains("not strictly increasing"));
        assert!(bad(&|s| s.next_id = 4).contains("particle id 4 is not below next_id 4"));
        assert!(bad(&|s| {
            s.pair_values.pop();
        })
        .contains("pair-history values"));
        assert!(bad(&|s| s.pair_keys.swap(0, 1)).contains("not sorted"));
        assert!(bad(&|s| s.pair_keys[3] = (3, 9)).contains("(3, 9)"));
        assert!(bad(&|s| s.pair_keys[3] = (3, 3)).contains("(3, 3)"));
        assert!(bad(&|s| s.wall_keys[1] = (4, 2)).contains("wall 2"));
    }

    #[test]
    fn fnv_is_the_documented_fnv_1a() {
        // Known answers of 64-bit FNV-1a (Fowler, Noll, Vo).
        assert_eq!(Fnv::default().finish(), 0xcbf2_9ce4_8422_2325);
        let mut h = Fnv::default();
        h.bytes(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        let mut h = Fnv::default();
        h.bytes(b"foobar");
        assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
        // Text is length-prefixed: "ab" + "c" and "a" + "bc" differ.
        let text = |parts: &[&str]| {
            let mut h = Fnv::default();
            parts.iter().for_each(|p| h.str(p));
            h.finish()
        };
        assert_ne!(text(&["ab", "c"]), text(&["a", "bc"]));
    }

    #[test]
    fn compat_names_the_parts_that_changed() {
        let entries = |values: [u64; 8]| Compat {
            entries: Compat::KEYS
                .iter()
                .zip(values)
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        };
        let old = entries([1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(old.changed(&old.clone()).is_empty());
        let new = entries([1, 9, 3, 4, 5, 6, 0, 8]);
        assert_eq!(old.changed(&new), ["contact laws", "seed"]);
        // A part on one side only counts as changed.
        let mut fewer = old.clone();
        fewer.entries.pop();
        assert_eq!(old.changed(&fewer), ["gravity"]);
        assert_eq!(fewer.changed(&old), ["gravity"]);
    }
}
