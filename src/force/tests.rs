//! Tests of the whole force stage: the specialised kernels against the
//! general path, the id-ordered sums, the filter packing, and opened contacts.

use super::*;
use crate::contact::normal::{Hertz, Hooke, HookeDamping};
use crate::contact::rolling::{Epsd, TypeC};
use crate::contact::spinning::Edem;
use crate::contact::tangential::{SpringSlider, TangentialStiffness};
use crate::contact::ContactLaw;
use crate::contact::Kinematics;
use crate::contact::{NormalModel, TangentialModel};
use crate::geometry::motion::MovingWall;
use crate::geometry::walls::WallShape;
use crate::rng::Stream;
use crate::state::particles::ParticleRecord;
use pairs::body_of;

/// A small deterministic generator for test inputs.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn vec(&mut self, scale: f64) -> DVec3 {
        DVec3::new(self.unit() - 0.5, self.unit() - 0.5, self.unit() - 0.5) * scale
    }
}

/// 216 overlapping polydisperse spheres on a jittered lattice, with
/// scrambled ids, random velocities and spins, and every seventh frozen.
fn cluster() -> Particles {
    cluster_of_side(6)
}

/// [`cluster`] with `side³` spheres (`side³` prime to 97).
fn cluster_of_side(side: u64) -> Particles {
    let n = side * side * side;
    let mut rng = Lcg(7);
    let mut p = Particles::default();
    let mut k = 0u64;
    for a in 0..side {
        for b in 0..side {
            for c in 0..side {
                let radius = 0.5 * (0.9 + 0.2 * rng.unit());
                let x = DVec3::new(a as f64, b as f64, c as f64) * 0.97 + rng.vec(0.05);
                p.push_owned(&ParticleRecord {
                    id: (k * 97) % n,
                    x,
                    v: rng.vec(2.0),
                    omega: rng.vec(4.0),
                    radius,
                    mass: ParticleRecord::sphere_mass(radius, 1.0),
                    material: 0,
                    frozen: k % 7 == 3,
                });
                k += 1;
            }
        }
    }
    p.refresh_packed();
    p
}

fn hooke_spring(restitution: bool) -> ContactLaw {
    ContactLaw {
        normal: NormalModel::Hooke(Hooke {
            stiffness: 2e5,
            damping: if restitution {
                HookeDamping::Restitution { beta: 0.2 }
            } else {
                HookeDamping::Rate { rate: 50.0 }
            },
            no_tension: false,
        }),
        tangential: TangentialModel::SpringSlider(SpringSlider {
            friction: 0.5,
            stiffness: TangentialStiffness::Linear { ratio: 2.0 / 7.0 },
            damping_ratio: 0.3,
        }),
        stochastic: None,
        rolling: None,
        spinning: None,
    }
}

/// `law` for every pair, as a table of one material, or of two (which
/// makes the force stage look the law up per pair).
fn table(law: ContactLaw, materials: usize) -> LawTable {
    LawTable {
        n: materials,
        laws: vec![law; materials * materials],
        history_len: law.history_len(),
    }
}

/// Gravity in the tests.
const G: DVec3 = DVec3::new(0.0, 0.0, -9.81);

/// Force-stage parameters for `laws`, no walls, gravity [`G`].
fn params(laws: &LawTable) -> ForceParams<'_> {
    ForceParams {
        laws,
        walls: &[],
        near_walls: &super::near_walls::TEST_EVERY_PARTICLE,
        gravity: G,
        dt: 1e-4,
        range_pad: 0.0,
        step: 0,
        noise: PairNoise::new(1, Stream::StochasticFriction),
    }
}

/// The wall history of a run without walls.
fn no_walls() -> WallHistory {
    WallHistory::default()
}

/// One force stage of `laws` without walls (gravity [`G`]).
fn stage_without_walls(
    p: &mut Particles,
    nl: &mut NeighborList,
    results: &mut PairResults,
    laws: &LawTable,
) {
    compute(p, nl, &mut no_walls(), results, &params(laws), None);
}

thread_local! {
    /// The number of runs a force stage on this thread cuts its blocks
    /// into, instead of one per thread ([`super::run_count`]).
    pub(super) static FORCED_RUNS: std::cell::Cell<Option<usize>> =
        const { std::cell::Cell::new(None) };
}

/// `f` on a pool of `threads` threads.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Run `steps` force evaluations (positions moved a little between
/// them, so that the history rotates); return forces, torques and history.
fn run(laws: &LawTable, steps: usize) -> (Vec<DVec3>, Vec<DVec3>, Vec<f64>) {
    let (p, nl) = stages(cluster(), laws, steps, 1e-4);
    (p.force, p.torque, nl.history().job_values())
}

/// `steps` force stages of `laws` on `p`, each followed by a move of the
/// particles by `v dt`; the particles and the list after them.
fn stages(mut p: Particles, laws: &LawTable, steps: usize, dt: f64) -> (Particles, NeighborList) {
    let mut nl = NeighborList::build(&p, 0.1, laws.history_len);
    let mut results = PairResults::default();
    let fp = params(laws);
    for _ in 0..steps {
        compute(&mut p, &mut nl, &mut no_walls(), &mut results, &fp, None);
        assert_slots_clear_apart(&p, &nl);
        for k in 0..p.n_owned {
            if !p.frozen[k] {
                let v = p.v[k];
                p.x[k] += dt * v;
            }
        }
        p.refresh_packed();
    }
    (p, nl)
}

fn bits(v: &[DVec3]) -> Vec<[u64; 3]> {
    v.iter().map(|x| x.to_array().map(f64::to_bits)).collect()
}

