//! The promise of the README: the same trajectory to the last bit on any number
//! of threads. Runs with friction (Hertz + Mindlin spring-slider and epsd
//! rolling resistance, so contact history matters, and EDEM spinning
//! friction) are compared bit for bit — positions, velocities, angular
//! velocities and every contact-history record (tangential and rolling
//! springs) — between 1, 2 and 4 rayon threads, and between two runs on the
//! same thread count. A WCA colloid driven by stochastic friction alone
//! checks that the Philox pair noise is the same whichever thread evaluates
//! a pair.

mod common;

use common::*;
use gravel::io::read::{list_frames, read_frame, read_thermo, FrameOwned};
use gravel::parallel::comm::SerialComm;
use gravel::sim::{HistoryPartner, Simulation};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

/// Glass with every frictional model on: Hertz + Mindlin spring-slider, epsd
/// rolling resistance with mobilised damping, EDEM spinning friction.
fn frictional_glass(c: Config) -> Config {
    c.material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .contact(
            "rolling",
            model("epsd")
                .with("friction", 0.2)
                .with("damping", 0.3)
                .with("mobilised_damping_factor", 0.2),
        )
        .contact("spinning", model("edem").with("friction", 0.3))
}

/// `c` with a glass plane wall through each `(point, normal)` of `walls`.
fn with_walls(c: Config, walls: &[([f64; 3], [f64; 3])]) -> Config {
    walls
        .iter()
        .fold(c, |c, &(p, n)| c.wall(plane(p, n, "glass")))
}

/// About 600 polydisperse beads poured at 1 m/s into a walled box
/// (12 × 12 mm, 30 mm high), 1500 steps of 10 µs: the first ones land and
/// pile up, so there are lasting particle–particle and particle–wall contacts.
fn pour_config(steps: u64) -> Config {
    let walls = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([0.012, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.012, 0.0], [0.0, -1.0, 0.0]),
    ];
    let c = frictional_glass(
        Config::new("pour")
            .run("dt", 1e-5)
            .run("steps", steps)
            .run("seed", 3)
            .run("gravity", [0.0, 0.0, -9.81])
            .domain([0.0; 3], [0.012, 0.012, 0.03]),
    );
    with_walls(c, &walls)
        .particles(
            pour(
                "glass",
                radius_range(0.0005, 0.0007),
                60000.0,
                0.01,
                region([0.0, 0.0, 0.003], [0.012, 0.012, 0.03]),
            )
            .with("velocity", [0.0, 0.0, -1.0])
            .with("interval", 20),
        )
        .output("every", 0)
        .output("fields", ["velocity", "omega"])
}

/// Periodic in x and y (16 mm), a floor, gravity tilted along x: two `random`
/// blocks of 600 beads each, moving at ±(1, 0.5, 0) m/s, so they collide at
/// once, across the periodic faces too (through the ghosts), and settle.
const PERIODIC_L: f64 = 0.016;

fn periodic_config(steps: u64) -> Config {
    let block = |v: [f64; 3]| {
        random(
            "glass",
            radius_range(0.0004, 0.0006),
            600,
            region([0.0; 3], [PERIODIC_L, PERIODIC_L, 0.012]),
        )
        .with("velocity", v)
    };
    frictional_glass(
        Config::new("periodic")
            .run("dt", 1e-5)
            .run("steps", steps)
            .run("seed", 11)
            .run("gravity", [3.0, 0.0, -30.0])
            .domain([0.0; 3], [PERIODIC_L, PERIODIC_L, 0.02])
            .periodic([true, true, false]),
    )
    .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
    .wall(plane([0.0, 0.0, 0.02], [0.0, 0.0, -1.0], "glass"))
    .particles(block([1.0, 0.5, 0.0]))
    .particles(block([-1.0, -0.5, 0.0]))
    .output("every", 0)
    .output("fields", ["velocity", "omega"])
}

/// Particle state as bits: `(id, x, v, ω)`.
type StateBits = Vec<(u64, [u64; 3], [u64; 3], [u64; 3])>;
/// History records as bits.
type HistoryBits = Vec<(u64, HistoryPartner, Vec<u64>)>;

