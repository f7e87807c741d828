//! Criterion benches of the hot kernels: the contact laws
//! (`ContactLaw::evaluate_with`, one contact at a time and four at a time
//! over `simd::lane::F64x4`), the
//! neighbour-list build, and one whole
//! `Simulation::step`.
//!
//! `cargo bench` runs them all (about half a minute); `cargo bench -- contact`
//! runs a subset by name.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use glam::DVec3;
use gravel::config::Setup;
use gravel::contact::kinematics::PairBodies;
use gravel::contact::{Body, ContactInertia, ContactLaw, Kind, Kinematics};
use gravel::geometry::domain::Domain;
use gravel::neighbor::carry::{HistoryRows, PairRecords};
use gravel::neighbor::{self, NeighborList};
use gravel::parallel::comm::SerialComm;
use gravel::parallel::grid::Decomposition;
use gravel::parallel::halo::Halo;
use gravel::sim::Simulation;
use gravel::simd::lane::{F64x4, F64x8, Lane, Lanes};
use gravel::state::particles::{ParticleRecord, Particles};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// Contacts per iteration of the contact-law benches.
const CONTACTS: usize = 1024;

/// The law between the first material and itself of a one-sphere config with `contact`.
fn law(contact: &str) -> ContactLaw {
    let text = format!(
        r#"[run]
name = "bench"
dt = "auto"
steps = 1

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.01, 0.01, 0.01]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
{contact}

[[particles]]
kind = "list"
material = "glass"
radius = 0.001
position = [[0.005, 0.005, 0.005]]
"#
    );
    let setup = Setup::from_str(Path::new("bench.toml"), &text).unwrap_or_else(|e| panic!("{e}"));
    *setup.laws.get(0, 0)
}

/// `n` representative sphere–sphere contacts of 1 mm glass beads: overlaps of
/// 0.1–2 % of the radius, approach speeds up to 0.2 m/s, sliding and spin.
fn contacts(n: usize) -> Vec<Kinematics> {
    contact_bodies(n)
        .iter()
        .map(|(bi, bj, d, r)| Kinematics::pair(bi, bj, *d, *r))
        .collect()
}

/// The bodies of [`contacts`], with the separation and its length.
fn contact_bodies(n: usize) -> Vec<(Body, Body, DVec3, f64)> {
    let r = 0.001;
    let inv_mass = 1.0 / ParticleRecord::sphere_mass(r, 2500.0);
    (0..n)
        .map(|k| {
            let s = k as f64 / n as f64;
            let (theta, phi) = (3.0 * s, 17.0 * s);
            let dir = DVec3::new(
                theta.sin() * phi.cos(),
                theta.sin() * phi.sin(),
                theta.cos(),
            );
            let dist = 2.0 * r * (1.0 - 0.0005 - 0.0095 * s);
            let bi = Body {
                x: DVec3::ZERO,
                v: DVec3::new(0.05, -0.02, 0.01) * (1.0 + s),
                omega: DVec3::new(3.0, -1.0, 2.0) * s,
                radius: r,
                inv_mass,
            };
            let bj = Body {
                x: dist * dir,
                v: DVec3::new(-0.1, 0.03, -0.2) * s,
                omega: DVec3::new(-1.0, 4.0, 0.5) * (1.0 - s),
                radius: r,
                inv_mass,
            };
            (bi, bj, bj.x - bi.x, dist)
        })
        .collect()
}

