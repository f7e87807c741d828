//! Bitwise reproducibility across MPI ranks and threads (feature `mpi`).
//!
//! Each test writes a config, runs `mpirun -np K gravel run ... --dump-state`
//! for several K (and threads per rank), and compares the dumps: every
//! particle's id, position, velocity and angular velocity, and every
//! contact-history record, as exact bit patterns (design.md, promise 1 and 2).
//! Runs are spawned one at a time (a lock), each with a time limit.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One mpirun at a time: the machine has two cores and the runs oversubscribe them.
static MPIRUN: Mutex<()> = Mutex::new(());

fn mpirun(np: usize, args: &[&str], cwd: &Path) -> Output {
    let _guard = MPIRUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "--bind-to", "none", "-np"])
        .arg(np.to_string())
        .arg(env!("CARGO_BIN_EXE_gravel"))
        .args(args)
        .current_dir(cwd)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("mpirun must be installed (scripts/install-deps)");
    let start = Instant::now();
    let limit = Duration::from_secs(300);
    loop {
        if child.try_wait().expect("wait on mpirun").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("mpirun -np {np} {args:?} ran over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("mpirun output")
}

fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run `config` on `np` ranks with `threads` threads each; return the final dump's text.
fn run_dump(dir: &Path, config: &Path, np: usize, threads: usize, extra: &[&str]) -> String {
    let dump = dir.join(format!("dump-{np}x{threads}.txt"));
    let out = dir.join(format!("out-{np}x{threads}"));
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
    let o = mpirun(np, &args, dir);
    assert!(o.status.success(), "{}", describe(&o));
    std::fs::read_to_string(&dump).expect("dump written")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Compare two dumps line by line, naming the first difference.
fn assert_same(reference: &str, other: &str, what: &str) {
    if reference == other {
        return;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (reference.lines().collect(), other.lines().collect());
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    panic!(
        "{what}: dumps differ ({} vs {} lines); first difference at line {first}:\n  1 rank: {:?}\n  other:  {:?}",
        a.len(),
        b.len(),
        a.get(first),
        b.get(first)
    );
}

fn counts(dump: &str) -> (usize, usize, usize) {
    let particles = dump.lines().filter(|l| l.starts_with("p ")).count();
    let pair = dump
        .lines()
        .filter(|l| l.starts_with("h ") && l.split(' ').nth(2).is_some_and(|w| w.starts_with('p')))
        .count();
    let wall = dump
        .lines()
        .filter(|l| l.starts_with("h ") && l.split(' ').nth(2).is_some_and(|w| w.starts_with('w')))
        .count();
    (particles, pair, wall)
}

/// A frictional bed (spring-slider, epsd rolling resistance, EDEM spinning
/// friction) settling and flowing over a rotating half-cylinder bump,
/// periodic along the flow (x), with walls on the other sides and a pouring
/// source feeding it: migration, periodic ghosts across ranks, wall history
/// and insertion all take part.
const BED: &str = r#"
[run]
name = "bed"
dt = 1.5e-5
steps = 4000
seed = 7
gravity = [3.0, 0.0, -9.81]

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.04, 0.02, 0.04]
periodic = [true, false, false]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true }
rolling = { model = "epsd", friction = 0.2, damping = 0.3 }
spinning = { model = "edem", friction = 0.3 }

[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
material = "glass"

[[wall]]
kind = "plane"
point = [0.0, 0.02, 0.0]
normal = [0.0, -1.0, 0.0]
material = "glass"

[[wall]]
kind = "cylinder"
axis_point = [0.02, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
radius = 0.004
inside = false
angular_velocity = 20.0
material = "glass"

[[particles]]
kind = "random"
material = "glass"
radius = { min = 0.0008, max = 0.0012 }
count = 300
region = { lo = [0.0, 0.0, 0.0045], hi = [0.04, 0.02, 0.012] }

[[particles]]
kind = "pour"
material = "glass"
radius = 0.001
rate = 4000.0
until = 0.03
region = { lo = [0.0, 0.0, 0.025], hi = [0.04, 0.02, 0.035] }
velocity = [0.0, 0.0, -0.5]
interval = 200

[output]
every = 0
thermo_every = 500
"#;

#[test]
fn frictional_bed_is_bit_identical_on_1_to_4_ranks_and_2_threads() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(dir.path(), "bed.toml", BED);
    let reference = run_dump(dir.path(), &config, 1, 1, &[]);
    let (n, pair, wall) = counts(&reference);
    // The test means something only if contacts with history exist at the end.
    assert!(n > 300, "insertion ran: {n} particles");
    assert!(pair > 200, "pair history records: {pair}");
    assert!(wall > 20, "wall history records: {wall}");
    for (np, threads) in [(2, 1), (3, 1), (4, 1), (2, 2), (1, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &[]);
        assert_same(
            &reference,
            &other,
            &format!("{np} ranks x {threads} threads"),
        );
    }
}

#[test]
fn history_record_counts_match_one_rank_every_250_steps() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "bed.toml",
        &BED.replace("steps = 4000", "steps = 1500"),
    );
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
        let (ca, cb) = (counts(a), counts(b));
        assert_eq!(
            ca,
            cb,
            "step {}: (particles, pair, wall) records",
            250 * (k + 1)
        );
        seen += ca.1 + ca.2;
        assert_same(a, b, &format!("step {}", 250 * (k + 1)));
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
    let (n, pair, wall) = counts(&reference);
    assert_eq!(n, 32000);
    assert!(pair > 20000, "pair history records: {pair}");
    assert_eq!(wall, 0);
    for (np, threads) in [(2, 1), (3, 1), (4, 1), (2, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &steps);
        assert_same(
            &reference,
            &other,
            &format!("chute, {np} ranks x {threads} threads"),
        );
    }
}