#[derive(PartialEq)]
struct Snapshot {
    step: u64,
    state: StateBits,
    history: HistoryBits,
}

/// What a run went through, to show that the comparison could fail.
#[derive(Debug, Default)]
struct Activity {
    particles: usize,
    /// Largest number of pair and wall history records with a non-zero value seen at a snapshot.
    max_pair_records: usize,
    max_wall_records: usize,
    /// Pair records whose two particles lie on opposite sides of a periodic face.
    cross_boundary_records: usize,
    rebuilds: u64,
}

fn snapshot(sim: &Simulation) -> Snapshot {
    Snapshot {
        step: sim.step,
        state: sim
            .state_by_id()
            .into_iter()
            .map(|(id, x, v, w)| (id, vec_bits(x), vec_bits(v), vec_bits(w)))
            .collect(),
        history: sim
            .history_records()
            .into_iter()
            .map(|(a, b, h)| (a, b, h.iter().map(|x| x.to_bits()).collect()))
            .collect(),
    }
}

fn record_activity(sim: &Simulation, act: &mut Activity) {
    let records = sim.history_records();
    let pairs = records
        .iter()
        .filter(|r| matches!(r.1, HistoryPartner::Particle(_)))
        .count();
    act.max_pair_records = act.max_pair_records.max(pairs);
    act.max_wall_records = act.max_wall_records.max(records.len() - pairs);
    let d = sim.setup.domain;
    let x: BTreeMap<u64, glam::DVec3> = sim
        .state_by_id()
        .into_iter()
        .map(|(id, x, _, _)| (id, d.wrap(x)))
        .collect();
    let l = d.length();
    act.cross_boundary_records += records
        .iter()
        .filter(|r| match r.1 {
            HistoryPartner::Particle(b) => {
                let dx = x[&r.0] - x[&b];
                (0..3).any(|a| d.periodic[a] && dx[a].abs() > 0.5 * l[a])
            }
            HistoryPartner::Wall(_) => false,
        })
        .count();
}

/// Run `config` on a pool of `threads` rayon threads, snapshotting every `every` steps.
fn simulate(config: &Config, threads: usize, every: u64) -> (Vec<Snapshot>, Activity) {
    simulate_deferring(config, threads, every, false)
}

/// [`simulate`], with each step's second half kick deferred to the next
/// step's first pass if `defer` (`Simulation::defer_kick`, as `gravel run`
/// does between outputs), except before a snapshot.
fn simulate_deferring(
    config: &Config,
    threads: usize,
    every: u64,
    defer: bool,
) -> (Vec<Snapshot>, Activity) {
    pool(threads).install(|| {
        assert_eq!(rayon::current_num_threads(), threads);
        let setup = setup(config);
        let steps = setup.steps;
        let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
        let mut snaps = vec![snapshot(&sim)];
        let mut act = Activity::default();
        while sim.step < steps {
            let next = sim.step + 1;
            sim.defer_kick = defer && !next.is_multiple_of(every) && next != steps;
            sim.step().unwrap_or_else(|e| panic!("{e}"));
            if sim.step.is_multiple_of(every) || sim.step == steps {
                snaps.push(snapshot(&sim));
                record_activity(&sim, &mut act);
            }
        }
        act.particles = sim.particles.n_owned;
        act.rebuilds = sim.timers.rebuilds;
        (snaps, act)
    })
}

