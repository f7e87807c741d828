//! Validation of the tangential contact laws (spring_slider, dashpot_slider)
//! against analytic results (physics.md, "Validation targets").

mod common;

use common::*;
use glam::{DMat3, DVec3};
use gravel::sim::Simulation;
use std::f64::consts::FRAC_PI_2;

// ------------------------------------------------ sliding → rolling

/// What a sphere launched sliding on a plane did.
#[derive(Debug)]
struct Slide {
    /// Time of the first step at which the friction force is below `μ F_n`
    /// (the sliding phase is over).
    t_stick: f64,
    /// Centre velocity at that step.
    v_stick: f64,
    /// Centre velocity and `ω ℓ` at the end (1.5 × the expected sliding time).
    v_end: f64,
    roll_end: f64,
    /// Largest relative deviation of the friction force from `μ F_n` while sliding.
    coulomb_dev: f64,
}

const G: f64 = 9.81;
const V0: f64 = 1.0;
const MU: f64 = 0.3;
const R: f64 = 0.01;
const RHO: f64 = 2500.0;

/// `{ model = "hooke", stiffness = k, restitution = 0.5 }`.
fn hooke(k: f64) -> Table {
    model("hooke").with("stiffness", k).with("restitution", 0.5)
}

/// A sphere resting on the plane z = 0 under gravity, at its static overlap
/// `delta_eq` (so there is no bounce and `F_n = m g`), launched along +x at
/// `V0` without spin, relative to the plane, which slides along −x at
/// `belt` (a moving wall). The velocities returned are the sphere's
/// relative to the plane.
fn slide(
    normal: Table,
    tangential: Table,
    elastic: Option<(f64, f64)>,
    delta_eq: f64,
    dt: f64,
    belt: f64,
) -> Slide {
    let m = sphere_mass(R, RHO);
    let mut c = Case {
        dt,
        gravity: [0.0, 0.0, -G],
        lo: [-0.05, -0.05, -0.05],
        hi: [0.5, 0.05, 0.05],
        elastic,
        normal: normal.into(),
        tangential: tangential.into(),
        ..Default::default()
    };
    let floor = plane([0.0; 3], [0.0, 0.0, 1.0], "m");
    c.walls.push(if belt == 0.0 {
        floor
    } else {
        floor.with("velocity", [-belt, 0.0, 0.0])
    });
    c.sphere(R, [0.0, 0.0, R - delta_eq], [V0 - belt, 0.0, 0.0], [0.0; 3]);
    let t_exp = 2.0 * V0 / (7.0 * MU * G);
    serial(|| {
        let mut sim = c.build();
        let mut stick: Option<(f64, f64)> = None;
        let mut coulomb_dev: f64 = 0.0;
        let steps = (1.5 * t_exp / dt) as usize;
        for _ in 0..steps {
            sim.step().unwrap();
            let (_, v, _, f, _) = body(&sim, 0);
            // Contact force = total − gravity; normal part along +z.
            let fc = f - m * DVec3::new(0.0, 0.0, -G);
            let (f_n, f_t) = (fc.z, fc.truncate().length());
            let dev = f_t / (MU * f_n) - 1.0;
            if stick.is_none() {
                if dev < -1e-9 {
                    stick = Some((sim.time(), v.x + belt));
                } else {
                    coulomb_dev = coulomb_dev.max(dev.abs());
                }
            }
        }
        let (x, v, w, _, _) = body(&sim, 0);
        let lever = R - 0.5 * (R - x.z);
        let (t_stick, v_stick) = stick.expect("the sphere never stopped sliding");
        Slide {
            t_stick,
            v_stick,
            v_end: v.x + belt,
            roll_end: w.y * lever,
            coulomb_dev,
        }
    })
}

fn check_slide(name: &str, s: &Slide) {
    let t_exp = 2.0 * V0 / (7.0 * MU * G);
    let v_exp = 5.0 * V0 / 7.0;
    eprintln!(
        "{name}: rolling from t = {:.6} s (expected {t_exp:.6}, {:+.2e}), v = {:.6} (expected {v_exp:.6}, {:+.2e}); \
         end: v = {:.6}, ωℓ = {:.6}; |F_t/(μF_n) − 1| while sliding ≤ {:.1e}",
        s.t_stick,
        s.t_stick / t_exp - 1.0,
        s.v_stick,
        s.v_stick / v_exp - 1.0,
        s.v_end,
        s.roll_end,
        s.coulomb_dev
    );
    assert!(
        s.coulomb_dev < 1e-9,
        "{name}: friction not at μF_n while sliding"
    );
    assert!(
        (s.t_stick / t_exp - 1.0).abs() < 1e-2,
        "{name}: t = {}",
        s.t_stick
    );
    assert!(
        (s.v_stick / v_exp - 1.0).abs() < 1e-2,
        "{name}: v = {}",
        s.v_stick
    );
    assert!(
        (s.v_end / v_exp - 1.0).abs() < 1e-2,
        "{name}: final v = {}",
        s.v_end
    );
    assert!(
        (s.roll_end / v_exp - 1.0).abs() < 1e-2,
        "{name}: final ωℓ = {}",
        s.roll_end
    );
}

