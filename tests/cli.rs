//! The command line: `gravel run`, `check` and `info`, their exit statuses, and
//! the output layout of the interface contract (`/frames/<step>`, `/thermo`,
//! root attributes, the XDMF sidecar).

mod common;

use common::*;
use gravel::io::read::{list_frames, read_frame, read_thermo};
use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Time step of the small config.
const DT: f64 = 1e-5;
/// Box edge (x, y) of the small config; z is twice that.
const L: f64 = 0.01;
const RADIUS: f64 = 0.0005;

const THERMO_COLUMNS: [&str; 19] = [
    "step",
    "time",
    "particles",
    "kinetic_energy",
    "rotational_energy",
    "potential_energy",
    "elastic_energy",
    "contacts",
    "max_overlap",
    "temperature",
    "rotational_temperature",
    "deleted",
    "deleted_mass",
    "imbalance",
    "stress",
    "stress_kinetic",
    "stress_contact",
    "wall_force",
    "wall_torque",
];

/// 50 spheres placed at random in a closed box (six walls), falling under
/// gravity onto the floor: frames every 50 steps, thermo every 20, 230 steps.
fn small_config() -> String {
    let hi = [L, L, 2.0 * L];
    let walls = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 2.0 * L], [0.0, 0.0, -1.0]),
        ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([L, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, L, 0.0], [0.0, -1.0, 0.0]),
    ];
    walls
        .iter()
        .fold(
            Config::new("small")
                .run("dt", DT)
                .run("steps", 230)
                .run("seed", 7)
                .run("gravity", [0.0, 0.0, -9.81])
                .domain([0.0; 3], hi)
                .material(glass())
                .contact("normal", hertz(0.5))
                .contact("tangential", mindlin(0.5)),
            |c, &(p, n)| c.wall(plane(p, n, "glass")),
        )
        .particles(random("glass", RADIUS, 50, region([0.0; 3], hi)))
        .output("dir", "not_used")
        .output("every", 50)
        .output("thermo_every", 20)
        .output("fields", ["velocity", "omega"])
        .text()
}

/// A temporary folder holding `config.toml` with `body`.
fn setup(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, body).unwrap();
    (dir, path)
}

/// `gravel run CONFIG --out DIR/out [extra]` in DIR.
fn run(dir: &Path, config: &Path, extra: &[&str]) -> (Output, PathBuf) {
    let out_dir = dir.join("out");
    (run_into(dir, config, &out_dir, extra), out_dir)
}

/// `gravel run CONFIG --out OUT [extra]` in DIR.
fn run_into(dir: &Path, config: &Path, out_dir: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        config.as_os_str(),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    gravel(&args, dir)
}

fn column<'a>(thermo: &'a [(String, Vec<f64>)], name: &str) -> &'a [f64] {
    &thermo
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no thermo column `{name}`"))
        .1
}

#[test]
fn run_writes_the_documented_layout() {
    let body = small_config();
    let (dir, config) = setup(&body);
    let (out, out_dir) = run(dir.path(), &config, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // Not a terminal: a log line every 10 % of the run instead of a bar.
    let stderr = text(&out.stderr);
    let log: Vec<&str> = stderr.lines().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(log.len(), 10, "{stderr}");
    assert!(log[9].starts_with("step 230/230 (100%)"), "{stderr}");
    assert!(log.iter().all(|l| l.contains("steps/s")), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("done: 230 steps of 50 particles"),
        "{stdout}"
    );
    // The summary's times are to the millisecond, so that the ratios of
    // short benchmark runs resolve (docs/performance.md, 2026-12-03).
    for prefix in ["done:", "time:"] {
        let line = stdout.lines().find(|l| l.starts_with(prefix)).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let seconds: Vec<&str> = (words.windows(2))
            .filter(|w| matches!(w[1], "s" | "s," | "s;"))
            .map(|w| w[0])
            .collect();
        assert_eq!(
            seconds.len(),
            if prefix == "done:" { 1 } else { 5 },
            "{line}"
        );
        for t in seconds {
            let decimals = t.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(t.parse::<f64>().is_ok() && decimals == 3, "{t} in {line}");
        }
    }
    let h5 = out_dir.join("small.h5");
    let xdmf = out_dir.join("small.xdmf");
    assert!(h5.is_file(), "no {}", h5.display());
    assert!(xdmf.is_file(), "no {}", xdmf.display());
    assert!(
        !dir.path().join("not_used").exists(),
        "--out did not override [output] dir"
    );

    // Frames every 50 steps plus the last step.
    let steps = list_frames(&h5).unwrap();
    assert_eq!(steps, vec![0, 50, 100, 150, 200, 230]);
    for &step in &steps {
        let f = read_frame(&h5, step).unwrap();
        assert_eq!(f.step, step);
        assert_eq!(f.time, step as f64 * DT, "time of frame {step}");
        assert_eq!(f.id.len(), 50, "frame {step}");
        let ids: HashSet<u64> = f.id.iter().copied().collect();
        assert_eq!(ids.len(), 50, "ids of frame {step} are not unique");
        assert_eq!(ids, (0..50).collect::<HashSet<u64>>());
        assert_eq!(f.position.len(), 50);
        assert_eq!(f.radius, vec![RADIUS; 50]);
        assert_eq!(f.material, vec![0; 50]);
        for x in &f.position {
            assert!(
                (0..3).all(|a| x[a] > 0.0 && x[a] < if a == 2 { 2.0 * L } else { L }),
                "frame {step}: position {x:?} outside the box"
            );
        }
        let names: Vec<&str> = f.fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["velocity", "omega"], "fields of frame {step}");
        for (name, v) in &f.fields {
            assert_eq!(v.len(), 50, "{name} of frame {step}");
            assert!(v.iter().flatten().all(|c| c.is_finite()));
        }
        if step == 0 {
            assert!(f.fields[0].1.iter().flatten().all(|&c| c == 0.0));
        } else {
            // Falling under gravity.
            assert!(f.fields[0].1.iter().any(|v| v[2] < 0.0));
        }
    }

    // Thermo: the documented columns, every 20 steps plus the last.
    let thermo = read_thermo(&h5).unwrap();
    let names: Vec<&str> = thermo.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, THERMO_COLUMNS);
    let expected_steps: Vec<f64> = (0..=220)
        .step_by(20)
        .chain([230])
        .map(|s| s as f64)
        .collect();
    assert_eq!(column(&thermo, "step"), expected_steps.as_slice());
    for (name, values) in &thermo {
        // Values per row: a stress tensor's 6, the six walls' 3 each.
        let width = match name.as_str() {
            n if n.starts_with("stress") => 6,
            n if n.starts_with("wall_") => 6 * 3,
            _ => 1,
        };
        assert_eq!(values.len(), width * expected_steps.len(), "column {name}");
        assert!(values.iter().all(|v| v.is_finite()), "column {name}");
    }
    let time: Vec<f64> = expected_steps.iter().map(|s| s * DT).collect();
    assert_eq!(column(&thermo, "time"), time.as_slice());
    assert!(column(&thermo, "particles").iter().all(|&n| n == 50.0));
    let ke = column(&thermo, "kinetic_energy");
    assert_eq!(ke[0], 0.0);
    assert!(ke[1..].iter().all(|&e| e > 0.0));
    assert!(column(&thermo, "contacts").iter().all(|&c| c >= 0.0));

    // Root attributes.
    let file = hdf5::File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(&h5)
        .unwrap();
    let config: hdf5::types::VarLenUnicode = file.attr("config").unwrap().read_scalar().unwrap();
    assert_eq!(config.as_str(), body);
    let version: hdf5::types::VarLenUnicode = file.attr("version").unwrap().read_scalar().unwrap();
    assert_eq!(version.as_str(), env!("CARGO_PKG_VERSION"));
    assert_eq!(file.attr("ranks").unwrap().read_scalar::<u32>().unwrap(), 1);
    assert!(file.attr("threads").unwrap().read_scalar::<u32>().unwrap() >= 1);

    // The sidecar lists every frame of the h5 file.
    let sidecar = std::fs::read_to_string(&xdmf).unwrap();
    assert!(sidecar.contains("small.h5"), "{sidecar}");
    for &step in &steps {
        assert!(
            sidecar.contains(&format!("/frames/{step:09}/position")),
            "frame {step} not in the sidecar"
        );
    }

    // `gravel info` summarises it.
    let info = gravel([OsStr::new("info"), h5.as_os_str()], dir.path());
    assert_eq!(info.status.code(), Some(0), "{}", describe(&info));
    let summary = text(&info.stdout);
    assert!(summary.contains("small.h5"), "{summary}");
    assert!(summary.contains("frames: 6"), "{summary}");
    assert!(summary.contains("230"), "{summary}");
    assert!(summary.contains("thermo"), "{summary}");
    assert!(summary.contains("kinetic_energy"), "{summary}");
}