/// Assert two runs identical, naming the first step and particle that differ.
fn assert_identical(a: &[Snapshot], b: &[Snapshot], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: different numbers of snapshots");
    for (sa, sb) in a.iter().zip(b) {
        assert_eq!(sa.step, sb.step);
        if sa == sb {
            continue;
        }
        assert_eq!(
            sa.state.len(),
            sb.state.len(),
            "{what}: particle counts differ at step {}",
            sa.step
        );
        if let Some((pa, pb)) = sa.state.iter().zip(&sb.state).find(|(p, q)| p != q) {
            panic!(
                "{what}: first difference at step {}: particle {} (x, v, ω bits) {:?} vs particle {} {:?}",
                sa.step, pa.0, pa, pb.0, pb
            );
        }
        assert_eq!(
            sa.history.len(),
            sb.history.len(),
            "{what}: numbers of history records differ at step {}",
            sa.step
        );
        let (ha, hb) = sa
            .history
            .iter()
            .zip(&sb.history)
            .find(|(p, q)| p != q)
            .unwrap();
        panic!(
            "{what}: first history difference at step {}: {ha:?} vs {hb:?}",
            sa.step
        );
    }
}

fn check_threads(config: &Config, every: u64) -> Activity {
    let (one, act) = simulate(config, 1, every);
    for k in [2, 4] {
        let (many, _) = simulate(config, k, every);
        assert_identical(&one, &many, &format!("1 vs {k} threads"));
    }
    act
}

#[test]
fn pour_is_bitwise_identical_on_1_2_and_4_threads() {
    let act = check_threads(&pour_config(2000), 100);
    eprintln!("pour: {act:?}");
    assert!(act.particles >= 500, "{act:?}");
    assert!(act.max_pair_records >= 50, "too few pair contacts: {act:?}");
    assert!(act.max_wall_records >= 20, "too few wall contacts: {act:?}");
    assert!(act.rebuilds >= 10, "{act:?}");
}

#[test]
fn periodic_random_is_bitwise_identical_on_1_2_and_4_threads() {
    let act = check_threads(&periodic_config(2000), 100);
    eprintln!("periodic: {act:?}");
    assert_eq!(act.particles, 1200);
    assert!(act.max_pair_records >= 50, "too few pair contacts: {act:?}");
    assert!(
        act.cross_boundary_records >= 5,
        "no contacts across the periodic faces: {act:?}"
    );
    assert!(act.rebuilds >= 10, "{act:?}");
}

#[test]
fn same_config_twice_gives_the_same_bits() {
    let config = periodic_config(600);
    let (a, _) = simulate(&config, 2, 100);
    let (b, _) = simulate(&config, 2, 100);
    assert_identical(&a, &b, "run 1 vs run 2");
    let config = pour_config(800);
    let (a, _) = simulate(&config, 2, 100);
    let (b, _) = simulate(&config, 2, 100);
    assert_identical(&a, &b, "run 1 vs run 2");
}

/// A run whose second half kicks wait for the next step's first pass (one
/// pass over the particles fewer a step) gives the bits of one that gives
/// each at its step: with insertion and walls (the pour), and across
/// periodic faces (the colliding blocks). A state read while a kick is
/// pending is refused.
#[test]
fn deferred_half_kicks_give_the_same_bits() {
    for config in [pour_config(1500), periodic_config(600)] {
        let (each, act) = simulate_deferring(&config, 2, 100, false);
        let (deferred, _) = simulate_deferring(&config, 2, 100, true);
        assert!(act.rebuilds >= 3 && act.max_pair_records >= 20, "{act:?}");
        assert_identical(&each, &deferred, "kicks deferred vs each at its step");
    }
    let mut sim = Simulation::new(setup(&periodic_config(10)), Box::new(SerialComm)).unwrap();
    sim.defer_kick = true;
    sim.step().unwrap();
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.state_by_id()));
    let message = read.expect_err("a pending kick's state was read");
    let text = message.downcast_ref::<String>().unwrap();
    assert!(text.contains("before its second half kick"), "{text}");
    // Once the next step has given it, the state may be read.
    sim.defer_kick = false;
    sim.step().unwrap();
    assert_eq!(sim.state_by_id().len(), 1200);
}