/// The dense pack's law (Hertz, Mindlin spring-slider, EPSD rolling with
/// torsion, EDEM spinning) with `hertz`'s tangential stiffness linear
/// instead where `mindlin` is false, and without couples where `couples`
/// is false (the pour's law).
fn hertz_spring(mindlin: bool, couples: bool) -> ContactLaw {
    let stiffness = if mindlin {
        TangentialStiffness::Mindlin { g_star: 1.2e6 }
    } else {
        TangentialStiffness::Linear { ratio: 2.0 / 7.0 }
    };
    ContactLaw {
        normal: NormalModel::from(Hertz {
            e_star: 3.0e6,
            beta: 0.3,
            no_tension: false,
        }),
        tangential: TangentialModel::SpringSlider(SpringSlider {
            friction: 0.5,
            stiffness,
            damping_ratio: 0.0,
        }),
        stochastic: None,
        rolling: couples.then(|| {
            Epsd {
                torsion_torque: true,
                ..Epsd::new(0.1, 0.3)
            }
            .into()
        }),
        spinning: couples.then_some(Edem { friction: 0.5 }.into()),
    }
}

/// `f` on a pool of `threads` threads, on the one-contact path
/// ([`pairs::jobs_block`]) whatever the law table if `one_contact`: pass
/// one reads the flag of the thread it runs on, so that path takes one
/// thread.
fn on_path<R: Send>(one_contact: bool, threads: usize, f: impl FnOnce() -> R + Send) -> R {
    assert!(
        !one_contact || threads == 1,
        "the one-contact path on one thread"
    );
    on_threads(threads, || {
        pairs::FORCE_ONE_CONTACT_PATH.with(|c| c.set(one_contact));
        let out = f();
        pairs::FORCE_ONE_CONTACT_PATH.with(|c| c.set(false));
        out
    })
}

