//! Checkpoints: the state as a rank-agnostic [`Snapshot`], and back, on
//! any number of ranks.

use super::timers::Timers;
use super::Simulation;
use crate::config::Setup;
use crate::force;
use crate::geometry::domain::Domain;
use crate::geometry::motion::place_walls;
use crate::insert::initial::Files;
use crate::neighbor::{self, NeighborList};
use crate::parallel::comm::Comm;
use crate::parallel::grid::{halo_reach, halo_width, Decomposition};
use crate::parallel::halo::Halo;
use crate::state::history::WallHistory;
use crate::state::particles::{ParticleRecord, Particles};
use crate::state::rows::{RowView, StateRows};
use crate::state::snapshot::Snapshot;

impl Simulation {
    /// This rank's part of the state as a [`Snapshot`]: its particles sorted by
    /// id with their reference positions `x_ref`, force and torque, each
    /// followed by its contact-history records with a non-zero bit, keyed by
    /// global ids, and the run's scalars. On one rank, the whole state; on
    /// several, the ranks' parts together are the state. (A checkpoint is
    /// written from [`Self::rows`] without this copy.)
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.snapshot_header();
        let rows = self.rows();
        let [n, pairs, walls] = rows.counts();
        let h = s.history_len;
        // Exact room for every array: the snapshot is a copy of the whole
        // state, and doubling vectors would hold up to twice that.
        s.particles.reserve_exact(n);
        s.x_ref.reserve_exact(n);
        s.force.reserve_exact(n);
        s.torque.reserve_exact(n);
        s.pair_keys.reserve_exact(pairs);
        s.pair_values.reserve_exact(pairs * h);
        s.wall_keys.reserve_exact(walls);
        s.wall_values.reserve_exact(walls * h);
        rows.for_each_particle(&mut |row| {
            s.particles.push(row.particle.clone());
            s.x_ref.push(row.x_ref);
            s.force.push(row.force);
            s.torque.push(row.torque);
        });
        rows.for_each_pair(&mut |a, b, v| {
            s.pair_keys.push((a, b));
            s.pair_values.extend_from_slice(v);
        });
        rows.for_each_wall(&mut |a, w, v| {
            s.wall_keys.push((a, w));
            s.wall_values.extend_from_slice(v);
        });
        s
    }

    /// The run's scalars and texts (a checkpoint's header), without rows.
    pub fn snapshot_header(&self) -> Snapshot {
        Snapshot {
            step: self.step,
            time: self.time(),
            seed: self.setup.seed,
            dt: self.setup.dt,
            next_id: self.next_id,
            history_len: self.neighbors.history_len(),
            walls: self.wall_history.walls(),
            pour_inserted: self.setup.pours.iter().map(|s| s.inserted).collect(),
            pour_waiting: (self.setup.pours.iter().enumerate())
                .flat_map(|(k, s)| s.waiting.iter().map(move |w| [k as u64, w.start, w.end]))
                .collect(),
            rebuilt_at: self.rebuilt_at,
            flow: self.flow.to_cols_array(),
            deleted: self.deleted.count,
            deleted_mass: self.deleted.mass,
            config_text: self.setup.config_text.clone(),
            compat: self.setup.compat(),
            ..Default::default()
        }
    }

    /// This rank's rows, read from the particle arrays, the neighbour list
    /// and the wall history in id order (see [`StateRows`]).
    pub fn rows(&self) -> LiveRows<'_> {
        self.assert_settled("the checkpoint");
        LiveRows::new(self)
    }

    /// Continue a run from `snap` with the (compatible) `setup`: the particles, their
    /// forces and history are restored exactly, and the ghosts and the neighbour list
    /// are rebuilt from the reference positions `x_ref` — exactly the list of the last
    /// rebuild before the snapshot, without wrapping and without resetting `x_ref` —
    /// so the next rebuild falls on the same step as in an uninterrupted run.
    ///
    /// `snap` is this rank's part of the state, split in any way (on one rank,
    /// the whole of it; on several, e.g. a slice of a checkpoint's rows): every
    /// row and its records first go to the rank that owns the particle, by its
    /// position at the last rebuild. Collective.
    ///
    /// Checking that `setup` is compatible (see [`Compat`](crate::state::snapshot::Compat)) is the caller's job; this
    /// only refuses a snapshot that does not fit it. Returns what is wrong.
    pub fn from_snapshot(
        mut setup: Setup,
        comm: Box<dyn Comm>,
        snap: &Snapshot,
    ) -> std::result::Result<Self, String> {
        let h = setup.laws.history_len;
        let nw = setup.wall_records();
        if snap.history_len != h
            || snap.walls != nw
            || snap.pour_inserted.len() != setup.pours.len()
        {
            return Err(format!(
                "the checkpoint has {} history values per contact, {} wall-history records per particle (one for each of the walls, 4 slots of records for a mesh) and {} pouring sources; the config has {h}, {nw} and {}",
                snap.history_len,
                snap.walls,
                snap.pour_inserted.len(),
                setup.pours.len()
            ));
        }
        for (src, &done) in setup.pours.iter_mut().zip(&snap.pour_inserted) {
            src.inserted = done;
            src.waiting.clear();
        }
        for &[k, start, end] in &snap.pour_waiting {
            let src = usize::try_from(k).ok().and_then(|k| setup.pours.get_mut(k));
            let after =
                |s: &crate::insert::PourSource| s.waiting.last().is_none_or(|w| w.end < start);
            match src {
                Some(src) if start < end && after(src) => src.waiting.push(start..end),
                _ => {
                    return Err(format!(
                        "damaged checkpoint: the waiting particles {start}..{end} of pouring source {k} are not a run after the source's earlier ones"
                    ))
                }
            }
        }
        let decomp = if comm.size() > 1 {
            Decomposition::shared(&setup, comm.as_ref(), Files::Read, &[])
        } else {
            Decomposition::for_ranks(&setup, 1, 0)
        }
        .map_err(|e| e.to_string())?;
        let mine;
        // One rank given rows out of order (a checkpoint written by several)
        // sorts them the same way.
        let sorted = snap.particles.windows(2).all(|w| w[0].id < w[1].id);
        let snap = if comm.size() > 1 || !sorted {
            mine = redistribute(snap, &decomp, &setup.domain, comm.as_ref());
            &mine
        } else {
            snap
        };
        let materials = setup.materials.len();
        let checked = if comm.size() > 1 {
            snap.check_order().and_then(|()| snap.check_rows())
        } else {
            snap.check()
        };
        let local = checked.and_then(|()| {
            match snap.particles.iter().find(|r| r.material as usize >= materials) {
                Some(r) => Err(format!(
                    "particle id {} has material index {}, but the config defines {materials} materials",
                    r.id, r.material
                )),
                None => Ok(()),
            }
        });
        agree(
            comm.as_ref(),
            local,
            "another rank found a particle or record it cannot restore",
        )?;
        // This rank's particles: those whose position at the last rebuild (when
        // ownership was last decided) lies in its subdomain.
        let mine: Vec<usize> = (0..snap.particles.len())
            .filter(|&i| decomp.owner(setup.domain.wrap(snap.x_ref[i])) == decomp.rank)
            .collect();
        let mut particles = Particles::default();
        particles.room_for(mine.len(), mine.len());
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
        let ghost_reach = halo_reach(&setup);
        halo.build(
            &mut particles,
            &setup.domain,
            &decomp,
            comm.as_ref(),
            ghost_reach,
        );
        let mut neighbors = NeighborList::build(&particles, reach, h);
        let x_ref = particles.x[..n].to_vec();
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
            let row = neighbors.rows().row(k);
            let (mut e, end) = (row.start, row.end);
            for r in first[i]..first[i + 1] {
                let partner = snap.pair_keys[r].1;
                while e < end && neighbors.rows().partner_id(e, &particles.id) < partner {
                    e += 1;
                }
                if e == end || neighbors.rows().partner_id(e, &particles.id) != partner {
                    problem = Some(format!(
                        "the contact-history record of particles {id} and {partner} has no pair in the rebuilt neighbour list"
                    ));
                    break 'rows;
                }
                // Marked active, so the force stage reads it.
                neighbors
                    .record_mut(e)
                    .copy_from_slice(&snap.pair_values[r * h..(r + 1) * h]);
            }
        }
        let placed = problem.map_or(Ok(()), Err);
        agree(
            comm.as_ref(),
            placed,
            "another rank found a contact-history record it cannot place",
        )?;
        let mut local = vec![usize::MAX; snap.particles.len()];
        for (k, &i) in source.iter().enumerate() {
            local[i] = k;
        }
        let mut wall_history = WallHistory::new(n, nw, h);
        for (r, &(id, w)) in snap.wall_keys.iter().enumerate() {
            let i = snap
                .particles
                .binary_search_by_key(&id, |p| p.id)
                .map_err(|_| format!("wall-history record of unknown particle {id}"))?;
            if local[i] == usize::MAX {
                continue; // another rank's particle
            }
            wall_history
                .record_mut(local[i], w as usize)
                .copy_from_slice(&snap.wall_values[r * h..(r + 1) * h]);
        }
        // Found where the last rebuild saw the particles (at x_ref) and
        // the walls, with the records the checkpoint holds.
        let mut near_walls = force::NearWalls::default();
        let rebuilt = setup.time_at(snap.rebuilt_at);
        place_walls(&mut setup.walls, &setup.moving_walls, rebuilt);
        let walls = (&setup.walls[..], &setup.moving_walls[..]);
        let at = setup.wall_listing().at(rebuilt);
        near_walls.find(&particles, walls, &wall_history, at);
        for (k, &i) in source.iter().enumerate() {
            particles.x[k] = snap.particles[i].x;
        }
        // The ghosts' packed images come with their update, the owned
        // particles' (moved back from x_ref) here.
        halo.update(&mut particles, comm.as_ref(), false);
        particles.refresh_packed_owned();
        let balancer = super::Balancer::new(setup.balance, comm.size());
        let mut sim = Simulation {
            setup,
            particles,
            neighbors,
            wall_history,
            step: snap.step,
            next_id: snap.next_id,
            deleted: super::Deleted {
                count: snap.deleted,
                mass: snap.deleted_mass,
            },
            timers: Timers::default(),
            decomp,
            halo,
            x_ref,
            flow: glam::DMat3::from_cols_array(&snap.flow),
            rebuilt_at: snap.rebuilt_at,
            residual_centre: None,
            pair_results: force::PairResults::default(),
            wall_loads: force::WallLoads::default(),
            near_walls,
            keep_loads: true,
            defer_kick: false,
            kick_pending: false,
            balancer,
            comm,
        };
        sim.place_walls();
        Ok(sim)
    }
}

