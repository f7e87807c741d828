//! Outlets and `lost = "delete"`: particles that enter an outlet, or leave
//! the domain through an open face, are deleted and counted (thermo
//! `deleted`, `deleted_mass`); no history record naming them survives; the
//! run is the same to the bit on any number of threads and ranks, and
//! across a restart mid-discharge. `lost = "error"` (the default) still
//! stops the run.
//!
//! The discharge: a bed of spheres on a floor, periodic across (y), driven
//! along −x by gravity tilted 45° against a back wall, with a pouring
//! source feeding it, sliding and rolling into an outlet at the low end
//! (or out through the open face x = 0).

mod common;

use common::*;
use gravel::io::read::{list_frames, read_frame, read_thermo};
use gravel::state::particles::ParticleRecord;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Steps of every run here.
const STEPS: u64 = 4000;
/// Where the outlet ends along x.
const MOUTH: f64 = 0.004;

/// The bed, open at x = 0; frames at steps 0 and `STEPS`, thermo every
/// 100 steps.
fn bed() -> Config {
    Config::new("slide")
        .run("dt", 1.5e-5)
        .run("steps", STEPS)
        .run("seed", 3)
        .run("gravity", [-9.81, 0.0, -9.81])
        .domain([0.0; 3], [0.03, 0.01, 0.02])
        .periodic([false, true, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.3))
        .wall(plane([0.0; 3], [0.0, 0.0, 1.0], "glass"))
        .wall(plane([0.03, 0.0, 0.0], [-1.0, 0.0, 0.0], "glass"))
        .particles(random(
            "glass",
            radius_range(0.0008, 0.0012),
            200,
            region([0.006, 0.0, 0.001], [0.03, 0.01, 0.019]),
        ))
        .particles(
            pour(
                "glass",
                0.001,
                2000.0,
                0.05,
                region([0.02, 0.0, 0.015], [0.03, 0.01, 0.02]),
            )
            .with("interval", 100),
        )
        .output("every", STEPS)
        .output("thermo_every", 100)
}

/// The discharge into an outlet `{ x ≤ MOUTH }` at the open end.
fn discharge() -> Config {
    bed().push(
        "outlet",
        Table::new()
            .with("name", "mouth")
            .with("region", region([0.0; 3], [MOUTH, 0.01, 0.02])),
    )
}

/// The bed with no outlet: particles leave through the open face x = 0,
/// deleted under `lost = "delete"`.
fn open_face(lost: Option<&str>) -> Config {
    match lost {
        Some(l) => bed().set("domain", "lost", l),
        None => bed(),
    }
}

/// Run `config` with `threads` threads into `dir/<tag>`; returns the output
/// file and the final dump.
fn run(
    dir: &Path,
    config: &Config,
    tag: &str,
    threads: usize,
    extra: &[&str],
) -> (PathBuf, String) {
    let path = write_file(dir, &format!("{tag}.toml"), &config.text());
    let out = dir.join(tag);
    let dump = dir.join(format!("{tag}.dump"));
    let mut args = vec![
        "run".to_string(),
        path.display().to_string(),
        "--quiet".into(),
        "--threads".into(),
        threads.to_string(),
        "--out".into(),
        out.display().to_string(),
        "--dump-state".into(),
        dump.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let o = gravel(&args, dir);
    assert!(o.status.success(), "{}", describe(&o));
    (
        out.join("slide.h5"),
        std::fs::read_to_string(&dump).unwrap(),
    )
}

/// The thermo column `name`.
fn column(h5: &Path, name: &str) -> Vec<f64> {
    read_thermo(h5)
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no thermo column {name}"))
        .1
}

/// The ids of the particles in a dump, and the partners named by its
/// history records.
fn dump_ids(dump: &str) -> (BTreeSet<u64>, Vec<u64>) {
    let mut ids = BTreeSet::new();
    let mut partners = Vec::new();
    for line in dump.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "p" => {
                ids.insert(f[1].parse().unwrap());
            }
            "h" if f[2].starts_with('p') => partners.push(f[2][1..].parse().unwrap()),
            _ => {}
        }
    }
    (ids, partners)
}

