//! Insertion: wall-aware random fills, pours and lattices, true size
//! distributions (a χ² test of number-uniformity, truncated normal and
//! log-normal moments, discrete fractions) and the relaxed `fill`.

use glam::DVec3;
use gravel::config::Setup;
use gravel::insert::{self, Placer, RadiusDist};
use gravel::parallel::comm::SerialComm;
use gravel::sim::Simulation;
use std::path::Path;

mod common;
use common::{gravel, write_file};

/// A 2 cm box of glass with `blocks` (walls and particles) appended.
fn config(gravity: &str, blocks: &str) -> String {
    format!(
        r#"
[run]
name = "insertion"
dt = 1e-6
steps = 10
seed = 17
gravity = {gravity}

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.02, 0.02, 0.02]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
normal = {{ model = "hertz", restitution = 0.5 }}

{blocks}
"#
    )
}

fn setup(blocks: &str) -> Setup {
    let text = config("[0.0, 0.0, -9.81]", blocks);
    Setup::from_str(Path::new("insertion.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A drum along y: radius 8 mm about the line x = z = 1 cm.
const DRUM: &str = r#"
[[wall]]
kind = "cylinder"
axis_point = [0.01, 0.0, 0.01]
axis = [0.0, 1.0, 0.0]
radius = 0.008
material = "glass"
"#;

/// A V of two planes inclined at 45°, vertex along y at x = 1 cm, z = 2 mm.
const HOPPER: &str = r#"
[[wall]]
kind = "plane"
point = [0.01, 0.0, 0.002]
normal = [1.0, 0.0, 1.0]
material = "glass"

[[wall]]
kind = "plane"
point = [0.01, 0.0, 0.002]
normal = [-1.0, 0.0, 1.0]
material = "glass"
"#;

/// A floor at z = 5 mm.
const FLOOR: &str = r#"
[[wall]]
kind = "plane"
point = [0.0, 0.0, 0.005]
normal = [0.0, 0.0, 1.0]
material = "glass"
"#;

/// Every particle is on the particles' side of every wall by at least its
/// radius; returns how many there are.
fn assert_clear(s: &Setup, x: impl IntoIterator<Item = (DVec3, f64)>, what: &str) -> usize {
    let mut n = 0;
    for (p, r) in x {
        for (i, w) in s.walls.iter().enumerate() {
            assert!(
                w.clearance(p) >= r,
                "{what}: a sphere of radius {r} at {p} is {} from wall[{i}]",
                w.clearance(p)
            );
        }
        n += 1;
    }
    n
}

fn initial(s: &Setup) -> Vec<(DVec3, f64)> {
    s.initial.to_vec().iter().map(|p| (p.x, p.radius)).collect()
}

#[test]
fn random_fills_clear_drum_hopper_and_floor_though_their_regions_poke_through() {
    // The whole box as region: much of it lies outside the drum, below the
    // V, under the floor. Candidates there are rejected; all are placed.
    let whole = "region = { lo = [0.0, 0.0, 0.0], hi = [0.02, 0.02, 0.02] }";
    for (walls, name) in [(DRUM, "drum"), (HOPPER, "hopper"), (FLOOR, "floor")] {
        for radius in ["0.0005", "{ min = 0.0003, max = 0.0008 }"] {
            let s = setup(&format!(
                "{walls}\n[[particles]]\nkind = \"random\"\nmaterial = \"glass\"\nradius = {radius}\ncount = 600\n{whole}\n"
            ));
            assert_eq!(assert_clear(&s, initial(&s), name), 600, "{name}");
        }
        // The relaxed fill clears the walls too (its region inside the box).
        let s = setup(&format!(
            "{walls}\n[[particles]]\nkind = \"random\"\nmaterial = \"glass\"\nradius = 0.0008\nfill = 0.2\n{whole}\n"
        ));
        assert!(assert_clear(&s, initial(&s), name) > 100, "{name}");
    }
}

#[test]
fn lattices_in_a_cylinder_region_inside_the_drum_clear_it() {
    let s = setup(&format!(
        "{DRUM}\n[[particles]]\nkind = \"lattice\"\nmaterial = \"glass\"\nradius = 0.0005\nregion = {{ kind = \"cylinder\", center = [0.01, 0.01, 0.01], axis = [0.0, 1.0, 0.0], radius = 0.008, length = 0.02 }}\n"
    ));
    // Every site whose sphere lies in the cylinder (simple cubic, spacing
    // 2R·1.0001): the cross-section holds about π (8/1.0001)² ≈ 200 less
    // the edge; 20 layers.
    let n = assert_clear(&s, initial(&s), "lattice");
    assert!(n > 150 * 20 && n < 201 * 20, "{n}");
}

#[test]
fn pours_into_a_drum_and_onto_a_hopper_place_nothing_in_or_behind_a_wall() {
    for (walls, region) in [
        (
            DRUM,
            "{ kind = \"sphere\", center = [0.01, 0.01, 0.01], radius = 0.0099 }",
        ),
        (HOPPER, "{ lo = [0.0, 0.0, 0.0], hi = [0.02, 0.02, 0.02] }"),
    ] {
        // No gravity and at rest: particles stay where they were poured
        // until they touch, and poured ones never touch.
        let text = config(
            "[0.0, 0.0, 0.0]",
            &format!(
                "{walls}\n[[particles]]\nkind = \"pour\"\nmaterial = \"glass\"\nradius = {{ min = 0.0003, max = 0.0008 }}\nrate = 1e8\nuntil = 1.0\ncount = 400\ninterval = 5\nregion = {region}\n"
            ),
        );
        let s = Setup::from_str(Path::new("pour.toml"), &text).unwrap();
        let mut sim = Simulation::new(s.clone(), Box::new(SerialComm)).unwrap();
        for _ in 0..20 {
            sim.step().unwrap();
        }
        let p = &sim.particles;
        let n = assert_clear(&s, (0..p.n_owned).map(|k| (p.x[k], p.radius[k])), "pour");
        assert_eq!(n, 400, "all poured in the first interval");
    }
}

/// `Q(a, x)`, the regularized upper incomplete gamma function: the series
/// for `x < a + 1`, the continued fraction (modified Lentz) above
/// (Press et al., Numerical Recipes, 3rd ed., 2007, §6.2, `gammq`).
fn gamma_q(a: f64, x: f64) -> f64 {
    // ln Γ(a) by Lanczos (Numerical Recipes §6.1, `gammln`).
    let ln_gamma = |xx: f64| {
        let cof = [
            57.156_235_665_862_92,
            -59.597_960_355_475_49,
            14.136_097_974_741_747,
            -0.491_913_816_097_620_2,
            0.339_946_499_848_118_9e-4,
            0.465_236_289_270_485_7e-4,
            -0.983_744_753_048_795_3e-4,
            0.158_088_703_224_912_5e-3,
            -0.210_264_441_724_104_9e-3,
            0.217_439_618_115_212_6e-3,
            -0.164_318_106_536_763_9e-3,
            0.844_182_239_838_527_4e-4,
            -0.261_908_384_015_814_1e-4,
            0.368_991_826_595_316_2e-5,
        ];
        let tmp = xx + 5.242_187_5;
        let tmp = (xx + 0.5) * tmp.ln() - tmp;
        let mut ser = 0.999_999_999_999_997_1;
        let mut y = xx;
        for c in cof {
            y += 1.0;
            ser += c / y;
        }
        tmp + (2.506_628_274_631_000_5 * ser / xx).ln()
    };
    let gln = ln_gamma(a);
    if x < a + 1.0 {
        let (mut ap, mut del) = (a, 1.0 / a);
        let mut sum = del;
        for _ in 0..1000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        1.0 - sum * (-x + a * x.ln() - gln).exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        (-x + a * x.ln() - gln).exp() * h
    }
}

/// The p-value of Pearson's χ² test that `radii` are uniform in
/// `[min, max]`, with 10 equal bins (9 degrees of freedom), and the
/// counts.
fn uniformity_p(radii: &[f64], min: f64, max: f64) -> (f64, [usize; 10]) {
    let mut bins = [0usize; 10];
    for &r in radii {
        let k = (((r - min) / (max - min)) * 10.0).floor() as usize;
        bins[k.min(9)] += 1;
    }
    let e = radii.len() as f64 / 10.0;
    let chi2: f64 = bins.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
    (gamma_q(4.5, 0.5 * chi2), bins)
}

#[test]
fn the_chi_square_p_value_matches_tabulated_quantiles() {
    // χ²(9) quantiles (Abramowitz & Stegun, Table 26.8): upper tail 0.05
    // at 16.919, 0.001 at 27.877; χ²(1) upper 0.05 at 3.841.
    assert!((gamma_q(4.5, 0.5 * 16.919) - 0.05).abs() < 1e-4);
    assert!((gamma_q(4.5, 0.5 * 27.877) - 0.001).abs() < 1e-5);
    assert!((gamma_q(0.5, 0.5 * 3.841) - 0.05).abs() < 1e-4);
}

/// A dense random fill: radii uniform in [0.4, 0.8] mm in a 1.2 cm cube
/// whose edges poke out of the drum, dense enough that redrawing radii on
/// rejection starves the large sizes.
const DENSE: &str = r#"
[[particles]]
kind = "random"
material = "glass"
radius = { min = 0.0004, max = 0.0008 }
count = 700
region = { lo = [0.004, 0.004, 0.004], hi = [0.016, 0.016, 0.016] }
"#;

#[test]
fn a_dense_random_fill_is_number_uniform() {
    let s = setup(&format!("{DRUM}{DENSE}"));
    let radii: Vec<f64> = s.initial.to_vec().iter().map(|p| p.radius).collect();
    assert_eq!(radii.len(), 700);
    let (p, bins) = uniformity_p(&radii, 0.0004, 0.0008);
    eprintln!("dense random fill: bins {bins:?}, p = {p:.3e}");
    assert!(p > 1e-3, "{bins:?} p = {p}");
    assert_clear(&s, initial(&s), "dense");
}

#[test]
fn redrawing_radii_on_rejection_fails_the_same_test() {
    // The old random fill, for contrast: a candidate that overlaps is
    // thrown away with its radius, so small radii, which fit more often,
    // are over-represented. Same region, radii, count and walls, and the
    // old budget of 50·count + 1,000 rejections.
    let s = setup(&format!("{DRUM}{DENSE}"));
    let region = gravel::geometry::region::Region::Box {
        lo: DVec3::splat(0.004),
        hi: DVec3::splat(0.016),
    };
    let dist = RadiusDist::Uniform {
        min: 0.0004,
        max: 0.0008,
    };
    let mut rng = insert::stream(17, 0, u64::MAX);
    let mut placer = Placer::new(0.0008);
    let mut radii = Vec::new();
    let mut rejected = 0;
    while radii.len() < 700 && rejected < 50 * 700 + 1000 {
        let r = dist.draw(&mut rng);
        let inner = insert::sample::shrunk(&region, r).unwrap();
        let u = [(); 3].map(|()| insert::uniform(&mut rng));
        let x = insert::sample::point_in(&inner, u);
        if insert::clear_of_walls(&s.walls, x, r) && !placer.overlaps(x, r) {
            placer.add(x, r);
            radii.push(r);
        } else {
            rejected += 1;
        }
    }
    assert_eq!(radii.len(), 700);
    let (p, bins) = uniformity_p(&radii, 0.0004, 0.0008);
    eprintln!("redrawn radii: bins {bins:?}, p = {p:.3e}");
    assert!(p < 1e-3, "{bins:?} p = {p}");
}

#[test]
fn a_pour_that_waits_for_room_is_number_uniform() {
    // A pour region above a floor, refilled every step: each interval
    // places what fits; a particle that does not fit waits with its
    // radius. Nothing moves (the placer keeps every poured sphere), so the
    // region jams before the 1,000 are poured.
    let s = setup(&format!(
        "{FLOOR}\n[[particles]]\nkind = \"pour\"\nmaterial = \"glass\"\nradius = {{ min = 0.0004, max = 0.0008 }}\nrate = 1e9\nuntil = 1.0\ncount = 1000\ninterval = 1\nregion = {{ lo = [0.0, 0.0, 0.0], hi = [0.02, 0.02, 0.01] }}\n"
    ));
    let mut src = s.pours[0].clone();
    let mut placer = Placer::new(0.0008).periodic_in(&s.domain);
    let mut next = 0;
    let mut radii = Vec::new();
    let mut numbers = std::collections::BTreeSet::new();
    for step in 1..=50 {
        let batch = src.batch(s.seed, step, 1.0, &s.walls, &s.domain);
        let new = match batch {
            Some(b) => src.insert(&b, &mut placer, &mut next),
            None => Vec::new(),
        };
        assert_clear(&s, new.iter().map(|(_, p)| (p.x, p.radius)), "pour");
        for (number, p) in &new {
            // Ids follow on, in the order of the numbers within a batch.
            assert_eq!(p.id, radii.len() as u64);
            // Each number is poured once, with its own radius.
            assert!(numbers.insert(*number), "number {number} poured twice");
            assert_eq!(p.radius, src.radius_of(s.seed, *number));
            radii.push(p.radius);
        }
    }
    eprintln!("pour: {} placed of 1000", radii.len());
    assert!(radii.len() > 300 && radii.len() < 1000, "{}", radii.len());
    // Every number drawn is poured or waits: none is lost, none redrawn.
    assert_eq!(src.inserted, radii.len() as u64);
    assert_eq!(src.inserted + src.waiting_count(), 1000);
    for w in &src.waiting {
        assert!(w.clone().all(|n| !numbers.contains(&n)));
    }
    let (p, bins) = uniformity_p(&radii, 0.0004, 0.0008);
    eprintln!("pour: bins {bins:?}, p = {p:.3e}");
    assert!(p > 1e-3, "{bins:?} p = {p}");
}

/// The packing fraction of `s`'s particles in a region of volume `v`, and
/// the largest overlap of two of them as a fraction of the smaller radius.
fn fraction_and_overlap(s: &Setup, v: f64) -> (f64, f64) {
    let p = &s.initial.to_vec();
    let solid: f64 = p
        .iter()
        .map(|q| 4.0 / 3.0 * std::f64::consts::PI * q.radius.powi(3))
        .sum();
    // Sorted along x, a sweep over the pairs whose x ranges meet.
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].x.x.total_cmp(&p[b].x.x));
    let r_max = p.iter().map(|q| q.radius).fold(0.0, f64::max);
    let mut worst: f64 = 0.0;
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if p[j].x.x - p[i].x.x > 2.0 * r_max {
                break;
            }
            let ov = p[i].radius + p[j].radius - (p[i].x - p[j].x).length();
            worst = worst.max(ov / p[i].radius.min(p[j].radius));
        }
    }
    (solid / v, worst)
}