/// A bed sliding together through a closed box, walled all round: two
/// blocks of 500 beads at 3 and 1 m/s along x, the second also 0.3 m/s
/// across, so that the first runs into the second while both move on; no
/// gravity. With `skin`.
fn sliding_config(steps: u64, skin: f64) -> Config {
    let block = |x: [f64; 2], v: [f64; 3]| {
        random(
            "glass",
            radius_range(0.0004, 0.0006),
            500,
            region([x[0], 0.0, 0.0], [x[1], 0.012, 0.012]),
        )
        .with("velocity", v)
    };
    let walls = [
        ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([0.04, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 0.012], [0.0, 0.0, -1.0]),
        ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.012, 0.0], [0.0, -1.0, 0.0]),
    ];
    let c = frictional_glass(
        Config::new("sliding")
            .run("dt", 1e-5)
            .run("steps", steps)
            .run("seed", 13)
            .domain([0.0; 3], [0.04, 0.012, 0.012])
            .set("domain", "skin", skin),
    );
    with_walls(c, &walls)
        .particles(block([0.0, 0.008], [3.0, 0.0, 0.0]))
        .particles(block([0.008, 0.016], [1.0, 0.3, 0.0]))
        .output("every", 0)
}

/// The rebuild rule ([`gravel::neighbor::trigger`]) keeps a list while the
/// bed moves together, past half the skin: a run with a 0.2 mm skin gives
/// the bits of one whose list is rebuilt at every step (a skin of 1 nm),
/// contacts and wall contacts included, with fewer rebuilds than the usual
/// rule's (a rebuild whenever a bead has moved half the skin: 76 in these
/// 300 steps, measured before this rule; this one, 43). A rule three times
/// too lax (16 rebuilds) misses contacts here and fails.
#[test]
fn a_list_kept_while_the_bed_moves_together_misses_no_contact() {
    let act = kept_as_if_rebuilt_every_step(sliding_config, "sliding");
    assert!(
        act.max_pair_records >= 1000 && act.max_wall_records >= 20,
        "{act:?}"
    );
    assert!(act.rebuilds <= 50, "{act:?}");
}

/// Assert that 300 steps of `config(300, skin)` with a 0.2 mm skin give the
/// bits of the same run with a 1 nm skin, whose list is rebuilt at every
/// step, and return the first run's activity (2 threads).
fn kept_as_if_rebuilt_every_step(config: fn(u64, f64) -> Config, what: &str) -> Activity {
    let (kept, act) = simulate(&config(300, 2e-4), 2, 50);
    let (every_step, every) = simulate(&config(300, 1e-9), 2, 50);
    eprintln!("{what}: {act:?}; skin 1 nm: {every:?}");
    assert_identical(&kept, &every_step, "skin 0.2 mm vs a rebuild at every step");
    assert_eq!(every.rebuilds, 301, "{every:?}");
    act
}

/// Layer `k` (from 0) of a sheared bed: `count` glass beads at random in
/// `xs` × [0, 12 mm] × [3k, 3k + 3] mm, moving at k m/s along x and 0.2
/// m/s up (k even) or down.
fn sheared_layer(k: usize, count: u64, xs: [f64; 2]) -> Table {
    let (z, up) = (
        0.003 * k as f64,
        if k.is_multiple_of(2) { 0.2 } else { -0.2 },
    );
    random(
        "glass",
        radius_range(0.0004, 0.0006),
        count,
        region([xs[0], 0.0, z], [xs[1], 0.012, z + 0.003]),
    )
    .with("velocity", [k as f64, 0.0, up])
}

/// A bed sheared in layers through an open box with no walls: four
/// layers of 300 beads at 0, 1, 2 and 3 m/s along x, each also 0.2 m/s up
/// or down so that they run into each other while they slide; no gravity.
/// With `skin`.
fn sheared_config(steps: u64, skin: f64) -> Config {
    let layer = |k: usize| sheared_layer(k, 300, [0.002, 0.018]);
    let c = frictional_glass(
        Config::new("sheared")
            .run("dt", 1e-5)
            .run("steps", steps)
            .run("seed", 17)
            .domain([0.0, -0.004, -0.003], [0.04, 0.016, 0.015])
            .set("domain", "skin", skin),
    );
    (0..4)
        .fold(c, |c, k| c.particles(layer(k)))
        .output("every", 0)
}