/// Every rank goes on only if every rank's `local` is `Ok` (a refusal on one
/// rank stops them all; the others say `elsewhere`). Collective.
fn agree(
    comm: &dyn Comm,
    local: std::result::Result<(), String>,
    elsewhere: &str,
) -> std::result::Result<(), String> {
    let mut refused = [u64::from(local.is_err())];
    comm.max_u64s(&mut refused);
    local?;
    if refused[0] != 0 {
        return Err(elsewhere.to_string());
    }
    Ok(())
}

/// Send each row of `part` and its records to the rank that owns the
/// particle (by its position at the last rebuild, `x_ref`), and merge what
/// arrives: this rank's particles, sorted by id. Collective.
fn redistribute(
    part: &Snapshot,
    decomp: &Decomposition,
    domain: &Domain,
    comm: &dyn Comm,
) -> Snapshot {
    let me = comm.rank();
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); comm.size()];
    for (i, &x) in part.x_ref.iter().enumerate() {
        rows[decomp.owner(domain.wrap(x))].push(i);
    }
    let ranges = part.record_ranges();
    let peers: Vec<usize> = (0..comm.size()).filter(|&r| r != me).collect();
    let sends: Vec<Vec<u8>> = (peers.iter())
        .map(|&r| part.pack_rows(&rows[r], &ranges))
        .collect();
    let mut parts = comm.exchange(&peers, &sends);
    drop(sends);
    parts.push(part.pack_rows(&rows[me], &ranges));
    let mut mine = part.without_rows();
    mine.merge_particles(&parts);
    mine
}

