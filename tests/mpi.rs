//! Bitwise reproducibility across MPI ranks and threads (feature `mpi`).
//!
//! Each test writes a config, runs `mpirun -np K gravel run ... --dump-state`
//! for several K (and threads per rank), and compares the dumps: every
//! particle's id, position, velocity and angular velocity, and every
//! contact-history record, as exact bit patterns (design.md, promise 1 and 2).
//! Runs are spawned one at a time (a lock), each with a time limit.
#![cfg(feature = "mpi")]

mod common;

use common::*;
use gravel::state::particles::ParticleRecord;
use std::path::{Path, PathBuf};

/// Run `config` on `np` ranks with `threads` threads each; return the final dump's text.
fn run_dump(dir: &Path, config: &Path, np: usize, threads: usize, extra: &[&str]) -> String {
    run_dump_with_env(dir, config, np, threads, extra, &[])
}

/// As [`run_dump`], with the variables `env` set on every rank.
fn run_dump_with_env(
    dir: &Path,
    config: &Path,
    np: usize,
    threads: usize,
    extra: &[&str],
    env: &[(&str, &str)],
) -> String {
    let tag = env.iter().map(|(_, v)| format!("-{v}")).collect::<String>();
    let dump = dir.join(format!("dump-{np}x{threads}{tag}.txt"));
    let out = dir.join(format!("out-{np}x{threads}{tag}"));
    let mut args = vec![
        "run".to_string(),
        config.display().to_string(),
        "--quiet".into(),
        "--threads".into(),
        threads.to_string(),
        "--out".into(),
        out.display().to_string(),
        "--dump-state".into(),
        dump.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun_with_env(np, env, &args, dir);
    assert!(o.status.success(), "{}", describe(&o));
    std::fs::read_to_string(&dump).expect("dump written")
}

/// Step 0's frame of `config` (written as `name.h5`) on 1 rank, sorted by
/// id, once 2, 3 and 4 ranks are found to write the same one, bit for bit.
fn step0_the_same_on_1_to_4_ranks(
    dir: &Path,
    config: &Path,
    name: &str,
) -> gravel::io::read::FrameOwned {
    let frame0 = |np: usize| {
        run_dump(dir, config, np, 1, &[]);
        let path = dir.join(format!("out-{np}x1/{name}.h5"));
        let mut f = gravel::io::read::read_frame(&path, 0).unwrap();
        f.sort_by_id();
        f
    };
    let one = frame0(1);
    for np in [2, 3, 4] {
        assert_eq!(
            format!("{:?}", frame0(np)),
            format!("{one:?}"),
            "{np} ranks"
        );
    }
    one
}

/// The frame's first rows are the particles `want`: ids, positions and
/// radii, bit for bit.
fn assert_rows_are(frame: &gravel::io::read::FrameOwned, want: &[ParticleRecord]) {
    let bits = |x: [f64; 3]| x.map(f64::to_bits);
    for (k, p) in want.iter().enumerate() {
        assert_eq!(frame.id[k], p.id);
        assert_eq!(bits(frame.position[k]), bits(p.x.to_array()), "id {}", p.id);
        assert_eq!(frame.radius[k].to_bits(), p.radius.to_bits(), "id {}", p.id);
    }
}

/// A frictional bed (spring-slider, epsd rolling resistance, EDEM spinning
/// friction) settling and flowing over a rotating half-cylinder bump,
/// periodic along the flow (x), with walls on the other sides and a pouring
/// source feeding it: migration, periodic ghosts across ranks, wall history
/// and insertion all take part.
fn bed() -> Config {
    Config::new("bed")
        .run("dt", 1.5e-5)
        .run("steps", 4000)
        .run("seed", 7)
        .run("gravity", [3.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.04])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .contact(
            "rolling",
            model("epsd").with("friction", 0.2).with("damping", 0.3),
        )
        .contact("spinning", model("edem").with("friction", 0.3))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], "glass"))
        .wall(plane([0.0, 0.02, 0.0], [0.0, -1.0, 0.0], "glass"))
        .wall(
            cylinder([0.02, 0.0, 0.0], [0.0, 1.0, 0.0], 0.004, false, "glass")
                .with("angular_velocity", 20.0),
        )
        .particles(random(
            "glass",
            radius_range(0.0008, 0.0012),
            300,
            region([0.0, 0.0, 0.0045], [0.04, 0.02, 0.012]),
        ))
        .particles(
            pour(
                "glass",
                0.001,
                4000.0,
                0.03,
                region([0.0, 0.0, 0.025], [0.04, 0.02, 0.035]),
            )
            .with("velocity", [0.0, 0.0, -0.5])
            .with("interval", 200),
        )
        .output("every", 0)
        .output("thermo_every", 500)
}

#[test]
fn frictional_bed_is_bit_identical_on_1_to_4_ranks_and_2_threads() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "bed.toml", &bed().text());
    let reference = run_dump(dir.path(), &config, 1, 1, &[]);
    let (n, pair, wall) = dump_counts(&reference);
    // The test means something only if contacts with history exist at the end.
    assert!(n > 300, "insertion ran: {n} particles");
    assert!(pair > 200, "pair history records: {pair}");
    assert!(wall > 20, "wall history records: {wall}");
    for (np, threads) in [(2, 1), (3, 1), (4, 1), (2, 2), (1, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &[]);
        assert_same_dump(
            &reference,
            &other,
            &format!("{np} ranks x {threads} threads"),
        );
    }
}

#[test]
fn history_record_counts_match_one_rank_every_250_steps() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "bed.toml", &bed().run("steps", 1500).text());
    let mut seen = 0;
    let dumps = |np: usize| -> Vec<String> {
        let base = dir.path().join(format!("every-{np}"));
        let o = mpirun(
            np,
            &[
                "run",
                config.to_str().unwrap(),
                "--quiet",
                "--threads",
                "1",
                "--out",
                dir.path().join(format!("o{np}")).to_str().unwrap(),
                "--dump-state",
                base.to_str().unwrap(),
                "--dump-every",
                "250",
            ],
            dir.path(),
        );
        assert!(o.status.success(), "{}", describe(&o));
        (1..=6)
            .map(|k| {
                let mut name = base.clone().into_os_string();
                name.push(format!(".{:09}", 250 * k));
                std::fs::read_to_string(PathBuf::from(name)).expect("periodic dump")
            })
            .collect()
    };
    let one = dumps(1);
    let three = dumps(3);
    for (k, (a, b)) in one.iter().zip(&three).enumerate() {
        let (ca, cb) = (dump_counts(a), dump_counts(b));
        assert_eq!(
            ca,
            cb,
            "step {}: (particles, pair, wall) records",
            250 * (k + 1)
        );
        seen += ca.1 + ca.2;
        assert_same_dump(a, b, &format!("step {}", 250 * (k + 1)));
    }
    assert!(seen > 0, "some history records existed along the way");
}

