//! Comparing results to the last bit: vectors, snapshots, frames and state
//! dumps as exact bit patterns or exact text, with failure messages that
//! name the first difference.

use glam::DVec3;
use gravel::io::read::FrameOwned;
use gravel::state::snapshot::Snapshot;

/// The bits of each component.
pub fn vec_bits(v: DVec3) -> [u64; 3] {
    [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]
}

/// Assert that `fj` is the exact negation of `fi`, component by component.
pub fn assert_negated_bits(fi: DVec3, fj: DVec3) {
    for a in 0..3 {
        assert_eq!(
            fi[a].to_bits(),
            (-fj[a]).to_bits(),
            "F_i = {fi}, F_j = {fj}: not exact negations"
        );
    }
}

/// Every bit of a snapshot as text (`Debug` prints each f64 exactly, -0.0 included).
pub fn snapshot_bits(s: &Snapshot) -> String {
    format!("{s:?}")
}

/// Every bit of the state in a snapshot, its config text aside.
pub fn state_bits(s: &Snapshot) -> String {
    let mut s = s.clone();
    s.config_text.clear();
    snapshot_bits(&s)
}

/// Assert two snapshots equal to the last bit, naming the first part that differs.
pub fn assert_same_snapshot(a: &Snapshot, b: &Snapshot, what: &str) {
    let parts = |s: &Snapshot| {
        vec![
            (
                "scalars",
                format!(
                    "{} {:?} {} {:?} {} {} {}",
                    s.step, s.time, s.seed, s.dt, s.next_id, s.history_len, s.walls
                ),
            ),
            ("particles", format!("{:?}", s.particles)),
            ("x_ref", format!("{:?}", s.x_ref)),
            ("force", format!("{:?}", s.force)),
            ("torque", format!("{:?}", s.torque)),
            (
                "pair history",
                format!("{:?} {:?}", s.pair_keys, s.pair_values),
            ),
            (
                "wall history",
                format!("{:?} {:?}", s.wall_keys, s.wall_values),
            ),
            ("pour progress", format!("{:?}", s.pour_inserted)),
            (
                "the flow fitted at the last rebuild",
                format!("{} {:?}", s.rebuilt_at, s.flow),
            ),
            ("config", format!("{:?} {:?}", s.config_text, s.compat)),
        ]
    };
    for ((name, x), (_, y)) in parts(a).into_iter().zip(parts(b)) {
        assert!(x == y, "{what}: the {name} differ");
    }
    assert!(snapshot_bits(a) == snapshot_bits(b), "{what}");
}

/// A frame with its rows sorted by id, as exact text.
pub fn frame_bits(f: &FrameOwned) -> String {
    let mut order: Vec<usize> = (0..f.id.len()).collect();
    order.sort_by_key(|&k| f.id[k]);
    let pick = |v: &[[f64; 3]]| order.iter().map(|&k| v[k]).collect::<Vec<_>>();
    let fields: Vec<(String, Vec<[f64; 3]>)> =
        f.fields.iter().map(|(n, v)| (n.clone(), pick(v))).collect();
    let frozen: Vec<u8> = if f.frozen.is_empty() {
        Vec::new()
    } else {
        order.iter().map(|&k| f.frozen[k]).collect()
    };
    format!(
        "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        f.step,
        f.time,
        order.iter().map(|&k| f.id[k]).collect::<Vec<_>>(),
        pick(&f.position),
        order.iter().map(|&k| f.radius[k]).collect::<Vec<_>>(),
        order.iter().map(|&k| f.material[k]).collect::<Vec<_>>(),
        frozen,
        fields
    )
}

/// Compare two `--dump-state` dumps line by line, naming the first difference.
pub fn assert_same_dump(reference: &str, other: &str, what: &str) {
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

/// `(particles, pair records, wall records)` in a `--dump-state` dump.
pub fn dump_counts(dump: &str) -> (usize, usize, usize) {
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