/// physics.md: "spring_slider: sphere launched sliding on a plane, no spin:
/// rolling starts at t = 2v₀/(7μg) with v = 5v₀/7" (textbook: Coulomb
/// friction μmg decelerates the centre, `v = v₀ − μgt`, and spins the
/// sphere up, `Rω = (5/2)μgt`, until `v = Rω`).
///
/// Hooke k_n = 1e5 N/m, k_t = (2/7) k_n (tangential damping ratio 0 and
/// 0.5), and Hertz–Mindlin (E = 1e8 Pa, ν = 0.3); μ = 0.3, R = 1 cm,
/// v₀ = 1 m/s, Δt = 2e-5 s (t_c/50 of the Hooke sphere–wall contact).
/// Tolerance 1 %: the lever arm `R − δ/2` differs from R by 5e-5, the
/// spring's pre-slide displacement `μ m g/k_t` is 1e-6 m, the end of sliding
/// is located to one step (2e-4 of t); the measured deviations are printed
/// (≤ 2.3e-3). Also: while sliding the friction equals `μF_n` to 1e-9, and
/// at the end the sphere rolls (`v ≈ ωℓ ≈ 5v₀/7`; an undamped tangential
/// spring keeps oscillating in the stick regime, up to 4e-3 here).
#[test]
fn spring_slider_sliding_to_rolling() {
    let k = 1e5;
    let m = sphere_mass(R, RHO);
    for damping_ratio in [0.0, 0.5] {
        let tangential = model("spring_slider")
            .with("friction", MU)
            .with("stiffness_ratio", 2.0 / 7.0)
            .with("damping_ratio", damping_ratio);
        let s = slide(hooke(k), tangential, None, m * G / k, 2e-5, 0.0);
        check_slide(&format!("spring_slider hooke γt/γn = {damping_ratio}"), &s);
    }
    // Hertz–Mindlin, wall of the same material: E* = E/(2(1 − ν²)), R* = R,
    // static overlap δ = (m g / ((4/3) E* sqrt(R)))^{2/3}.
    let (e, nu) = (1e8, 0.3);
    let e_star = e / (2.0 * (1.0 - nu * nu));
    let delta_eq = (m * G / (4.0 / 3.0 * e_star * R.sqrt())).powf(2.0 / 3.0);
    let s = slide(hertz(0.5), mindlin(MU), Some((e, nu)), delta_eq, 2e-5, 0.0);
    check_slide("spring_slider hertz-mindlin", &s);
}

/// The same with the history-free dashpot_slider (DEMLab): with a large
/// dashpot `η_t` the friction saturates at `μF_n` for all but the last
/// `μF_n/η_t` of slip speed, so the same law holds. η_t = 50 N s/m: the
/// viscous tail lasts about `m/(3.5 η_t)` = 6e-5 s (6e-4 of t); the explicit
/// step is stable for `3.5 η_t Δt/m` = 0.33 < 2. Tolerance 1 % as above.
#[test]
fn dashpot_slider_sliding_to_rolling() {
    let k = 1e5;
    let m = sphere_mass(R, RHO);
    let s = slide(
        hooke(k),
        model("dashpot_slider")
            .with("friction", MU)
            .with("damping", 50.0),
        None,
        m * G / k,
        2e-5,
        0.0,
    );
    check_slide("dashpot_slider", &s);
}