/// A rank's rows read from the running simulation: its owned particles in
/// id order, each followed by its pair records (in partner-id order) and
/// its wall records (by wall), those with a non-zero bit.
pub struct LiveRows<'a> {
    sim: &'a Simulation,
    /// Local indices of the owned particles, sorted by id.
    order: Vec<usize>,
    /// Each row's pair and wall records (found once: the writer asks for
    /// them twice and the totals once).
    records: Vec<(u32, u32)>,
    counts: [usize; 3],
}

impl<'a> LiveRows<'a> {
    fn new(sim: &'a Simulation) -> Self {
        let p = &sim.particles;
        let mut order: Vec<usize> = (0..p.n_owned).collect();
        order.sort_unstable_by_key(|&k| p.id[k]);
        let mut rows = LiveRows {
            sim,
            order,
            records: Vec::new(),
            counts: [0; 3],
        };
        let records: Vec<(u32, u32)> = (rows.order.iter())
            .map(|&k| {
                let (mut pairs, mut walls) = (0, 0);
                rows.pairs_of(k, &mut |_, _| pairs += 1);
                rows.walls_of(k, &mut |_, _| walls += 1);
                (pairs, walls)
            })
            .collect();
        let pairs = records.iter().map(|r| r.0 as usize).sum();
        let walls = records.iter().map(|r| r.1 as usize).sum();
        rows.counts = [rows.order.len(), pairs, walls];
        rows.records = records;
        rows
    }