#[test]
fn fill_reaches_its_packing_fraction_in_a_box_and_a_cylinder() {
    use gravel::insert::relax::FILL_OVERLAP_TOLERANCE;
    let cases = [
        // About 5,000 spheres, radii uniform in [0.45, 0.55] mm, in a
        // 1.68 cm cube.
        (
            "radius = { min = 0.00045, max = 0.00055 }\nregion = { lo = [0.0016, 0.0016, 0.0016], hi = [0.0184, 0.0184, 0.0184] }",
            0.0168f64.powi(3),
        ),
        (
            "radius = { distribution = \"normal\", mean = 0.0005, sd = 0.0001, min = 0.0003, max = 0.0007 }\nregion = { kind = \"cylinder\", center = [0.01, 0.01, 0.01], axis = [0.0, 0.0, 1.0], radius = 0.006, length = 0.012 }",
            std::f64::consts::PI * 0.006f64.powi(2) * 0.012,
        ),
    ];
    for (block, volume) in cases {
        let t = std::time::Instant::now();
        let s = setup(&format!(
            "[[particles]]\nkind = \"random\"\nmaterial = \"glass\"\nfill = 0.55\n{block}\n"
        ));
        let took = t.elapsed().as_secs_f64();
        let (phi, overlap) = fraction_and_overlap(&s, volume);
        eprintln!(
            "fill 0.55: {} spheres, fraction {phi:.4}, largest overlap {overlap:.2e} of a radius, {took:.2} s",
            s.initial.len()
        );
        assert!((phi - 0.55).abs() < 0.01, "{phi}");
        assert!(overlap < FILL_OVERLAP_TOLERANCE, "{overlap}");
    }
}