/// The rebuild rule keeps the list of a sheared bed past the spread of
/// its displacements while the flow fitted at the last rebuild foresees
/// them ([`gravel::neighbor::flow`]): a run with a 0.2 mm skin gives the
/// bits of one whose list is rebuilt at every step (a skin of 1 nm),
/// contacts included, with fewer rebuilds than the rule without the fit
/// (43 in these 300 steps, measured with the fit turned off; with it, 23).
/// A flow's bound three times too lax (13 rebuilds) misses contacts here
/// and fails. Nothing fixed in space here: a bead may move many skins
/// between rebuilds.
#[test]
fn a_sheared_bed_keeps_its_list_and_misses_no_contact() {
    let act = kept_as_if_rebuilt_every_step(sheared_config, "sheared");
    assert!(act.max_pair_records >= 300, "{act:?}");
    assert!(act.rebuilds <= 30, "{act:?}");
}

/// A sheared bed across periodic boundaries: the layers of
/// [`sheared_config`] fill a box periodic in x and y, so the beads slide
/// through the boundary and touch each other's images. After every step
/// each touching pair, images included, is in the neighbour list
/// (`common::assert_list_holds_every_contact`), while the fitted flow keeps
/// the list longer than the spread's rule alone would (measured: 49
/// rebuilds in these 600 steps; 86 with the flow's test turned off). A
/// flow's bound three times too lax misses a contact at step 113 and
/// fails.
#[test]
fn a_periodic_sheared_bed_lists_every_touching_pair_at_every_step() {
    let layer = |k: usize| sheared_layer(k, 250, [0.0, 0.016]);
    let c = frictional_glass(
        Config::new("sheared")
            .run("dt", 1e-5)
            .run("steps", 600)
            .run("seed", 19)
            .domain([0.0, 0.0, -0.003], [0.016, 0.012, 0.015])
            .periodic([true, true, false])
            .set("domain", "skin", 2e-4),
    );
    let config = (0..4)
        .fold(c, |c, k| c.particles(layer(k)))
        .output("every", 0);
    let mut sim = build(&config);
    let mut touching = 0;
    while sim.step < 600 {
        sim.step().unwrap_or_else(|e| panic!("{e}"));
        touching = touching.max(assert_list_holds_every_contact(&sim));
    }
    eprintln!(
        "periodic sheared: {} rebuilds, at most {touching} touching pairs",
        sim.timers.rebuilds
    );
    assert!(touching >= 200, "{touching} touching pairs");
    assert!(
        sim.timers.rebuilds <= 60,
        "{} rebuilds",
        sim.timers.rebuilds
    );
}

/// The comparison sees a difference where there is one: another seed changes the bits.
#[test]
fn a_different_seed_changes_the_bits() {
    let config = periodic_config(200);
    let other = periodic_config(200).run("seed", 12);
    assert_ne!(config, other);
    let (a, _) = simulate(&config, 1, 100);
    let (b, _) = simulate(&other, 1, 100);
    assert!(a.last().unwrap() != b.last().unwrap());
}