#[test]
fn sidecar_is_well_formed_xml() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &["--steps", "60", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let sidecar = std::fs::read_to_string(out_dir.join("small.xdmf")).unwrap();
    let mut reader = quick_xml::Reader::from_str(&sidecar);
    let mut grids = Vec::new();
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Start(e)) if e.name().as_ref() == b"Grid" => {
                let name = e.try_get_attribute("Name").unwrap().unwrap();
                grids.push(String::from_utf8(name.value.to_vec()).unwrap());
            }
            Ok(_) => {}
            Err(e) => panic!("the sidecar is not well-formed XML: {e}\n{sidecar}"),
        }
    }
    // A temporal collection holding frames 0, 50 and 60, then the box's
    // six planes as surfaces.
    let want = [
        "particles",
        "step 0",
        "step 50",
        "step 60",
        "walls",
        "wall0",
        "wall1",
        "wall2",
        "wall3",
        "wall4",
        "wall5",
    ];
    assert_eq!(grids, want, "{sidecar}");
}

#[test]
fn check_prints_the_stable_time_step_and_particle_count() {
    let (dir, config) = setup(&small_config());
    let out = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("particles at step 0: 50"), "{stdout}");
    assert!(stdout.contains("stable time step:"), "{stdout}");
    assert!(stdout.contains("chosen time step: 1e-5"), "{stdout}");
    assert!(stdout.contains("Rayleigh"), "{stdout}");
    assert!(stdout.contains("memory estimate"), "{stdout}");
    // The stable step is 0.3 of the Rayleigh time of the smallest particle.
    let g: f64 = 5.0e6 / (2.0 * 1.3);
    let t_r = std::f64::consts::PI * RADIUS * (2500.0 / g).sqrt() / (0.1631 * 0.3 + 0.8766);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("stable time step:"))
        .unwrap();
    let value: f64 = line["stable time step:".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (value / (0.3 * t_r) - 1.0).abs() < 1e-9,
        "{value} vs {}",
        0.3 * t_r
    );
    // check writes nothing.
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
}

/// A reader that closes `gravel check`'s output before it is written (as
/// `gravel check c.toml | head -0` does) ends it by SIGPIPE, as any Unix
/// filter, never by a Rust panic (exit 101 and a backtrace).
#[test]
fn check_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (dir, config) = setup(&small_config());
    let mut child = gravel_command()
        .args([OsStr::new("check"), config.as_os_str()])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{}",
        describe(&out)
    );
}

/// `gravel check` reads as a report: laws in the config's words, no Rust
/// `Debug` structs, numbers to 4 significant digits (the time steps aside,
/// printed exactly to be pasted as `dt`), units stated once.
#[test]
fn check_prints_laws_and_rounded_numbers() {
    let (dir, config) = setup(&small_config());
    let out = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("units: the config's own"), "{stdout}");
    let law = stdout
        .lines()
        .find(|l| l.starts_with("contact glass–glass: "))
        .unwrap_or_else(|| panic!("no law line:\n{stdout}"));
    assert!(law.contains(": hertz (restitution 0.5, E* "), "{law}");
    assert!(
        law.ends_with(" + spring_slider (friction 0.5, mindlin)"),
        "{law}"
    );
    for line in stdout.lines() {
        assert!(
            !line.contains(" { ") && !line.contains("Some("),
            "a Debug struct: {line}"
        );
        if line.starts_with("stable time step")
            || line.starts_with("chosen time step")
            || line.starts_with("warning")
            || line.starts_with("config:")
            || line.starts_with("decomposition")
        {
            continue;
        }
        for word in line.split([' ', ',', '(', ')', '[', ']', ';']) {
            let Ok(x) = word.parse::<f64>() else {
                continue;
            };
            let mantissa = word.split(['e', 'E']).next().unwrap();
            let figures = mantissa
                .trim_start_matches(['-', '0', '.'])
                .chars()
                .filter(char::is_ascii_digit)
                .count();
            assert!(
                figures <= 4 || x.fract() == 0.0 && !word.contains('.'),
                "`{word}` has {figures} significant digits: {line}"
            );
        }
    }
}