/// The chute benchmark (32,000 spheres, Hooke + spring-slider, frozen base),
/// a few hundred steps.
#[test]
fn chute_is_bit_identical_on_1_2_3_4_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = root.join("configs/chute.toml");
    let steps = ["--steps", "200"];
    let reference = run_dump(dir.path(), &config, 1, 1, &steps);
    let (n, pair, wall) = dump_counts(&reference);
    assert_eq!(n, 32000);
    assert!(pair > 20000, "pair history records: {pair}");
    assert_eq!(wall, 0);
    for (np, threads) in [(2, 1), (3, 1), (4, 1), (2, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &steps);
        assert_same_dump(
            &reference,
            &other,
            &format!("chute, {np} ranks x {threads} threads"),
        );
    }
    // The ranks of one node read each other's ghost states in place; by
    // message, as ranks on different nodes do, the bits are the same.
    let halo = gravel::parallel::node_pages::HALO_VAR;
    for np in [2, 3] {
        let other = run_dump_with_env(dir.path(), &config, np, 1, &steps, &[(halo, "messages")]);
        assert_same_dump(
            &reference,
            &other,
            &format!("chute, {np} ranks, halo by messages"),
        );
    }
}

/// An unknown `GRAVEL_HALO` is refused on every rank before step 0 (exit
/// 2), naming the variable, its value and the values allowed.
#[test]
fn an_unknown_halo_transport_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "bed.toml", &bed().text());
    let out = dir.path().join("out");
    let halo = gravel::parallel::node_pages::HALO_VAR;
    let o = mpirun_with_env(
        2,
        &[(halo, "pigeons")],
        &[
            "run",
            config.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(stderr.contains("GRAVEL_HALO=\"pigeons\""), "{stderr}");
    assert!(
        stderr.contains("\"shared\"") && stderr.contains("\"messages\""),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused run wrote output");
}

/// Two spheres slide along the floor across the boundary between two ranks
/// (x = 0.02), the upper one sliding on the lower: both the wall contact and
/// the pair contact carry a loaded tangential spring through the crossing.
/// Forces and torques of every step must match the 1-rank run bit for bit.
/// On 4 ranks, two of them hold no particle at all and the run goes on.
fn crossing() -> Config {
    Config::new("crossing")
        .run("dt", 1e-5)
        .run("steps", 600)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.04, 0.02])
        .periodic([true, true, false])
        .material(
            material("steel", 7800.0)
                .with("youngs_modulus", 2.0e8)
                .with("poisson_ratio", 0.3),
        )
        .contact("normal", hertz(0.7))
        .contact("tangential", mindlin(0.3))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "steel"))
        .particles(
            list(
                "steel",
                0.001,
                vec![[0.0185, 0.0101, 0.000999], [0.0185, 0.0101, 0.0030]],
            )
            .with("velocity", [[0.5, 0.0, 0.0], [0.62, 0.0, 0.0]]),
        )
        .output("every", 2)
        .output("fields", ["velocity", "omega", "force", "torque"])
        .output("thermo_every", 100)
}

#[test]
fn sliding_contact_keeps_its_spring_across_a_rank_boundary() {
    use gravel::io::read::{list_frames, read_frame};
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "crossing.toml", &crossing().text());
    let one = run_dump(dir.path(), &config, 1, 1, &[]);
    let h5 = |np: usize| dir.path().join(format!("out-{np}x1/crossing.h5"));
    let steps = list_frames(&h5(1)).unwrap();
    assert_eq!(steps.len(), 301);
    // The lower sphere crosses x = 0.02 while its wall contact slides.
    let x_of = |step: u64| read_frame(&h5(1), step).unwrap();
    let (first, last) = (x_of(0), x_of(600));
    assert!(first.position[0][0] < 0.02 && last.position[0][0] > 0.02);
    let crossing = steps
        .iter()
        .copied()
        .find(|&s| x_of(s).position[0][0] >= 0.02)
        .unwrap();
    let at = x_of(crossing);
    let force = |name: &str, row: usize| -> [f64; 3] {
        at.fields.iter().find(|(n, _)| n == name).unwrap().1[row]
    };
    assert!(
        force("force", 0)[0].abs() > 1e-4,
        "the lower sphere is sliding (friction along x) at the crossing, step {crossing}: {:?}",
        force("force", 0)
    );
    for np in [2, 4] {
        let other = run_dump(dir.path(), &config, np, 1, &[]);
        assert_same_dump(&one, &other, &format!("{np} ranks"));
        for &s in &steps {
            let (a, mut b) = (
                read_frame(&h5(1), s).unwrap(),
                read_frame(&h5(np), s).unwrap(),
            );
            b.sort_by_id();
            assert_eq!(a.id, b.id);
            assert_eq!(a.position, b.position, "positions, step {s}, {np} ranks");
            assert_eq!(
                a.fields, b.fields,
                "forces/torques/velocities, step {s}, {np} ranks"
            );
        }
        // The sidecar, grown frame by frame (301 frames: its particles'
        // room filled and moved on several times), has the same bytes on every rank
        // count: rank 0 keeps its state across the frames every rank writes.
        let sidecar = |np: usize| {
            std::fs::read(dir.path().join(format!("out-{np}x1/crossing.xdmf"))).unwrap()
        };
        assert!(sidecar(np) == sidecar(1), "the sidecar on {np} ranks");
    }
}

/// An isolated cluster in a periodic box, no walls or gravity, spinning and
/// colliding across rank boundaries: total momentum stays at its initial
/// value to round-off (no force counted twice or missed at boundaries).
/// Two clouds cross at 1 m/s and one sphere at 4.8 m/s runs through them:
/// impacts as fast as the contact allows (a Hertz overlap below `R*`, the
/// bound a run stops at; 40 m/s, as here before that bound, reached 4 R*).
#[test]
fn momentum_is_conserved_across_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Config::new("cluster")
        .run("dt", 1e-5)
        .run("steps", 1500)
        .run("seed", 3)
        .domain([0.0; 3], [0.03; 3])
        .periodic([true; 3])
        .material(glass())
        .contact("normal", hertz(0.8))
        .contact("tangential", mindlin(0.4))
        .particles(
            random("glass", 0.001, 200, region([0.0; 3], [0.03; 3]))
                .with("velocity", [0.3, -0.2, 0.1]),
        )
        .particles(
            random("glass", 0.001, 200, region([0.0; 3], [0.03; 3]))
                .with("velocity", [-0.5, 0.4, -0.3]),
        )
        .particles(
            list("glass", 0.001, vec![[0.015, 0.015, 0.015]])
                .with("velocity", [[-4.0, 2.5, 1.0]])
                .with("omega", [[100.0, 0.0, -50.0]]),
        )
        .output("every", 0);
    let config = write_file(dir.path(), "cluster.toml", &cluster.text());
    let dump = run_dump(dir.path(), &config, 3, 1, &[]);
    let momentum = |text: &str| -> [f64; 3] {
        let mut p = [0.0; 3];
        for l in text.lines().filter(|l| l.starts_with("p ")) {
            let f: Vec<f64> = l
                .split(' ')
                .skip(2)
                .map(|h| f64::from_bits(u64::from_str_radix(h, 16).unwrap()))
                .collect();
            for a in 0..3 {
                p[a] += f[3 + a]; // equal masses: Σ v
            }
        }
        p
    };
    let end = momentum(&dump);
    let start = [
        200.0 * (0.3 - 0.5) - 4.0,
        200.0 * (-0.2 + 0.4) + 2.5,
        200.0 * (0.1 - 0.3) + 1.0,
    ];
    for a in 0..3 {
        // 401 velocities of order 0.1-5 m/s summed: round-off ~1e-13.
        assert!(
            (end[a] - start[a]).abs() < 1e-9,
            "axis {a}: Σv = {} at the end, {} at the start",
            end[a],
            start[a]
        );
    }
    let (_, pair, _) = dump_counts(&dump);
    assert!(pair > 0, "collisions happened");
}

