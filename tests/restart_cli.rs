//! Checkpoints and `gravel run --restart` from the command line: the final state,
//! the frames and the thermo rows of a stopped-and-restarted run equal those of an
//! uninterrupted one bit for bit; a run killed (SIGKILL) while writing a checkpoint,
//! or at random moments, leaves a readable previous checkpoint from which a restart
//! reproduces the uninterrupted run; damaged checkpoints and incompatible configs are
//! refused with exit 2 without touching the output.

mod common;

use common::*;
use gravel::io::checkpoint;
use gravel::io::read::{list_frames, read_frame, read_thermo};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

const TOTAL: u64 = 1600;

/// A pour with friction `friction` into the periodic [`channel`];
/// frames every 100 steps, thermo every 50.
fn config(checkpoint_every: u64, friction: f64) -> Config {
    channel(TOTAL)
        .contact("tangential", mindlin(friction))
        .particles(
            pour(
                "glass",
                radius_range(0.0005, 0.0007),
                60000.0,
                0.02,
                region([0.0, 0.0, 0.002], [0.012, 0.01, 0.03]),
            )
            .with("velocity", [0.5, 0.0, -1.5])
            .with("interval", 20),
        )
        .output("dir", "out")
        .output("every", 100)
        .output("thermo_every", 50)
        .output("fields", ["velocity", "omega"])
        .output("checkpoint_every", checkpoint_every)
}

/// A run directory with `config.toml`.
fn case(config: &Config) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config.text()).unwrap();
    dir
}

fn ckpt(dir: &Path) -> PathBuf {
    dir.join("out/pour.checkpoint.h5")
}

fn h5(dir: &Path) -> PathBuf {
    dir.join("out/pour.h5")
}

fn ok(out: Output) -> Output {
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    out
}

/// `gravel run config.toml --quiet --restart out/pour.checkpoint.h5` in `dir`.
fn restart(dir: &Path) -> Output {
    gravel(
        [
            "run",
            "config.toml",
            "--quiet",
            "--restart",
            "out/pour.checkpoint.h5",
        ],
        dir,
    )
}

/// The uninterrupted reference run, computed once per test binary.
fn reference() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = case(&config(0, 0.5));
        ok(gravel(["run", "config.toml", "--quiet"], dir.path()));
        dir
    })
    .path()
}

/// Asserts that the run in `dir` ended exactly as the reference: final checkpoint,
/// every frame, every thermo row, and an XDMF sidecar listing the same frames.
fn assert_matches_reference(dir: &Path, what: &str) {
    let r = reference();
    let want = checkpoint::read(&ckpt(r)).unwrap();
    let got = checkpoint::read(&ckpt(dir)).unwrap();
    assert_eq!(got.step, TOTAL);
    assert!(
        state_bits(&got) == state_bits(&want),
        "{what}: the final state differs from the uninterrupted run"
    );
    let frames = list_frames(&h5(r)).unwrap();
    assert_eq!(
        list_frames(&h5(dir)).unwrap(),
        frames,
        "{what}: frame steps"
    );
    for &step in &frames {
        let a = read_frame(&h5(r), step).unwrap();
        let b = read_frame(&h5(dir), step).unwrap();
        assert!(
            frame_bits(&a) == frame_bits(&b),
            "{what}: frame {step} differs"
        );
    }
    let (ta, tb) = (read_thermo(&h5(r)).unwrap(), read_thermo(&h5(dir)).unwrap());
    assert!(
        format!("{ta:?}") == format!("{tb:?}"),
        "{what}: thermo differs:\n{ta:?}\n{tb:?}"
    );
    let xdmf = std::fs::read_to_string(dir.join("out/pour.xdmf")).unwrap();
    let want = std::fs::read_to_string(r.join("out/pour.xdmf")).unwrap();
    assert!(xdmf == want, "{what}: the XDMF sidecar differs:\n{xdmf}");
}

