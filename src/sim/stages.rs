//! The stages of a step, in order: integrate (first half, then the
//! deletion of particles in outlets or lost through open faces), insert,
//! neighbour (rebuild or halo update), force, integrate (second half).

use super::timers::{Lap, Stage};
use super::{Carried, Simulation};
use crate::diagnostics;
use crate::error::{GravelError, Result};
use crate::force::{self, ForceParams};
use crate::geometry::domain::Domain;
use crate::geometry::outlet::Lost;
use crate::insert::pour::{Outcome, PourBatch, ShortCell};
use crate::insert::Placer;
use crate::integrate;
use crate::neighbor;
use crate::neighbor::carry::{HistoryRows, PairRecords};
use crate::neighbor::trigger::{self, Foreseen, RebuildRule, ResidualScan};
use crate::parallel::grid::{halo_reach, halo_width};
use crate::parallel::migrate::migrate;
use crate::rng::{PairNoise, Stream};
use crate::state::pack::{Pack, Unpack};
use glam::{DMat3, DVec3};
use std::time::Instant;

/// How far the owned particles of all ranks moved since the last rebuild,
/// as the first half step found ([`crate::integrate::DriftScan`]).
struct Moved {
    /// The largest squared displacement.
    max_disp2: f64,
    /// The box of the displacements.
    displacements: (DVec3, DVec3),
    /// The fitted flow's residuals, where one is fitted: what the first
    /// half step measured of them, and their box and largest squared
    /// distance from the scan's centre over all ranks.
    residuals: Option<(ResidualScan, (DVec3, DVec3), f64)>,
    /// Whether the periodic images made on this rank were copied on the
    /// way ([`integrate::DriftScan::images_copied`]).
    images_copied: bool,
}

impl Simulation {
    /// Advance one time step: the stages [`Stage::Integrate`] (first half
    /// kick and drift, and the deletions they call for), [`Stage::Insert`],
    /// [`Stage::Neighbor`], [`Stage::Force`] and [`Stage::Integrate`]
    /// (second half kick, unless [`Self::defer_kick`] leaves it to the
    /// next step's first pass), each timed. Collective.
    pub fn step(&mut self) -> Result<()> {
        let mut clock = Lap::start();
        let (moved, mut carried) = self.first_half()?;
        self.step += 1;
        self.place_walls();
        self.timers.add(Stage::Integrate, clock.lap());
        let inserted = self.insert_due(&mut carried)?;
        self.timers.add(Stage::Insert, clock.lap());
        let rebuild = carried.is_some() || inserted || self.rebuild_due(&moved);
        self.refresh_neighbors(rebuild, carried, moved.images_copied)?;
        // The overlap bound at every rebuild (every step or two for
        // particles fast enough to collide that hard); reads only.
        if rebuild {
            if let Some(e) = self.overlap_error_at_rebuild() {
                return Err(e);
            }
        }
        self.timers.add(Stage::Neighbor, clock.lap());
        self.compute_forces();
        self.timers.add(Stage::Force, clock.lap());
        if self.defer_kick {
            self.kick_pending = true;
        } else {
            integrate::kick(&mut self.particles, self.setup.dt);
        }
        self.timers.add(Stage::Integrate, clock.lap());
        Ok(())
    }

