//! The restart promise: a run stopped at step N and continued from its checkpoint
//! gives the same trajectory to the last bit as a run that never stopped —
//! positions, velocities, angular velocities, forces, every contact-history record,
//! the neighbour-list rebuild steps and the pour's progress — on 1 and 2 threads.
//!
//! Each continuation goes through a real checkpoint file (write, read back).

mod common;

use common::*;
use gravel::io::checkpoint;
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;
use gravel::state::snapshot::Snapshot;

/// A pour (with friction) into the periodic [`channel`], where grains cross the
/// periodic face. The pour runs until 20 ms; runs here last 30 ms, so a cut
/// before 20 ms is mid-pour.
fn channel_pour(steps: u64) -> Config {
    channel(steps).particles(
        pour(
            "glass",
            radius_range(0.0005, 0.0007),
            40000.0,
            0.02,
            region([0.0, 0.0, 0.004], [0.012, 0.01, 0.03]),
        )
        .with("velocity", [0.5, 0.0, -1.0])
        .with("interval", 20),
    )
}

/// Like the LAMMPS chute, small: a frozen rough base (a lattice of fixed grains),
/// 300 grains stacked on it, touching, the top 100 launched faster along the chute (a
/// sheared bed, whose flow the rebuild rule fits), periodic in x and y, gravity tilted 26°,
/// Hooke with a spring-slider.
fn chute_config(steps: u64) -> Config {
    Config::new("chute")
        .run("dt", 1e-4)
        .run("steps", steps)
        .run("seed", 2)
        .run(
            "gravity",
            [0.438_371_146_789_077_4, 0.0, -0.898_794_046_299_167],
        )
        .domain([0.0; 3], [10.0, 10.0, 30.0])
        .periodic([true, true, false])
        .set("domain", "skin", 0.1)
        .material(material("grain", 1.0))
        .contact(
            "normal",
            model("hooke")
                .with("stiffness", 2.0e5)
                .with("damping_rate", 50.0),
        )
        .contact(
            "tangential",
            model("spring_slider")
                .with("friction", 0.5)
                .with("stiffness_ratio", 0.2857142857142857),
        )
        .particles(
            lattice("grain", 0.5, 1.0, region([0.0; 3], [10.0, 10.0, 1.0])).with("frozen", true),
        )
        .particles(
            lattice(
                "grain",
                0.5,
                1.0,
                region([0.0, 0.0, 1.0], [10.0, 10.0, 3.0]),
            )
            .with("velocity", [0.5, 0.0, -0.5]),
        )
        .particles(
            lattice(
                "grain",
                0.5,
                1.0,
                region([0.0, 0.0, 3.0], [10.0, 10.0, 4.0]),
            )
            .with("velocity", [2.0, 0.0, -0.5]),
        )
}

/// What the uninterrupted run saw at a cut.
struct Cut {
    step: u64,
    /// Rebuilds done by the straight run up to the cut.
    rebuilds: u64,
    snap: Snapshot,
}

/// Run `text` straight to `total` on one thread, taking a snapshot at each cut.
/// Returns the cuts, the final snapshot and the straight run's rebuild count.
fn straight(text: &str, total: u64, cuts: &[u64]) -> (Vec<Cut>, Snapshot, u64) {
    pool(1).install(|| {
        let mut sim = Simulation::new(setup_text(text), Box::new(SerialComm)).unwrap();
        let mut out = Vec::new();
        while sim.step < total {
            sim.step().unwrap();
            if cuts.contains(&sim.step) {
                out.push(Cut {
                    step: sim.step,
                    rebuilds: sim.timers.rebuilds,
                    snap: sim.snapshot(),
                });
            }
        }
        (out, sim.snapshot(), sim.timers.rebuilds)
    })
}

/// Write `snap` to a checkpoint file, read it back, continue to `total` on `threads`.
/// Returns the final snapshot and the number of rebuilds of the continuation.
fn continue_from(text: &str, snap: &Snapshot, total: u64, threads: usize) -> (Snapshot, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::checkpoint_path(dir.path(), "cut");
    checkpoint::write(&path, snap, "test").unwrap();
    let back = checkpoint::read(&path).unwrap();
    assert_same_snapshot(&back, snap, "the checkpoint file round trip");
    pool(threads).install(|| {
        let mut sim =
            Simulation::from_snapshot(setup_text(text), Box::new(SerialComm), &back).unwrap();
        assert_eq!(sim.step, snap.step);
        assert_same_snapshot(&sim.snapshot(), snap, "restored state");
        while sim.step < total {
            sim.step().unwrap();
        }
        (sim.snapshot(), sim.timers.rebuilds)
    })
}

fn crosses_periodic_x(s: &Snapshot, half: f64) -> usize {
    let x = |id: u64| {
        let k = s.particles.binary_search_by_key(&id, |p| p.id).unwrap();
        s.particles[k].x.x
    };
    s.pair_keys
        .iter()
        .filter(|&&(a, b)| (x(a) - x(b)).abs() > half)
        .count()
}