/// Every lane evaluator of [`pairs::pass_one`] (eight lanes for every law:
/// the chute's, the pour's, the dense pack's and a law left to run time,
/// Type C rolling here), whose groups' last lanes are partly
/// filled, against the one-contact path: the same forces, torques and
/// history to the bit over a few steps; the same with the law in a table
/// of two materials that the particles (all of the first) do not mix.
#[test]
fn specialised_kernels_give_the_bits_of_the_general_path() {
    let type_c = ContactLaw {
        rolling: Some(
            TypeC {
                friction: 0.2,
                damping: 0.5,
                stiffness_factor: 1.5,
                rolling_radius: None,
            }
            .into(),
        ),
        ..hooke_spring(true)
    };
    let laws = [
        hooke_spring(false),
        hooke_spring(true),
        hertz_spring(false, false),
        hertz_spring(true, true),
        type_c,
    ];
    for law in laws {
        let (f1, t1, h1) = run(&table(law, 1), 5);
        let (f2, t2, h2) = on_path(true, 1, || run(&table(law, 1), 5));
        let (f3, t3, h3) = run(&table(law, 2), 5);
        for (f, t, h) in [(&f2, &t2, &h2), (&f3, &t3, &h3)] {
            assert_eq!(bits(&f1), bits(f));
            assert_eq!(bits(&t1), bits(t));
            assert!(h1.iter().zip(h).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        assert!(h1.iter().any(|&v| v != 0.0), "the test must load springs");
    }
}

/// A table of three materials whose laws are `law(a, b)` for materials
/// `a ≤ b`, with the history length of the longest.
fn mixed_table(law: impl Fn(usize, usize) -> ContactLaw) -> LawTable {
    let n = 3;
    let laws: Vec<ContactLaw> = (0..n * n)
        .map(|k| law((k / n).min(k % n), (k / n).max(k % n)))
        .collect();
    let history_len = laws.iter().map(ContactLaw::history_len).max().unwrap_or(0);
    LawTable {
        n,
        laws,
        history_len,
    }
}

/// The one law of a stage is found among the materials the particles
/// have: a pair of materials whose law differs only counts where both
/// are present.
#[test]
fn one_law_is_found_where_every_pair_of_the_present_materials_takes_it() {
    let (plain, damped) = (hooke_spring(false), hooke_spring(true));
    // Material 2 against anything takes `damped`, the others `plain`.
    let laws = mixed_table(|a, b| if a == 2 || b == 2 { damped } else { plain });
    assert_eq!(one_law_among(&laws, &[0, 1, 1, 0]), Some(0));
    assert_eq!(one_law_among(&laws, &[1, 1]), Some(4));
    assert_eq!(one_law_among(&laws, &[2, 2, 2]), Some(8));
    assert_eq!(one_law_among(&laws, &[0, 2]), None);
    assert_eq!(one_law_among(&laws, &[1, 0, 2]), None);
    assert_eq!(one_law_among(&laws, &[]), None);
}

/// A table of several laws on particles of several materials goes through
/// the lane kernels a group per law ([`pairs::pass_one`]): the same bits
/// as the one-contact path, with laws of the same kinds (the specialised
/// kernel of the dense pack's law) and of different kinds (left to run
/// time: Hooke and Hertz, with and without couples), over several work
/// blocks, on one thread and on two.
#[test]
fn several_laws_give_the_bits_of_the_one_contact_path() {
    let friction = |a: usize, b: usize| 0.2 + 0.1 * (a + 2 * b) as f64;
    let same_kinds = mixed_table(|a, b| {
        let mut law = hertz_spring(true, true);
        if let TangentialModel::SpringSlider(s) = &mut law.tangential {
            s.friction = friction(a, b);
        }
        law
    });
    let other_kinds = mixed_table(|a, b| match (a, b) {
        (0, 0) => hooke_spring(false),
        (0, _) => hertz_spring(false, false),
        (1, 1) => hooke_spring(true),
        _ => hertz_spring(true, true),
    });
    // 1,000 spheres (two work blocks), of materials 0, 1, 2 in turn.
    let mixed = || {
        let mut p = cluster_of_side(10);
        for (k, m) in p.material.iter_mut().enumerate() {
            *m = (k % 3) as u32;
        }
        p
    };
    let state = |laws: &LawTable, one_contact: bool, threads: usize| {
        on_path(one_contact, threads, || {
            let (p, nl) = stages(mixed(), laws, 5, 1e-4);
            let history: Vec<u64> = nl
                .history()
                .job_values()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            (bits(&p.force), bits(&p.torque), history)
        })
    };
    for laws in [same_kinds, other_kinds] {
        let reference = state(&laws, true, 1);
        assert_eq!(state(&laws, false, 1), reference);
        assert_eq!(state(&laws, false, 2), reference);
        assert!(
            reference.2.iter().any(|&v| v != 0),
            "the test must load springs"
        );
    }
}

/// Every job whose pair is apart (centre distance at least `R_i + R_j`)
/// is inactive, with a zero record and a zero share slot: pass two sums
/// every slot, so a share left from a contact that opened would count.
fn assert_slots_clear_apart(p: &Particles, nl: &NeighborList) {
    let (jobs, history, shares) = (nl.jobs(), nl.history(), nl.shares());
    for k in 0..p.n_owned {
        for j in jobs.evaluated_by(k) {
            let q = jobs.partner(j);
            if (p.x[q] - p.x[k]).length() < p.radius[k] + p.radius[q] {
                continue;
            }
            assert!(!history.is_active(j), "job {j} of an open pair is active");
            assert!(history.record(j).iter().all(|&v| v == 0.0));
            let slot = jobs.share_slots()[j] as usize;
            assert_eq!(shares.get(slot), Contribution::default());
        }
    }
    assert!(shares.len() == jobs.slots());
}

/// The force and torque on each particle of `p` as `L + U` (+ gravity),
/// each the sum of its contacts with lower-id (`L`) or higher-id (`U`)
/// partners in id order, each contact evaluated directly in canonical
/// orientation with a zero history record; and the number of contacts.
fn direct_sums(p: &Particles, law: &ContactLaw, g: DVec3) -> (Vec<[DVec3; 2]>, usize) {
    let mut by_id: Vec<usize> = (0..p.n_owned).collect();
    by_id.sort_by_key(|&k| p.id[k]);
    let mut contacts = 0;
    let mut out = Vec::new();
    for k in 0..p.n_owned {
        let (mut lower, mut upper) = (Contribution::default(), Contribution::default());
        for &q in &by_id {
            if q == k || (p.frozen[k] && p.frozen[q]) {
                continue;
            }
            let k_lower = p.id[k] < p.id[q];
            let (i, j) = if k_lower { (k, q) } else { (q, k) };
            let d = p.x[j] - p.x[i];
            let r = d.length();
            if r >= p.radius[i] + p.radius[j] {
                continue;
            }
            contacts += 1;
            let (bi, bj) = (
                body_of(&p.view(), i, p.packed_image(i)),
                body_of(&p.view(), j, p.packed_image(j)),
            );
            let mut rec = vec![0.0; law.history_len()];
            let pf = law.evaluate_plain(&Kinematics::pair(&bi, &bj, d, r), 1e-4, &mut rec);
            if k_lower {
                upper += Contribution {
                    force: pf.force_i.into(),
                    torque: pf.torque_i.into(),
                };
            } else {
                lower += Contribution {
                    force: (-pf.force_i).into(),
                    torque: pf.torque_j.into(),
                };
            }
        }
        out.push(if p.frozen[k] {
            [DVec3::ZERO; 2]
        } else {
            [
                lower.force + upper.force + p.mass[k] * g,
                lower.torque + upper.torque,
            ]
        });
    }
    (out, contacts)
}

/// The force on each particle is `L + U` (+ gravity), each the sum of its
/// contacts with lower-id (`L`) or higher-id (`U`) partners in id order,
/// each contact evaluated directly in canonical orientation.
#[test]
fn forces_are_the_id_ordered_sums_of_the_lower_and_upper_contacts() {
    let law = hooke_spring(false);
    let (force, torque, _) = run(&table(law, 1), 1);
    let (direct, contacts) = direct_sums(&cluster(), &law, G);
    for k in 0..force.len() {
        assert_eq!(
            bits(&[force[k], torque[k]]),
            bits(&direct[k]),
            "particle {k}"
        );
    }
    assert!(contacts > 400, "{contacts} contacts");
}

/// Contacts that open between two steps (the cluster spread apart
/// within the same list) leave nothing behind: no share slot, no
/// record, no force. With laws with and without history, and with the
/// specialised and general kernels.
#[test]
fn opened_contacts_leave_no_share_or_record() {
    let plain_hooke = ContactLaw {
        tangential: TangentialModel::None,
        ..hooke_spring(false)
    };
    for (law, materials) in [
        (hooke_spring(false), 1),
        (hooke_spring(false), 2),
        (plain_hooke, 1),
    ] {
        let laws = table(law, materials);
        let mut p = cluster();
        let mut nl = NeighborList::build(&p, 0.1, laws.history_len);
        let mut results = PairResults::default();
        let fp = params(&laws);
        compute(&mut p, &mut nl, &mut no_walls(), &mut results, &fp, None);
        let touching = nl.history().active_jobs();
        assert!(touching > 200, "{touching} contacts");
        // Spread by 5 %: the shallowest contacts open, the deepest stay.
        for x in p.x.iter_mut() {
            *x *= 1.05;
        }
        p.refresh_packed();
        compute(&mut p, &mut nl, &mut no_walls(), &mut results, &fp, None);
        assert_slots_clear_apart(&p, &nl);
        let still = nl.history().active_jobs();
        assert!(
            still > 0 && still < touching / 2,
            "{still} of {touching} stay"
        );
        if law.history_len() == 0 {
            // No history: the forces are the direct sums of the contacts left.
            let (direct, contacts) = direct_sums(&p, &law, G);
            assert_eq!(contacts, 2 * still);
            for (k, direct) in direct.iter().enumerate() {
                assert_eq!(
                    bits(&[p.force[k], p.torque[k]]),
                    bits(direct),
                    "particle {k}"
                );
            }
        }
    }
}

/// The shares of a force stage fill the pool from the front, one entry
/// per contact: on one thread entries `1..=contacts`, every slot of a pair
/// apart at entry 0; on three threads, each run's part of the pool from
/// its start, with the same forces to the bit.
#[test]
fn shares_take_one_pool_entry_per_contact_from_the_front() {
    let laws = table(hooke_spring(false), 1);
    let on = |threads: usize| {
        on_threads(threads, || {
            let mut p = cluster();
            // Spread so that most pairs in reach are apart.
            for x in p.x.iter_mut() {
                *x *= 1.05;
            }
            p.refresh_packed();
            let mut nl = NeighborList::build(&p, 0.3, laws.history_len);
            stage_without_walls(&mut p, &mut nl, &mut PairResults::default(), &laws);
            assert_slots_clear_apart(&p, &nl);
            (p, nl)
        })
    };
    let (p1, nl1) = on(1);
    let jobs = nl1.jobs();
    let in_contact: Vec<bool> = (0..jobs.len())
        .map(|j| nl1.history().is_active(j))
        .collect();
    let contacts = in_contact.iter().filter(|&&c| c).count();
    assert!(
        contacts > 20 && 2 * contacts < jobs.len(),
        "{contacts} contacts of {} jobs",
        jobs.len()
    );
    let entries = nl1.shares().entry_numbers();
    let mut used: Vec<u32> = jobs
        .share_slots()
        .iter()
        .zip(&in_contact)
        .map(|(&s, &c)| {
            let e = entries[s as usize];
            assert_eq!(e != 0, c, "slot {s}");
            e
        })
        .filter(|&e| e != 0)
        .collect();
    used.sort_unstable();
    assert_eq!(used, (1..=contacts as u32).collect::<Vec<_>>());
    let (p3, nl3) = on(3);
    let mut used3: Vec<u32> = nl3.shares().entry_numbers().to_vec();
    used3.retain(|&e| e != 0);
    let n3 = used3.len();
    used3.sort_unstable();
    used3.dedup();
    assert_eq!((used3.len(), n3), (contacts, contacts), "entries shared");
    assert!(used3.iter().all(|&e| e as usize <= jobs.len()));
    assert_eq!(bits(&p1.force), bits(&p3.force));
    assert_eq!(bits(&p1.torque), bits(&p3.torque));
    assert_eq!(nl1.shares(), nl3.shares());
}

/// The cluster's walls, each about a radius from the centres of the
/// outer layer: a floor and a side plane that never move, and a plane on
/// another side that counts as moving (index 2).
fn cluster_walls() -> (Vec<Wall>, Vec<MovingWall>) {
    use crate::geometry::motion::{Motion, Translation};
    use crate::geometry::walls::Rigid;
    let plane = |point: DVec3, normal: DVec3| Wall {
        shape: WallShape::Plane { point, normal },
        material: 0,
        rigid: Rigid::REST,
    };
    let walls = vec![
        plane(DVec3::new(0.0, 0.0, -0.5), DVec3::Z),
        plane(DVec3::new(5.35, 0.0, 0.0), -DVec3::X),
        plane(DVec3::new(0.0, -0.5, 0.0), DVec3::Y),
    ];
    let moving = vec![MovingWall::new(
        2,
        walls[2].clone(),
        Motion {
            translation: Translation::Still,
            turn: None,
        },
    )];
    (walls, moving)
}

/// Walls tested only against the particles near them at the last rebuild
/// ([`NearWalls`]) give, step after step while no particle moves more than
/// half the skin, the bits of every particle tested against every wall:
/// forces, torques, wall records and wall loads, as contacts with the
/// walls form and open; with a wall that moves (every particle tested) and
/// with none (the loads held for the near particles only).
#[test]
fn walls_tested_near_only_give_the_bits_of_every_particle_tested() {
    let (walls, moving) = cluster_walls();
    near_only_against_every(&walls, &moving);
    near_only_against_every(&walls, &[]);
}

/// The same with a bumpy mesh over part of the cluster's top (index 3),
/// whose contacts the near particles find among the triangles listed at
/// the rebuild ([`NearWalls::mesh_candidates`]), the others by searching
/// the mesh: faces, edges and vertices, as contacts form and open.
#[test]
fn a_mesh_tested_among_its_listed_triangles_gives_the_bits_of_the_search() {
    let (mut walls, moving) = cluster_walls();
    walls.push(bumpy_lid());
    let p = cluster();
    let records = walls.iter().map(|w| w.history_records(3)).sum();
    let mut near = NearWalls::default();
    let wh = WallHistory::new(216, records, 3);
    near.find(&p, (&walls, &moving), &wh, cluster_listing());
    let listed = (0..p.n_owned)
        .filter_map(|k| near.mesh_candidates(k, 3, &walls[3]))
        .filter(|t| !t.is_empty())
        .count();
    assert!(listed > 5, "{listed} particles with triangles listed");
    // Lists hold for the mesh they were found in only.
    let mut other = walls[3].clone();
    if let WallShape::Mesh { mesh, .. } = &mut other.shape {
        *mesh = std::sync::Arc::new((**mesh).clone());
    }
    assert!(near.mesh_candidates(0, 3, &other).is_none());
    assert!(near.mesh_candidates(0, 0, &walls[0]).is_none(), "a plane");
    near_only_against_every(&walls, &moving);
    near_only_against_every(&walls, &[]);
}

/// The same with the lid moving down into the cluster and turning: it is
/// listed in its own frame at the rebuild, and the particles left out
/// stay out of its reach while their displacement plus its drift (its
/// turn's part taken no farther from the axis than the lid's own points)
/// stays within the reach it was listed within (the rebuild rule's test,
/// asserted at each step); a lid too fast to list is searched for every
/// particle.
#[test]
fn a_moving_mesh_listed_in_its_own_frame_gives_the_bits_of_the_search() {
    use crate::force::near_walls::{MOVING_REACH_SKINS, MOVING_STEP_SHARE};
    use crate::geometry::motion::{Motion, Translation, Turn};
    let (mut walls, mut moving) = cluster_walls();
    walls.push(bumpy_lid());
    let motion = |speed: f64| Motion {
        translation: Translation::Velocity(DVec3::new(0.2, 0.0, -1.2) * speed),
        turn: Some(Turn {
            axis: DVec3::Z,
            point: DVec3::new(1.0, 1.0, 0.0),
            rate: 0.5 * speed,
        }),
    };
    moving.push(MovingWall::new(3, walls[3].clone(), motion(1.0)));
    let at = cluster_listing();
    // Its drift in a step, with the whole box's corners as far from the
    // axis as a particle can be, passes the share that lists it: it is
    // listed by its own points' drift, within 2.12 of the axis (the lid's
    // corners).
    let one_step = motion(1.0).frame_drift((0.0, at.dt), at.bounds, f64::INFINITY);
    assert!(one_step > MOVING_STEP_SHARE * at.skin, "{one_step}");
    let p = cluster();
    let wh = WallHistory::new(216, walls.iter().map(|w| w.history_records(3)).sum(), 3);
    let mut near = NearWalls::default();
    near.find(&p, (&walls, &moving), &wh, at);
    let lists = |near: &NearWalls| {
        (0..p.n_owned)
            .filter_map(|k| near.mesh_candidates(k, 3, &walls[3]))
            .filter(|t| !t.is_empty())
            .count()
    };
    assert!(lists(&near) > 5, "{} particles list the lid", lists(&near));
    let (reach, drift) = near.moving_meshes_drift(&moving, 0.0).unwrap();
    assert_eq!((reach, drift), (MOVING_REACH_SKINS * at.skin, 0.0));
    let touched = near_only_against_every(&walls, &moving);
    assert!(touched[3] > 10, "{touched:?} contacts with the lid");
    // Twice as fast: not listed, searched for every particle.
    let one_step = motion(2.0).frame_drift((0.0, at.dt), at.bounds, 2.13);
    assert!(one_step > MOVING_STEP_SHARE * at.skin, "{one_step}");
    moving[1].motion = motion(2.0);
    near.find(&p, (&walls, &moving), &wh, at);
    assert_eq!(lists(&near), 0);
    assert!(near.moving_meshes_drift(&moving, 0.0).is_none());
    assert!((0..p.n_owned).all(|k| near.any_for(k) && near.wall_for(k, 3)));
    let touched = near_only_against_every(&walls, &moving);
    assert!(touched[3] > 10, "{touched:?} contacts with the lid");
}

/// A moving mesh's list holds to the edge of the rebuild rule's budget:
/// spheres on a grid over the whole box (near the lid, beside it, far from
/// its turn's axis), and around its rim just beyond the listing's reach
/// (where a drift underestimated by 5 % lets one touch: checked), are
/// listed with the lid at rest; at later times, up to the last step the
/// rule lets the list stand, with
/// the lid sliding down and turning, each sphere moved by 0.999 of what
/// the rule leaves (`FIXED_REACH · reach − drift`) in each of 26
/// directions and straight at the lid: one left out touches nothing, and
/// a listed one meets among its triangles what a search of the whole lid
/// finds.
#[test]
fn a_moving_mesh_list_holds_to_the_edge_of_the_rule() {
    use crate::force::near_walls::MOVING_REACH_SKINS;
    use crate::geometry::mesh::Contacts;
    use crate::geometry::motion::{place_walls, Motion, Translation, Turn};
    use crate::neighbor::trigger::FIXED_REACH;
    let lid = bumpy_lid();
    let moving = vec![MovingWall::new(
        0,
        lid.clone(),
        Motion {
            translation: Translation::Velocity(DVec3::new(0.1, 0.0, -0.5)),
            turn: Some(Turn {
                axis: DVec3::new(1.0, 0.3, 0.0).normalize(),
                point: DVec3::new(1.0, 1.0, 5.0),
                rate: 0.9,
            }),
        },
    )];
    let at = cluster_listing();
    let (lo, hi) = at.bounds;
    let mut p = Particles::default();
    let mut rng = Lcg(11);
    let side = 16;
    for i in 0..side * side * side {
        let f = DVec3::new(
            (i % side) as f64,
            (i / side % side) as f64,
            (i / side / side) as f64,
        );
        let radius = 0.3 + 0.25 * rng.unit();
        let x = lo + (f + 0.5) / side as f64 * (hi - lo);
        p.push_owned(&ParticleRecord::resting(i as u64, x, radius));
    }
    let directions: Vec<DVec3> = (0..27)
        .filter(|&d| d != 13)
        .map(|d| (DVec3::new((d % 3) as f64, (d / 3 % 3) as f64, (d / 9) as f64) - 1.0).normalize())
        .collect();
    // And around the lid's rim, where its points move the most: spheres
    // 0.7 from each vertex of the rim, each with the radius that puts it
    // just beyond the listing's reach of the lid.
    let WallShape::Mesh { mesh, .. } = &lid.shape else {
        unreachable!()
    };
    let (mesh_lo, mesh_hi) = mesh.bounds();
    let on_rim = |v: &&DVec3| {
        let edge = |a: usize| v[a] - mesh_lo[a] < 1e-9 || mesh_hi[a] - v[a] < 1e-9;
        edge(0) || edge(1)
    };
    let mut found = Contacts::default();
    for v in mesh.vertices().iter().filter(on_rim) {
        for d in &directions {
            let x = *v + 0.7 * *d;
            mesh.contacts(x, 2.0, &mut found);
            let nearest = (found.as_slice().iter())
                .map(|c| c.dist)
                .fold(f64::MAX, f64::min);
            let radius = nearest - 1.0002 * MOVING_REACH_SKINS * at.skin;
            if (0.3..0.55).contains(&radius) {
                p.push_owned(&ParticleRecord::resting(p.n_owned as u64, x, radius));
            }
        }
    }
    let mut walls = vec![lid];
    let wh = WallHistory::new(p.n_owned, walls[0].history_records(3), 3);
    let mut near = NearWalls::default();
    near.find(&p, (&walls, &moving), &wh, at);
    let listed = (0..p.n_owned).filter(|&k| near.wall_for(k, 0)).count();
    assert!(listed > 20 && listed < p.n_owned / 2, "{listed} listed");
    let (mut among, mut whole) = (Contacts::default(), Contacts::default());
    let mut met = 0;
    let budget_at = |step: usize| {
        let (reach, drift) = near
            .moving_meshes_drift(&moving, step as f64 * at.dt)
            .unwrap();
        FIXED_REACH * reach - drift
    };
    // The last step the rule lets the list stand, where the budget is
    // down to a tenth of the reach or less.
    let last = (1..)
        .take_while(|&step| budget_at(step) > 0.0)
        .last()
        .unwrap();
    assert!(
        budget_at(last) < 0.02 && last > 12,
        "step {last}: {}",
        budget_at(last)
    );
    for step in [1, 4, 8, 12, last - 2, last] {
        let time = step as f64 * at.dt;
        place_walls(&mut walls, &moving, time);
        let budget = budget_at(step);
        for k in 0..p.n_owned {
            // The 26 directions, and straight at the lid where it is now.
            walls[0].mesh_contacts(p.x[k], p.radius[k] + 1.0, &mut whole);
            let nearest = (whole.as_slice().iter()).min_by(|a, b| a.dist.total_cmp(&b.dist));
            let at_lid = nearest.map(|c| c.n);
            for d in directions.iter().chain(&at_lid) {
                let (x, r) = (p.x[k] + 0.999 * budget * *d, p.radius[k]);
                if !near.wall_for(k, 0) {
                    assert!(
                        walls[0].touch(x, r, 0.0).is_none(),
                        "step {step}, particle {k}"
                    );
                    continue;
                }
                near.mesh_contacts((k, 0), &walls[0], (x, r), &mut among);
                walls[0].mesh_contacts(x, r, &mut whole);
                assert_eq!(
                    among.as_slice(),
                    whole.as_slice(),
                    "step {step}, particle {k}"
                );
                met += usize::from(!whole.is_empty());
            }
        }
    }
    assert!(met > 500, "{met} contacts met");
}

/// The listing of the cluster's walls: skin 0.1, the step 0.004 that [`near_only_against_every`] moves the particles by,
/// a box holding the cluster.
fn cluster_listing() -> crate::force::near_walls::Listing {
    let bounds = (DVec3::splat(-1.0), DVec3::splat(6.5));
    crate::force::near_walls::Listing::new(0.1, 0.004, bounds)
}

/// A bumpy mesh over part of the cluster's top, at rest.
fn bumpy_lid() -> Wall {
    use crate::geometry::mesh::{Pose, TriMesh};
    use crate::geometry::walls::Rigid;
    let n = 14;
    let at = |i: usize, j: usize| {
        let (x, y) = (
            -0.5 + 3.0 * i as f64 / n as f64,
            -0.5 + 3.0 * j as f64 / n as f64,
        );
        DVec3::new(x, y, 5.35 + 0.08 * (3.0 * x).sin() * (2.0 * y).cos())
    };
    let mut tris = Vec::new();
    for j in 0..n {
        for i in 0..n {
            tris.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            tris.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    Wall {
        shape: WallShape::Mesh {
            mesh: std::sync::Arc::new(TriMesh::new("lid", &tris).unwrap()),
            pose: Pose::REST,
        },
        material: 0,
        rigid: Rigid::REST,
    }
}

/// Six steps of the cluster (positions moved by `0.004 v` between them,
/// `moving` placed at `0.004 ·` the step) with the walls tested near only
/// and for every particle: the same bits. Returns, per wall, the contacts
/// it had over the steps (loads not zero).
fn near_only_against_every(walls: &[Wall], moving: &[MovingWall]) -> Vec<usize> {
    use crate::geometry::motion::place_walls;
    use crate::neighbor::trigger::FIXED_REACH;
    let laws = table(hooke_spring(false), 1);
    let h = laws.history_len;
    let at = cluster_listing();
    let skin = at.skin;
    let mut p = cluster();
    let start = p.x.clone();
    let mut nl = NeighborList::build(&p, skin, h);
    let records = walls.iter().map(|w| w.history_records(h)).sum();
    let mut wh = WallHistory::new(p.n_owned, records, h);
    let mut near = NearWalls::default();
    let mut placed = walls.to_vec();
    near.find(&p, (walls, moving), &wh, at);
    let listed = (0..p.n_owned)
        .filter(|&k| near.wall_for(k, 0) || near.wall_for(k, 1))
        .count();
    assert!(
        listed > 30 && listed < p.n_owned / 2,
        "{listed} of {} particles near the fixed walls",
        p.n_owned
    );
    let tested = (0..p.n_owned).filter(|&k| near.any_for(k)).count();
    if moving.is_empty() {
        assert!(
            tested >= listed && tested < p.n_owned / 2,
            "{tested} tested"
        );
    } else {
        assert!((0..p.n_owned).all(|k| near.any_for(k) && near.wall_for(k, 2)));
    }
    let (mut results, mut every) = (PairResults::default(), PairResults::default());
    let (mut formed, mut opened) = (0, 0);
    let mut touched = vec![0; walls.len()];
    // The fastest particle moves 1.73 · 6 · 0.004 = 0.042 < skin / 2.
    for step in 0..6 {
        let time = step as f64 * at.dt;
        place_walls(&mut placed, moving, time);
        if let Some((reach, drift)) = near.moving_meshes_drift(moving, time) {
            // The rebuild rule's test: the list still holds.
            let moved = (p.x.iter().zip(&start)).map(|(x, s)| (*x - *s).length());
            let largest = moved.fold(0.0, f64::max);
            assert!(largest + drift < FIXED_REACH * reach, "{largest} + {drift}");
        }
        let walls = &placed[..];
        let fp_near = ForceParams {
            walls,
            near_walls: &near,
            ..params(&laws)
        };
        let fp_every = ForceParams {
            near_walls: &near_walls::TEST_EVERY_PARTICLE,
            ..fp_near
        };
        let (mut p2, mut nl2, mut wh2) = (p.clone(), nl.clone(), wh.clone());
        let (mut loads, mut loads2) = (WallLoads::default(), WallLoads::default());
        let before: Vec<bool> = (0..p.n_owned)
            .map(|k| wh.row(k).iter().any(|&v| v != 0.0))
            .collect();
        compute(
            &mut p,
            &mut nl,
            &mut wh,
            &mut results,
            &fp_near,
            Some(&mut loads),
        );
        compute(
            &mut p2,
            &mut nl2,
            &mut wh2,
            &mut every,
            &fp_every,
            Some(&mut loads2),
        );
        assert_eq!(bits(&p.force), bits(&p2.force));
        assert_eq!(bits(&p.torque), bits(&p2.torque));
        assert_eq!(wh, wh2);
        // The diagnostics' wall contacts, read with the list and without.
        let wall_contacts = |near: &NearWalls, k: usize| -> Vec<(String, u64, [u64; 3])> {
            let laws = &laws;
            crate::diagnostics::contacts::wall_contacts_of(&p, laws, (walls, near), k)
                .map(|c| {
                    let n = c.wall_normal.to_array().map(f64::to_bits);
                    (format!("{:?}", c.partner), c.delta.to_bits(), n)
                })
                .collect()
        };
        for k in 0..p.n_owned {
            let every = wall_contacts(&near_walls::TEST_EVERY_PARTICLE, k);
            assert_eq!(wall_contacts(&near, k), every, "particle {k}");
        }
        assert_eq!((loads.rows(), loads2.rows()), (tested, p.n_owned));
        for (k, &was) in before.iter().enumerate() {
            for (w, touched) in touched.iter_mut().enumerate() {
                assert_eq!(loads.get(k, w), loads2.get(k, w), "particle {k}, wall {w}");
                *touched += usize::from(loads2.get(k, w).force != DVec3::ZERO);
            }
            let now = wh.row(k).iter().any(|&v| v != 0.0);
            formed += usize::from(now && !was);
            opened += usize::from(!now && was);
        }
        for k in 0..p.n_owned {
            if !p.frozen[k] {
                let v = p.v[k];
                p.x[k] += 0.004 * v;
            }
        }
        p.refresh_packed();
    }
    assert!(
        formed > 20 && opened > 0,
        "{formed} wall contacts formed, {opened} opened"
    );
    touched
}

/// A particle is near a wall that never moves within its radius plus the
/// skin, and not beyond.
#[test]
fn near_walls_reach_the_radius_plus_the_skin() {
    let (walls, _) = cluster_walls();
    let mut p = Particles::default();
    // Over the floor (z = -0.5) by the radius and 0.101, then 0.099.
    for (id, gap) in [(0, 0.101), (1, 0.099)] {
        let x = DVec3::new(2.0, 2.0, -0.5 + 0.5 + gap);
        p.push_owned(&ParticleRecord::resting(id, x, 0.5));
    }
    let mut records = WallHistory::new(p.n_owned, walls.len(), 3);
    let mut near = NearWalls::default();
    near.find(&p, (&walls, &[]), &records, cluster_listing());
    assert!(!near.wall_for(0, 0) && near.wall_for(1, 0));
    assert!(!near.any_for(0) && near.any_for(1));
    // A particle far from the walls with a record not zero (a contact that
    // opened by more than the skin in one step) is tested, to clear it.
    records.record_mut(0, 0)[2] = -0.0;
    near.find(&p, (&walls, &[]), &records, cluster_listing());
    assert!(near.wall_for(0, 0) && near.any_for(0));
    // With no list, every particle is tested.
    assert!(near_walls::TEST_EVERY_PARTICLE.any_for(0));
    assert!(near_walls::TEST_EVERY_PARTICLE.wall_for(0, 0));
}

/// Runs of equal work: cut at the block start nearest each share, never
/// empty, covering every block once.
#[test]
fn runs_split_the_blocks_by_work() {
    // Eight blocks: the first two hold most of the work.
    let work = [40, 40, 5, 5, 5, 5, 5, 5];
    let before = |b: usize| work[..b].iter().sum::<usize>();
    assert_eq!(runs_of_equal_work(8, 2, before), [(0, 1), (1, 8)]);
    assert_eq!(runs_of_equal_work(8, 1, before), [(0, 8)]);
    // 40, 45 and 25: the second cut would fall where the first did.
    assert_eq!(runs_of_equal_work(8, 4, before), [(0, 1), (1, 3), (3, 8)]);
    // Even work: even runs.
    assert_eq!(runs_of_equal_work(8, 2, |b| 3 * b), [(0, 4), (4, 8)]);
    // More threads than blocks, and no blocks.
    assert_eq!(runs_of_equal_work(2, 8, |b| b), [(0, 1), (1, 2)]);
    assert!(runs_of_equal_work(0, 2, |b| b).is_empty());
}

/// A stage records the contacts of each work block, and the next stage
/// cuts its runs by them: on a bed whose contacts crowd its first blocks,
/// the counts are those of the active jobs, block by block, and a second
/// stage on three threads (now cut by contacts) gives the bits of one.
#[test]
fn the_contacts_of_each_block_weigh_the_next_cut() {
    let laws = table(hooke_spring(false), 1);
    // 2,000 spheres, 4 blocks: touching in the bottom quarter, apart above.
    let mut rng = Lcg(11);
    let mut p = Particles::default();
    for k in 0..2000u64 {
        let (a, b, c) = (k % 10, (k / 10) % 10, k / 100);
        let spacing = if c < 5 { 0.95 } else { 1.2 };
        let z = if c < 5 {
            c as f64 * 0.95
        } else {
            4.75 + (c - 4) as f64 * 1.2
        };
        let radius = 0.5;
        p.push_owned(&ParticleRecord {
            id: (k * 7919) % 2000,
            x: DVec3::new(a as f64 * spacing, b as f64 * spacing, z) + rng.vec(0.02),
            v: rng.vec(1.0),
            omega: rng.vec(1.0),
            radius,
            mass: ParticleRecord::sphere_mass(radius, 1.0),
            material: 0,
            frozen: false,
        });
    }
    p.refresh_packed();
    let on = |threads: usize| {
        on_threads(threads, || {
            let (mut p, mut results) = (p.clone(), PairResults::default());
            let mut nl = NeighborList::build(&p, 0.1, laws.history_len);
            let mut counts = Vec::new();
            for _ in 0..2 {
                stage_without_walls(&mut p, &mut nl, &mut results, &laws);
                counts.push(results.block_contacts.clone());
            }
            (counts[0].clone(), counts[1].clone(), p, nl)
        })
    };
    let (first, again, p1, nl) = on(1);
    let jobs = nl.jobs();
    let active = |b: usize| {
        let (s, e) = (b * BLOCK, ((b + 1) * BLOCK).min(p1.n_owned));
        (jobs.offsets()[s]..jobs.offsets()[e])
            .filter(|&j| nl.history().is_active(j))
            .count() as u32
    };
    let per_block: Vec<u32> = (0..p1.n_owned.div_ceil(BLOCK)).map(active).collect();
    assert_eq!(first, per_block);
    assert_eq!(again, per_block);
    assert!(
        per_block.len() == 4 && per_block[0] > 10 * per_block[3].max(1),
        "{per_block:?}"
    );
    let (_, _, p3, _) = on(3);
    assert_eq!(bits(&p1.force), bits(&p3.force));
    assert_eq!(bits(&p1.torque), bits(&p3.torque));
}

/// A thread that runs out of its own blocks takes the other runs' from
/// their backs, and the result is the same to the bit: one thread with
/// its blocks cut into four runs does its own run from the front and then
/// every block of the other three from their backs (their pass two at the
/// end), over steps in which contacts form, persist and open, against one
/// run and against three threads.
#[test]
fn blocks_taken_from_other_runs_give_the_same_bits() {
    let laws = table(hertz_spring(true, true), 1);
    let on = |threads: usize, runs: Option<usize>| {
        on_threads(threads, || {
            FORCED_RUNS.with(|r| r.set(runs));
            let p = cluster_of_side(13);
            assert!(p.n_owned.div_ceil(BLOCK) >= 4, "blocks for four runs");
            let out = stages(p, &laws, 6, 2e-3);
            FORCED_RUNS.with(|r| r.set(None));
            out
        })
    };
    let (p1, nl1) = on(1, None);
    assert!(
        (0..nl1.jobs().len()).any(|j| nl1.history().is_active(j)),
        "contacts with history"
    );
    for (threads, runs) in [(1, Some(4)), (3, None), (2, Some(5))] {
        let (p, nl) = on(threads, runs);
        assert_eq!(
            bits(&p1.force),
            bits(&p.force),
            "{threads} threads, {runs:?} runs"
        );
        assert_eq!(
            bits(&p1.torque),
            bits(&p.torque),
            "{threads} threads, {runs:?} runs"
        );
        assert_eq!(
            nl1.history(),
            nl.history(),
            "{threads} threads, {runs:?} runs"
        );
        assert_eq!(
            nl1.shares(),
            nl.shares(),
            "{threads} threads, {runs:?} runs"
        );
    }
}