#[test]
fn stop_and_restart_equals_the_straight_run_with_output_appended() {
    let r = reference();
    let fin = checkpoint::read(&ckpt(r)).unwrap();
    eprintln!(
        "reference: {} particles, {} pair and {} wall history records at step {TOTAL}",
        fin.particles.len(),
        fin.pair_keys.len(),
        fin.wall_keys.len()
    );
    assert!(fin.pair_keys.len() > 500 && fin.wall_keys.len() > 50);
    let dir = case(&config(0, 0.5));
    ok(gravel(
        ["run", "config.toml", "--quiet", "--steps", "800"],
        dir.path(),
    ));
    let half = checkpoint::read(&ckpt(dir.path())).unwrap();
    assert_eq!(half.step, 800);
    assert!(
        half.pour_inserted[0] < fin.pour_inserted[0],
        "stopped mid-pour"
    );
    let out = ok(gravel(
        [
            "run",
            "config.toml",
            "--restart",
            "out/pour.checkpoint.h5",
            "--threads",
            "2",
        ],
        dir.path(),
    ));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("restarted from step 800"), "{stdout}");
    assert_matches_reference(dir.path(), "restart at 800 on 2 threads");
}

#[test]
fn sigkill_while_writing_a_checkpoint_keeps_the_previous_one() {
    let dir = case(&config(300, 0.5));
    let out = gravel_command()
        .args(["run", "config.toml", "--quiet"])
        .current_dir(dir.path())
        .env(checkpoint::ABORT_HOOK, "900")
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(9), "{}", describe(&out));
    let tmp = checkpoint::temporary_path(&ckpt(dir.path()));
    assert!(tmp.is_file(), "the partly written temporary file is left");
    assert!(
        checkpoint::read(&tmp).is_err(),
        "the partial file is not a valid checkpoint"
    );
    let prev = checkpoint::read(&ckpt(dir.path())).expect("the previous checkpoint is readable");
    assert_eq!(prev.step, 600);
    // The output went on to step 900; the restart cuts it back to 600 and goes on.
    assert!(list_frames(&h5(dir.path())).unwrap().contains(&900));
    ok(restart(dir.path()));
    assert!(
        !tmp.exists(),
        "the next checkpoint replaced the temporary file"
    );
    assert_matches_reference(
        dir.path(),
        "restart after SIGKILL in the checkpoint of step 900",
    );
}

#[test]
fn sigkill_at_random_moments_then_restart_reproduces_the_run() {
    reference();
    let mut restarted_mid_run = 0;
    let iterations = 8;
    for i in 0..iterations {
        let dir = case(&config(100, 0.5));
        let mut child = gravel_command()
            .args(["run", "config.toml", "--quiet"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the first checkpoint, then kill after a pseudo-random delay.
        let start = Instant::now();
        while !ckpt(dir.path()).exists() && start.elapsed() < Duration::from_secs(60) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let delay = (i as u64 * 7919 + 13) % 97 * 8;
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        let snap =
            checkpoint::read(&ckpt(dir.path())).expect("a readable checkpoint after the kill");
        eprintln!(
            "iteration {i}: killed after {delay} ms more ({status:?}); checkpoint at step {}",
            snap.step
        );
        assert_eq!(snap.step % 100, 0);
        if snap.step < TOTAL {
            restarted_mid_run += 1;
        }
        ok(restart(dir.path()));
        assert_matches_reference(dir.path(), &format!("random kill {i}"));
    }
    assert!(
        restarted_mid_run > 0,
        "no kill landed before the end of the run"
    );
}

/// `tests/support/kill_at_write.c` built as a preload library (with the
/// system's C compiler, once per test binary).
fn kill_at_write_library() -> &'static Path {
    static LIB: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, lib) = LIB.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("kill_at_write.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/kill_at_write.c");
        let out = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&lib)
            .arg(&src)
            .arg("-ldl")
            .output()
            .expect("a C compiler (cc) builds the test's preload library");
        assert!(out.status.success(), "cc: {}", describe(&out));
        (dir, lib)
    });
    lib
}