/// The same law seen from a moving wall: the sphere starts at rest on a
/// floor sliding at `−V0` along x (a belt), so relative to the floor it is
/// launched at `V0`, and by Galilean invariance it must roll from
/// `t = 2V0/(7μg)` at `5V0/7` relative to the floor, that is at `−2V0/7` in
/// the lab (the friction and damping act on the velocity relative to the
/// wall's surface; physics.md). Hooke spring_slider (damping ratio 0.5)
/// and Hertz–Mindlin; tolerances as above, 1 %.
#[test]
fn sliding_to_rolling_on_a_moving_floor() {
    let k = 1e5;
    let m = sphere_mass(R, RHO);
    let tangential = model("spring_slider")
        .with("friction", MU)
        .with("stiffness_ratio", 2.0 / 7.0)
        .with("damping_ratio", 0.5);
    let s = slide(hooke(k), tangential, None, m * G / k, 2e-5, V0);
    check_slide("spring_slider hooke on a belt", &s);
    let (e, nu) = (1e8, 0.3);
    let e_star = e / (2.0 * (1.0 - nu * nu));
    let delta_eq = (m * G / (4.0 / 3.0 * e_star * R.sqrt())).powf(2.0 / 3.0);
    let s = slide(hertz(0.5), mindlin(MU), Some((e, nu)), delta_eq, 2e-5, V0);
    check_slide("hertz-mindlin on a belt", &s);
}

// ------------------------------------------------ objectivity

/// Place both bodies kinematically for one step: after the step's drift they
/// sit at `x`, and the step's forces are evaluated with velocities `v` and
/// spins `w` (the velocity-Verlet half-step values); the forces of the
/// previous step are discarded so they do not move anything.
fn drive(sim: &mut Simulation, x: [DVec3; 2], v: [DVec3; 2], w: [DVec3; 2]) {
    let dt = sim.setup.dt;
    for id in 0..2 {
        let k = local(sim, id as u64);
        let p = &mut sim.particles;
        p.x[k] = x[id] - dt * v[id];
        p.v[k] = v[id];
        p.omega[k] = w[id];
        p.force[k] = DVec3::ZERO;
        p.torque[k] = DVec3::ZERO;
    }
    sim.step().unwrap();
}

/// Normal and tangential parts of the contact force on body 0, with the current normal.
fn contact_parts(sim: &Simulation) -> (DVec3, DVec3, DVec3) {
    let (xi, _, _, fi, _) = body(sim, 0);
    let n = (body(sim, 1).0 - xi).normalize();
    let f_n = fi.dot(n) * n;
    (n, f_n, fi - f_n)
}

/// Worst relative deviations over a quarter turn about `axis` in steps of
/// `theta`: `(| |F_t| − |F_t0| |, |F_t − R F_t0|, |F_n − R F_n0|)`, each over `|F_t0|` or `|F_n0|`.
fn rigid_quarter_turn(theta: f64, axis: DVec3) -> (f64, f64, f64) {
    let (k, delta, dt) = (1e5, 1e-4, 1e-5);
    let mut c = Case {
        dt,
        normal: hooke(k).into(),
        tangential: "{ model = \"spring_slider\", friction = 1.0, stiffness_ratio = 0.5 }".into(),
        ..Default::default()
    };
    // Start touching (list particles may not overlap), then press to the overlap.
    c.sphere(R, [-R, 0.0, 0.0], [0.0; 3], [0.0; 3]);
    c.sphere(R, [R, 0.0, 0.0], [0.0; 3], [0.0; 3]);
    let half = 0.5 * (2.0 * R - delta);
    let x0 = [DVec3::new(-half, 0.0, 0.0), DVec3::new(half, 0.0, 0.0)];
    serial(|| {
        let mut sim = c.build();
        // Load the spring: 100 steps of a tangential velocity of body 1,
        // ξ = (0, 4e-5, 3e-5) m, |F_t| = k_t |ξ| = 2.5 N < μ F_n = 10 N.
        let u = DVec3::new(0.0, 0.04, 0.03);
        for _ in 0..100 {
            drive(&mut sim, x0, [DVec3::ZERO, u], [DVec3::ZERO; 2]);
        }
        let (_, fn0, ft0) = contact_parts(&sim);
        assert!(
            (ft0.length() - 2.5).abs() < 1e-9,
            "pre-load |F_t| = {}",
            ft0.length()
        );
        // Rigid rotation about the pair's centre: v = Ω × x, every body spins at Ω.
        let omega = theta / dt;
        let steps = (FRAC_PI_2 / theta).round() as usize;
        let (mut mag, mut dir, mut nor) = (0.0f64, 0.0f64, 0.0f64);
        for s in 1..=steps {
            let rot = DMat3::from_axis_angle(axis, s as f64 * theta);
            let x = [rot * x0[0], rot * x0[1]];
            let v = [omega * axis.cross(x[0]), omega * axis.cross(x[1])];
            drive(&mut sim, x, v, [omega * axis; 2]);
            let (_, f_n, f_t) = contact_parts(&sim);
            mag = mag.max((f_t.length() / ft0.length() - 1.0).abs());
            dir = dir.max((f_t - rot * ft0).length() / ft0.length());
            nor = nor.max((f_n - rot * fn0).length() / fn0.length());
        }
        (mag, dir, nor)
    })
}