#[test]
fn a_grid_thinner_than_the_interaction_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(
        dir.path(),
        "thin.toml",
        &crossing().set("parallel", "grid", [20, 1, 1]).text(),
    );
    let o = mpirun(
        1,
        &["check", config.to_str().unwrap(), "--ranks", "20"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("thin.toml")
            && err.contains("parallel.grid")
            && err.contains("interaction range"),
        "{err}"
    );
    // The same under mpirun with a grid that does not match the rank count.
    let config = write_file(
        dir.path(),
        "mismatch.toml",
        &crossing().set("parallel", "grid", [3, 1, 1]).text(),
    );
    let o = mpirun(2, &["run", config.to_str().unwrap(), "--quiet"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("parallel.grid") && err.contains("2 rank"),
        "{err}"
    );
    assert_eq!(
        err.matches("error:").count(),
        1,
        "one message, from rank 0: {err}"
    );
}

/// A WCA colloid held at kT by stochastic friction alone: the Philox pair
/// noise is keyed by ids and step, so every rank that evaluates a boundary
/// pair draws the same numbers.
#[test]
fn stochastic_friction_is_bit_identical_on_1_2_3_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = root.join("configs/colloid.toml");
    let steps = ["--steps", "300"];
    let reference = run_dump(dir.path(), &config, 1, 1, &steps);
    assert_eq!(dump_counts(&reference).0, 1000);
    for (np, threads) in [(2, 1), (3, 1), (2, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &steps);
        assert_same_dump(
            &reference,
            &other,
            &format!("colloid, {np} ranks x {threads} threads"),
        );
    }
}

/// Checkpoint on 3 ranks at step 2000, restart on 2 ranks and run to 4000:
/// the final state, contact history included, equals the uninterrupted
/// 1-rank run bit for bit (design.md: restarts on any rank count). The
/// checkpoint's records are written in pieces of 5 values (the test hook
/// [`gravel::io::collective::PIECE_HOOK`]): hundreds of collective writes
/// per table, a different number of them on each rank.
#[test]
fn checkpoint_on_3_ranks_restarts_on_2_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(
        dir.path(),
        "bed.toml",
        &bed().output("checkpoint_every", 1000).text(),
    );
    let straight = run_dump(dir.path(), &config, 1, 1, &[]);
    let out = dir.path().join("split");
    let o = mpirun_with_env(
        3,
        &[(gravel::io::collective::PIECE_HOOK, "5")],
        &[
            "run",
            config.to_str().unwrap(),
            "--quiet",
            "--threads",
            "1",
            "--steps",
            "2000",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", describe(&o));
    let ckpt = out.join("bed.checkpoint.h5");
    let dump = dir.path().join("restarted.txt");
    let o = mpirun(
        2,
        &[
            "run",
            config.to_str().unwrap(),
            "--quiet",
            "--threads",
            "1",
            "--restart",
            ckpt.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dump-state",
            dump.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", describe(&o));
    let restarted = std::fs::read_to_string(&dump).unwrap();
    assert!(dump_counts(&straight).1 > 200);
    assert_same_dump(
        &straight,
        &restarted,
        "3-rank checkpoint restarted on 2 ranks",
    );
}

/// The particles of step 0 are the same bits on 1 to 4 ranks, and those
/// the serial set-up lists: a CSV file's rows (each rank reads a slice of
/// its bytes and sends the particles to their owners; the rows are in
/// scrambled order, so every slice holds particles of every rank), a
/// lattice in a cylinder (each rank generates its own sites: no rank holds
/// the lattice), a random block that places its spheres around the
/// lattice without storing it, and a list, in a box periodic along x.
#[test]
fn initial_particles_are_the_same_bits_on_1_to_4_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n");
    for k in 0..224usize {
        let i = (k * 37) % 224;
        let (x, y, z) = (i % 16, (i / 16) % 7, i / 112);
        csv += &format!(
            "{},{},{},{},{},0.001,2500,0,0,-0.1,0,{},0\n",
            900 + i,
            i % 2,
            0.002 + 0.0025 * x as f64,
            0.002 + 0.0025 * y as f64,
            0.034 + 0.004 * z as f64,
            i as f64 * 0.5
        );
    }
    std::fs::write(dir.path().join("top.csv"), csv).unwrap();
    let cylinder = Table::new()
        .with("kind", "cylinder")
        .with("center", [0.02, 0.01, 0.012])
        .with("axis", [1.0, 0.0, 0.0])
        .with("radius", 0.009)
        .with("length", 0.038);
    let text = Config::new("bed")
        .run("dt", 1.5e-5)
        .run("steps", 10)
        .run("seed", 11)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.04])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .output("every", 10)
        .output("fields", ["velocity"])
        .particles(file("glass", "top.csv"))
        .particles(lattice("glass", 0.001, 0.0021, cylinder).with("count", 700))
        .particles(random(
            "glass",
            radius_range(0.0006, 0.0009),
            200,
            region([0.0, 0.0, 0.001], [0.04, 0.02, 0.025]),
        ))
        .particles(list("glass", 0.001, vec![[0.02, 0.01, 0.03]]))
        .text();
    let config = write_file(dir.path(), "bed.toml", &text);
    let want = gravel::config::Setup::from_file(&config).unwrap();
    let mut want = want.initial.to_vec();
    assert_eq!(want.len(), 224 + 700 + 200 + 1);
    want.sort_by_key(|p| p.id);
    let one = step0_the_same_on_1_to_4_ranks(dir.path(), &config, "bed");
    assert_eq!(one.id.len(), want.len());
    assert_rows_are(&one, &want);
}