/// The laws of the contact benches: the chute's, the pour's, the dense
/// pack's without its couples (what the couples' cost is measured
/// against), and the dense pack's (with rolling resistance and spinning
/// friction).
fn bench_laws() -> Vec<(&'static str, ContactLaw)> {
    vec![
        (
            "hooke+spring_slider",
            law(
                r#"normal = { model = "hooke", stiffness = 2e3, restitution = 0.9 }
tangential = { model = "spring_slider", friction = 0.5, stiffness_ratio = 0.2857, damping_ratio = 0.5 }"#,
            ),
        ),
        (
            "hertz+mindlin",
            law(r#"normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true }"#),
        ),
        (
            "hertz+mindlin+dashpot",
            law(r#"normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true, damping_ratio = 1.0 }"#),
        ),
        (
            "hertz+mindlin+epsd",
            law(r#"normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true, damping_ratio = 1.0 }
rolling = { model = "epsd", friction = 0.1, damping = 0.3 }"#),
        ),
        (
            "hertz+mindlin+edem",
            law(r#"normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true, damping_ratio = 1.0 }
spinning = { model = "edem", friction = 0.5 }"#),
        ),
        (
            "hertz+mindlin+epsd+edem",
            law(r#"normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true, damping_ratio = 1.0 }
rolling = { model = "epsd", friction = 0.1, damping = 0.3 }
spinning = { model = "edem", friction = 0.5 }"#),
        ),
    ]
}

/// The inertia of the couples of [`contact_bodies`]' contacts.
fn bench_inertia() -> ContactInertia {
    let (r, m) = (0.001, ParticleRecord::sphere_mass(0.001, 2500.0));
    let inv_i = 1.0 / (0.4 * m * r * r);
    ContactInertia::pair(inv_i, 1.0 / m, r, inv_i, 1.0 / m, r)
}

/// Each law one contact at a time ([`ContactLaw::evaluate_with`] over
/// `f64`).
fn bench_contact_laws(c: &mut Criterion) {
    let kin = contacts(CONTACTS);
    let inertia = bench_inertia();
    let dt = 1e-6;
    let mut group = c.benchmark_group("contact");
    group.throughput(Throughput::Elements(CONTACTS as u64));
    for (name, law) in bench_laws() {
        let h = law.history_len();
        let mut history = vec![0.0; CONTACTS * h];
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sum = DVec3::ZERO;
                for (k, rec) in kin.iter().zip(history.chunks_exact_mut(h.max(1))) {
                    let f = law.evaluate_with(black_box(k), dt, &mut rec[..h], || inertia);
                    sum += DVec3::from(f.force_i + f.torque_i);
                }
                black_box(sum)
            });
        });
    }
    group.finish();
}

/// Every group of `N` contacts once through `law`'s kernel over
/// [`Lanes<N>`], specialised at compile time on the law's kinds as the
/// pair loop's kernels are (`ContactLaw::evaluate_as`; the generic
/// `evaluate_with` compiles differently: the compiler split most of its
/// divisions and roots into 128-bit halves, 2026-12-02); the sum of
/// forces and torques.
#[inline(always)]
fn all_lanes<const N: usize>(
    law: &ContactLaw,
    dt: f64,
    groups: &[PairBodies<Lanes<N>>],
    history: &mut [Lanes<N>],
) -> f64 {
    const ANY: u8 = Kind::ANY;
    const HOOKE: u8 = Kind::HOOKE;
    const HERTZ: u8 = Kind::HERTZ;
    const SPRING: u8 = Kind::SPRING_SLIDER;
    match law.kinds() {
        (HOOKE, SPRING, false) => all_lanes_as::<N, HOOKE, SPRING, false>(law, dt, groups, history),
        (HERTZ, SPRING, false) => all_lanes_as::<N, HERTZ, SPRING, false>(law, dt, groups, history),
        (HERTZ, SPRING, true) => all_lanes_as::<N, HERTZ, SPRING, true>(law, dt, groups, history),
        _ => all_lanes_as::<N, ANY, ANY, true>(law, dt, groups, history),
    }
}

/// [`all_lanes`] for a law of normal kind `NK`, tangential kind `TK`, with
/// couples or not (`C`).
#[inline(always)]
fn all_lanes_as<const N: usize, const NK: u8, const TK: u8, const C: bool>(
    law: &ContactLaw,
    dt: f64,
    groups: &[PairBodies<Lanes<N>>],
    history: &mut [Lanes<N>],
) -> f64 {
    let h = law.history_len();
    let inertia = bench_inertia();
    let inertia = ContactInertia {
        rolling: Lanes::splat(inertia.rolling),
        min: Lanes::splat(inertia.min),
    };
    let mut sum = 0.0;
    for (g, rec) in groups.iter().zip(history.chunks_exact_mut(h.max(1))) {
        let kin = Kinematics::of_pair(black_box(g));
        let f = law.evaluate_as::<Lanes<N>, NK, TK, C>(&kin, dt, &mut rec[..h], || inertia);
        sum += f.force_i.x.0.iter().sum::<f64>() + f.torque_i.z.0.iter().sum::<f64>();
    }
    sum
}

/// `$name`: [`all_lanes`] compiled by gravel's build macro `$build`, as
/// its hot loops' build of that name (`gravel::simd::isa`).
macro_rules! all_lanes_with {
    ($name:ident, $build:ident) => {
        gravel::$build! {
            fn $name<const N: usize>(
                law: &ContactLaw,
                dt: f64,
                groups: &[PairBodies<Lanes<N>>],
                history: &mut [Lanes<N>],
            ) -> f64 {
                all_lanes(law, dt, groups, history)
            }
        }
    };
}
all_lanes_with!(all_lanes_avx2, avx2_build);
all_lanes_with!(all_lanes_avx512, avx512_build);

/// The bench contacts in groups of `N`.
fn lane_groups<const N: usize>() -> Vec<PairBodies<Lanes<N>>> {
    let mut groups = Vec::new();
    for some in contact_bodies(CONTACTS).chunks_exact(N) {
        let mut g = PairBodies::default();
        for (l, (bi, bj, d, r)) in some.iter().enumerate() {
            g.set_lane(l, [bi, bj], *d, *r);
        }
        groups.push(g);
    }
    groups
}

/// Each law over the same contacts four at a time, in the baseline build
/// and, where the processor has it, the AVX2 build; and eight at a time
/// (two groups of four side by side) in the AVX2 build and, where the
/// processor has it, the AVX-512 build (one register per value).
fn bench_contact_lanes(c: &mut Criterion) {
    let groups: Vec<PairBodies<F64x4>> = lane_groups();
    let eights: Vec<PairBodies<F64x8>> = lane_groups();
    let dt = 1e-6;
    let mut group = c.benchmark_group("contact");
    group.throughput(Throughput::Elements(CONTACTS as u64));
    for (name, law) in bench_laws() {
        let h = law.history_len().max(1);
        let mut history = vec![F64x4::default(); groups.len() * h];
        let mut history8 = vec![F64x8::default(); eights.len() * h];
        group.bench_function(format!("{name}_4_lanes_baseline"), |b| {
            b.iter(|| black_box(all_lanes(&law, dt, &groups, &mut history)));
        });
        #[cfg(target_arch = "x86_64")]
        if gravel::simd::isa::processor_has_avx2() {
            group.bench_function(format!("{name}_4_lanes_avx2"), |b| {
                // SAFETY: the processor has AVX2.
                b.iter(|| black_box(unsafe { all_lanes_avx2(&law, dt, &groups, &mut history) }));
            });
            group.bench_function(format!("{name}_8_lanes_avx2"), |b| {
                // SAFETY: the processor has AVX2.
                b.iter(|| black_box(unsafe { all_lanes_avx2(&law, dt, &eights, &mut history8) }));
            });
        }
        #[cfg(target_arch = "x86_64")]
        if gravel::simd::isa::processor_best() == gravel::simd::isa::Isa::Avx512 {
            group.bench_function(format!("{name}_8_lanes_avx512"), |b| {
                // SAFETY: the processor has AVX-512 (x86-64-v4).
                b.iter(|| black_box(unsafe { all_lanes_avx512(&law, dt, &eights, &mut history8) }));
            });
        }
    }
    group.finish();
}

/// About 10,000 spheres (radius 0.5, 1.02 apart on a lattice jittered by
/// ±0.01, so about six neighbours each within the skin of 0.1) in a
/// fully periodic box, spatially sorted, with their periodic ghosts (and
/// the halo that made them).
fn periodic_particles() -> (Particles, Halo, f64) {
    let (n, spacing, r) = (22usize, 1.02, 0.5);
    let l = n as f64 * spacing;
    let domain = Domain {
        lo: DVec3::ZERO,
        hi: DVec3::splat(l),
        periodic: [true; 3],
    };
    let mut p = Particles::default();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut jitter = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 0.02 - 0.01
    };
    let mut id = 0;
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let x = DVec3::new(i as f64, j as f64, k as f64) * spacing
                    + DVec3::splat(0.5 * spacing)
                    + DVec3::new(jitter(), jitter(), jitter());
                p.push_owned(&ParticleRecord {
                    id,
                    x,
                    v: DVec3::ZERO,
                    omega: DVec3::ZERO,
                    radius: r,
                    mass: ParticleRecord::sphere_mass(r, 1.0),
                    material: 0,
                    frozen: false,
                });
                id += 1;
            }
        }
    }
    let reach = 0.1;
    let width = 2.0 * r + reach;
    let perm = neighbor::spatial_order(&p, width);
    p.permute_owned(&perm);
    let mut halo = Halo::default();
    halo.build(
        &mut p,
        &domain,
        &Decomposition::single(&domain),
        &SerialComm,
        width,
    );
    assert!(!halo.is_empty());
    (p, halo, reach)
}