#[test]
fn pour_with_friction_walls_and_periodic_axis_restarts_bit_for_bit() {
    let total = 3000;
    // Cuts mid-pour (one on an insertion step), and after the pour ended.
    let cuts = [1037, 1600, 2513];
    let (at, end, rebuilds) = straight(&channel_pour(total).text(), total, &cuts);
    assert_eq!(at.len(), cuts.len());
    let fin = &end;
    assert!(
        fin.particles.len() > 300,
        "{} particles",
        fin.particles.len()
    );
    assert!(
        fin.pair_keys.len() > 300,
        "{} pair records",
        fin.pair_keys.len()
    );
    assert!(
        fin.wall_keys.len() > 50,
        "{} wall records",
        fin.wall_keys.len()
    );
    for cut in &at {
        let s = &cut.snap;
        eprintln!(
            "cut at step {}: {} particles, {} pair and {} wall history records, {} across the periodic face, inserted {:?}",
            cut.step,
            s.particles.len(),
            s.pair_keys.len(),
            s.wall_keys.len(),
            crosses_periodic_x(s, 0.006),
            s.pour_inserted
        );
        assert!(!s.pair_keys.is_empty() && !s.wall_keys.is_empty());
        for threads in [1, 2] {
            let (got, rb) = continue_from(&channel_pour(total).text(), s, total, threads);
            assert!(
                snapshot_bits(&got) == snapshot_bits(fin),
                "restart at step {} on {threads} thread(s) diverged from the straight run",
                cut.step
            );
            assert_eq!(
                rb,
                rebuilds - cut.rebuilds,
                "the restarted run rebuilt its neighbour list on other steps"
            );
        }
    }
    // The cuts exercise what they should.
    assert!(
        at[0].snap.pour_inserted[0] < fin.pour_inserted[0],
        "first cut is mid-pour"
    );
    assert!(
        at[1].snap.pour_inserted[0] < fin.pour_inserted[0],
        "second cut is mid-pour"
    );
    assert!(
        at.iter().any(|c| crosses_periodic_x(&c.snap, 0.006) > 0),
        "some history record spans the periodic face"
    );
    assert!(rebuilds - at[2].rebuilds > 0, "rebuilds after the last cut");
}

#[test]
fn contact_history_is_what_makes_the_restart_exact() {
    // Control: the same continuation with the pair history dropped diverges, so the
    // comparison above does see the history.
    let total = 1500;
    let (at, end, _) = straight(&channel_pour(total).text(), total, &[1100]);
    let mut s = at[0].snap.clone();
    assert!(!s.pair_keys.is_empty());
    s.pair_keys.clear();
    s.pair_values.clear();
    let (got, _) = continue_from(&channel_pour(total).text(), &s, total, 1);
    assert!(snapshot_bits(&got) != snapshot_bits(&end));
}

#[test]
fn chute_with_frozen_base_restarts_bit_for_bit() {
    let total = 1500;
    let (at, end, rebuilds) = straight(&chute_config(total).text(), total, &[677]);
    let s = &at[0].snap;
    let frozen = s.particles.iter().filter(|p| p.frozen).count();
    eprintln!(
        "chute cut at 677: {} particles ({frozen} frozen), {} pair records, rebuilds {} of {rebuilds}, last at {}",
        s.particles.len(),
        s.pair_keys.len(),
        at[0].rebuilds,
        s.rebuilt_at
    );
    assert_eq!(frozen, 100);
    assert!(
        s.pair_keys.len() > 100,
        "{} pair records",
        s.pair_keys.len()
    );
    for threads in [1, 2] {
        let (got, rb) = continue_from(&chute_config(total).text(), s, total, threads);
        assert!(
            snapshot_bits(&got) == snapshot_bits(&end),
            "chute restart on {threads} thread(s) diverged"
        );
        assert_eq!(rb, rebuilds - at[0].rebuilds);
    }
    // The bed's flow fitted at the last rebuild before the cut travels
    // with the checkpoint: without it the continuation rebuilds at other
    // steps (gravel::neighbor::flow).
    assert!(s.flow.iter().any(|&g| g != 0.0), "{:?}", s.flow);
    let forgotten = Snapshot {
        flow: [0.0; 9],
        ..s.clone()
    };
    let (_, rb) = continue_from(&chute_config(total).text(), &forgotten, total, 1);
    assert!(
        rb > rebuilds - at[0].rebuilds,
        "{rb} rebuilds without the flow"
    );
}

#[test]
fn a_snapshot_that_does_not_fit_the_config_is_refused() {
    let total = 100;
    let (at, _, _) = straight(&channel_pour(total).text(), total, &[60]);
    let mut s = at[0].snap.clone();
    s.walls = 1;
    s.wall_keys.clear();
    s.wall_values.clear();
    let e = Simulation::from_snapshot(setup(&channel_pour(total)), Box::new(SerialComm), &s)
        .err()
        .expect("refused");
    assert!(e.contains("walls"), "{e}");
}

/// A WCA colloid driven by stochastic friction alone (configs/colloid.toml,
/// shortened): the noise is keyed by (seed, step, ids), so a restart from a
/// checkpoint continues the same noise sequence and the final state equals
/// the uninterrupted run bit for bit. Control: the run is noisy at all (the
/// lattice starts at rest, so every velocity comes from the noise).
#[test]
fn stochastic_friction_restarts_with_the_same_noise() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/colloid.toml"))
            .unwrap()
            .replace("steps = 20000", "steps = 600");
    let total = 600;
    let (at, end, rebuilds) = straight(&text, total, &[251]);
    assert!(
        end.particles.iter().any(|p| p.v.length() > 0.1),
        "the noise moved the particles"
    );
    for threads in [1, 2] {
        let (got, rb) = continue_from(&text, &at[0].snap, total, threads);
        assert!(
            snapshot_bits(&got) == snapshot_bits(&end),
            "colloid restart on {threads} thread(s) diverged"
        );
        assert_eq!(rb, rebuilds - at[0].rebuilds);
    }
}