/// A random block of many cells (8,000 spheres, about 60 cells of 128):
/// each rank places only the cells near its subdomain, and step 0 is the
/// same bits on 1 to 4 ranks as the serial set-up's walk over all of them,
/// in a box periodic along x (the cells wrap) with a floor cutting the
/// region.
#[test]
fn a_random_block_of_many_cells_is_the_same_bits_on_1_to_4_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let text = Config::new("fill")
        .run("dt", 5e-6)
        .run("steps", 1)
        .run("seed", 5)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.02])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .wall(plane([0.0, 0.0, 0.002], [0.0, 0.0, 1.0], "glass"))
        .output("every", 1)
        .particles(random(
            "glass",
            radius_range(0.00025, 0.00035),
            8000,
            region([0.0, 0.0, 0.0], [0.04, 0.02, 0.02]),
        ))
        .text();
    let config = write_file(dir.path(), "fill.toml", &text);
    let want = gravel::config::Setup::from_file(&config).unwrap();
    assert!(want.initial.fills().all(|(_, f)| f.cells() >= 40));
    let want = want.initial.to_vec();
    assert_eq!(want.len(), 8000);
    for p in &want {
        assert!(p.x.z - p.radius >= 0.002, "id {} is below the floor", p.id);
    }
    let one = step0_the_same_on_1_to_4_ranks(dir.path(), &config, "fill");
    assert_eq!(one.id.len(), want.len());
    assert_rows_are(&one, &want);
}

/// One run's bed seeds the next on any number of ranks: the last frame of
/// a 3-rank run (its rows in the ranks' order), or its checkpoint, read by
/// a `file` block, with a random block placed around it, gives the same
/// step 0, bit for bit, on 1 to 4 ranks, and the file's particles are the
/// frame's.
#[test]
fn a_bed_read_from_a_3_rank_frame_is_the_same_bits_on_1_to_4_ranks() {
    use gravel::io::read::read_frame;
    let dir = tempfile::tempdir().unwrap();
    let first = Config::new("first")
        .run("dt", 5e-6)
        .run("steps", 20)
        .run("seed", 2)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.04])
        .material(glass())
        .contact("normal", hertz(0.5))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
        .output("every", 10)
        .output("fields", ["velocity", "omega"])
        .particles(random(
            "glass",
            radius_range(0.0006, 0.0009),
            600,
            region([0.0; 3], [0.04, 0.02, 0.015]),
        ))
        .text();
    let first = write_file(dir.path(), "first.toml", &first);
    run_dump(dir.path(), &first, 3, 1, &[]);
    let source = dir.path().join("out-3x1/first.h5");
    let mut frame = read_frame(&source, 20).unwrap();
    frame.sort_by_id();
    let text = Config::new("seeded")
        .run("dt", 5e-6)
        .run("steps", 1)
        .run("seed", 9)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.04])
        .material(glass())
        .contact("normal", hertz(0.5))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
        .output("every", 1)
        .particles(file("glass", "out-3x1/first.h5"))
        .particles(random(
            "glass",
            radius_range(0.0006, 0.0009),
            300,
            region([0.0, 0.0, 0.02], [0.04, 0.02, 0.04]),
        ))
        .text();
    let config = write_file(dir.path(), "seeded.toml", &text);
    let one = step0_the_same_on_1_to_4_ranks(dir.path(), &config, "seeded");
    assert_eq!(one.id.len(), 900);
    assert_eq!(one.id[..600], frame.id[..], "the file's ids come first");
    let bits = |x: &[[f64; 3]]| x.iter().map(|v| v.map(f64::to_bits)).collect::<Vec<_>>();
    assert_eq!(bits(&one.position[..600]), bits(&frame.position));
    // The 3-rank run's checkpoint seeds the same way: each rank reads a
    // slice of its rows.
    let text = (text.replace("out-3x1/first.h5", "out-3x1/first.checkpoint.h5"))
        .replace("\"seeded\"", "\"from_checkpoint\"");
    let config = write_file(dir.path(), "from-checkpoint.toml", &text);
    let again = step0_the_same_on_1_to_4_ranks(dir.path(), &config, "from_checkpoint");
    assert_eq!(again.id, one.id);
    assert_eq!(bits(&again.position[..600]), bits(&frame.position));
}

/// A `file` bed that later blocks must avoid is never gathered: each rank
/// holds its slice's spheres and fetches the others' near the cells it
/// places. A random count placed in and around the bed (periodic along
/// x), a relaxed fill over its top, a lattice checked against the fills
/// and an outlet checked against every particle give the same step 0, bit
/// for bit, on 1 to 4 ranks as the serial set-up, and no two particles
/// overlap (periodic images included).
#[test]
fn fills_around_a_file_bed_are_the_same_bits_on_1_to_4_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n");
    // 13 x 6 x 4 spheres 3 mm apart, in scrambled rows: every CSV slice
    // holds spheres of every rank's neighbourhood.
    let n = 13 * 6 * 4;
    for k in 0..n {
        let i = (k * 53) % n;
        let (x, y, z) = (i % 13, (i / 13) % 6, i / 78);
        csv += &format!(
            "{},0,{},{},{},0.001,2500,0,0,0,0,0,0\n",
            i,
            0.0015 + 0.003 * x as f64,
            0.0015 + 0.003 * y as f64,
            0.002 + 0.003 * z as f64
        );
    }
    std::fs::write(dir.path().join("bed.csv"), csv).unwrap();
    let relaxed = Table::new()
        .with("kind", "random")
        .with("material", "glass")
        .with("radius", 0.0005)
        .with("fill", 0.04)
        .with("region", region([0.0, 0.0, 0.009], [0.04, 0.02, 0.016]));
    let text = Config::new("around")
        .run("dt", 5e-6)
        .run("steps", 1)
        .run("seed", 17)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.04, 0.02, 0.03])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
        .output("every", 1)
        .particles(file("glass", "bed.csv"))
        .particles(random(
            "glass",
            radius_range(0.0003, 0.0004),
            3000,
            region([0.0, 0.0, 0.0], [0.04, 0.02, 0.013]),
        ))
        .particles(relaxed)
        .particles(lattice(
            "glass",
            0.001,
            0.0025,
            region([0.0, 0.0, 0.02], [0.04, 0.02, 0.026]),
        ))
        .push(
            "outlet",
            Table::new().with("region", region([0.0, 0.0, 0.028], [0.04, 0.02, 0.03])),
        )
        .text();
    let config = write_file(dir.path(), "around.toml", &text);
    let want = gravel::config::Setup::from_file(&config).unwrap();
    let mut want = want.initial.to_vec();
    want.sort_by_key(|p| p.id);
    assert!(want.len() > n + 3000 + 100, "{}", want.len());
    // The count fills the bed's gaps: many of its spheres lie among it.
    let among = (want.iter())
        .filter(|p| p.id >= n as u64 && p.id < n as u64 + 3000 && p.x.z < 0.011)
        .count();
    assert!(among > 1500, "{among}");
    let length = 0.04;
    for (a, p) in want.iter().enumerate() {
        for q in &want[a + 1..] {
            let mut d = q.x - p.x;
            d.x -= length * (d.x / length).round();
            assert!(
                d.length() >= p.radius + q.radius,
                "ids {} and {} overlap by {:e}",
                p.id,
                q.id,
                p.radius + q.radius - d.length()
            );
        }
    }
    let one = step0_the_same_on_1_to_4_ranks(dir.path(), &config, "around");
    assert_eq!(one.id.len(), want.len());
    assert_rows_are(&one, &want);
}