fn bench_neighbor_build(c: &mut Criterion) {
    let (p, halo, reach) = periodic_particles();
    let mut group = c.benchmark_group("neighbor");
    group.throughput(Throughput::Elements(p.n_owned as u64));
    group.bench_function("build_10k_periodic", |b| {
        b.iter(|| NeighborList::build(black_box(&p), reach, 3));
    });
    // As the engine rebuilds: in place, reusing the list's storage.
    let mut list = NeighborList::build(&p, reach, 3);
    group.bench_function("rebuild_10k_periodic_in_place", |b| {
        b.iter(|| list.rebuild(black_box(&p), reach, 3));
    });
    // History carried through a rebuild, one job in three holding a record.
    let mut previous = NeighborList::build(&p, reach, 3);
    assert!(previous.len() > 5 * p.n_owned, "{} entries", previous.len());
    for j in 0..previous.jobs().len() {
        // Every seventh value of the records, in job order.
        if (3 * j..3 * j + 3).any(|e| e % 7 == 0) {
            for (v, x) in previous.job_record_mut(j).iter_mut().enumerate() {
                if (3 * j + v) % 7 == 0 {
                    *x = 1e-6;
                }
            }
        }
    }
    // As the engine does it across ranks (per-particle rows that migrate):
    // lifted out of the old list by partner id, put back into the new one.
    let rows = HistoryRows::from_list(&previous, &p.id, p.n_owned);
    assert!(rows.records() > p.n_owned, "{} records", rows.records());
    group.bench_function("build_10k_periodic_with_history", |b| {
        b.iter(|| {
            let mut nl = NeighborList::build(black_box(&p), reach, 3);
            rows.fill_list(&mut nl, &p.id);
            nl
        });
    });
    // As it does on one rank (`PairRecords`): lifted once per pair, put back
    // by looking the pair up in the new list (here in the same order).
    let sources = halo.image_sources().expect("a single rank's halo");
    let identity: Vec<usize> = (0..p.n_owned).collect();
    group.bench_function("history_10k_periodic_by_pair", |b| {
        let mut nl = NeighborList::build(&p, reach, 3);
        b.iter(|| {
            let pairs = PairRecords::from_list(black_box(&previous), sources);
            nl.clear_history();
            pairs.fill_list(&mut nl, &identity, &p.id);
            pairs.records()
        });
    });
    group.bench_function("history_10k_periodic_by_rows", |b| {
        let mut nl = NeighborList::build(&p, reach, 3);
        b.iter(|| {
            let rows = HistoryRows::from_list(black_box(&previous), &p.id, p.n_owned);
            nl.clear_history();
            rows.fill_list(&mut nl, &p.id);
            rows.records()
        });
    });
    group.finish();
}