/// The binary: `gravel run --threads 1` and `--threads 2` write the same final frame.
#[test]
fn binary_threads_1_and_2_write_the_same_final_frame() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pour.toml");
    std::fs::write(&config, pour_config(700).text()).unwrap();
    let run = |threads: &str| -> (FrameOwned, Vec<(String, Vec<f64>)>) {
        let out_dir = dir.path().join(format!("out{threads}"));
        let out = gravel_command()
            .args([
                OsStr::new("run"),
                config.as_os_str(),
                OsStr::new("--threads"),
                OsStr::new(threads),
                OsStr::new("--quiet"),
                OsStr::new("--out"),
                out_dir.as_os_str(),
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let h5 = out_dir.join("pour.h5");
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .open(&h5)
            .unwrap();
        let t: u32 = file.attr("threads").unwrap().read_scalar().unwrap();
        assert_eq!(t.to_string(), threads);
        assert_eq!(list_frames(&h5).unwrap(), vec![700]);
        (read_frame(&h5, 700).unwrap(), read_thermo(&h5).unwrap())
    };
    let (f1, t1) = run("1");
    let (f2, t2) = run("2");
    let by_id = |f: &FrameOwned| -> BTreeMap<u64, Vec<u64>> {
        let mut m = BTreeMap::new();
        for (k, &id) in f.id.iter().enumerate() {
            let mut row: Vec<u64> = f.position[k].iter().map(|x| x.to_bits()).collect();
            row.push(f.radius[k].to_bits());
            row.push(u64::from(f.material[k]));
            for (_, v) in &f.fields {
                row.extend(v[k].iter().map(|x| x.to_bits()));
            }
            m.insert(id, row);
        }
        m
    };
    assert!(f1.id.len() >= 300, "only {} particles", f1.id.len());
    assert_eq!(f1.fields.len(), 2);
    let (m1, m2) = (by_id(&f1), by_id(&f2));
    assert_eq!(m1.len(), f1.id.len(), "ids not unique");
    if let Some((id, row)) = m1.iter().find(|(id, row)| m2.get(id) != Some(row)) {
        panic!(
            "particle {id} differs: {row:?} vs {:?}",
            m2.get(id).map(|r| r.as_slice())
        );
    }
    assert_eq!(m1.len(), m2.len());
    // Integer thermo columns agree exactly too (the energies are sums in any order).
    for name in ["step", "particles", "contacts"] {
        let col = |t: &[(String, Vec<f64>)]| t.iter().find(|c| c.0 == name).unwrap().1.clone();
        assert_eq!(col(&t1), col(&t2), "thermo column {name}");
    }
}

/// A periodic WCA colloid of 1000 spheres (10³ lattice at packing fraction
/// 0.45, started at rest) thermostatted by stochastic friction only: every
/// velocity comes from the pair noise, so any dependence of the noise on the
/// thread, the block or the evaluation order would show at once.
fn colloid_config(steps: u64, stochastic: &str, seed: u64) -> Config {
    colloid_lattice(10, 0.45, 0.002, steps, seed, stochastic)
}

/// Stochastic friction (all three laws) is bitwise identical on 1, 2 and 4
/// threads (1000 particles: two blocks of the force loop), and the noise
/// really drives the run: kT = 0 leaves the lattice at rest, another seed
/// gives other bits.
#[test]
fn stochastic_friction_is_bitwise_identical_on_1_2_and_4_threads() {
    let laws = [
        "{ model = \"coulomb\", kappa = 0.3, kT = 1.0 }",
        "{ model = \"linear\", gamma = 0.05, kT = 1.0 }",
        "{ model = \"coulomb_newton\", gamma = 1.0, kappa = 0.3, kT = 1.0 }",
    ];
    for (k, law) in laws.iter().enumerate() {
        let steps = if k == 0 { 400 } else { 150 };
        let config = colloid_config(steps, law, 5);
        let (one, act) = simulate(&config, 1, 50);
        assert_eq!(act.particles, 1000);
        if k == 0 {
            assert!(act.rebuilds >= 5, "{act:?}");
        }
        for threads in [2, 4] {
            let (many, _) = simulate(&config, threads, 50);
            assert_identical(&one, &many, &format!("{law}: 1 vs {threads} threads"));
        }
        let moving = |s: &Snapshot| s.state.iter().filter(|p| p.2 != [0; 3]).count();
        assert_eq!(
            moving(one.last().unwrap()),
            1000,
            "{law}: the noise moves everything"
        );
        let (other_seed, _) = simulate(&colloid_config(steps, law, 6), 1, 50);
        assert!(one.last().unwrap() != other_seed.last().unwrap());
    }
    let cold = colloid_config(100, "{ model = \"coulomb\", kappa = 0.3, kT = 0.0 }", 5);
    let (still, _) = simulate(&cold, 2, 50);
    // Only round-off forces act on the (periodically wrapped) lattice.
    let fastest = still
        .iter()
        .flat_map(|s| s.state.iter())
        .flat_map(|p| p.2)
        .map(|b| f64::from_bits(b).abs())
        .fold(0.0, f64::max);
    assert!(
        fastest < 1e-9,
        "kT = 0 from rest must stay at rest: |v| up to {fastest:e}"
    );
}

/// The final state of `gravel run CONFIG --steps STEPS` with the hot loops
/// in the given instruction-set build (`GRAVEL_ISA`), as `--dump-state`
/// writes it (exact bits as hex).
fn dump_with_isa(config: &Path, steps: u64, isa: &str, dir: &Path) -> String {
    let dump = dir.join(format!("dump-{isa}"));
    let out = gravel_command()
        .args([
            OsStr::new("run"),
            config.as_os_str(),
            OsStr::new("--steps"),
            OsStr::new(&steps.to_string()),
            OsStr::new("--threads"),
            OsStr::new("2"),
            OsStr::new("--out"),
            dir.join(format!("out-{isa}")).as_os_str(),
            OsStr::new("--dump-state"),
            dump.as_os_str(),
        ])
        .env(gravel::simd::isa::ISA_VAR, isa)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run says which build its hot loops took: the one asked for, or
    // the widest this processor has below it.
    let expected = gravel::simd::isa::choose(Some(isa), gravel::simd::isa::processor_best())
        .unwrap()
        .name();
    assert!(
        stdout.contains(&format!("hot loops: {expected}")),
        "{stdout}"
    );
    std::fs::read_to_string(dump).unwrap()
}

/// The AVX-512, AVX2 and baseline builds of the hot loops
/// (`gravel::simd::isa`) give the same bits: the chute (the specialised
/// Hooke spring-slider kernel, periodic, no walls, a neighbour rebuild
/// within the 40 steps) and two colliding periodic blocks (the general
/// kernel with Hertz, Mindlin, rolling and spinning; a floor and a
/// ceiling). A build the processor lacks falls to the widest it has, so
/// on such a processor the test compares fewer builds, and checks that
/// each request is honoured.
#[test]
fn every_build_of_the_hot_loops_gives_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let chute = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/chute.toml");
    let blocks = dir.path().join("periodic.toml");
    std::fs::write(&blocks, periodic_config(300).text()).unwrap();
    for (config, steps) in [(chute.as_path(), 40), (blocks.as_path(), 300)] {
        let base = dump_with_isa(config, steps, "baseline", dir.path());
        // Particles and contact records ("h" lines) both compared.
        assert!(base.lines().count() > 1000, "{}", config.display());
        assert!(
            base.lines().any(|l| l.starts_with("h ")),
            "{}",
            config.display()
        );
        for isa in ["avx2", "avx512"] {
            let wider = dump_with_isa(config, steps, isa, dir.path());
            assert!(
                base == wider,
                "{}: the {isa} and baseline builds differ",
                config.display()
            );
        }
    }
}

/// An unknown `GRAVEL_ISA` is refused before step 0 (exit 2), naming the
/// variable and the values allowed.
#[test]
fn an_unknown_instruction_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pour.toml");
    std::fs::write(&config, pour_config(10).text()).unwrap();
    let out = gravel_command()
        .args([OsStr::new("run"), config.as_os_str(), OsStr::new("--quiet")])
        .current_dir(dir.path())
        .env(gravel::simd::isa::ISA_VAR, "avx10")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GRAVEL_ISA=\"avx10\""), "{stderr}");
    assert!(
        stderr.contains("\"baseline\", \"avx2\" or \"avx512\""),
        "{stderr}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "a refused run wrote output"
    );
    // `gravel check` refuses it too, and names the build a good value picks.
    let check = |isa: &str| {
        gravel_command()
            .args([OsStr::new("check"), config.as_os_str()])
            .env(gravel::simd::isa::ISA_VAR, isa)
            .output()
            .unwrap()
    };
    let bad = check("avx10");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("GRAVEL_ISA=\"avx10\""));
    let good = check("baseline");
    assert!(good.status.success());
    let stdout = String::from_utf8_lossy(&good.stdout);
    assert!(stdout.contains("hot loops: baseline build"), "{stdout}");
}