    /// The first half step: half kick (after the last step's second, if it
    /// was deferred) and drift of every owned particle,
    /// the particles to delete ([`Self::doomed`]), then one reduction that
    /// finds the lowest bad id anywhere (non-finite, too fast for the step,
    /// or out of the box through an open side under `lost = "error"`), the
    /// largest squared displacement since the last rebuild and the box of
    /// the displacements (and where a flow is fitted, the box of its
    /// residuals and their spread about the last step's centre:
    /// [`ResidualScan`]), and whether any rank deletes. Returns the
    /// displacements of all ranks and, when particles were deleted
    /// anywhere, the history of the particles that stay, lifted for the
    /// rebuild that must follow ([`Self::delete`]).
    fn first_half(&mut self) -> Result<(Moved, Option<Carried>)> {
        // Under lost = "delete" a particle out through an open face is
        // deleted, not bad: the drift's bounds then test only that the
        // positions are finite, as along periodic axes.
        let bounds = match self.setup.lost {
            Lost::Error => self.setup.domain,
            Lost::Delete => Domain {
                periodic: [true; 3],
                ..self.setup.domain
            },
        };
        let deferred = std::mem::take(&mut self.kick_pending);
        let (p, dt) = (&mut self.particles, self.setup.dt);
        let schedule = (self.pair_results.runs(), self.halo.local_sources());
        // The flow foreseen at the end of this step, `k G`.
        let residuals = (self.flow != DMat3::ZERO).then(|| ResidualScan {
            flow: Foreseen::of((self.step + 1 - self.rebuilt_at) as f64 * self.flow),
            centre: self.residual_centre,
        });
        let scan =
            integrate::kick_drift(p, dt, &self.x_ref, &bounds, deferred, schedule, residuals);
        let doomed = self.doomed();
        // Communication from here: the ghost states the peers on this node
        // copy, staged now so that the reduction below is the meeting their
        // halo update reads after (dropped if the step rebuilds instead),
        // then one reduction that decides them all: the lowest bad id (as
        // MAX − id, so the maximum wins; 0 = none), the largest displacement
        // and the residuals' largest distance (their bits), whether any rank
        // deletes, and the boxes of the displacements and of the residuals
        // (as words whose maximum is the box of all).
        let tc = Instant::now();
        self.halo.stage(&self.particles);
        let mut global = [0; 16];
        global[..4].copy_from_slice(&[
            scan.bad.map_or(0, |b| u64::MAX - b.1),
            scan.max_disp2.max(0.0).to_bits(),
            u64::from(!doomed.is_empty()),
            scan.residual_spread2.max(0.0).to_bits(),
        ]);
        global[4..10].copy_from_slice(&trigger::box_words(scan.displacements));
        global[10..].copy_from_slice(&trigger::box_words(scan.residuals));
        self.comm.max_u64s(&mut global);
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
        let carried = (global[2] != 0).then(|| self.delete(&doomed));
        let boxed = |w: &[u64]| trigger::box_of_words(w.try_into().expect("six words"));
        let moved = Moved {
            max_disp2: f64::from_bits(global[1]),
            displacements: boxed(&global[4..10]),
            residuals: residuals.map(|r| (r, boxed(&global[10..]), f64::from_bits(global[3]))),
            images_copied: scan.images_copied,
        };
        Ok((moved, carried))
    }

    /// Whether the displacements since the last rebuild call for one
    /// ([`RebuildRule`]): `moved` holds the largest and the box of all
    /// ranks' displacements. Collective.
    fn rebuild_due(&mut self, moved: &Moved) -> bool {
        let s = &self.setup;
        let moving_meshes = (self.near_walls).moving_meshes_drift(&s.moving_walls, self.time());
        let rule = RebuildRule::new(s.skin, halo_width(s), self.fixed_in_space())
            .with_moving_meshes(moving_meshes);
        // The displacement the fitted flow foresees per unit of reference
        // position, k G (zero where none is fitted), as the first half step
        // measured its residuals.
        let foreseen = moved
            .residuals
            .map_or(DMat3::ZERO, |(scan, ..)| scan.flow.matrix());
        let kg = frobenius(foreseen);
        let mut next_centre = None;
        let tc = Instant::now();
        let (x, x_ref) = (&self.particles.x[..self.particles.n_owned], &self.x_ref[..]);
        let comm = self.comm.as_ref();
        let max_words = |w: &mut [u64]| comm.max_u64s(w);
        let due = rule.due(
            moved.max_disp2,
            kg,
            |half2| {
                let (o, mut m) = (DMat3::ZERO, max_words);
                trigger::spread_bound2(moved.displacements, x, x_ref, o, half2, &mut m)
            },
            |half2| {
                // Asked for only where kg > 0: where a flow is fitted.
                let (scan, boxed, about2) = moved.residuals.expect("a fitted flow");
                // The next step measures the residuals' distance from this
                // box's middle where this box does not decide.
                if trigger::half_diagonal2(boxed) > half2 {
                    next_centre = Some(trigger::box_centre(boxed));
                }
                let about = scan.centre.map(|c| (about2, c));
                let mut m = max_words;
                trigger::residual_bound2(boxed, about, x, x_ref, foreseen, half2, &mut m)
            },
        );
        self.residual_centre = next_centre;
        self.timers.comm += tc.elapsed();
        due
    }