/// No rank walks a whole lattice at set-up: each counts, checks and
/// places its part of the sites (an even share of the site indices). A
/// fault in any part is refused on 2 and 3 ranks with the message one
/// process gives, naming the first faulty particle in id order, once, and
/// nothing is written: a lattice reaching into a wall (its top layers, in
/// the last rank's part), a lattice over a listed sphere (in the middle
/// part), and a lattice reaching into an outlet.
#[test]
fn a_lattice_checked_by_parts_refuses_the_first_fault_as_one_process_does() {
    let dir = tempfile::tempdir().unwrap();
    let base = |name: &str| {
        Config::new(name)
            .run("dt", 1e-5)
            .run("steps", 2)
            .run("seed", 1)
            .run("gravity", [0.0, 0.0, -9.81])
            .domain([0.0; 3], [0.04, 0.02, 0.02])
            .material(glass())
            .contact("normal", hertz(0.5))
            .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
    };
    let box_lattice = || {
        lattice(
            "glass",
            0.0005,
            0.0012,
            region([0.0; 3], [0.04, 0.02, 0.012]),
        )
    };
    let run = |name: &str, text: &str, np: usize| {
        let path = write_file(dir.path(), &format!("{name}.toml"), text);
        let out = dir.path().join(format!("out-{name}-{np}"));
        let args = [
            "run",
            path.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        (mpirun(np, &args, dir.path()), out)
    };
    let refused = |name: &str, text: &str, want: &[&str]| {
        let mut messages = Vec::new();
        for np in [1, 2, 3] {
            let (o, out) = run(name, text, np);
            assert_eq!(o.status.code(), Some(2), "{name} on {np}: {}", describe(&o));
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            assert_eq!(
                err.matches("error:").count(),
                1,
                "{name} on {np}: one message: {err}"
            );
            for w in want {
                assert!(err.contains(w), "{name} on {np}: `{w}` missing from: {err}");
            }
            assert!(!out.exists(), "{name} on {np}: nothing written");
            // The message, without what mpirun adds after it.
            let line = err
                .lines()
                .find(|l| l.starts_with("error:"))
                .unwrap_or_default();
            messages.push(line.to_string());
        }
        assert_eq!(
            messages[1], messages[0],
            "{name}: 2 ranks say what one process says"
        );
        assert_eq!(
            messages[2], messages[0],
            "{name}: 3 ranks say what one process says"
        );
    };
    // The good lattice runs on 3 ranks.
    let good = base("good").particles(box_lattice()).text();
    let (o, _) = run("good", &good, 3);
    assert!(o.status.success(), "{}", describe(&o));
    // A ceiling tilted down towards +x cuts the top layers' far end: their
    // ids are the largest, in the last part.
    let tilted = base("wall")
        .wall(plane([0.04, 0.0, 0.0115], [0.05, 0.0, -1.0], "glass"))
        .particles(box_lattice())
        .text();
    refused("wall", &tilted, &["wall[1]"]);
    // A listed sphere in the middle of the lattice.
    let over = base("over")
        .particles(list("glass", 0.0005, vec![[0.0201, 0.0101, 0.0061]]))
        .particles(box_lattice())
        .text();
    refused(
        "over",
        &over,
        &["particles[1]: lattice particle id", "overlaps"],
    );
    // An outlet over the far end of the lattice's top layer.
    let outlet = base("outlet")
        .particles(box_lattice())
        .push(
            "outlet",
            Table::new().with("region", region([0.035, 0.0, 0.0105], [0.04, 0.02, 0.012])),
        )
        .text();
    refused("outlet", &outlet, &["outlet[0]", "starts inside"]);
}

/// Frames and checkpoints are written by every rank at once (parallel
/// HDF5, each rank's rows at its offset): the frames of a 3-rank run hold
/// the rows of the 1-rank run, bit for bit, once sorted by id, and the
/// 3-rank checkpoint, read whole, is the 1-rank checkpoint.
#[test]
fn frames_and_checkpoint_of_3_ranks_are_the_1_rank_ones_sorted_by_id() {
    use gravel::io::checkpoint;
    use gravel::io::read::{list_frames, read_frame};
    let dir = tempfile::tempdir().unwrap();
    let text = bed()
        .run("steps", 3000)
        .output("every", 1000)
        .output("fields", ["velocity", "omega", "force", "torque"])
        .text();
    let config = write_file(dir.path(), "bed.toml", &text);
    let out = |np: usize| dir.path().join(format!("out-{np}x1"));
    run_dump(dir.path(), &config, 1, 1, &[]);
    run_dump(dir.path(), &config, 3, 1, &[]);
    let h5 = |np: usize| out(np).join("bed.h5");
    let steps = list_frames(&h5(1)).unwrap();
    assert_eq!(steps, [0, 1000, 2000, 3000]);
    assert_eq!(list_frames(&h5(3)).unwrap(), steps);
    let mut in_rank_order = 0;
    for &s in &steps {
        let one = read_frame(&h5(1), s).unwrap();
        let mut three = read_frame(&h5(3), s).unwrap();
        assert!(one.id.windows(2).all(|w| w[0] < w[1]), "1 rank: sorted");
        in_rank_order += usize::from(three.id.windows(2).any(|w| w[0] > w[1]));
        three.sort_by_id();
        // Debug prints every f64 exactly, so equal text is equal bits.
        assert_eq!(format!("{one:?}"), format!("{three:?}"), "frame {s}");
    }
    assert!(in_rank_order > 0, "the 3-rank frames follow the ranks");
    let whole = |np: usize| checkpoint::read(&out(np).join("bed.checkpoint.h5")).unwrap();
    let (one, three) = (whole(1), whole(3));
    assert!(
        one.pair_keys.len() > 100,
        "history: {}",
        one.pair_keys.len()
    );
    assert_eq!(format!("{one:?}"), format!("{three:?}"));
}

/// A shaken, turning drum closed by caps that turn with it (a finite
/// cylinder, axis y, with `caps`; the drum turns by `rotation` about its
/// own axis and shakes up and down along a piecewise-linear `path`), with
/// frictional, rolling-resistant grains against the side and both caps.
fn shaken_drum() -> Config {
    let drum = cylinder(DRUM_AXIS_POINT, [0.0, 1.0, 0.0], 0.012, true, "glass")
        .with("name", "drum")
        .with("length", 0.01)
        .with("caps", true)
        .with("path", drum_shake());
    drum_with(drum.with("rotation", drum_turn()))
}

/// The drum's axis point (its middle).
const DRUM_AXIS_POINT: [f64; 3] = [0.015, 0.006, 0.015];

/// The drum's turn about its own axis.
fn drum_turn() -> Value {
    raw("{ axis = [0, 1, 0], point = [0.015, 0.006, 0.015], angular_velocity = 8.0 }")
}

/// The drum's shake, up and down twice.
fn drum_shake() -> Value {
    raw("{ times = [0, 0.02, 0.04, 0.06, 0.08], offsets = [[0, 0, 0], [0, 0, 0.0005], [0, 0, 0], [0, 0, 0.0005], [0, 0, 0]] }")
}

/// The same drum as an STL mesh in `dir` (`drum.stl`): its side in 24
/// quads of two triangles and each cap in 24 triangles about its centre,
/// every normal pointing in; the mesh turns and shakes as a whole, so
/// it is searched for each grain near it among the triangles listed at
/// the rebuild, in its own frame.
fn shaken_mesh_drum(dir: &Path) -> Config {
    let (r, half, n) = (0.012, 0.005, 24);
    let c = DRUM_AXIS_POINT;
    let at = |i: usize, y: f64| {
        let a = 2.0 * std::f64::consts::PI * (i % n) as f64 / n as f64;
        [c[0] + r * a.cos(), c[1] + y, c[2] + r * a.sin()]
    };
    let (front, back) = ([c[0], c[1] - half, c[2]], [c[0], c[1] + half, c[2]]);
    let mut tris = Vec::new();
    for i in 0..n {
        let (a, b) = (at(i, -half), at(i + 1, -half));
        let (d, e) = (at(i, half), at(i + 1, half));
        tris.extend([[a, d, b], [b, d, e], [front, a, b], [back, e, d]]);
    }
    // Each triangle's corners ordered so that its normal (right-hand
    // rule) points into the drum.
    let triangles: Vec<stl_io::Triangle> = (tris.iter())
        .map(|&[a, b, c]| {
            let (u, v) = (sub3(b, a), sub3(c, a));
            let m = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            let centroid = [0, 1, 2].map(|k| (a[k] + b[k] + c[k]) / 3.0);
            let inward = sub3(DRUM_AXIS_POINT, centroid);
            let (b, c, m) = if m.iter().zip(inward).map(|(m, i)| m * i).sum::<f64>() < 0.0 {
                (c, b, m.map(|x| -x))
            } else {
                (b, c, m)
            };
            let l = m.iter().map(|x| x * x).sum::<f64>().sqrt();
            stl_io::Triangle {
                normal: stl_io::Normal::new(m.map(|x| (x / l) as f32)),
                vertices: [a, b, c].map(|p| stl_io::Vertex::new(p.map(|x| x as f32))),
            }
        })
        .collect();
    let path = dir.join("drum.stl");
    let mut file = std::fs::File::create(&path).unwrap();
    stl_io::write_stl(&mut file, triangles.iter()).unwrap();
    let drum = Table::new()
        .with("name", "drum")
        .with("kind", "mesh")
        .with("path", path.to_str().unwrap())
        .with("material", "glass")
        .with("trajectory", drum_shake());
    drum_with(drum.with("rotation", drum_turn()))
}

fn sub3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// 200 frictional, rolling-resistant grains in the drum `drum`.
fn drum_with(drum: Table) -> Config {
    Config::new("drum")
        .run("dt", 1.5e-5)
        .run("steps", 6000)
        .run("seed", 11)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.03, 0.012, 0.03])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .contact(
            "rolling",
            model("epsd").with("friction", 0.2).with("damping", 0.3),
        )
        .wall(drum)
        .particles(random(
            "glass",
            radius_range(0.0006, 0.0008),
            200,
            region([0.0075, 0.0025, 0.0075], [0.0225, 0.0095, 0.0225]),
        ))
        .output("every", 0)
        .output("thermo_every", 400)
}

