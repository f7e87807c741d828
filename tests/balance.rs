//! Dynamic load balancing (feature `mpi`): a heap poured onto the middle of
//! a long slab cut into 4 ranks along its length, with and without
//! balancing; the trajectory the same bits on 1–4 ranks and 2 threads; a
//! cut that stops at the interaction range; a checkpoint across rebalances
//! restarted on other rank counts.
#![cfg(feature = "mpi")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// Steps between load checks in the heap runs (and between their dumps):
/// the pour inserts every 100 steps, which rebuilds the list, so each check
/// falls on a multiple of this and each dump follows it.
const EVERY: u64 = 500;

/// The example heap (`configs/heap.toml`) made shorter: about 1,300 glass
/// beads (radius 1.35–1.65 mm, Hertz–Mindlin, EPSD rolling) poured from a
/// 12 mm inlet onto a frozen base in the middle of a 240 mm slab, periodic
/// across y, 15,000 steps (the pour ends after 12,500).
fn heap() -> Config {
    Config::new("heap")
        .run("dt", 2e-5)
        .run("steps", 15_000)
        .run("seed", 1)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([-0.12, 0.0, 0.0], [0.12, 0.012, 0.15])
        .periodic([false, true, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .contact(
            "rolling",
            model("epsd").with("friction", 0.1).with("damping", 0.3),
        )
        .set(
            "parallel",
            "balance",
            Table::new().with("every", EVERY).with("tolerance", 1.1),
        )
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .wall(plane([-0.12, 0.0, 0.0], [1.0, 0.0, 0.0], "glass"))
        .wall(plane([0.12, 0.0, 0.0], [-1.0, 0.0, 0.0], "glass"))
        .particles(
            lattice(
                "glass",
                0.00149,
                0.003,
                region([-0.12, 0.0, 0.0], [0.12, 0.012, 0.003]),
            )
            .with("frozen", true),
        )
        .particles(
            pour(
                "glass",
                radius_range(0.00135, 0.00165),
                6000.0,
                0.25,
                region([-0.006, 0.0, 0.07], [0.006, 0.012, 0.11]),
            )
            .with("velocity", [0.0, 0.0, -0.5])
            .with("interval", 100),
        )
        .output("every", 5000)
        .output("thermo_every", 500)
}

/// What a run printed and left: stdout, stderr, the final dump and the
/// periodic dumps (every [`EVERY`] steps, when asked).
struct Run {
    stdout: String,
    stderr: String,
    dump: String,
    dumps: Vec<String>,
    out: PathBuf,
}

impl Run {
    /// Owned particles per rank, from the summary.
    fn owned(&self) -> Vec<f64> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("rank "))
            .map(|l| {
                let n = l.split(": ").nth(1).and_then(|r| r.split(' ').next());
                n.and_then(|n| n.parse().ok()).expect("rank line")
            })
            .collect()
    }

    /// `max / mean` of [`Self::owned`].
    fn owned_imbalance(&self) -> f64 {
        let n = self.owned();
        let mean = n.iter().sum::<f64>() / n.len() as f64;
        n.iter().copied().fold(0.0, f64::max) / mean
    }

    /// `(rebalances, checks)`, from the summary's `balance:` line.
    fn rebalances(&self) -> (u64, u64) {
        let line = self
            .stdout
            .lines()
            .find(|l| l.starts_with("balance: "))
            .expect("a balance line");
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = |w: &str| {
            let k = words.iter().position(|x| *x == w).expect(w);
            words[k - 1].parse::<u64>().expect(w)
        };
        (at("rebalances"), at("checks"))
    }

    /// The final cuts along x, from the summary's `decomposition:` line.
    fn cuts_x(&self) -> Vec<f64> {
        let line = self
            .stdout
            .lines()
            .find(|l| l.starts_with("decomposition: "))
            .expect("a decomposition line");
        let list = line
            .split("cuts x [")
            .nth(1)
            .and_then(|r| r.split(']').next());
        list.expect("cuts x")
            .split(", ")
            .map(|v| v.parse().expect("a cut"))
            .collect()
    }
}

/// Run `config` on `np` ranks × `threads` threads, with `extra` arguments;
/// dumps every [`EVERY`] steps up to step `periodic` when it is not 0.
fn run(dir: &Path, config: &Path, np: usize, threads: usize, tag: &str, periodic: u64) -> Run {
    run_with(dir, config, np, threads, tag, periodic, &[])
}