    /// The pair records of owned particle `k` with a non-zero bit:
    /// `f(partner id, values)`.
    fn pairs_of(&self, k: usize, f: &mut dyn FnMut(u64, &[f64])) {
        let nl = &self.sim.neighbors;
        for e in nl.rows().row(k) {
            let rec = nl.record(e);
            if nonzero(rec) {
                f(nl.rows().partner_id(e, &self.sim.particles.id), rec);
            }
        }
    }

    /// The wall records of owned particle `k` with a non-zero bit:
    /// `f(wall, values)`.
    fn walls_of(&self, k: usize, f: &mut dyn FnMut(u32, &[f64])) {
        let wh = &self.sim.wall_history;
        for w in 0..wh.walls() {
            let rec = wh.record(k, w);
            if nonzero(rec) {
                f(w as u32, rec);
            }
        }
    }
}

/// Whether a history record holds anything (a record of zero bits is the
/// state of a contact that never was).
fn nonzero(rec: &[f64]) -> bool {
    rec.iter().any(|v| v.to_bits() != 0)
}

impl StateRows for LiveRows<'_> {
    fn counts(&self) -> [usize; 3] {
        self.counts
    }

    fn for_each_particle(&self, f: &mut dyn FnMut(&RowView)) {
        let p = &self.sim.particles;
        for &k in &self.order {
            f(&RowView {
                particle: p.record(k),
                x_ref: self.sim.x_ref[k],
                force: p.force[k],
                torque: p.torque[k],
            });
        }
    }

    fn for_each_record_count(&self, f: &mut dyn FnMut(usize, usize)) {
        for &(pairs, walls) in &self.records {
            f(pairs as usize, walls as usize);
        }
    }

    fn for_each_pair(&self, f: &mut dyn FnMut(u64, u64, &[f64])) {
        let id = &self.sim.particles.id;
        for &k in &self.order {
            self.pairs_of(k, &mut |partner, v| f(id[k], partner, v));
        }
    }

    fn for_each_wall(&self, f: &mut dyn FnMut(u64, u32, &[f64])) {
        let id = &self.sim.particles.id;
        for &k in &self.order {
            self.walls_of(k, &mut |w, v| f(id[k], w, v));
        }
    }
}