/// The shaken drum gives the same bed, contact history with the side and
/// both caps included, on 1 and 2 ranks and 2 threads; and a checkpoint
/// taken on 2 ranks at step 3000 restarts on 1 rank to the same end, bit
/// for bit: moving walls are placed from the step alone.
#[test]
fn a_shaken_drum_with_turning_caps_is_bit_identical_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let reference = drum_is_bit_identical_and_restarts(dir.path(), shaken_drum());
    let (n, pair, wall) = dump_counts(&reference);
    // Contacts with history with the side (wall 0) and both caps (1, 2).
    let on_wall = |w: usize| {
        reference
            .lines()
            .filter(|l| l.starts_with("h ") && l.split(' ').nth(2) == Some(&format!("w{w:010}")))
            .count()
    };
    let (side, caps) = (on_wall(0), [on_wall(1), on_wall(2)]);
    eprintln!("{n} particles, {pair} pair and {wall} wall records (side {side}, caps {caps:?})");
    assert_eq!(n, 200);
    assert!(pair > 100, "pair history records: {pair}");
    assert!(
        side > 20 && caps[0] > 5 && caps[1] > 5,
        "side {side}, caps {caps:?}"
    );
}

/// The same with the drum an STL mesh turning and shaking as a whole:
/// the same bits on 1 and 2 ranks and 2 threads, and across a restart
/// from 2 ranks to 1, with the mesh listed per grain in its own frame
/// (`force::near_walls`) and the list rebuilt as the rule asks.
#[test]
fn a_shaken_mesh_drum_is_bit_identical_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let config = shaken_mesh_drum(dir.path());
    let reference = drum_is_bit_identical_and_restarts(dir.path(), config);
    let (n, pair, wall) = dump_counts(&reference);
    eprintln!("{n} particles, {pair} pair and {wall} wall records");
    assert_eq!(n, 200);
    assert!(pair > 100 && wall > 20, "pair {pair}, wall {wall}");
}