/// physics.md: "spring_slider: rigid rotation of a pre-loaded contact:
/// |F_t| unchanged, force co-rotates" (objectivity; Luding, Granular Matter
/// 10 (2008) 235). Two spheres pressed together (δ = 1e-4 m) with a loaded
/// tangential spring are turned rigidly by a quarter turn, each step placing
/// them on the exact rotated positions with the rigid-body velocities
/// `v = Ω × x` and spins `Ω` (so the contact-point velocity is zero).
///
/// Here the rotation axis is perpendicular to the contact normal (the normal
/// tilts; no twist about it). Tolerances: `|F_t|` within 1e-6 relative
/// (measured ~1e-13: the update rescales to the old length); direction
/// within the per-step angle θ = ΩΔt relative (the project-and-rescale
/// update is first-order accurate in θ; measured 3.8e-4 at θ = 1e-3 and
/// half that at θ/2); the normal force co-rotates to 1e-9.
#[test]
fn spring_slider_rigid_rotation_tilting_normal() {
    for axis in [DVec3::Z, DVec3::new(0.0, 0.6, 0.8)] {
        for theta in [1e-3, 5e-4] {
            let (mag, dir, nor) = rigid_quarter_turn(theta, axis);
            eprintln!(
                "rigid quarter turn about {axis}, θ = {theta}: ||F_t|−|F_t0||/|F_t0| = {mag:.1e}, \
                 |F_t − R F_t0|/|F_t0| = {dir:.2e}, normal {nor:.1e}"
            );
            assert!(mag < 1e-6, "|F_t| changed by {mag:e}");
            assert!(dir < theta, "F_t does not co-rotate: {dir:e}");
            assert!(nor < 1e-9, "F_n does not co-rotate: {nor:e}");
        }
    }
}

/// As above, with a rotation axis that has a component along the contact
/// normal, (1, 1, 1)/√3 with n = x̂ at the start: the pair also twists
/// about its line of centres, and a co-rotating spring must turn with it.
/// Same tolerances.
#[test]
fn spring_slider_rigid_rotation_with_twist_about_normal() {
    let axis = DVec3::new(1.0, 1.0, 1.0).normalize();
    let theta = 1e-3;
    let (mag, dir, nor) = rigid_quarter_turn(theta, axis);
    eprintln!(
        "rigid quarter turn about {axis}, θ = {theta}: ||F_t|−|F_t0||/|F_t0| = {mag:.1e}, \
         |F_t − R F_t0|/|F_t0| = {dir:.2e}, normal {nor:.1e}"
    );
    assert!(mag < 1e-6, "|F_t| changed by {mag:e}");
    assert!(nor < 1e-9, "F_n does not co-rotate: {nor:e}");
    assert!(
        dir < theta,
        "F_t does not co-rotate with a rigid rotation that twists the contact: |F_t − R F_t0|/|F_t0| = {dir:.3}"
    );
}

// ------------------------------------------------ Chung & Ooi test 7