/// A run of [`config`] (checkpoints every 300 steps) with the output's writes
/// counted, and killed before write `kill_at` if given.
fn counted_run(dir: &Path, kill_at: Option<u64>) -> Output {
    let mut cmd = gravel_command();
    cmd.args(["run", "config.toml", "--quiet"])
        .current_dir(dir)
        .env("LD_PRELOAD", kill_at_write_library())
        .env("KILL_FILE", "pour.h5");
    if let Some(n) = kill_at {
        cmd.env("KILL_AT_WRITE", n.to_string());
    }
    cmd.output().unwrap()
}

/// A kill in the middle of an HDF5 flush, where the output's groups and
/// indices are half rewritten, at every other write of a stretch of 56,
/// longer than one cycle of frames and thermo rows: `gravel info
/// --verify` reads the output whole as of its last flush (and `gravel
/// info` names the journal where one lies beside it), and the restart
/// rolls the output back to that flush (the undo journal, `io::journal`)
/// and reproduces the uninterrupted run. Without the journal, 9 of these 28
/// kills left an output that HDF5 could no longer list or open.
#[test]
fn a_kill_at_any_write_of_the_output_then_restart_reproduces_the_run() {
    reference();
    let dir = case(&config(300, 0.5));
    let out = counted_run(dir.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let writes: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("writes: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the preload library counts the writes: {stderr}"));
    // The first checkpoint (step 300 of 1600) comes at about a fifth of them.
    let first = writes / 4;
    for kill_at in (first..first + 56).step_by(2) {
        let dir = case(&config(300, 0.5));
        let out = counted_run(dir.path(), Some(kill_at));
        assert_eq!(
            out.status.signal(),
            Some(9),
            "killed at write {kill_at} of {writes}: {}",
            describe(&out)
        );
        let snap = checkpoint::read(&ckpt(dir.path())).expect("a checkpoint before the kill");
        assert!(snap.step < TOTAL);
        // Before the restart, gravel's readers see the output as of its
        // last flush, whole, and change nothing.
        let left = std::fs::read(h5(dir.path())).unwrap();
        let journal = dir.path().join("out/pour.h5.journal").exists();
        let verified = gravel(["info", "--verify", "out/pour.h5"], dir.path());
        assert_eq!(
            verified.status.code(),
            Some(0),
            "killed at write {kill_at}: {}",
            describe(&verified)
        );
        if journal {
            let info = gravel(["info", "out/pour.h5"], dir.path());
            assert!(
                String::from_utf8_lossy(&info.stdout).contains("lies beside it"),
                "killed at write {kill_at}: gravel info names the journal: {}",
                describe(&info)
            );
        }
        assert!(
            std::fs::read(h5(dir.path())).unwrap() == left,
            "killed at write {kill_at}: gravel info changed the output"
        );
        let restarted = restart(dir.path());
        assert_eq!(
            restarted.status.code(),
            Some(0),
            "killed at write {kill_at}, restarted from step {}: {}",
            snap.step,
            describe(&restarted)
        );
        assert_matches_reference(dir.path(), &format!("killed at write {kill_at}"));
        assert!(
            !dir.path().join("out/pour.h5.journal").exists(),
            "the journal is gone once the run ends"
        );
    }
}