fn run_with(
    dir: &Path,
    config: &Path,
    np: usize,
    threads: usize,
    tag: &str,
    periodic: u64,
    extra: &[&str],
) -> Run {
    let out = dir.join(format!("out-{tag}"));
    let dump = dir.join(format!("dump-{tag}"));
    let mut args = dump_run_args(config, &out, &dump);
    let threads = threads.to_string();
    args[4] = &threads;
    let every = EVERY.to_string();
    if periodic > 0 {
        args.extend(["--dump-every", &every]);
    }
    args.extend(extra);
    let o = mpirun(np, &args, dir);
    assert!(o.status.success(), "{tag}: {}", describe(&o));
    let dumps = (1..=periodic / EVERY)
        .map(|k| {
            let mut name = dump.clone().into_os_string();
            name.push(format!(".{:09}", k * EVERY));
            std::fs::read_to_string(PathBuf::from(name)).expect("periodic dump")
        })
        .collect();
    Run {
        stdout: text(&o.stdout),
        stderr: text(&o.stderr),
        dump: std::fs::read_to_string(&dump).expect("final dump"),
        dumps,
        out,
    }
}

#[test]
fn a_heap_on_4_ranks_is_balanced_and_the_same_bits_on_1_to_4_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(dir.path(), "heap.toml", &heap().text());
    let off = write_file(
        dir.path(),
        "heap-off.toml",
        &heap().set("parallel", "balance", false).text(),
    );
    // The pour ends on step 12,500: dumps after every check until then.
    let pouring = 12_500;
    let one = run(dir.path(), &config, 1, 1, "1x1", pouring);
    let four = run(dir.path(), &config, 4, 1, "4x1", pouring);
    let (n, pairs, _) = dump_counts(&one.dump);
    assert!(n > 1000, "the pour ran: {n} particles");
    assert!(pairs > 1000, "history: {pairs} pair records");

    // Balanced: the owned particles within 15 % of the mean at the end.
    let balanced = four.owned_imbalance();
    assert!(
        balanced <= 1.15,
        "with balancing, owned max/mean = {balanced:.3}:\n{}",
        four.stdout
    );
    let (rebalances, checks) = four.rebalances();
    assert!(
        rebalances >= 3 && checks >= 25,
        "{rebalances} rebalances in {checks} checks"
    );
    // Without: the two middle slabs carry the heap, about twice the mean.
    let unbalanced = run(dir.path(), &off, 4, 1, "4x1-off", 0);
    let uneven = unbalanced.owned_imbalance();
    assert!(
        uneven >= 1.7,
        "without balancing, owned max/mean = {uneven:.3}"
    );
    assert_eq!(unbalanced.rebalances(), (0, 0));

    // The imbalance is a thermo column: 1 on one rank; on 4, at most the
    // tolerance plus what 500 steps of pouring add after each check.
    let column = |r: &Run| {
        let thermo = gravel::io::read::read_thermo(&r.out.join("heap.h5")).unwrap();
        let found = thermo.into_iter().find(|(name, _)| name == "imbalance");
        found.expect("an imbalance column").1
    };
    assert!(column(&one).iter().all(|&v| v == 1.0));
    // The last row follows the last check by up to 500 steps of the
    // settling heap: allow the tolerance (1.1) plus four particles
    // crossing a cut, each 4/n of the mean of n/4 per rank.
    let late = column(&four);
    let last = *late.last().unwrap();
    let drift = 4.0 * 4.0 / n as f64;
    assert!(
        last > 1.0 && last <= 1.1 + drift,
        "final thermo imbalance {last} (tolerance 1.1, drift {drift:.4})"
    );
    let worst = column(&unbalanced).into_iter().fold(0.0, f64::max);
    assert!(worst > 1.7, "unbalanced thermo imbalance at most {worst}");

    // The same bits: after every check (history records counted too), and
    // at the end on 1-4 ranks, with and without balancing, on 2 threads.
    assert_eq!(one.dumps.len(), four.dumps.len());
    for (k, (a, b)) in one.dumps.iter().zip(&four.dumps).enumerate() {
        let step = (k as u64 + 1) * EVERY;
        assert_eq!(dump_counts(a), dump_counts(b), "step {step}: records");
        assert_same_dump(a, b, &format!("4 ranks, step {step}"));
    }
    assert_same_dump(&one.dump, &four.dump, "4 ranks");
    assert_same_dump(&one.dump, &unbalanced.dump, "4 ranks, balance = false");
    for (np, threads) in [(2, 1), (3, 1), (2, 2)] {
        let other = run(
            dir.path(),
            &config,
            np,
            threads,
            &format!("{np}x{threads}"),
            0,
        );
        assert!(other.rebalances().0 >= 1, "{np} ranks: {}", other.stdout);
        assert_same_dump(
            &one.dump,
            &other.dump,
            &format!("{np} ranks x {threads} threads"),
        );
    }
}