/// Without a terminal, a log line every 10 % of the run shows the
/// simulated time, the kinetic energy and contacts of the last thermo row,
/// the particle count, the rate and the ETA; the summary follows.
#[test]
fn progress_lines_show_time_energy_and_contacts() {
    let (dir, config) = setup(&small_config());
    let out_dir = dir.path().join("out");
    let out = gravel(
        [
            OsStr::new("run"),
            config.as_os_str(),
            OsStr::new("--out"),
            out_dir.as_os_str(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(lines.len(), 10, "{stderr}");
    // Step 23 is 10 % of 230; the thermo row before it is step 20.
    let first = lines[0];
    assert!(
        first.starts_with("step 23/230 (10%)  t = 2.3e-4  KE "),
        "{first}"
    );
    for part in [" contacts  50 particles  ", " steps/s  eta "] {
        assert!(first.contains(part), "{first}");
    }
    assert!(
        text(&out.stdout).contains("done: 230 steps"),
        "{}",
        describe(&out)
    );
}

#[test]
fn steps_override() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &["--steps", "30", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // --quiet hides the progress lines only; the summary stays.
    assert!(
        !text(&out.stderr).contains("step "),
        "--quiet printed progress: {}",
        describe(&out)
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("done: 30 steps of 50 particles") && stdout.contains("output: "),
        "--quiet hid the summary: {}",
        describe(&out)
    );
    let h5 = out_dir.join("small.h5");
    assert_eq!(list_frames(&h5).unwrap(), vec![0, 30]);
    let thermo = read_thermo(&h5).unwrap();
    assert_eq!(column(&thermo, "step"), [0.0, 20.0, 30.0]);
}

/// A config with the `[[particles]]` block `particles` after a common head: no gravity, no walls, a closed
/// (non-periodic) box `[0, 0.01]³`, Hertz, dt 1e-5.
fn free_config(particles: Table) -> String {
    Config::new("free")
        .run("dt", 1e-5)
        .run("steps", 2000)
        .domain([0.0; 3], [0.01; 3])
        .material(glass())
        .contact("normal", hertz(0.5))
        .particles(particles)
        .output("every", 20)
        .output("thermo_every", 10)
        .text()
}

/// `on step N` in a run-failure message.
fn failed_step(msg: &str) -> u64 {
    let at = msg.find("step ").expect("no `step` in the message") + "step ".len();
    msg[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no step number in {msg}"))
}

#[test]
fn particle_leaving_the_domain_fails_the_run() {
    // id 0 rests; id 1 moves at 10 m/s in +z from z = 5 mm: 0.1 mm per step,
    // it crosses z = 10 mm on step 50 or 51 (rounding).
    let body = free_config(
        list(
            "glass",
            0.0005,
            vec![[0.002, 0.002, 0.002], [0.005, 0.005, 0.005]],
        )
        .with("velocity", [[0.0, 0.0, 0.0], [0.0, 0.0, 10.0]]),
    );
    let (dir, config) = setup(&body);
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr.contains("particle id 1 "), "{stderr}");
    assert!(stderr.contains("position"), "{stderr}");
    let step = failed_step(&stderr);
    assert!((50..=51).contains(&step), "step {step}: {stderr}");
    assert!(stderr.contains("left the domain along z"), "{stderr}");
    // What was written before the failure is readable.
    let h5 = out_dir.join("free.h5");
    assert_eq!(list_frames(&h5).unwrap(), vec![0, 20, 40]);
    let thermo = read_thermo(&h5).unwrap();
    assert_eq!(
        column(&thermo, "step"),
        &[0.0, 10.0, 20.0, 30.0, 40.0, 50.0][..((step as usize - 1) / 10 + 1).min(6)]
    );
}

#[test]
fn non_finite_state_fails_the_run() {
    // Absurd Hooke stiffness, a huge dt (allowed): ids 1 and 2 approach at
    // 4e-7 m/s each (4 mm per step, within the half radius a step may
    // move), overlap by 4 mm on step 2, and the force of that overlap
    // overflows their velocities to infinity.
    let body = Config::new("blowup")
        .run("dt", 1e4)
        .run("steps", 10)
        .run("allow_large_dt", true)
        .domain([0.0; 3], [0.2, 0.1, 0.1])
        .material(material("light", 0.01))
        .contact(
            "normal",
            model("hooke")
                .with("stiffness", 1e300)
                .with("restitution", 0.5),
        )
        .particles(
            list(
                "light",
                0.01,
                vec![[0.15, 0.05, 0.05], [0.03, 0.05, 0.05], [0.062, 0.05, 0.05]],
            )
            .with(
                "velocity",
                [[0.0, 0.0, 0.0], [4e-7, 0.0, 0.0], [-4e-7, 0.0, 0.0]],
            ),
        )
        .output("every", 0)
        .text();
    let (dir, config) = setup(&body);
    let check = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", describe(&check));
    let (out, _) = run(dir.path(), &config, &["--quiet"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr.contains("particle id 1 "), "{stderr}");
    assert!(stderr.contains("position"), "{stderr}");
    assert!(stderr.contains("non-finite"), "{stderr}");
    assert_eq!(failed_step(&stderr), 3, "{stderr}");
}

/// A box periodic along x (24 mm long, 10 mm closed in y and z), two glass
/// beads of radius 1 mm on the x axis, Hertz, dt 10 µs, `steps`, with
/// `gravity` and the beads' `velocity`; checkpoints every 20 steps.
fn periodic_beads(steps: u64, gravity: [f64; 3], velocity: [[f64; 3]; 2]) -> String {
    Config::new("fast")
        .run("dt", 1e-5)
        .run("steps", steps)
        .run("gravity", gravity)
        .domain([0.0; 3], [0.024, 0.01, 0.01])
        .periodic([true, false, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .particles(
            list(
                "glass",
                0.001,
                vec![[0.004, 0.005, 0.005], [0.012, 0.005, 0.005]],
            )
            .with("velocity", velocity),
        )
        .output("every", 20)
        .output("checkpoint_every", 20)
        .text()
}

#[test]
fn a_particle_too_fast_for_the_step_fails_the_run() {
    // id 1 at 1e4 m/s along the periodic x axis: 0.1 m per step, four box
    // lengths, 100 radii. It must stop the run on step 1, not pass through
    // id 0 and end anywhere with exit 0.
    let body = periodic_beads(100, [0.0; 3], [[0.0; 3], [1e4, 0.0, 0.0]]);
    let (dir, config) = setup(&body);
    // `check` accepts it (exit 0) and warns.
    let check = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", describe(&check));
    let report = text(&check.stdout);
    assert!(
        report
            .contains("warning: 1 initial particle(s) move more than 0.5 of their radius per step")
            && report.contains("particle id 1 at 1e4 m/s"),
        "{report}"
    );
    let (out, _) = run(dir.path(), &config, &["--quiet"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr.contains("particle id 1 "), "{stderr}");
    assert!(stderr.contains("velocity [10000.0, 0.0, 0.0]"), "{stderr}");
    assert!(
        stderr.contains("in one step, more than 0.5 of its radius 1e-3 m"),
        "{stderr}"
    );
    assert_eq!(failed_step(&stderr), 1, "{stderr}");
}

#[test]
fn a_particle_accelerated_past_the_step_bound_stops_and_keeps_the_checkpoint() {
    // Gravity 1e5 m/s² along the periodic x axis: after the drift of step s
    // the beads move at (s − ½) m/s, more than half a radius per step
    // (50 m/s at dt 10 µs) from step 51 on. id 0 is the lowest id of the two.
    let body = periodic_beads(100, [1e5, 0.0, 0.0], [[0.0; 3]; 2]);
    let (dir, config) = setup(&body);
    // At rest at step 0: no warning from `check`.
    let check = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", describe(&check));
    assert!(
        !text(&check.stdout).contains("warning"),
        "{}",
        describe(&check)
    );
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr.contains("particle id 0 "), "{stderr}");
    assert!(stderr.contains("more than 0.5 of its radius"), "{stderr}");
    let step = failed_step(&stderr);
    assert!((50..=52).contains(&step), "step {step}: {stderr}");
    // The last checkpoint, of step 40, is whole, and a restart from it
    // stops on the same step with the same message.
    let ckpt = out_dir.join("fast.checkpoint.h5");
    let snap = gravel::io::checkpoint::read(&ckpt).unwrap();
    assert_eq!(snap.step, 40);
    let (again, _) = run(
        dir.path(),
        &config,
        &["--quiet", "--restart", ckpt.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(1), "{}", describe(&again));
    assert_eq!(text(&again.stderr), stderr);
    assert_eq!(gravel::io::checkpoint::read(&ckpt).unwrap().step, 40);
}

/// A run of beads of radius 1 mm (glass) on a soft Hooke spring, 1 µs
/// steps, thermo every step, in a box of 20 mm: the case of the overlap
/// bound's tests.
fn soft_beads(name: &str) -> Config {
    Config::new(name)
        .run("dt", 1e-6)
        .run("steps", 40)
        .domain([0.0; 3], [0.02; 3])
        .material(glass())
        .contact(
            "normal",
            model("hooke")
                .with("stiffness", 5e4)
                .with("restitution", 0.5),
        )
        .output("every", 0)
        .output("thermo_every", 1)
}

/// Run `c` (named `name`), which must stop on a contact of particle 0 with
/// `partner` deeper than the overlap bound. Returns the failed step, the
/// message and the thermo `(step, max_overlap)` columns.
fn too_deep(c: &Config, name: &str, partner: &str) -> (u64, String, Vec<f64>, Vec<f64>) {
    let (dir, config) = setup(&c.text());
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr.contains("particle id 0 "), "{stderr}");
    assert!(
        stderr.contains(&format!("overlaps {partner} by")),
        "{stderr}"
    );
    assert!(stderr.contains("times the effective radius R*"), "{stderr}");
    let thermo = read_thermo(&out_dir.join(format!("{name}.h5"))).unwrap();
    let columns = (
        column(&thermo, "step").to_vec(),
        column(&thermo, "max_overlap").to_vec(),
    );
    (failed_step(&stderr), stderr, columns.0, columns.1)
}

/// Two beads meeting head-on at 300 m/s each (0.3 mm per step, within the
/// step bound), with the neighbour skin `skin` (None: the default 0.2 mm):
/// the overlap passes R* = 0.5 mm on the step after they touch (step 11).
fn head_on(skin: Option<f64>) -> (u64, String, Vec<f64>, Vec<f64>) {
    let mut c = soft_beads("headon").particles(
        list(
            "glass",
            0.001,
            vec![[0.006, 0.01, 0.01], [0.014, 0.01, 0.01]],
        )
        .with("velocity", [[300.0, 0.0, 0.0], [-300.0, 0.0, 0.0]]),
    );
    if let Some(skin) = skin {
        c = c.set("domain", "skin", skin);
    }
    too_deep(&c, "headon", "particle id 1")
}

#[test]
fn a_head_on_collision_too_deep_for_the_contact_stops_at_the_rebuild() {
    // With the default skin the beads (0.6 mm closer per step) rebuild the
    // neighbour list every step, and the rebuild of step 11 sees the
    // overlap before any force acts on it: the last thermo row is step 10.
    let (step, msg, steps, overlap) = head_on(None);
    assert_eq!(step, 11, "{msg}");
    assert_eq!(*steps.last().unwrap(), 10.0);
    assert!(overlap.iter().all(|&o| o <= 1.0), "{overlap:?}");
}

#[test]
fn a_head_on_collision_too_deep_for_the_contact_stops_at_the_thermo_row() {
    // A 10 mm skin: no rebuild in the 11 steps (each bead moves 3.3 mm), so
    // the thermo row of step 11 sees it; that row is written, and is the last.
    let (step, msg, steps, overlap) = head_on(Some(0.01));
    assert_eq!(step, 11, "{msg}");
    assert_eq!(*steps.last().unwrap(), 11.0);
    assert!(*overlap.last().unwrap() > 1.0, "{overlap:?}");
    assert!(
        overlap[..overlap.len() - 1].iter().all(|&o| o <= 1.0),
        "{overlap:?}"
    );
}

/// A bead thrown at 300 m/s into a floor of the same soft contact stops at
/// the rebuild of the step its centre passes the floor's surface (the
/// overlap then passes R*, the bead's radius): the check at a rebuild tests
/// the walls for the beads near them, as the force stage does.
#[test]
fn a_bead_driven_too_deep_into_a_wall_stops_at_the_rebuild() {
    let c = soft_beads("floor")
        .wall(plane([0.0, 0.0, 0.005], [0.0, 0.0, 1.0], "glass"))
        .particles(
            list("glass", 0.001, vec![[0.01, 0.01, 0.009]]).with("velocity", [[0.0, 0.0, -300.0]]),
        );
    let (step, msg, steps, overlap) = too_deep(&c, "floor", "wall[0]");
    // Caught before any force acted at that depth: the last row is the
    // step before, every row within the bound.
    assert_eq!(*steps.last().unwrap(), (step - 1) as f64, "{msg}");
    assert!(overlap.iter().all(|&o| o <= 1.0), "{overlap:?}");
    assert!((13..=15).contains(&step), "step {step}: {msg}");
}

/// A launcher's rank count that the job does not have (a serial gravel
/// under `mpirun -np 2`, or an MPI gravel under another MPI's launcher,
/// which starts singletons) is refused with exit 2 before anything is
/// written, naming the variable and what to do. MVAPICH2's variable stands
/// for the launcher: the MPI library of the MPI build ignores it.
#[test]
fn a_launcher_count_the_job_does_not_have_is_refused() {
    let (dir, config) = setup(&small_config());
    let out_dir = dir.path().join("out");
    let out = gravel_command()
        .args([OsStr::new("run"), config.as_os_str(), OsStr::new("--out")])
        .arg(&out_dir)
        .env("MV2_COMM_WORLD_SIZE", "2")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("MV2_COMM_WORLD_SIZE=2"), "{stderr}");
    let advice = if cfg!(feature = "mpi") {
        "another MPI library"
    } else {
        "--features mpi"
    };
    assert!(stderr.contains(advice), "{stderr}");
    assert!(!out_dir.exists(), "output written before the refusal");
    // One rank announced is a one-rank job: accepted.
    let one = gravel_command()
        .args([OsStr::new("check"), config.as_os_str()])
        .env("MV2_COMM_WORLD_SIZE", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(one.status.success(), "{}", describe(&one));
}

#[test]
fn info_on_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.h5");
    let out = gravel([OsStr::new("info"), path.as_os_str()], dir.path());
    assert_ne!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(out.status.code().is_some());
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&*path.to_string_lossy()), "{stderr}");
}

#[test]
fn info_on_a_file_that_is_not_hdf5() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.h5");
    std::fs::write(&path, "this is not an HDF5 file\n").unwrap();
    let out = gravel([OsStr::new("info"), path.as_os_str()], dir.path());
    assert_ne!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(out.status.code().is_some());
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&*path.to_string_lossy()), "{stderr}");
}