/// Two spheres slide along the floor across the boundary between two ranks
/// (x = 0.02), the upper one sliding on the lower: both the wall contact and
/// the pair contact carry a loaded tangential spring through the crossing.
/// Forces and torques of every step must match the 1-rank run bit for bit.
/// On 4 ranks, two of them hold no particle at all and the run goes on.
const CROSSING: &str = r#"
[run]
name = "crossing"
dt = 1e-5
steps = 600
gravity = [0.0, 0.0, -9.81]

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.04, 0.04, 0.02]
periodic = [true, true, false]

[[material]]
name = "steel"
density = 7800.0
youngs_modulus = 2.0e8
poisson_ratio = 0.3

[contact]
normal = { model = "hertz", restitution = 0.7 }
tangential = { model = "spring_slider", friction = 0.3, mindlin = true }

[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "steel"

[[particles]]
kind = "list"
material = "steel"
radius = 0.001
position = [[0.0185, 0.0101, 0.000999], [0.0185, 0.0101, 0.0030]]
velocity = [[0.5, 0.0, 0.0], [0.62, 0.0, 0.0]]

[output]
every = 2
fields = ["velocity", "omega", "force", "torque"]
thermo_every = 100
"#;

#[test]
fn sliding_contact_keeps_its_spring_across_a_rank_boundary() {
    use gravel::io::read::{list_frames, read_frame};
    let dir = tempfile::tempdir().unwrap();
    let config = write(dir.path(), "crossing.toml", CROSSING);
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
        assert_same(&one, &other, &format!("{np} ranks"));
        for &s in &steps {
            let (a, b) = (
                read_frame(&h5(1), s).unwrap(),
                read_frame(&h5(np), s).unwrap(),
            );
            assert_eq!(a.id, b.id);
            assert_eq!(a.position, b.position, "positions, step {s}, {np} ranks");
            assert_eq!(
                a.fields, b.fields,
                "forces/torques/velocities, step {s}, {np} ranks"
            );
        }
    }
}

/// An isolated cluster in a periodic box, no walls or gravity, spinning and
/// colliding across rank boundaries: total momentum stays at its initial
/// value to round-off (no force counted twice or missed at boundaries).
#[test]
fn momentum_is_conserved_across_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "cluster.toml",
        r#"
[run]
name = "cluster"
dt = 1e-5
steps = 1500
seed = 3

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.03, 0.03, 0.03]
periodic = [true, true, true]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
normal = { model = "hertz", restitution = 0.8 }
tangential = { model = "spring_slider", friction = 0.4, mindlin = true }

[[particles]]
kind = "random"
material = "glass"
radius = 0.001
count = 400
region = { lo = [0.0, 0.0, 0.0], hi = [0.03, 0.03, 0.03] }
velocity = [0.3, -0.2, 0.1]

[[particles]]
kind = "list"
material = "glass"
radius = 0.001
position = [[0.015, 0.015, 0.015]]
velocity = [[-40.0, 25.0, 10.0]]
omega = [[100.0, 0.0, -50.0]]

[output]
every = 0
"#,
    );
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
    let start = [400.0 * 0.3 - 40.0, 400.0 * -0.2 + 25.0, 400.0 * 0.1 + 10.0];
    for a in 0..3 {
        // 401 velocities of order 1-40 m/s summed: round-off ~1e-12.
        assert!(
            (end[a] - start[a]).abs() < 1e-9,
            "axis {a}: Σv = {} at the end, {} at the start",
            end[a],
            start[a]
        );
    }
    let (_, pair, _) = counts(&dump);
    assert!(pair > 0, "collisions happened");
}

#[test]
fn a_grid_thinner_than_the_interaction_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "thin.toml",
        &CROSSING.replace("[output]", "[parallel]\ngrid = [20, 1, 1]\n\n[output]"),
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
    let config = write(
        dir.path(),
        "mismatch.toml",
        &CROSSING.replace("[output]", "[parallel]\ngrid = [3, 1, 1]\n\n[output]"),
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
    assert_eq!(counts(&reference).0, 1000);
    for (np, threads) in [(2, 1), (3, 1), (2, 2)] {
        let other = run_dump(dir.path(), &config, np, threads, &steps);
        assert_same(
            &reference,
            &other,
            &format!("colloid, {np} ranks x {threads} threads"),
        );
    }
}

/// Checkpoint on 3 ranks at step 2000, restart on 2 ranks and run to 4000:
/// the final state, contact history included, equals the uninterrupted
/// 1-rank run bit for bit (design.md: restarts on any rank count).
#[test]
fn checkpoint_on_3_ranks_restarts_on_2_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "bed.toml",
        &BED.replace("[output]\n", "[output]\ncheckpoint_every = 1000\n"),
    );
    let straight = run_dump(dir.path(), &config, 1, 1, &[]);
    let out = dir.path().join("split");
    let o = mpirun(
        3,
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
    assert!(counts(&straight).1 > 200);
    assert_same(
        &straight,
        &restarted,
        "3-rank checkpoint restarted on 2 ranks",
    );
}