/// The standard normal CDF, `Φ(z) = erfc(−z/√2)/2`.
fn phi_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    let tail = |x: f64| 0.5 * gravel::math::erfcx::erfcx(x) * (-x * x).exp();
    if x >= 0.0 {
        tail(x)
    } else {
        1.0 - tail(-x)
    }
}

/// Mean and sample sd of `n` draws of `dist` from a fixed stream.
fn realised(dist: &RadiusDist, n: usize) -> (f64, f64) {
    let r = dist.draw_many(&mut insert::stream(99, 1, 2), n);
    let mean = r.iter().sum::<f64>() / n as f64;
    let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, var.sqrt())
}

/// Assert a realised mean and sd within 5 standard errors of `(m, s)`:
/// `s/√n` for the mean, `s/√(2n)` for the sd (normal theory; the
/// truncated distributions have lighter tails, so this is conservative).
fn assert_moments(what: &str, got: (f64, f64), m: f64, s: f64, n: usize) {
    let n = n as f64;
    eprintln!(
        "{what}: mean {:.5e} (analytic {m:.5e}), sd {:.5e} (analytic {s:.5e})",
        got.0, got.1
    );
    assert!(
        (got.0 - m).abs() < 5.0 * s / n.sqrt(),
        "{what}: mean {} against {m}",
        got.0
    );
    assert!(
        (got.1 - s).abs() < 5.0 * s / (2.0 * n).sqrt(),
        "{what}: sd {} against {s}",
        got.1
    );
}