/// 5,000 beads stacked as a touching simple cubic lattice on a floor in a box
/// periodic in x and y, Hertz–Mindlin, after 300 steps under gravity: every
/// column is compressed (over 5,000 contacts), six partners per bead.
fn settled_box() -> Simulation {
    let text = r#"[run]
name = "bench"
dt = "auto"
steps = 1000000000
gravity = [0.0, 0.0, -9.81]

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.0201, 0.0201, 0.03]
periodic = [true, true, false]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
normal = { model = "hertz", restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, mindlin = true }

[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[particles]]
kind = "lattice"
material = "glass"
radius = 0.0005
spacing = 0.001
count = 5000
region = { lo = [0.0, 0.0, 0.0], hi = [0.02, 0.02, 0.03] }
"#;
    let setup = Setup::from_str(Path::new("bench.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
    for _ in 0..300 {
        sim.step().unwrap();
    }
    assert_eq!(sim.particles.n_owned, 5000);
    sim
}

fn bench_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulation");
    group.throughput(Throughput::Elements(5000));
    let mut sim = settled_box();
    let contacts = sim.thermo().contacts;
    eprintln!("step_5k_settled: {contacts} contacts among 5000 beads and the floor");
    assert!(
        contacts > 5000.0,
        "the box is not settled: {contacts} contacts"
    );
    group.bench_function("step_5k_settled", |b| {
        b.iter(|| sim.step().unwrap());
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = kernels;
    config = config();
    targets = bench_contact_laws, bench_contact_lanes, bench_neighbor_build, bench_step
}
criterion_main!(kernels);