#[test]
fn info_on_an_hdf5_file_that_is_not_gravel_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.h5");
    hdf5::File::create(&path)
        .unwrap()
        .create_group("something")
        .unwrap();
    let out = gravel([OsStr::new("info"), path.as_os_str()], dir.path());
    assert_ne!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&*path.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("not a gravel"), "{stderr}");
}

#[test]
fn bad_arguments_exit_2() {
    let (dir, config) = setup(&small_config());
    let c = config.to_str().unwrap();
    let cases: [&[&str]; 9] = [
        &[],
        &["frobnicate"],
        &["run"],
        &["check"],
        &["info"],
        &["run", c, "--steps", "many"],
        &["run", c, "--steps", "-5"],
        &["run", c, "--threads", "two"],
        &["run", c, "--no-such-flag"],
    ];
    for args in cases {
        let out = gravel(args, dir.path());
        assert_eq!(
            out.status.code(),
            Some(2),
            "gravel {args:?}: {}",
            describe(&out)
        );
        assert!(!out.stderr.is_empty(), "gravel {args:?}: no message");
    }
    assert!(
        !dir.path().join("not_used").exists() && !dir.path().join("out").exists(),
        "a refused command wrote output"
    );
}

/// `--steps` and `--threads` out of their documented bounds are refused
/// with exit 2, naming the flag and its value, before anything is written.
#[test]
fn flags_out_of_bounds_exit_2() {
    let (dir, config) = setup(&small_config());
    let cases: [(&[&str], &str); 3] = [
        (&["--steps", "0"], "--steps 0: a run needs at least 1 step"),
        (&["--steps", "9007199254740993"], "--steps 9007199254740993"),
        (
            &["--threads", "100000"],
            "--threads 100000: at most 1024 threads",
        ),
    ];
    for (args, expect) in cases {
        let (out, out_dir) = run(dir.path(), &config, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!out_dir.exists(), "{args:?}: a refused run wrote output");
    }
}