#[test]
fn truncated_normal_and_lognormal_draws_have_the_analytic_moments() {
    let n = 200_000;
    let pdf = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    // Truncated normal on [a, b], α = (a − μ)/σ, β = (b − μ)/σ, Z = Φ(β) − Φ(α):
    // mean μ + σ (φ(α) − φ(β))/Z, variance σ² [1 + (αφ(α) − βφ(β))/Z −
    // ((φ(α) − φ(β))/Z)²] (Johnson, Kotz & Balakrishnan, Continuous
    // Univariate Distributions 1, 2nd ed., 1994, §10.1).
    let (mu, sigma, a, b) = (1.0e-3, 0.3e-3, 0.6e-3, 1.8e-3);
    let (al, be) = ((a - mu) / sigma, (b - mu) / sigma);
    let z = phi_cdf(be) - phi_cdf(al);
    let d = (pdf(al) - pdf(be)) / z;
    let mean = mu + sigma * d;
    let sd = sigma * (1.0 + (al * pdf(al) - be * pdf(be)) / z - d * d).sqrt();
    let normal = RadiusDist::Normal {
        mean: mu,
        sd: sigma,
        min: a,
        max: b,
    };
    assert_moments("truncated normal", realised(&normal, n), mean, sd, n);
    // Truncated log-normal (ln R normal with μ, σ from the radius's mean m
    // and sd s: σ² = ln(1 + s²/m²), μ = ln m − σ²/2) on [a, b]:
    // E[R^k] = e^{kμ + k²σ²/2} [Φ(β − kσ) − Φ(α − kσ)] / [Φ(β) − Φ(α)],
    // α = (ln a − μ)/σ, β = (ln b − μ)/σ (JKB 1994, §14.3).
    let (m, s, a, b): (f64, f64, f64, f64) = (1.0e-3, 0.5e-3, 0.4e-3, 2.5e-3);
    let s2 = (1.0f64 + (s / m) * (s / m)).ln();
    let (lmu, lsig) = (m.ln() - 0.5 * s2, s2.sqrt());
    let (al, be) = ((a.ln() - lmu) / lsig, (b.ln() - lmu) / lsig);
    let moment = |k: f64| {
        (k * lmu + 0.5 * k * k * s2).exp() * (phi_cdf(be - k * lsig) - phi_cdf(al - k * lsig))
            / (phi_cdf(be) - phi_cdf(al))
    };
    let (e1, e2) = (moment(1.0), moment(2.0));
    let lognormal = RadiusDist::LogNormal {
        mean: m,
        sd: s,
        min: a,
        max: b,
    };
    assert_moments(
        "truncated lognormal",
        realised(&lognormal, n),
        e1,
        (e2 - e1 * e1).sqrt(),
        n,
    );
}