/// Checks one finished discharge: every thermo row's `particles +
/// deleted` is the particles present at step 0 plus those inserted by
/// then; the totals never fall; the particles missing at the end (ids
/// counted) are exactly `deleted`, of mass `deleted_mass`; no particle
/// left lies in the outlet (`x_max` bounds them: `MOUTH`, or 0 for the
/// open face); no history record names a deleted particle. Returns the
/// number deleted.
fn check_discharge(h5: &Path, dump: &str, x_min: f64) -> u64 {
    let frames = list_frames(h5).unwrap();
    assert_eq!(frames, vec![0, STEPS]);
    let (first, last) = (read_frame(h5, 0).unwrap(), read_frame(h5, STEPS).unwrap());
    let (deleted, mass) = (column(h5, "deleted"), column(h5, "deleted_mass"));
    let particles = column(h5, "particles");
    for w in deleted.windows(2).chain(mass.windows(2)) {
        assert!(w[1] >= w[0], "a cumulative column fell: {w:?}");
    }
    // Inserted so far: the ids above the initial ones seen at the end or
    // deleted; every id is below next_id. Count instead: the ids at the
    // end plus the deleted ones are every id ever given.
    let at_end: BTreeSet<u64> = last.id.iter().copied().collect();
    let (in_dump, partners) = dump_ids(dump);
    assert_eq!(
        in_dump, at_end,
        "the dump and the last frame hold the same particles"
    );
    let n_deleted = *deleted.last().unwrap() as u64;
    let max_id = at_end.iter().max().copied().unwrap_or(0);
    let ever: u64 = max_id + 1;
    // Ids are dense from 0 (initial, then inserted in order); the largest
    // id given may itself have been deleted, so `ever` is a lower bound.
    assert!(at_end.len() as u64 + n_deleted >= ever);
    let gone: Vec<u64> = (0..at_end.len() as u64 + n_deleted)
        .filter(|id| !at_end.contains(id))
        .collect();
    assert_eq!(gone.len() as u64, n_deleted, "deleted ids counted");
    // Masses of the deleted: the initial ones from frame 0, the poured
    // ones all of radius 1 mm.
    let radius_of = |id: u64| {
        first
            .id
            .iter()
            .position(|&i| i == id)
            .map_or(0.001, |k| first.radius[k])
    };
    let expected: f64 = gone
        .iter()
        .map(|&id| ParticleRecord::sphere_mass(radius_of(id), 2500.0))
        .sum();
    let total = *mass.last().unwrap();
    assert!(
        (total - expected).abs() <= 1e-12 * expected,
        "deleted_mass {total:e} kg, the deleted ids weigh {expected:e} kg"
    );
    // particles + deleted only grows (insertions), by whole pours.
    for (p, d) in particles.iter().zip(&deleted) {
        assert!(p + d >= 200.0, "{p} + {d}");
    }
    for x in &last.position {
        assert!(
            x[0] > x_min,
            "a particle left at x = {} was not deleted",
            x[0]
        );
    }
    for q in &partners {
        assert!(
            at_end.contains(q),
            "a history record names deleted particle {q}"
        );
    }
    n_deleted
}

#[test]
fn an_outlet_deletes_exactly_the_particles_that_enter_it_on_1_and_2_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (h5, dump) = run(dir.path(), &discharge(), "one", 1, &[]);
    let n = check_discharge(&h5, &dump, MOUTH);
    let (left, pairs, walls) = dump_counts(&dump);
    // A discharge under way: many deleted, many left, in contact (the
    // pair records at the last step are 38 to 56 over seeds 3 to 6).
    assert!(n >= 80 && left >= 80, "{n} deleted, {left} left");
    assert!(
        pairs >= 30 && walls >= 10,
        "{pairs} pair and {walls} wall records"
    );
    eprintln!("{n} deleted, {left} left, {pairs} pair and {walls} wall records");
    let (h5_2, dump_2) = run(dir.path(), &discharge(), "two", 2, &[]);
    assert_same_dump(&dump, &dump_2, "2 threads");
    for name in ["particles", "deleted", "deleted_mass"] {
        let (a, b) = (column(&h5, name), column(&h5_2, name));
        assert_eq!(
            a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{name} on 2 threads"
        );
    }
}