#[test]
fn damaged_checkpoints_are_refused_with_exit_2_and_the_output_untouched() {
    let dir = case(&config(0, 0.5));
    ok(gravel(
        ["run", "config.toml", "--quiet", "--steps", "700"],
        dir.path(),
    ));
    let good = std::fs::read(ckpt(dir.path())).unwrap();
    let output_before = std::fs::read(h5(dir.path())).unwrap();
    let xdmf_before = std::fs::read(dir.path().join("out/pour.xdmf")).unwrap();
    let snap = checkpoint::read(&ckpt(dir.path())).unwrap();
    // A flipped bit in the stored position of a particle.
    let needle = snap.particles[7].x.x.to_le_bytes();
    let at = good
        .windows(8)
        .position(|w| w == needle)
        .expect("stored raw");
    let mut flipped = good.clone();
    flipped[at + 3] ^= 0x10;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() * 2 / 3].to_vec(), "HDF5"),
        ("flipped", flipped, "checksum"),
        ("empty", Vec::new(), "HDF5"),
    ];
    for (name, bytes, why) in cases {
        let path = dir.path().join(format!("{name}.checkpoint.h5"));
        std::fs::write(&path, &bytes).unwrap();
        let arg = path.file_name().unwrap().to_str().unwrap().to_string();
        let out = gravel(
            ["run", "config.toml", "--quiet", "--restart", arg.as_str()],
            dir.path(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
        assert!(
            stderr.contains(&arg),
            "{name}: the message names the file: {stderr}"
        );
        assert!(
            stderr.contains(why),
            "{name}: the message says `{why}`: {stderr}"
        );
        assert!(
            std::fs::read(h5(dir.path())).unwrap() == output_before
                && std::fs::read(dir.path().join("out/pour.xdmf")).unwrap() == xdmf_before,
            "{name}: the output was modified"
        );
        assert_eq!(
            std::fs::read(ckpt(dir.path())).unwrap(),
            good,
            "{name}: checkpoint modified"
        );
        let info = gravel(["info", arg.as_str()], dir.path());
        assert_eq!(
            info.status.code(),
            Some(2),
            "info {name}: {}",
            describe(&info)
        );
    }
}

#[test]
fn a_config_that_breaks_continuation_is_refused_and_output_changes_are_allowed() {
    let dir = case(&config(0, 0.5));
    ok(gravel(
        ["run", "config.toml", "--quiet", "--steps", "600"],
        dir.path(),
    ));
    let output_before = std::fs::read(h5(dir.path())).unwrap();
    std::fs::write(dir.path().join("other.toml"), config(0, 0.3).text()).unwrap();
    let out = gravel(
        [
            "run",
            "other.toml",
            "--quiet",
            "--restart",
            "out/pour.checkpoint.h5",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr.contains("other.toml") && stderr.contains("contact laws"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("materials"),
        "only the laws changed: {stderr}"
    );
    assert_eq!(std::fs::read(h5(dir.path())).unwrap(), output_before);
    // A checkpoint past the end of the run is refused too.
    let out = gravel(
        [
            "run",
            "config.toml",
            "--quiet",
            "--steps",
            "500",
            "--restart",
            "out/pour.checkpoint.h5",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("step 600"));
    // Output settings and the step count may change; a new directory gets a new file
    // (frames on the new cadence after the checkpoint step, and at the end).
    let changed = config(250, 0.5)
        .output("every", 70)
        .output("thermo_every", 30);
    std::fs::write(dir.path().join("changed.toml"), changed.text()).unwrap();
    ok(gravel(
        [
            "run",
            "changed.toml",
            "--quiet",
            "--steps",
            "1000",
            "--out",
            "new",
            "--restart",
            "out/pour.checkpoint.h5",
        ],
        dir.path(),
    ));
    let frames = list_frames(&dir.path().join("new/pour.h5")).unwrap();
    assert_eq!(frames, vec![630, 700, 770, 840, 910, 980, 1000]);
    assert_eq!(
        checkpoint::read(&dir.path().join("new/pour.checkpoint.h5"))
            .unwrap()
            .step,
        1000
    );
    assert_eq!(std::fs::read(h5(dir.path())).unwrap(), output_before);
}

#[test]
fn info_shows_what_a_checkpoint_holds() {
    let r = reference();
    let snap = checkpoint::read(&ckpt(r)).unwrap();
    let out = ok(gravel(["info", "out/pour.checkpoint.h5"], r));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        format!("step: {TOTAL}"),
        format!("particles: {} (0 frozen)", snap.particles.len()),
        format!(
            "{} pair records, {} wall records",
            snap.pair_keys.len(),
            snap.wall_keys.len()
        ),
        "walls: 3".to_string(),
        format!("inserted so far [{}]", snap.pour_inserted[0]),
        "(verified)".to_string(),
        "name = \"pour\"".to_string(),
    ] {
        assert!(text.contains(&want), "`{want}` not in:\n{text}");
    }
}