/// Negative numbers reach the validation layer (not clap's "unexpected
/// argument"): refused with exit 2, naming the flag, its value and what is
/// allowed, before anything is written.
#[test]
fn negative_numeric_flags_name_the_flag_and_the_range() {
    let (dir, config) = setup(&small_config());
    let cases: [(&[&str], &str); 4] = [
        (
            &["--steps", "-5"],
            "--steps -5: must be a whole number, 1 to 2^53",
        ),
        (
            &["--threads", "-1"],
            "--threads -1: must be a whole number, 0 to 1024",
        ),
        (
            &["--dump-state", "dump.txt", "--dump-every", "-3"],
            "--dump-every -3: must be a whole number ≥ 0",
        ),
        (&["--steps=-5"], "--steps -5"),
    ];
    for (args, expect) in cases {
        let (out, out_dir) = run(dir.path(), &config, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
        assert!(!out_dir.exists(), "{args:?}: a refused run wrote output");
        assert!(!dir.path().join("dump.txt").exists());
    }
    let c = config.to_str().unwrap();
    let out = gravel(["check", c, "--ranks", "-2"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--ranks -2: must be a whole number, 1 or more"),
        "{stderr}"
    );
}

/// A directory given as a checkpoint or to `gravel info`, or a missing file
/// to `info`, is refused with exit 2 and a sentence, not an HDF5 dump.
#[test]
fn a_directory_is_not_a_checkpoint() {
    let (dir, config) = setup(&small_config());
    let folder = dir.path().join("old_run");
    std::fs::create_dir(&folder).unwrap();
    let (out, out_dir) = run(dir.path(), &config, &["--restart", "old_run"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr.contains("--restart: old_run is a directory")
            && stderr.contains("give a checkpoint file (.h5)"),
        "{stderr}"
    );
    assert!(!stderr.contains("HDF5"), "{stderr}");
    assert!(!out_dir.exists());
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    for (arg, what) in [
        ("old_run", "is a directory"),
        ("missing.h5", "does not exist"),
    ] {
        let out = gravel(["info", arg], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {}", describe(&out));
        assert!(stderr.contains(&format!("info: {arg} {what}")), "{stderr}");
        assert!(!stderr.contains("HDF5"), "{stderr}");
    }
}

#[test]
fn restart_from_a_missing_checkpoint_is_refused_with_exit_2() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &["--restart", "old.checkpoint.h5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr.contains("old.checkpoint.h5"), "{stderr}");
    assert!(stderr.contains("cannot restart"), "{stderr}");
    assert!(!out_dir.exists());
}

#[test]
fn help_and_version_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let help = gravel(["--help"], dir.path());
    assert_eq!(help.status.code(), Some(0), "{}", describe(&help));
    let h = text(&help.stdout);
    for cmd in ["run", "check", "info"] {
        assert!(h.contains(cmd), "{h}");
    }
    let version = gravel(["--version"], dir.path());
    assert_eq!(version.status.code(), Some(0));
    assert!(text(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn periodic_frames_hold_wrapped_positions() {
    // One bead crossing the periodic x face at 5 m/s (0.05 mm per step, within
    // half the skin): frames hold its position wrapped into [lo, hi).
    let body = Config::new("wrap")
        .run("dt", 1e-5)
        .run("steps", 60)
        .domain([0.0; 3], [0.01; 3])
        .periodic([true; 3])
        .material(glass())
        .contact("normal", hertz(0.5))
        .particles(
            list("glass", 0.001, vec![[0.0099, 0.005, 0.005]]).with("velocity", [[5.0, 0.0, 0.0]]),
        )
        .output("every", 20)
        .output("fields", ["velocity"])
        .text();
    let (dir, config) = setup(&body);
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let h5 = out_dir.join("wrap.h5");
    assert_eq!(list_frames(&h5).unwrap(), vec![0, 20, 40, 60]);
    for step in [0u64, 20, 40, 60] {
        let f = read_frame(&h5, step).unwrap();
        let x = f.position[0];
        assert!(
            (0..3).all(|a| (0.0..0.01).contains(&x[a])),
            "frame {step}: {x:?} is not wrapped into the box"
        );
        let expect = (0.0099 + 5.0 * step as f64 * DT) % 0.01;
        assert!((x[0] - expect).abs() < 1e-12, "frame {step}: {x:?}");
        assert_eq!(f.fields[0].1[0], [5.0, 0.0, 0.0]);
    }
}

#[test]
fn auto_dt_is_finite_for_an_overdamped_hooke_contact() {
    // damping_rate = γn/m* = 1e7 1/s is far above critical (2 sqrt(kn/m*) ≈ 4e5 1/s):
    // there is no collision time, but an explicit step still has a finite stable limit,
    // below the undamped half period π sqrt(m*/kn).
    let body = Config::new("overdamped")
        .run("dt", "auto")
        .run("steps", 10)
        .domain([0.0; 3], [0.01; 3])
        .material(material("glass", 2500.0))
        .contact(
            "normal",
            model("hooke")
                .with("stiffness", 2e5)
                .with("damping_rate", 1e7),
        )
        .particles(list("glass", 0.001, vec![[0.005, 0.005, 0.005]]))
        .text();
    let (dir, config) = setup(&body);
    let out = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("chosen time step:"))
        .unwrap_or_else(|| panic!("{stdout}"));
    let dt: f64 = line["chosen time step:".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let m_eff = 0.5 * 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * 1e-9;
    let half_period = std::f64::consts::PI * (m_eff / 2e5).sqrt();
    assert!(
        dt.is_finite() && dt < half_period,
        "dt = \"auto\" chose {dt:e} s for an over-damped Hooke contact (undamped half period {half_period:e} s)\n{stdout}"
    );
}

/// A box with one big sphere (from `big`, a `list` or `file` block) and a
/// `random` block of 40 small ones around it, `steps = 1` (the thermo row of
/// step 0 is the initial state).
fn big_and_random(big: Table, seed: u64) -> String {
    Config::new("mixed")
        .run("dt", 1e-5)
        .run("steps", 1)
        .run("seed", seed)
        .domain([0.0; 3], [0.01; 3])
        .material(glass())
        .contact("normal", hertz(0.5))
        .particles(big)
        .particles(random("glass", 0.001, 40, region([0.0; 3], [0.01; 3])))
        .text()
}

/// Run `body` for one step and return the thermo row of step 0 (`contacts`, `max_overlap`).
fn initial_contacts(dir: &Path, body: &str) -> (f64, f64) {
    let config = dir.join("config.toml");
    std::fs::write(&config, body).unwrap();
    // One folder for every seed: each run replaces the last one's output.
    let (out, out_dir) = run(dir, &config, &["--quiet", "--overwrite"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let thermo = read_thermo(&out_dir.join("mixed.h5")).unwrap();
    (
        column(&thermo, "contacts")[0],
        column(&thermo, "max_overlap")[0],
    )
}

/// README: `random` places "non-overlapping" spheres; that includes the
/// particles of `list` blocks given before it.
#[test]
fn random_block_avoids_list_particles() {
    let dir = tempfile::tempdir().unwrap();
    let big = list("glass", 0.002, vec![[0.005, 0.005, 0.005]]);
    for seed in 1..=3 {
        let (contacts, overlap) = initial_contacts(dir.path(), &big_and_random(big.clone(), seed));
        assert_eq!((contacts, overlap), (0.0, 0.0), "seed {seed}");
    }
}

/// ... and the particles read from a `file` block.
#[test]
fn random_block_avoids_file_particles() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("big.csv"),
        "id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n100,0,0.005,0.005,0.005,0.002,2500,0,0,0,0,0,0\n",
    )
    .unwrap();
    let big = file("glass", "big.csv");
    for seed in 1..=3 {
        let (contacts, overlap) = initial_contacts(dir.path(), &big_and_random(big.clone(), seed));
        assert_eq!(
            (contacts, overlap),
            (0.0, 0.0),
            "seed {seed}: random spheres overlap the file's sphere"
        );
    }
}

/// `time = T` runs the whole number of steps that covers T: `T/dt` rounded up,
/// but a ratio that is whole up to rounding (2e-3 / 1e-6 = 2000.0000000000002
/// in floating point) is that whole number, not one more.
#[test]
fn time_gives_the_steps_that_cover_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (1e-5, 4.5e-4, 45),
        (1e-5, 1.05e-4, 11),
        (1e-6, 2e-3, 2000),
        (1e-6, 3e-5, 30),
    ];
    let mut wrong = Vec::new();
    for (dt, time, steps) in cases {
        let body = Config::new("t")
            .run("dt", dt)
            .run("time", time)
            .domain([0.0; 3], [0.01; 3])
            .material(glass())
            .contact("normal", hertz(0.5))
            .particles(list("glass", 0.001, vec![[0.005, 0.005, 0.005]]))
            .text();
        let config = dir.path().join("time.toml");
        std::fs::write(&config, body).unwrap();
        let out = gravel([OsStr::new("check"), config.as_os_str()], dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let stdout = text(&out.stdout);
        if !stdout.contains(&format!("steps: {steps} ")) {
            let line = stdout
                .lines()
                .find(|l| l.starts_with("steps:"))
                .unwrap_or("");
            wrong.push(format!(
                "dt = {dt}, time = {time}: expected {steps} steps, got `{line}`"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every file under `dir` with its bytes (for "nothing was modified").
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// A first run of the small config into `DIR/out` (30 steps), its files, and the
/// config with `edit` applied, written as `edited.toml`.
fn earlier_output(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let body = small_config();
    let (dir, config) = setup(&body);
    let (out, out_dir) = run(dir.path(), &config, &["--steps", "30", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(out_dir.join("small.h5").is_file() && out_dir.join("small.xdmf").is_file());
    let edited = edit(&body);
    let path = write_file(dir.path(), "edited.toml", &edited);
    (dir, path)
}

/// Asserts that `out` is a refusal (exit 2) whose message has every one of `needles`,
/// and that nothing under `dir` changed from `before`.
fn assert_refused_untouched(
    out: &Output,
    needles: &[&str],
    dir: &Path,
    before: &[(PathBuf, Vec<u8>)],
) {
    assert_eq!(out.status.code(), Some(2), "{}", describe(out));
    let stderr = text(&out.stderr);
    for needle in needles {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
    assert!(
        !text(&out.stdout).contains("done:"),
        "the refused run ran: {}",
        describe(out)
    );
    let after = snapshot(dir);
    let names = |s: &[(PathBuf, Vec<u8>)]| s.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&after), names(before), "files added or removed");
    for ((path, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{} was modified", path.display());
    }
}

/// An output folder that is a file, or lies under a file, is refused before step 0
/// with exit 2, naming the flag or key and the path; nothing is written.
#[test]
fn an_output_dir_that_is_a_file_is_refused_with_exit_2() {
    let (dir, config) = setup(&small_config());
    let blocker = write_file(dir.path(), "a_file", "keep me\n");
    for out_dir in [blocker.clone(), blocker.join("out")] {
        let before = snapshot(dir.path());
        let out = run_into(dir.path(), &config, &out_dir, &["--quiet"]);
        let shown = out_dir.to_string_lossy().into_owned();
        assert_refused_untouched(
            &out,
            &["--out", &shown, "config.toml", "not a directory"],
            dir.path(),
            &before,
        );
    }
    // Given by the config's key, the message names the key.
    let body = small_config().replace("dir = \"not_used\"", "dir = \"a_file\"");
    assert!(body.contains("dir = \"a_file\""));
    let config = write_file(dir.path(), "keyed.toml", &body);
    let before = snapshot(dir.path());
    let out = gravel(
        [OsStr::new("run"), config.as_os_str(), OsStr::new("--quiet")],
        dir.path(),
    );
    assert_refused_untouched(
        &out,
        &["keyed.toml", "output.dir = \"a_file\"", "not a directory"],
        dir.path(),
        &before,
    );
}

/// A read-only output folder (or one that would be created in a read-only folder) is
/// refused with exit 2. Skipped where the user writes anyway (root).
#[test]
fn a_read_only_output_dir_is_refused_with_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, config) = setup(&small_config());
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(locked.join("probe"), "").is_ok() {
        eprintln!("skipped: this user writes into a read-only folder (root)");
        return;
    }
    for out_dir in [locked.clone(), locked.join("out")] {
        let before = snapshot(dir.path());
        let out = run_into(dir.path(), &config, &out_dir, &["--quiet"]);
        assert_refused_untouched(&out, &["--out", "not writable"], dir.path(), &before);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A run over the output of an earlier run is refused (exit 2, naming the file and
/// `--overwrite`) and leaves it as it was; with `--overwrite` it replaces it.
#[test]
fn a_run_over_an_earlier_output_needs_overwrite() {
    let (dir, config) = earlier_output(|body| body.to_string());
    let before = snapshot(dir.path());
    let (out, _) = run(dir.path(), &config, &["--steps", "20", "--quiet"]);
    assert_refused_untouched(
        &out,
        &["edited.toml", "small.h5", "--overwrite", "--out"],
        dir.path(),
        &before,
    );
    let (out, out_dir) = run(
        dir.path(),
        &config,
        &["--steps", "20", "--quiet", "--overwrite"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(list_frames(&out_dir.join("small.h5")).unwrap(), vec![0, 20]);
}

/// `fields = ["velocity", "velocity"]` is refused by the config check, before the
/// earlier output (which `--overwrite` would replace) is touched.
#[test]
fn a_repeated_field_leaves_an_earlier_output_untouched() {
    let (dir, config) = earlier_output(|body| {
        let edited = body.replace(
            "fields = [\"velocity\", \"omega\"]",
            "fields = [\"velocity\", \"velocity\"]",
        );
        assert_ne!(edited, body);
        edited
    });
    let before = snapshot(dir.path());
    let (out, _) = run(dir.path(), &config, &["--quiet", "--overwrite"]);
    assert_refused_untouched(
        &out,
        &["edited.toml", "output.fields[1]", "`velocity`"],
        dir.path(),
        &before,
    );
}

/// `--dump-state` into a missing folder, or onto a folder, is refused at once, before
/// the run and before the earlier output is replaced.
#[test]
fn a_dump_state_that_cannot_be_written_is_refused_before_the_run() {
    let (dir, config) = earlier_output(|body| body.to_string());
    std::fs::create_dir(dir.path().join("a_folder")).unwrap();
    // The last one would overwrite the run's own output at its end.
    for (dump, why) in [
        ("missing/final.txt", "does not exist"),
        ("a_folder", "is a directory"),
        ("./out/../out/small.h5", "is the output of this run"),
    ] {
        let before = snapshot(dir.path());
        let (out, _) = run(
            dir.path(),
            &config,
            &["--quiet", "--overwrite", "--dump-state", dump],
        );
        assert_refused_untouched(&out, &["--dump-state", dump, why], dir.path(), &before);
    }
}

/// `DIR/NAME.lock`, held by a running run, once it has written it.
fn wait_for_lock(out_dir: &Path, name: &str, child: &mut std::process::Child) {
    let lock = out_dir.join(format!("{name}.lock"));
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&lock).map_or(true, |t| t.trim().is_empty()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the first run ended before it was seen running"
        );
        assert!(start.elapsed().as_secs() < 60, "no lock after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A long run of the small config into `DIR/out` (frames only at the end).
fn long_run(dir: &Path, config: &Path) -> std::process::Child {
    gravel_command()
        .args([
            OsStr::new("run"),
            config.as_os_str(),
            OsStr::new("--out"),
            dir.join("out").as_os_str(),
            OsStr::new("--steps"),
            OsStr::new("200000"),
            OsStr::new("--quiet"),
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A second run into the output a first one is writing is refused at once (exit 2,
/// naming the file and the first run's pid), even with `--overwrite`; the first
/// run's output is whole (`gravel info` reads it).
#[test]
fn a_second_run_into_a_busy_output_is_refused() {
    let body = small_config().replace("every = 50", "every = 0");
    assert_ne!(body, small_config());
    let (dir, config) = setup(&body);
    let mut first = long_run(dir.path(), &config);
    let out_dir = dir.path().join("out");
    wait_for_lock(&out_dir, "small", &mut first);
    let start = std::time::Instant::now();
    let (second, _) = run(dir.path(), &config, &["--quiet", "--overwrite"]);
    let took = start.elapsed();
    let still_running = first.try_wait().unwrap().is_none();
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{}", describe(&second));
    assert!(
        stderr.contains("another gravel run")
            && stderr.contains(&format!("pid {}", first.id()))
            && stderr.contains("small.h5"),
        "{stderr}"
    );
    assert!(
        still_running,
        "the first run ended before the second was refused"
    );
    assert!(took.as_secs() < 10, "refused only after {took:?}");
    let done = first.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", describe(&done));
    let info = gravel(
        [OsStr::new("info"), out_dir.join("small.h5").as_os_str()],
        dir.path(),
    );
    assert_eq!(info.status.code(), Some(0), "{}", describe(&info));
    assert!(
        text(&info.stdout).contains("steps 200000 to 200000"),
        "{}",
        describe(&info)
    );
}

/// The lock of a run killed with SIGKILL is released with it: its lock file, left
/// behind, does not stop the next run.
#[test]
fn a_killed_run_leaves_no_lock_behind() {
    let (dir, config) = setup(&small_config().replace("every = 50", "every = 0"));
    let mut first = long_run(dir.path(), &config);
    let out_dir = dir.path().join("out");
    wait_for_lock(&out_dir, "small", &mut first);
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        out_dir.join("small.lock").is_file(),
        "the stale lock file is there"
    );
    let (out, _) = run(
        dir.path(),
        &config,
        &["--steps", "10", "--quiet", "--overwrite"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(list_frames(&out_dir.join("small.h5")).unwrap(), vec![10]);
}

/// Flips one bit inside the stored `position` of the frame at `step` of `h5`, found
/// by the bytes of one of its rows, which the file must hold exactly once.
fn flip_a_bit_in_frame(h5: &Path, step: u64) {
    let frame = read_frame(h5, step).unwrap();
    let needle: Vec<u8> = frame.position[3]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut bytes = std::fs::read(h5).unwrap();
    let hits: Vec<usize> = (0..bytes.len() - needle.len())
        .filter(|&k| bytes[k..k + needle.len()] == needle[..])
        .collect();
    assert_eq!(hits.len(), 1, "frame {step}'s row is stored once, raw");
    bytes[hits[0] + 12] ^= 0x20;
    std::fs::write(h5, bytes).unwrap();
}

/// `gravel info --verify` reads every frame and thermo column, checking their
/// checksums: exit 0 on an intact file, exit 2 naming the frame a flipped bit hit.
#[test]
fn info_verify_finds_a_flipped_bit_in_a_frame() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let h5 = out_dir.join("small.h5");
    let verify = || {
        gravel(
            [OsStr::new("info"), OsStr::new("--verify"), h5.as_os_str()],
            dir.path(),
        )
    };
    let good = verify();
    assert_eq!(good.status.code(), Some(0), "{}", describe(&good));
    assert!(
        text(&good.stdout).contains("all 6 frames verified")
            && text(&good.stdout).contains("every one checksummed"),
        "{}",
        describe(&good)
    );
    flip_a_bit_in_frame(&h5, 100);
    let bad = verify();
    let stderr = text(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));
    assert!(
        stderr.contains("small.h5") && stderr.contains("frame 100 (`position`"),
        "{stderr}"
    );
    assert!(stderr.contains("damaged: 1 of 6 frames"), "{stderr}");
}

/// A restart that would append to a damaged output is refused before step 0 (exit
/// 2, naming the frame), and the output is left as it was.
#[test]
fn a_restart_onto_a_damaged_output_is_refused() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &["--steps", "100", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    flip_a_bit_in_frame(&out_dir.join("small.h5"), 50);
    let before = snapshot(dir.path());
    let ckpt = out_dir.join("small.checkpoint.h5");
    let (out, _) = run(
        dir.path(),
        &config,
        &["--quiet", "--restart", ckpt.to_str().unwrap()],
    );
    assert_refused_untouched(
        &out,
        &["--out", "small.h5", "frame 50 (`position`", "--verify"],
        dir.path(),
        &before,
    );
}

/// Frames carry the frozen flag of every particle, `/materials` names the material
/// indices, and datasets with a unit give it in a `units` attribute.
#[test]
fn frames_carry_frozen_flags_material_names_and_units() {
    let body = Config::new("tagged")
        .run("dt", 1e-5)
        .run("steps", 5)
        .domain([0.0; 3], [0.01; 3])
        .material(glass())
        .material(glass().with("name", "steel"))
        .contact("normal", hertz(0.5))
        .particles(list("glass", 0.001, vec![[0.002, 0.002, 0.002]]).with("frozen", true))
        .particles(list("steel", 0.001, vec![[0.006, 0.006, 0.006]]))
        .output("fields", ["velocity", "force"])
        .text();
    let (dir, config) = setup(&body);
    let (out, out_dir) = run(dir.path(), &config, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let h5 = out_dir.join("tagged.h5");
    let frame = read_frame(&h5, 5).unwrap();
    let by_id = |v: &[u8]| -> Vec<u8> {
        let mut rows: Vec<(u64, u8)> = frame.id.iter().copied().zip(v.iter().copied()).collect();
        rows.sort_unstable();
        rows.into_iter().map(|r| r.1).collect()
    };
    assert_eq!(by_id(&frame.frozen), [1, 0]);
    let file = hdf5::File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(&h5)
        .unwrap();
    let names: Vec<String> = file
        .dataset("materials")
        .unwrap()
        .read_raw::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["glass", "steel"]);
    let units = |path: &str| -> Option<String> {
        let ds = file.dataset(path).unwrap();
        ds.attr("units").ok().map(|a| {
            a.read_scalar::<hdf5::types::VarLenUnicode>()
                .unwrap()
                .as_str()
                .to_owned()
        })
    };
    for (path, unit) in [
        ("frames/000000005/position", Some("m")),
        ("frames/000000005/radius", Some("m")),
        ("frames/000000005/velocity", Some("m/s")),
        ("frames/000000005/force", Some("N")),
        ("frames/000000005/frozen", None),
        ("thermo/time", Some("s")),
        ("thermo/kinetic_energy", Some("J")),
        ("thermo/contacts", None),
    ] {
        assert_eq!(units(path).as_deref(), unit, "{path}");
    }
    let xdmf = std::fs::read_to_string(out_dir.join("tagged.xdmf")).unwrap();
    assert!(xdmf.contains("/frames/000000005/frozen"), "{xdmf}");
}

/// One run's output seeds the next: a `file` block reading a frame (the
/// last, or `step`) or the checkpoint of an earlier run takes its particles
/// bit for bit (ids, positions, radii, velocities and angular velocities;
/// a frame's masses from the block's material, a checkpoint's as stored);
/// a step the file lacks is refused naming the frames it has.
#[test]
fn an_earlier_runs_frame_or_checkpoint_seeds_a_run() {
    let (dir, config) = setup(&small_config());
    let (out, out_dir) = run(dir.path(), &config, &[]);
    assert!(out.status.success(), "{}", describe(&out));
    let h5 = out_dir.join("small.h5");
    let seeded = |block: &str| {
        let text = small_config().replace(
            "[[particles]]\nkind = \"random\"",
            &format!("[[particles]]\n{block}\n\n[[unused]]\nkind = \"random\""),
        );
        // Keep only the new block: drop the random one.
        let text = text[..text.find("[[unused]]").unwrap()].to_string();
        let path = dir.path().join("seeded.toml");
        std::fs::write(&path, text).unwrap();
        gravel::config::Setup::from_file(&path)
    };
    let bits = |v: glam::DVec3| v.to_array().map(f64::to_bits);
    for (block, step) in [
        (
            "kind = \"file\"\nmaterial = \"glass\"\npath = \"out/small.h5\"",
            230,
        ),
        (
            "kind = \"file\"\nmaterial = \"glass\"\npath = \"out/small.h5\"\nstep = 100",
            100,
        ),
    ] {
        let s = seeded(block).unwrap_or_else(|e| panic!("{e}"));
        let frame = read_frame(&h5, step).unwrap();
        let got = s.initial.to_vec();
        assert_eq!(got.len(), 50);
        assert_eq!(got.iter().map(|p| p.id).collect::<Vec<_>>(), frame.id);
        let field = |name: &str| &frame.fields.iter().find(|(n, _)| n == name).unwrap().1;
        for (i, p) in got.iter().enumerate() {
            assert_eq!(
                bits(p.x),
                frame.position[i].map(f64::to_bits),
                "step {step}"
            );
            assert_eq!(p.radius.to_bits(), frame.radius[i].to_bits());
            assert_eq!(bits(p.v), field("velocity")[i].map(f64::to_bits));
            assert_eq!(bits(p.omega), field("omega")[i].map(f64::to_bits));
            let mass = gravel::state::particles::ParticleRecord::sphere_mass(p.radius, 2500.0);
            assert_eq!(p.mass.to_bits(), mass.to_bits(), "the material's density");
        }
        assert!(got.iter().any(|p| p.v != glam::DVec3::ZERO));
    }
    // The checkpoint: its masses and positions, as stored.
    let s = seeded("kind = \"file\"\nmaterial = \"glass\"\npath = \"out/small.checkpoint.h5\"")
        .unwrap_or_else(|e| panic!("{e}"));
    let snap = gravel::io::checkpoint::read(&out_dir.join("small.checkpoint.h5")).unwrap();
    let got = s.initial.to_vec();
    assert_eq!(got.len(), snap.particles.len());
    for (p, q) in got.iter().zip(&snap.particles) {
        assert_eq!(
            (p.id, bits(p.x), p.mass.to_bits()),
            (q.id, bits(q.x), q.mass.to_bits())
        );
    }
    // A step the file lacks.
    let e = seeded("kind = \"file\"\nmaterial = \"glass\"\npath = \"out/small.h5\"\nstep = 75")
        .unwrap_err()
        .to_string();
    assert!(e.contains("particles[0].step") && e.contains("75"), "{e}");
    assert!(e.contains("230"), "the message lists the frames: {e}");
}