/// Run a head-on collision of two equal spheres along the unit `u` with spins
/// `w_i`, `w_j`; returns the largest tangential contact-point speed and
/// tangential force seen (relative to `v_rel` and to `F_n`), and the final state.
fn spin_collision(
    tangential: &str,
    u: DVec3,
    w_i: DVec3,
    w_j: DVec3,
) -> (f64, f64, [(DVec3, DVec3); 2]) {
    // Parameters after Chung & Ooi's tests 7–8 (aluminium-alloy spheres,
    // E = 70 GPa, ν = 0.33, ρ = 2700 kg/m³, R = 0.1 m, μ = 0.4, normal speed
    // 0.2 m/s each); the expected result (nothing tangential happens) holds
    // for any values.
    let (r, v) = (0.1, 0.2);
    let gap = 0.5e-3 * 2.0 * v;
    let mut c = Case {
        dt: 5e-6,
        lo: [-2.0; 3],
        hi: [2.0; 3],
        density: 2700.0,
        elastic: Some((7.0e10, 0.33)),
        normal: "{ model = \"hertz\", restitution = 1.0 }".into(),
        tangential: tangential.into(),
        ..Default::default()
    };
    let xi = -(r + 0.5 * gap) * u;
    c.sphere(r, xi.to_array(), (v * u).to_array(), w_i.to_array());
    c.sphere(r, (-xi).to_array(), (-v * u).to_array(), w_j.to_array());
    serial(|| {
        let mut sim = c.build();
        let (mut vt_max, mut ft_max) = (0.0f64, 0.0f64);
        let mut touched = false;
        for _ in 0..2000 {
            sim.step().unwrap();
            let (xi, vi, wi, fi, _) = body(&sim, 0);
            let (xj, vj, wj, _, _) = body(&sim, 1);
            let d = xj - xi;
            let n = d / d.length();
            let delta = 2.0 * r - d.length();
            if delta > 0.0 {
                touched = true;
                // physics.md: v_c = v_j − v_i + ω_j × (−ℓ_j n) − ω_i × (ℓ_i n), ℓ = R − δ/2.
                let l = r - 0.5 * delta;
                let vc = vj - vi + wj.cross(-l * n) - wi.cross(l * n);
                let vt = vc - vc.dot(n) * n;
                let f_n = fi.dot(n);
                vt_max = vt_max.max(vt.length() / (2.0 * v));
                ft_max = ft_max.max((fi - f_n * n).length() / f_n.abs());
            } else if touched {
                break;
            }
        }
        assert!(touched);
        let (_, vi, wi, _, _) = body(&sim, 0);
        let (_, vj, wj, _, _) = body(&sim, 1);
        (vt_max, ft_max, [(vi, wi), (vj, wj)])
    })
}

/// Chung & Ooi, Granular Matter 13 (2011) 643, test 7 (physics.md row):
/// two identical spheres collide head-on with equal and opposite spins
/// about an axis perpendicular to the line of centres. The surfaces then
/// move together at the contact point (`v_c` has no tangential part), so
/// neither friction model may act: the tangential velocity stays 0, the
/// spins and the tangential centre velocities are unchanged.
///
/// Spins ±2 rad/s (surface speed 0.2 m/s, the normal speed), elastic
/// normal law; line of centres along x (the paper's set-up) and along the
/// oblique (1, 2, 2)/3 with spin axis (2, 1, −2)/3. Tolerances are round-off:
/// 1e-12 relative for the tangential velocity, force and the spins, 1e-12 m/s
/// for the tangential centre velocity. Control: with equal spins in the
/// same sense the contact point slides and the spins must change (> 1 %).
#[test]
fn chung_ooi_test7_equal_and_opposite_spins() {
    let models = [
        "{ model = \"spring_slider\", friction = 0.4, mindlin = true }",
        "{ model = \"dashpot_slider\", friction = 0.4, damping = 1000.0 }",
    ];
    let geometries = [
        (DVec3::X, DVec3::Z),
        (
            DVec3::new(1.0, 2.0, 2.0) / 3.0,
            DVec3::new(2.0, 1.0, -2.0) / 3.0,
        ),
    ];
    let w = 2.0;
    for model in models {
        for (u, a) in geometries {
            let (vt, ft, end) = spin_collision(model, u, w * a, -w * a);
            let spin_dev = (end[0].1 - w * a).length().max((end[1].1 + w * a).length()) / w;
            let tang_v = end
                .iter()
                .map(|(v, _)| (*v - v.dot(u) * u).length())
                .fold(0.0, f64::max);
            let normal_ratio = -end[0].0.dot(u) / 0.2;
            eprintln!(
                "{model}, u = {u}: max |v_t|/v_rel {vt:.1e}, max |F_t|/F_n {ft:.1e}, spin change {spin_dev:.1e}, \
                 tangential centre speed {tang_v:.1e}, normal rebound ratio {normal_ratio:.6}"
            );
            assert!(vt < 1e-12, "tangential velocity at the contact: {vt:e}");
            assert!(ft < 1e-12, "tangential force: {ft:e}");
            assert!(spin_dev < 1e-12, "spins changed by {spin_dev:e}");
            assert!(tang_v < 1e-12, "tangential centre velocity {tang_v:e}");
            assert!(
                (normal_ratio - 1.0).abs() < 1e-2,
                "elastic rebound {normal_ratio}"
            );

            // Control: same-sense spins slide at the contact, friction acts.
            let (vt, _, end) = spin_collision(model, u, w * a, w * a);
            let spin_change = (end[0].1 - w * a).length() / w;
            assert!(vt > 0.1, "control: contact should slide ({vt})");
            assert!(
                spin_change > 1e-2,
                "control: friction should change the spin ({spin_change})"
            );
        }
    }
}