/// Runs the drum `config` (6,000 steps) on 1 rank, 2 ranks and 1 rank × 2
/// threads, and from a checkpoint taken on 2 ranks at step 3,000 on 1
/// rank, asserting the same dump each time; returns the 1-rank dump.
fn drum_is_bit_identical_and_restarts(dir: &Path, config: Config) -> String {
    let config = write_file(
        dir,
        "drum.toml",
        &config.output("checkpoint_every", 3000).text(),
    );
    let reference = run_dump(dir, &config, 1, 1, &[]);
    for (np, threads) in [(2, 1), (1, 2)] {
        let other = run_dump(dir, &config, np, threads, &[]);
        assert_same_dump(
            &reference,
            &other,
            &format!("{np} ranks x {threads} threads"),
        );
    }
    let out = dir.join("split");
    let o = mpirun(
        2,
        &[
            "run",
            config.to_str().unwrap(),
            "--quiet",
            "--steps",
            "3000",
            "--out",
            out.to_str().unwrap(),
        ],
        dir,
    );
    assert!(o.status.success(), "{}", describe(&o));
    let dump = dir.join("restarted.txt");
    let o = mpirun(
        1,
        &[
            "run",
            config.to_str().unwrap(),
            "--quiet",
            "--restart",
            out.join("drum.checkpoint.h5").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dump-state",
            dump.to_str().unwrap(),
        ],
        dir,
    );
    assert!(o.status.success(), "{}", describe(&o));
    let restarted = std::fs::read_to_string(&dump).unwrap();
    assert_same_dump(
        &reference,
        &restarted,
        "2-rank checkpoint restarted on 1 rank",
    );
    reference
}

/// An output another process holds the lock of is refused on every rank (exit
/// 2, one message, from rank 0, which alone takes the lock) before anything is
/// written; once the lock is released the same run goes through.
#[test]
fn a_busy_output_is_refused_on_every_rank() {
    use rustix::fs::{flock, FlockOperation};
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "bed.toml", &bed().run("steps", 20).text());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let lock = std::fs::File::create(out.join("bed.lock")).unwrap();
    flock(&lock, FlockOperation::NonBlockingLockExclusive).unwrap();
    let args = [
        "run",
        config.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = mpirun(2, &args, dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("another gravel run") && err.contains("bed.h5"),
        "{err}"
    );
    assert_eq!(
        err.matches("error:").count(),
        1,
        "one message, from rank 0: {err}"
    );
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(left.len(), 1, "only the lock file: {left:?}");
    drop(lock);
    let o = mpirun(2, &args, dir.path());
    assert!(o.status.success(), "{}", describe(&o));
    assert!(out.join("bed.h5").is_file());
}

#[test]
fn diagnostics_are_the_same_on_1_and_3_ranks() {
    let dir = tempfile::tempdir().unwrap();
    // The frictional bed (walls, a turning post, pouring, periodic x) with
    // a region, a profile along the flow and coarse-grained fields on a
    // grid in x and z (kernels wrapping around the periodic x), 1,500 steps.
    let config = bed()
        .run("steps", 1500)
        .push(
            "diagnostics",
            Table::new()
                .with("name", "bulk")
                .with("kind", "region")
                .with("every", 250)
                .with("region", region([0.0, 0.002, 0.0], [0.04, 0.018, 0.01])),
        )
        .push(
            "diagnostics",
            Table::new()
                .with("name", "along")
                .with("kind", "profile")
                .with("axis", "x")
                .with("bins", 8)
                .with("every", 250)
                .with("average", 2),
        )
        .push(
            "diagnostics",
            Table::new()
                .with("name", "fields")
                .with("kind", "coarse_grain")
                .with("axes", "xz")
                .with("bins", vec![8, 5])
                .with("width", 0.002)
                .with("every", 500),
        )
        .push(
            "diagnostics",
            Table::new()
                .with("name", "chains")
                .with("kind", "contacts")
                .with("every", 250),
        );
    let config = write_file(dir.path(), "bed.toml", &config.text());
    let read = |np: usize| {
        run_dump(dir.path(), &config, np, 1, &[]);
        let h5 = dir.path().join(format!("out-{np}x1/bed.h5"));
        let mut all = Vec::new();
        for name in ["bulk", "along", "fields"] {
            all.extend(gravel::io::read::read_diagnostic(&h5, name).unwrap());
        }
        // The contact lists as columns: each rank wrote its contacts,
        // sorted, at its offset; sorted whole, a list is the same on any
        // number of ranks.
        let mut lists = gravel::io::read::read_contacts(&h5, "chains").unwrap();
        for (_, list) in &mut lists {
            if np == 1 {
                assert!(list.is_sorted_by_key(|c| c.key()), "one rank writes sorted");
            }
            list.sort_by_key(|c| c.key());
        }
        assert_eq!(lists.len(), 7, "lists every 250 steps from 0 to 1500");
        // The bed is still pouring: 6 contacts in the lists of steps 750
        // and 1500 (pairs and walls), more in all seven.
        let contacts: Vec<_> = lists.iter().flat_map(|(_, l)| l).collect();
        assert!(contacts.len() >= 6, "{} contacts", contacts.len());
        let ids = contacts.iter().flat_map(|c| [c.id[0], c.id[1], c.wall]);
        all.push(("ids".into(), vec![], ids.map(|i| i as f64).collect()));
        let vectors = contacts
            .iter()
            .flat_map(|c| [c.point, c.normal, c.force_tangential].map(|v| v.to_array()));
        all.push(("vectors".into(), vec![], vectors.flatten().collect()));
        let scalars = contacts.iter().flat_map(|c| [c.overlap, c.force_normal]);
        all.push(("scalars".into(), vec![], scalars.collect()));
        let thermo = gravel::io::read::read_thermo(&h5).unwrap();
        for (name, values) in thermo {
            if name.starts_with("stress") || name.starts_with("wall_") {
                all.push((name, vec![values.len()], values));
            }
        }
        all
    };
    let (one, three) = (read(1), read(3));
    assert_eq!(one.len(), three.len());
    let mut compared = 0;
    for ((name, shape, a), (name3, shape3, b)) in one.iter().zip(&three) {
        assert_eq!((name, shape), (name3, shape3));
        assert_eq!(a.len(), b.len(), "{name}");
        // Round-off of sums taken in another order: relative to the
        // column's largest value.
        let scale = a
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |m, v| m.max(v.abs()));
        for (x, y) in a.iter().zip(b) {
            assert!(
                x.is_nan() && y.is_nan() || (x - y).abs() <= 1e-9 * scale,
                "{name}: {x} on 1 rank, {y} on 3"
            );
            compared += usize::from(x.is_finite() && *x != 0.0);
        }
    }
    assert!(compared > 300, "{compared} non-zero values compared");
}