#[test]
fn a_cut_stops_at_one_interaction_range_and_the_run_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    // A frozen block 6 mm wide in the middle of a 30 mm box carries
    // nearly all the cost: quantile cuts would fall within it, closer than
    // the interaction range (about 3.5 mm). Beads falling onto it make the
    // run rebuild and check again every 50 steps.
    let config = Config::new("narrow")
        .run("dt", 2e-5)
        .run("steps", 3000)
        .run("seed", 3)
        .run("gravity", [0.0, 0.0, -9.81])
        .domain([-0.015, 0.0, 0.0], [0.015, 0.012, 0.05])
        .periodic([false, true, false])
        .material(glass())
        .contact("normal", hertz(0.5))
        .contact("tangential", mindlin(0.5))
        .set(
            "parallel",
            "balance",
            Table::new().with("every", 50).with("tolerance", 1.05),
        )
        .wall(plane([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], "glass"))
        .wall(plane([-0.015, 0.0, 0.0], [1.0, 0.0, 0.0], "glass"))
        .wall(plane([0.015, 0.0, 0.0], [-1.0, 0.0, 0.0], "glass"))
        .particles(
            lattice(
                "glass",
                0.00149,
                0.003,
                region([-0.003, 0.0, 0.0], [0.003, 0.012, 0.018]),
            )
            .with("frozen", true),
        )
        .particles(random(
            "glass",
            0.0012,
            30,
            region([-0.004, 0.0, 0.025], [0.004, 0.012, 0.045]),
        ));
    let one = write_file(dir.path(), "narrow.toml", &config.text());
    let one = run(dir.path(), &one, 1, 1, "1", 0);
    // Four slabs along x (the grid gravel would choose cuts y too).
    let config = config.set("parallel", "grid", [4, 1, 1]);
    let config = write_file(dir.path(), "narrow.toml", &config.text());
    let four = run(dir.path(), &config, 4, 1, "4", 0);
    let said: Vec<&str> = four
        .stderr
        .lines()
        .filter(|l| l.starts_with("balance: "))
        .collect();
    assert_eq!(said.len(), 1, "said once: {}", four.stderr);
    assert!(
        said[0].contains("along x") && said[0].contains("interaction range"),
        "{}",
        said[0]
    );
    let width: f64 = said[0]
        .split("= ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|w| w.parse().ok())
        .expect("the width in the message");
    let cuts = four.cuts_x();
    assert_eq!(cuts.len(), 5);
    // The cuts moved toward the block (uniform cuts would be 7.5 mm apart)
    // and stopped at the limit, the printed cuts rounded to 5 figures.
    assert!(
        cuts.windows(2).all(|c| c[1] - c[0] >= width * (1.0 - 1e-4)),
        "{cuts:?}, width {width}"
    );
    assert!(
        (cuts[2] - cuts[1]) < 1.01 * width && (cuts[3] - cuts[2]) < 1.01 * width,
        "{cuts:?}"
    );
    assert!(four.rebalances().0 >= 1);
    assert_same_dump(&one.dump, &four.dump, "4 ranks with cuts at the limit");
}

#[test]
fn a_checkpoint_across_rebalances_restarts_on_2_and_1_ranks_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_file(
        dir.path(),
        "heap.toml",
        &heap()
            .run("steps", 9000)
            .output("checkpoint_every", 4000)
            .text(),
    );
    let straight = run(dir.path(), &config, 1, 1, "straight", 0);
    // 3 ranks stop on step 4000, after rebalances (checks every 500 steps).
    let split = run_with(dir.path(), &config, 3, 1, "split", 0, &["--steps", "4000"]);
    assert!(split.rebalances().0 >= 2, "{}", split.stdout);
    let ckpt = split.out.join("heap.checkpoint.h5");
    for np in [2, 1] {
        let copy = dir.path().join(format!("heap-{np}.checkpoint.h5"));
        std::fs::copy(&ckpt, &copy).unwrap();
        let restarted = run_with(
            dir.path(),
            &config,
            np,
            1,
            &format!("restart-{np}"),
            0,
            &["--restart", copy.to_str().unwrap()],
        );
        assert!(
            restarted.stdout.contains("restarted from step 4000"),
            "{}",
            restarted.stdout
        );
        if np > 1 {
            assert!(restarted.rebalances().1 >= 1, "{}", restarted.stdout);
        }
        assert_same_dump(
            &straight.dump,
            &restarted.dump,
            &format!("3-rank checkpoint restarted on {np} rank(s)"),
        );
    }
}