    /// Whether the run has something fixed in space that a particle's own
    /// displacement must not carry it past unseen: a wall that never
    /// moves, or a pour ([`trigger`]).
    fn fixed_in_space(&self) -> bool {
        let s = &self.setup;
        !s.pours.is_empty()
            || (0..s.walls.len()).any(|w| !s.moving_walls.iter().any(|m| m.index == w))
    }

    /// The neighbour stage: a rebuild when `rebuild` (a global decision:
    /// particles were deleted or inserted, or moved as far as the skin
    /// allows, [`RebuildRule`]), else a halo update. `carried` is the history lifted
    /// at a deletion or insertion; `images_copied`, whether the first half
    /// step copied the periodic images made on this rank (the halo update
    /// then leaves them).
    fn refresh_neighbors(
        &mut self,
        rebuild: bool,
        carried: Option<Carried>,
        images_copied: bool,
    ) -> Result<()> {
        if rebuild {
            return self.rebuild_with(carried, None);
        }
        let tc = Instant::now();
        self.halo
            .update(&mut self.particles, self.comm.as_ref(), images_copied);
        self.timers.comm += tc.elapsed();
        Ok(())
    }

    /// The error of owned particle `k`, found bad on `step`: what it did
    /// (non-finite state, moved more than [`integrate::MAX_STEP_FRACTION`]
    /// of its radius in one step, or left the box through an open side),
    /// where.
    fn particle_error(&self, k: usize, step: u64) -> GravelError {
        let p = &self.particles;
        let (x, v) = (p.x[k], p.v[k]);
        // The test of `integrate::kick_drift`, on the same values.
        let (dx, fraction) = (self.setup.dt * v, integrate::MAX_STEP_FRACTION);
        let too_far =
            !p.frozen[k] && !integrate::within_step_bound(dx.length_squared(), p.radius[k]);
        // The first non-finite quantity in the order the step makes them
        // from each other: the force, then the kick's velocity and angular
        // velocity, then the drift's position.
        let non_finite = [
            ("force", p.force[k]),
            ("velocity", p.v[k]),
            ("angular velocity", p.omega[k]),
            ("position", x),
        ]
        .into_iter()
        .find(|(_, q)| !q.is_finite());
        let cause = if let Some((what, q)) = non_finite {
            format!("its {what} became non-finite ({:?}, NaN or infinity): the time step may be too large for the contact stiffness, or the overlap too deep", q.to_array())
        } else if too_far {
            format!(
                "it moved {:e} m in one step, more than {fraction} of its radius {:e} m: run.dt = {:e} s is too large for its speed (at most {:e} m/s), or a contact or wall force threw it",
                dx.length(),
                p.radius[k],
                self.setup.dt,
                fraction * p.radius[k] / self.setup.dt
            )
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

    /// The error of a contact deeper than [`diagnostics::MAX_OVERLAP`] of its
    /// effective radius, named by the lowest id in one anywhere (one
    /// reduction), or `None` if there is none. Collective: called on every
    /// rank after each neighbour-list rebuild, and when the thermo row's
    /// `max_overlap` (the same on every rank) exceeds the bound.
    pub fn overlap_error(&self) -> Option<GravelError> {
        self.overlap_error_among(|_| true)
    }

    /// [`Self::overlap_error`] right after a rebuild, at the positions the
    /// list was built for: the pairs are walked only where the search saw
    /// one that may be that deep ([`crate::neighbor::NeighborList::may_overlap_deeply`]),
    /// the walls only for the particles the force stage tests against
    /// them ([`crate::force::NearWalls::any_for`]); no other contact can
    /// be that deep. Collective.
    fn overlap_error_at_rebuild(&self) -> Option<GravelError> {
        let pairs = self.neighbors.may_overlap_deeply();
        self.overlap_error_among(|k| pairs || self.near_walls.any_for(k))
    }

    /// [`Self::overlap_error`] over the contacts of the owned particles
    /// that `pick` names (the others must have none that deep). Collective.
    fn overlap_error_among(&self, pick: impl Fn(usize) -> bool + Sync) -> Option<GravelError> {
        let deep = diagnostics::deep_contact_among(
            &self.particles,
            &self.neighbors,
            &self.setup.laws,
            (&self.setup.walls, &self.near_walls),
            pick,
        );
        let mut global = [deep.as_ref().map_or(0, |d| u64::MAX - d.id)];
        self.comm.max_u64s(&mut global);
        if global[0] == 0 {
            return None;
        }
        let bad = u64::MAX - global[0];
        let step = self.step;
        Some(match deep {
            Some(d) if d.id == bad => {
                let p = &self.particles;
                let rank = if self.comm.size() > 1 {
                    format!(" (rank {})", self.comm.rank())
                } else {
                    String::new()
                };
                GravelError::Run(format!(
                    "particle id {}{rank} at position {:?} with velocity {:?} on step {step}: it overlaps {} by {:e} m, {:.3} times the effective radius R*, more than the {} R* a contact may reach: the contact is too soft for this impact, or the time step too large to resolve it",
                    d.id,
                    p.x[d.k].to_array(),
                    p.v[d.k].to_array(),
                    d.partner,
                    d.overlap,
                    d.ratio,
                    diagnostics::MAX_OVERLAP
                ))
            }
            _ => GravelError::Elsewhere(format!(
                "particle id {bad} on another rank overlaps a contact too deeply on step {step}"
            )),
        })
    }

    /// The force stage: contact, wall and body forces on every owned
    /// particle at the current positions.
    pub(super) fn compute_forces(&mut self) {
        let fp = ForceParams {
            laws: &self.setup.laws,
            walls: &self.setup.walls,
            near_walls: &self.near_walls,
            gravity: self.setup.gravity,
            dt: self.setup.dt,
            range_pad: self.setup.range_pad,
            step: self.step,
            noise: PairNoise::new(self.setup.seed, Stream::StochasticFriction),
        };
        if !self.keep_loads {
            // Nothing reads them this step: their storage (48 B a wall and
            // owned particle) is not held between the steps that do.
            self.wall_loads.release();
        }
        let loads = self.keep_loads.then_some(&mut self.wall_loads);
        force::compute(
            &mut self.particles,
            &mut self.neighbors,
            &mut self.wall_history,
            &mut self.pair_results,
            &fp,
            loads,
        );
    }

    /// Insert the particles the pouring sources owe at the current time
    /// ([`crate::insert::pour`]): each rank places the cells of a batch
    /// near its subdomain, against the particles present near them (sent
    /// by the ranks that own them), and keeps the spheres it owns; the
    /// ranks then share which cells ended early. Returns whether any
    /// particle was inserted anywhere. The pair history is lifted into
    /// `carried` (unless it holds it already) before the first particle
    /// goes in: the list names its partners by local index, and the new
    /// particles take the ghosts' places. Collective when a source is due.
    pub(super) fn insert_due(&mut self, carried: &mut Option<Carried>) -> Result<bool> {
        let mut any = false;
        for s in 0..self.setup.pours.len() {
            let (seed, step, time) = (self.setup.seed, self.step, self.time());
            let Some(batch) =
                self.setup.pours[s].batch(seed, step, time, &self.setup.walls, &self.setup.domain)
            else {
                continue;
            };
            let (lo, hi) = self.decomp.bounds();
            let mut placer = self.pour_neighbourhood(&batch);
            let placed = batch.place_near(lo, hi, &mut placer);
            drop(placer);
            let tc = Instant::now();
            let outcome = if self.comm.size() > 1 {
                let mut mine = Vec::new();
                placed
                    .short
                    .iter()
                    .flat_map(|c| c.to_array())
                    .for_each(|v| mine.put_u64(v));
                let mut short = Vec::new();
                for b in self.comm.all_gather(&mine) {
                    let mut u = Unpack::new(&b);
                    while !u.is_empty() {
                        short.push(ShortCell::from_array([u.u64(), u.u64(), u.u64()]));
                    }
                }
                Outcome::new(short)
            } else {
                Outcome::new(placed.short)
            };
            self.timers.comm += tc.elapsed();
            let (decomp, domain) = (&self.decomp, &self.setup.domain);
            let mine = self.setup.pours[s].take(
                &batch,
                &outcome,
                &placed.spheres,
                |x| decomp.owner(domain.wrap(x)) == decomp.rank,
                &mut self.next_id,
            );
            let poured = outcome.placed(batch.len());
            if poured > 0 {
                any = true;
                if carried.is_none() {
                    *carried = Some(self.lift_history());
                }
                self.particles.truncate_ghosts();
                for (_, r) in &mine {
                    self.particles.push_owned(r);
                    self.wall_history.push_zeroed();
                }
            }
        }
        Ok(any)
    }

    /// The particles present that a sphere of `batch`'s cells near this
    /// rank's subdomain could touch: this rank's own, and those the other
    /// ranks send it (each rank sends every rank the particles of its own
    /// in the box that rank needs; ranks exchange when one's box meets
    /// the other's subdomain widened by the skin, which owned particles
    /// never leave by more between rebuilds). Collective.
    fn pour_neighbourhood(&mut self, batch: &PourBatch) -> Placer {
        let domain = self.setup.domain;
        let reach = 2.0 * self.setup.max_radius;
        let (me, size) = (self.decomp.rank, self.comm.size());
        let need = |r: usize| {
            let (lo, hi) = self.decomp.bounds_of(r);
            batch.reach_of(lo, hi, reach)
        };
        let margin = DVec3::splat(self.setup.skin);
        let around = |r: usize| {
            let (lo, hi) = self.decomp.bounds_of(r);
            (lo - margin, hi + margin)
        };
        let my_need = need(me);
        let peers: Vec<usize> = (0..size)
            .filter(|&r| r != me)
            .filter(|&r| {
                domain.boxes_meet(need(r), around(me)) || domain.boxes_meet(my_need, around(r))
            })
            .collect();
        let needs: Vec<(DVec3, DVec3)> = peers.iter().map(|&r| need(r)).collect();
        let mut placer = Placer::new(self.setup.max_radius).periodic_in(&domain);
        let mut sends = vec![Vec::new(); peers.len()];
        let p = &self.particles;
        for k in 0..p.n_owned {
            let x = p.x[k];
            if domain.in_box_periodic(x, my_need.0, my_need.1) {
                placer.add(x, p.radius[k]);
            }
            for (t, &(lo, hi)) in needs.iter().enumerate() {
                if domain.in_box_periodic(x, lo, hi) {
                    sends[t].put_vec3(x);
                    sends[t].put_f64(p.radius[k]);
                }
            }
        }
        if size > 1 {
            let tc = Instant::now();
            for b in self.comm.exchange(&peers, &sends) {
                let mut u = Unpack::new(&b);
                while !u.is_empty() {
                    let x = u.vec3();
                    placer.add(x, u.f64());
                }
            }
            self.timers.comm += tc.elapsed();
        }
        placer
    }

    /// The pair history lifted out of the neighbour list, in the form the
    /// rebuild carries it: by pair on a single rank, else in per-particle
    /// rows (particles inserted since the list was built get empty rows).
    pub(super) fn lift_history(&mut self) -> Carried {
        match self.halo.image_sources() {
            Some(sources) if self.comm.size() == 1 => {
                // Held in the share slots' storage, which the rebuild
                // zeroes anyway: the dense pack's records are as large as
                // its slots, and a copy of their own set its peak.
                let room = self.neighbors.lend_share_room();
                Carried::Pairs(PairRecords::from_list_in(&self.neighbors, sources, room))
            }
            _ => Carried::Rows(HistoryRows::from_list(
                &self.neighbors,
                &self.particles.id,
                self.particles.n_owned,
            )),
        }
    }

    /// Fit the bed's flow to the displacements since the last rebuild,
    /// before the positions are wrapped ([`neighbor::flow`]), for the
    /// rebuild rule to foresee until the next. Collective.
    ///
    /// A second rebuild on the same step (the one a rebalance makes to
    /// move the particles to their new owners) has no displacement to fit:
    /// the flow fitted at the first stands. A fit over no steps would drop
    /// it (to zero), the rule would then call the next rebuilds on other
    /// steps than a run without that rebalance (one rank, or other cuts),
    /// and the positions would be wrapped on other steps: other bits.
    fn fit_flow(&mut self) {
        if self.step == self.rebuilt_at {
            return;
        }
        let s = &self.setup;
        let steps = self.step - self.rebuilt_at;
        let x = &self.particles.x[..self.particles.n_owned];
        let x_ref = &self.x_ref[..self.x_ref.len().min(x.len())];
        self.flow =
            neighbor::flow::fit_gradient(x, x_ref, &s.domain, s.skin, steps, self.comm.as_ref());
        self.rebuilt_at = self.step;
        self.residual_centre = None;
    }

    /// Wrap, migrate, sort spatially, rebuild ghosts and the neighbour list
    /// (carrying history), then balance the load if due
    /// ([`Self::balance_if_due`]). The history is `carried` if it was
    /// lifted already (at a deletion or an insertion), else lifted now;
    /// particles migrate to `peers` if given (the ranks a move of the cuts
    /// exchanges with), else to the adjacent subdomains. Collective.
    pub(super) fn rebuild_with(
        &mut self,
        carried: Option<Carried>,
        peers: Option<Vec<usize>>,
    ) -> Result<()> {
        self.timers.rebuilds += 1;
        self.fit_flow();
        let mut carried = carried.unwrap_or_else(|| self.lift_history());
        if let Carried::Rows(rows) = &mut carried {
            // Particles inserted since the history was lifted have none.
            while rows.rows() < self.particles.n_owned {
                rows.push_row(std::iter::empty());
            }
        }
        let p = &mut self.particles;
        p.truncate_ghosts();
        for k in 0..p.n_owned {
            p.x[k] = self.setup.domain.wrap(p.x[k]);
        }
        if self.comm.size() > 1 {
            if let Carried::Rows(rows) = carried {
                let tc = Instant::now();
                let peers = peers.unwrap_or_else(|| self.decomp.peers());
                carried = Carried::Rows(migrate(
                    &mut self.particles,
                    &mut self.wall_history,
                    rows,
                    &self.decomp,
                    &peers,
                    self.comm.as_ref(),
                    self.step,
                )?);
                self.timers.comm += tc.elapsed();
            }
        }
        let s = &self.setup;
        let p = &mut self.particles;
        let width = halo_width(s);
        let perm = neighbor::spatial_order(p, width);
        p.permute_owned(&perm);
        self.wall_history.reorder(&perm);
        let tc = Instant::now();
        self.halo.build(
            p,
            &s.domain,
            &self.decomp,
            self.comm.as_ref(),
            halo_reach(s),
        );
        self.timers.comm += tc.elapsed();
        self.neighbors
            .rebuild(p, s.range_pad + s.skin, s.laws.history_len);
        match carried {
            Carried::Rows(rows) => rows.fill_list_in_order(&mut self.neighbors, &p.id, |k| perm[k]),
            Carried::Pairs(pairs) => {
                pairs.fill_list(&mut self.neighbors, &perm, &p.id);
                self.neighbors.return_share_room(pairs.into_room());
            }
        }
        // The owned particles were wrapped and sorted, the ghosts are new.
        p.refresh_packed();
        // Refilled in place: a fresh copy would leave its old one's hole.
        self.x_ref.clear();
        self.x_ref.extend_from_slice(&p.x[..p.n_owned]);
        self.find_near_walls();
        self.balance_if_due()
    }
}

/// The Frobenius norm of `m`, a bound of its 2-norm.
fn frobenius(m: DMat3) -> f64 {
    m.to_cols_array().iter().map(|v| v * v).sum::<f64>().sqrt()
}