#[test]
fn discrete_number_fractions_by_number_and_by_mass() {
    let n = 100_000;
    let values = vec![0.5e-3, 1.0e-3, 1.5e-3];
    let fractions = [0.2, 0.5, 0.3];
    for mass in [false, true] {
        let dist = RadiusDist::discrete(values.clone(), &fractions, mass);
        let r = dist.draw_many(&mut insert::stream(7, 0, 0), n);
        // Number probabilities: the fractions, or by mass ∝ f / r³.
        let w: Vec<f64> = values
            .iter()
            .zip(fractions)
            .map(|(&v, f)| if mass { f / (v * v * v) } else { f })
            .collect();
        let total: f64 = w.iter().sum();
        for (k, &v) in values.iter().enumerate() {
            let p = w[k] / total;
            let got = r.iter().filter(|&&x| x == v).count() as f64 / n as f64;
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (got - p).abs() < 3.0 * sigma,
                "mass {mass}: radius {v}: {got} against {p} ± {sigma}"
            );
        }
    }
}

#[test]
fn check_and_run_print_each_blocks_realised_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let text = config(
        "[0.0, 0.0, -9.81]",
        r#"
[[particles]]
kind = "random"
material = "glass"
radius = { values = [0.0004, 0.0008], fractions = [0.5, 0.5], basis = "mass" }
count = 90
region = { kind = "sphere", center = [0.01, 0.01, 0.01], radius = 0.008 }

[[particles]]
kind = "pour"
material = "glass"
radius = { distribution = "lognormal", mean = 0.0005, sd = 0.0001, min = 0.0003, max = 0.0008 }
rate = 1000.0
until = 0.5
region = { lo = [0.0, 0.0, 0.015], hi = [0.02, 0.02, 0.02] }
"#,
    );
    let path = write_file(dir.path(), "sizes.toml", &text);
    let s = Setup::from_str(&path, &text).unwrap();
    // By mass, equal masses: 8 small for each large one (80 and 10 of 90).
    let small = s
        .initial
        .to_vec()
        .iter()
        .filter(|p| p.radius == 0.0004)
        .count();
    assert!(
        (small as f64 - 80.0).abs() < 3.0 * (90.0f64 * 8.0 / 81.0).sqrt(),
        "{small}"
    );
    let out = gravel(["check", "sizes.toml"], dir.path());
    let stdout = common::text(&out.stdout);
    assert!(out.status.success(), "{}", common::describe(&out));
    let want = gravel::run::report::size_lines(&s);
    assert_eq!(want.len(), 2);
    assert!(want[0].starts_with("radii of particles[0] (random): 90 particles placed, mean "));
    assert!(want[1].starts_with("radii of particles[1] (pour): the 500 radii to pour, mean "));
    for line in &want {
        assert!(stdout.contains(line.as_str()), "{line}\n{stdout}");
    }
    let out = gravel(
        ["run", "sizes.toml", "--steps", "1", "--out", "out"],
        dir.path(),
    );
    let stderr = common::text(&out.stderr);
    assert!(out.status.success(), "{}", common::describe(&out));
    for line in &want {
        assert!(stderr.contains(line.as_str()), "{line}\n{stderr}");
    }
}

#[test]
fn a_fill_is_drawn_from_the_seed_alone() {
    // Every rank builds the set-up itself: the same config must give the
    // same bits (the fill runs in index order on one thread).
    let block = format!(
        "{DRUM}\n[[particles]]\nkind = \"random\"\nmaterial = \"glass\"\nradius = {{ min = 0.0004, max = 0.0008 }}\nfill = 0.45\nregion = {{ kind = \"sphere\", center = [0.01, 0.01, 0.01], radius = 0.0085 }}\n"
    );
    let (a, b) = (setup(&block), setup(&block));
    assert!(a.initial.len() > 500);
    assert_eq!(a.initial.to_vec(), b.initial.to_vec());
    assert_clear(&a, initial(&a), "fill in a sphere poking out of the drum");
}