/// A pour of many cells into a region a bed reaches, so that cells end
/// early and particles wait for room: the same bits on 1 to 4 ranks, and
/// a 3-rank checkpoint taken while particles wait restarts on 2 ranks and
/// continues bit for bit.
#[test]
fn a_pour_of_many_cells_that_waits_is_the_same_bits_on_any_ranks_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let text = Config::new("jam")
        .run("dt", 5e-6)
        .run("steps", 300)
        .run("seed", 11)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([0.0; 3], [0.03, 0.015, 0.03])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .particles(random(
            "glass",
            radius_range(0.0004, 0.0005),
            600,
            region([0.0, 0.0, 0.0], [0.03, 0.015, 0.006]),
        ))
        .particles(
            pour(
                "glass",
                radius_range(0.0004, 0.0005),
                1e7,
                1.0,
                region([0.0, 0.0, 0.004], [0.03, 0.015, 0.012]),
            )
            .with("count", 3000)
            .with("interval", 100)
            .with("velocity", [0.0, 0.0, -2.0]),
        )
        .output("every", 0)
        .output("checkpoint_every", 150)
        .text();
    let config = write_file(dir.path(), "jam.toml", &text);
    let reference = run_dump(dir.path(), &config, 1, 1, &[]);
    let (n, pairs, _) = dump_counts(&reference);
    assert!(n > 2000 && n <= 3600, "{n} particles");
    eprintln!("{n} particles, {pairs} contacts");
    assert!(pairs > 100, "{pairs} contacts");
    for np in [2, 3, 4] {
        let other = run_dump(dir.path(), &config, np, 1, &[]);
        assert_same_dump(&reference, &other, &format!("{np} ranks"));
    }
    // Stop a 3-rank run at step 150, between the batches of steps 100
    // and 200, and restart it on 2.
    let out = dir.path().join("split");
    let args = |extra: &[&str]| {
        let mut a = vec!["run", config.to_str().unwrap(), "--quiet", "--threads", "1"];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let first = args(&["--steps", "150", "--out", out.to_str().unwrap()]);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let o = mpirun(3, &first, dir.path());
    assert!(o.status.success(), "{}", describe(&o));
    let ckpt = out.join("jam.checkpoint.h5");
    let info = std::process::Command::new(BIN)
        .args(["info", ckpt.to_str().unwrap()])
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    assert!(
        info.contains("drawn particles wait for room"),
        "the checkpoint holds waiting particles: {info}"
    );
    let dump = dir.path().join("restarted.txt");
    let second = args(&[
        "--restart",
        ckpt.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--dump-state",
        dump.to_str().unwrap(),
    ]);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let o = mpirun(2, &second, dir.path());
    assert!(o.status.success(), "{}", describe(&o));
    let restarted = std::fs::read_to_string(&dump).unwrap();
    assert_same_dump(
        &reference,
        &restarted,
        "3-rank checkpoint restarted on 2 ranks",
    );
}

/// A `file` block is checked by slices on several ranks, each rank
/// walking its own: a fault anywhere in the file, whichever rank's slice
/// holds it, is refused before step 0 with exit 2, once, naming the file
/// and the particle, and nothing is written; the ranks agree on the first
/// fault in the file's order; ids repeated across slices are found.
#[test]
fn a_file_checked_by_slices_refuses_a_fault_in_any_rank_s_slice() {
    let dir = tempfile::tempdir().unwrap();
    // 600 rows on a grid: 3 ranks get 200 each.
    let row =
        |id: u64, x: f64, y: f64, z: f64| format!("{id},0,{x},{y},{z},0.0005,2500,0,0,0,0,0,0\n");
    let rows: Vec<String> = (0..600u64)
        .map(|i| {
            let (a, b, c) = (i % 15, (i / 15) % 8, i / 120);
            row(
                i,
                0.0015 + 0.0025 * a as f64,
                0.0015 + 0.0022 * b as f64,
                0.0015 + 0.0025 * c as f64,
            )
        })
        .collect();
    let config = |name: &str| {
        Config::new(name)
            .run("dt", 1e-5)
            .run("steps", 2)
            .run("seed", 1)
            .run("gravity", [0.0, 0.0, -9.81])
            .domain([0.0; 3], [0.04, 0.02, 0.02])
            .material(glass())
            .contact("normal", hertz(0.5))
            .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
            .particles(file("glass", &format!("{name}.csv")))
            .text()
    };
    // Run the config `text` as `name` on 3 ranks.
    let run3 = |name: &str, text: &str| {
        let path = write_file(dir.path(), &format!("{name}.toml"), text);
        let out = dir.path().join(format!("out-{name}"));
        let o = mpirun(
            3,
            &[
                "run",
                path.to_str().unwrap(),
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
            dir.path(),
        );
        (o, out)
    };
    let case = |name: &str, rows: &[String]| {
        let csv = format!(
            "{}\n{}",
            gravel::insert::file::CSV_COLUMNS.join(","),
            rows.concat()
        );
        std::fs::write(dir.path().join(format!("{name}.csv")), csv).unwrap();
        run3(name, &config(name))
    };
    // The good file runs.
    let (o, good_out) = case("good", &rows);
    assert!(o.status.success(), "{}", describe(&o));
    let refused_run = |name: &str, (o, out): (std::process::Output, PathBuf), want: &[&str]| {
        assert_eq!(o.status.code(), Some(2), "{name}: {}", describe(&o));
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(
            err.matches("error:").count(),
            1,
            "{name}: one message: {err}"
        );
        for w in want {
            assert!(err.contains(w), "{name}: `{w}` missing from: {err}");
        }
        assert!(!out.exists(), "{name}: nothing written");
    };
    let refused = |name: &str, rows: &[String], want: &[&str]| {
        refused_run(name, case(name, rows), want);
    };
    // A row that does not parse, in the last rank's slice.
    let mut bad = rows.clone();
    bad[550] = "550,0,0.01,0.01,abc,0.0005,2500,0,0,0,0,0,0\n".into();
    refused("parse", &bad, &["parse.csv", "byte", "abc"]);
    // A particle outside the box in the middle rank's slice, and another
    // in the last rank's: the first in the file's order is named.
    let mut out = rows.clone();
    out[300] = row(300, 0.01, 0.01, 0.5);
    out[500] = row(500, 0.01, 0.01, 0.7);
    refused("outside", &out, &["outside.toml", "particle id 300 "]);
    // Ids repeated across slices: the first rank's first id again in the
    // last rank's slice.
    let mut twice = rows.clone();
    twice[599] = row(0, 0.0365, 0.0169, 0.0115);
    refused("twice", &twice, &["id 0 appears twice"]);
    // A checkpoint read by a `file` block with a bit flipped in a stored
    // position (in one rank's slice): the slices' row hashes add up to
    // another checksum.
    let ckpt = good_out.join("good.checkpoint.h5");
    let snap = gravel::io::checkpoint::read(&ckpt).unwrap();
    let mut bytes = std::fs::read(&ckpt).unwrap();
    let needle = snap.particles[590].x.x.to_le_bytes();
    let at = bytes
        .windows(8)
        .position(|w| w == needle)
        .expect("stored raw");
    bytes[at + 3] ^= 0x10;
    std::fs::write(dir.path().join("flipped.checkpoint.h5"), &bytes).unwrap();
    let text = config("flipped").replace("flipped.csv", "flipped.checkpoint.h5");
    refused_run(
        "flipped",
        run3("flipped", &text),
        &["flipped.checkpoint.h5", "checksum"],
    );
}