#[test]
fn lost_delete_deletes_exactly_the_particles_that_leave_and_error_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (h5, dump) = run(dir.path(), &open_face(Some("delete")), "lost", 1, &[]);
    let n = check_discharge(&h5, &dump, 0.0);
    assert!(n >= 50, "{n} deleted");
    eprintln!("lost = \"delete\": {n} deleted");
    // The default, and lost = "error" said outright, stop at the first
    // particle out, with today's message.
    for (tag, lost) in [("default", None), ("error", Some("error"))] {
        let path = write_file(dir.path(), &format!("{tag}.toml"), &open_face(lost).text());
        let out = dir.path().join(tag);
        let o = gravel(
            [
                "run",
                path.to_str().unwrap(),
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
        let err = text(&o.stderr);
        assert!(
            err.contains("particle id ")
                && err.contains(
                    "it left the domain along x (non-periodic, [0, 0.03]) with no wall to stop it"
                ),
            "{err}"
        );
    }
}

#[test]
fn a_restart_mid_discharge_continues_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let config = discharge().output("checkpoint_every", 1000);
    let (h5, straight) = run(dir.path(), &config, "straight", 1, &[]);
    let path = write_file(dir.path(), "split.toml", &config.text());
    let out = dir.path().join("split");
    let o = gravel(
        [
            "run",
            path.to_str().unwrap(),
            "--quiet",
            "--steps",
            "2500",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", describe(&o));
    // Deletion had begun by the checkpoint (the stopped run's last, step 2500).
    let before = column(&out.join("slide.h5"), "deleted");
    assert!(before[20] > 0.0, "deleted by step 2000: {}", before[20]);
    let ckpt = out.join("slide.checkpoint.h5");
    let (h5_r, restarted) = run(
        dir.path(),
        &config,
        "split",
        1,
        &["--restart", ckpt.to_str().unwrap()],
    );
    assert_same_dump(&straight, &restarted, "restarted at step 2500");
    for name in ["particles", "deleted", "deleted_mass"] {
        let (a, b) = (column(&h5, name), column(&h5_r, name));
        assert_eq!(
            a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{name} after the restart"
        );
    }
}

/// The discharge on 1, 2 and 3 ranks: the same dump and the same deletion
/// columns, to the bit; a checkpoint of the 3-rank run mid-discharge,
/// restarted on 2 ranks, ends the same too.
#[cfg(feature = "mpi")]
#[test]
fn the_discharge_is_bit_identical_on_1_2_3_ranks_and_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = discharge().output("checkpoint_every", 1000);
    let path = write_file(dir.path(), "slide.toml", &config.text());
    let mpi = |np: usize, tag: &str, extra: &[&str]| -> (PathBuf, String) {
        let out = dir.path().join(tag);
        let dump = dir.path().join(format!("{tag}.dump"));
        let mut args = dump_run_args(&path, &out, &dump);
        args.extend(extra);
        let o = mpirun(np, &args, dir.path());
        assert!(o.status.success(), "{}", describe(&o));
        (
            out.join("slide.h5"),
            std::fs::read_to_string(&dump).unwrap(),
        )
    };
    let bits = |h5: &Path| -> Vec<Vec<u64>> {
        ["particles", "deleted", "deleted_mass"]
            .iter()
            .map(|n| column(h5, n).iter().map(|v| v.to_bits()).collect())
            .collect()
    };
    let (h5, reference) = mpi(1, "np1", &[]);
    let n = check_discharge(&h5, &reference, MOUTH);
    assert!(n >= 80, "{n} deleted");
    for np in [2, 3] {
        let (h5_n, dump) = mpi(np, &format!("np{np}"), &[]);
        assert_same_dump(&reference, &dump, &format!("{np} ranks"));
        check_discharge(&h5_n, &dump, MOUTH);
        assert_eq!(bits(&h5), bits(&h5_n), "deletion columns on {np} ranks");
    }
    // Stop the 3-rank run at step 2500 (its last checkpoint), go on on 2 ranks.
    let (_, _) = mpi(3, "split", &["--steps", "2500"]);
    let ckpt = dir.path().join("split/slide.checkpoint.h5");
    let (h5_r, restarted) = mpi(2, "split", &["--restart", ckpt.to_str().unwrap()]);
    assert_same_dump(
        &reference,
        &restarted,
        "3-rank checkpoint restarted on 2 ranks",
    );
    assert_eq!(bits(&h5), bits(&h5_r), "deletion columns after the restart");
}
