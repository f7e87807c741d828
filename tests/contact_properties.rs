//! Properties of the whole contact law (design.md, "Habits"), over random
//! laws and random contacts.
//!
//! A law is a normal model (Hooke with either damping law, Hertz; with or
//! without `no_tension`), a tangential model (none, dashpot_slider,
//! spring_slider with a linear or a Mindlin stiffness), optionally epsd
//! (with torsion and mobilised damping), Type C or cdt rolling resistance
//! and EDEM spinning friction, built as `src/config/laws.rs` builds them. A contact
//! is two overlapping spheres (radii 0.5–2 mm, glass density, one of them
//! possibly frozen) with random velocities, spins, time step and history:
//! a fresh contact, or springs loaded up to twice their Coulomb limits (so
//! that both sticking and slipping are seen). Each contact is evaluated
//! through [`ContactLaw::evaluate_pair`], the engine's entry point for a
//! particle pair, in its canonical orientation.
//!
//! - **Newton's third law / angular momentum balance.** `j` receives
//!   `−F_i` by construction; the meaningful check is that the torques close:
//!   `x_i × F_i + x_j × F_j + τ_i + τ_j = 0` about any point, because the
//!   lever arms `ℓ_i + ℓ_j = r` put the contact point on the line of centres
//!   and the couples (rolling, spinning) are `+M` on `i` and `−M` on `j`.
//! - **Objectivity.** Rotating every input (separation, velocities, spins,
//!   each 3-vector of the history) rotates every output (force, torques,
//!   new history).
//! - **Coulomb.** After the step the tangential part of the force is at most
//!   `μ |F_n|`, the rolling spring at most `μ_r R_r |F_n|`, and the cdt
//!   couple at most `μ_r R* |F_n|`.
//! - **Swapping i and j changes nothing physical.** Evaluated with the
//!   bodies swapped (`d → −d`) and the history swapped as each model says
//!   it reads the other way round ([`ContactLaw::swap_history`]: the
//!   tangential spring elongation follows `v_t`, the rolling spring torque
//!   follows `ω_rel = ω_i − ω_j`, so both change sign) each body gets the
//!   same force and torque, and the new history is the swapped new history.
//! - **The plain path is the general one.** For laws without couples,
//!   [`ContactLaw::evaluate_plain`] (the force stage's shortcut) gives the
//!   same bits.
//!
//! Tolerances are relative: 1e-12 of the magnitudes the outputs are computed
//! from ([`Scales`]: a handful of roundings at 1.1e-16 each), not of the
//! outputs, which a cancellation such as `F_el + γ_n δ̇` can make far smaller.

use glam::{DQuat, DVec3};
use gravel::contact::normal::{damping_ratio_from_restitution, Hertz, Hooke, HookeDamping};
use gravel::contact::rolling::{Cdt, Epsd, TypeC};
use gravel::contact::spinning::{disk_radius_pair, Edem, SPIN_SAFETY};
use gravel::contact::tangential::{DashpotSlider, SpringSlider, TangentialStiffness};
use gravel::contact::{
    Body, ContactInertia, ContactLaw, Kinematics, NormalModel, PairContext, PairForce,
    RollingModel, SpinningModel, TangentialModel,
};
use gravel::rng::{PairNoise, Stream};
use proptest::prelude::*;

/// Relative tolerance of every comparison.
const TOL: f64 = 1e-12;

/// Glass.
const DENSITY: f64 = 2500.0;

// ------------------------------------------------------------ random laws

/// `10^e` for `e` uniform in `[lo, hi)`: a log-uniform draw.
fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo..hi).prop_map(|e| 10f64.powf(e))
}

fn normal_model() -> impl Strategy<Value = NormalModel> {
    let damping = prop_oneof![
        (0.05..=1.0f64).prop_map(|e| HookeDamping::Restitution {
            beta: damping_ratio_from_restitution(e)
        }),
        (0.0..1e4f64).prop_map(|rate| HookeDamping::Rate { rate }),
    ];
    prop_oneof![
        (log_uniform(2.0, 6.0), damping, any::<bool>()).prop_map(
            |(stiffness, damping, no_tension)| Hooke {
                stiffness,
                damping,
                no_tension,
            }
            .into()
        ),
        (log_uniform(6.0, 10.0), 0.05..=1.0f64, any::<bool>()).prop_map(
            |(e_star, e, no_tension)| Hertz {
                e_star,
                beta: damping_ratio_from_restitution(e),
                no_tension,
            }
            .into()
        ),
    ]
}

fn tangential_model() -> impl Strategy<Value = TangentialModel> {
    let friction = 0.0..1.0f64;
    let stiffness = prop_oneof![
        (0.1..1.5f64).prop_map(|ratio| TangentialStiffness::Linear { ratio }),
        log_uniform(5.0, 9.0).prop_map(|g_star| TangentialStiffness::Mindlin { g_star }),
    ];
    prop_oneof![
        Just(TangentialModel::None),
        (friction.clone(), 0.0..10.0f64).prop_map(|(friction, damping)| DashpotSlider {
            friction,
            damping
        }
        .into()),
        (friction, stiffness, 0.0..1.0f64).prop_map(|(friction, stiffness, damping_ratio)| {
            SpringSlider {
                friction,
                stiffness,
                damping_ratio,
            }
            .into()
        }),
    ]
}

fn rolling() -> impl Strategy<Value = Option<RollingModel>> {
    prop_oneof![
        Just(None),
        (0.0..0.5f64, 0.0..=1.0f64, any::<bool>(), 0.0..=1.0f64).prop_map(
            |(mu, eta, torsion, f)| {
                Some(
                    Epsd {
                        friction: mu,
                        damping: eta,
                        torsion_torque: torsion,
                        mobilised_damping_factor: f,
                    }
                    .into(),
                )
            }
        ),
        (
            0.0..0.5f64,
            0.0..=1.0f64,
            0.5..4.0f64,
            prop::option::of(1e-4..2e-3f64)
        )
            .prop_map(|(mu, eta, lambda, rr)| {
                Some(
                    TypeC {
                        friction: mu,
                        damping: eta,
                        stiffness_factor: lambda,
                        rolling_radius: rr,
                    }
                    .into(),
                )
            }),
        (0.0..0.5f64).prop_map(|mu| Some(Cdt { friction: mu }.into())),
    ]
}

fn spinning() -> impl Strategy<Value = Option<SpinningModel>> {
    prop::option::of((0.0..1.0f64).prop_map(|friction| Edem { friction }.into()))
}

fn law() -> impl Strategy<Value = ContactLaw> {
    (normal_model(), tangential_model(), rolling(), spinning()).prop_map(
        |(normal, tangential, rolling, spinning)| ContactLaw {
            normal,
            tangential,
            stochastic: None,
            rolling,
            spinning,
        },
    )
}

/// A law without couples or stochastic friction.
fn plain_law() -> impl Strategy<Value = ContactLaw> {
    (normal_model(), tangential_model()).prop_map(|(normal, tangential)| ContactLaw {
        normal,
        tangential,
        stochastic: None,
        rolling: None,
        spinning: None,
    })
}

// ------------------------------------------------------------ random contacts

/// Two overlapping spheres, a time step and a dimensionless history.
#[derive(Debug, Clone)]
struct Contact {
    bi: Body,
    bj: Body,
    /// `1/I` (0 for a frozen body).
    inv_inertia: [f64; 2],
    /// `x_j − x_i`.
    d: DVec3,
    dt: f64,
    /// A point about which torques are summed.
    origin: DVec3,
    /// A fresh contact (zero history), else the history in units of the
    /// springs' Coulomb limits (see [`history`]), each up to 2.
    fresh: bool,
    units: [DVec3; 2],
}

fn vec3(s: f64) -> impl Strategy<Value = DVec3> {
    (-s..s, -s..s, -s..s).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

/// A unit vector (away from the zero vector).
fn unit() -> impl Strategy<Value = DVec3> {
    vec3(1.0)
        .prop_filter("a direction", |v| v.length() > 1e-3)
        .prop_map(|v| v.normalize())
}

fn body(x: DVec3, v: DVec3, omega: DVec3, radius: f64, frozen: bool) -> (Body, f64) {
    let m = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    let (inv_mass, inv_inertia) = if frozen {
        (0.0, 0.0)
    } else {
        (1.0 / m, 1.0 / (0.4 * m * radius * radius))
    };
    (
        Body {
            x,
            v,
            omega,
            radius,
            inv_mass,
        },
        inv_inertia,
    )
}

fn contact() -> impl Strategy<Value = Contact> {
    (
        (
            0.5e-3..2e-3f64,
            0.5e-3..2e-3f64,
            log_uniform(-4.0, -0.7),
            unit(),
        ),
        (vec3(0.01), vec3(1.0), vec3(1.0), vec3(1e3), vec3(1e3)),
        (
            log_uniform(-3.0, 0.0),
            0u8..8,
            log_uniform(-7.0, -5.0),
            vec3(1.0),
        ),
        (any::<bool>(), unit(), 0.0..2.0f64, unit(), 0.0..2.0f64),
    )
        .prop_map(
            |(
                (ri, rj, overlap, n),
                (xi, vi, vj, wi, wj),
                (speed, frozen, dt, origin),
                (fresh, u, u_len, w, w_len),
            )| {
                // Overlap as a fraction of the smaller radius; velocities
                // and spins up to 1 m/s and 1000 rad/s times `speed`.
                let r = ri + rj - overlap * ri.min(rj);
                let d = r * n;
                let (vi, vj, wi, wj) = (speed * vi, speed * vj, speed * wi, speed * wj);
                let (bi, ii) = body(xi, vi, wi, ri, frozen == 0);
                let (bj, ij) = body(xi + d, vj, wj, rj, frozen == 1);
                Contact {
                    bi,
                    bj,
                    inv_inertia: [ii, ij],
                    d,
                    dt,
                    origin,
                    fresh,
                    units: [u * u_len, w * w_len],
                }
            },
        )
}

/// The contact's history for `law`: zero for a fresh contact, else the
/// tangential spring elongation `ξ` up to twice its slip length
/// `μ|F_n|/k_t` and the rolling spring torque up to twice `μ_r R_r |F_n|`
/// (in any direction: with some part along the normal, as a turning
/// contact leaves it).
fn history(law: &ContactLaw, c: &Contact, k: &Kinematics) -> Vec<f64> {
    let mut h = vec![0.0; law.history_len()];
    if c.fresh {
        return h;
    }
    let normal = law.normal.force(k);
    let mut at = 0;
    if let TangentialModel::SpringSlider(SpringSlider {
        friction,
        stiffness,
        ..
    }) = law.tangential
    {
        let k_t = match stiffness {
            TangentialStiffness::Linear { ratio } => ratio * normal.stiffness,
            TangentialStiffness::Mindlin { g_star } => 8.0 * g_star * (k.r_eff * k.delta).sqrt(),
        };
        let slip = friction.max(0.05) * normal.total.abs() / k_t;
        h[..3].copy_from_slice(&(c.units[0] * slip).to_array());
        at = 3;
    }
    if let Some(rp) = law.rolling.and_then(|r| r.spring_dashpot()) {
        let limit = rp.friction.max(0.05) * rp.rolling_radius(k.r_eff) * normal.total.abs();
        h[at..at + 3].copy_from_slice(&(c.units[1] * limit).to_array());
    }
    h
}

/// The 3-vectors of a history record.
fn blocks(h: &[f64]) -> Vec<DVec3> {
    h.chunks(3).map(DVec3::from_slice).collect()
}

/// A history record with every 3-vector mapped by `f`.
fn map_blocks(h: &[f64], f: impl Fn(DVec3) -> DVec3) -> Vec<f64> {
    blocks(h)
        .into_iter()
        .flat_map(|v| f(v).to_array())
        .collect()
}

/// Evaluate the pair `(bi, bj)` with separation `d` of length `r`
/// (canonical orientation: `bi` plays `i`), updating `history`.
fn evaluate(
    law: &ContactLaw,
    (bi, ii): (&Body, f64),
    (bj, ij): (&Body, f64),
    (d, r): (DVec3, f64),
    dt: f64,
    history: &mut [f64],
) -> (Forces, Kinematics) {
    let k = Kinematics::pair(bi, bj, d, r);
    let noise = PairNoise::new(1, Stream::StochasticFriction);
    let ctx = PairContext {
        bi,
        bj,
        inv_inertia_i: ii,
        inv_inertia_j: ij,
        id_i: 0,
        id_j: 1,
        step: 0,
        noise: &noise,
    };
    let inertia = || ContactInertia::pair(ii, bi.inv_mass, bi.radius, ij, bj.inv_mass, bj.radius);
    (law.evaluate_pair(&k, dt, history, &ctx, inertia).into(), k)
}

/// A contact's forces and torques ([`PairForce`]) as `DVec3`s.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Forces {
    force_i: DVec3,
    torque_i: DVec3,
    torque_j: DVec3,
}

impl From<PairForce> for Forces {
    fn from(pf: PairForce) -> Self {
        Forces {
            force_i: pf.force_i.into(),
            torque_i: pf.torque_i.into(),
            torque_j: pf.torque_j.into(),
        }
    }
}

/// The contact as given: forces, kinematics, the history before and after.
fn evaluate_contact(law: &ContactLaw, c: &Contact) -> (Forces, Kinematics, Vec<f64>, Vec<f64>) {
    let k0 = Kinematics::pair(&c.bi, &c.bj, c.d, c.d.length());
    let before = history(law, c, &k0);
    let mut after = before.clone();
    let (pf, k) = evaluate(
        law,
        (&c.bi, c.inv_inertia[0]),
        (&c.bj, c.inv_inertia[1]),
        (c.d, c.d.length()),
        c.dt,
        &mut after,
    );
    (pf, k, before, after)
}

/// The magnitudes a contact's outputs are computed from, against which
/// their rounding is measured: a sum like `F_el + γ_n δ̇`, `−k_t ξ − γ_t v_t`
/// or `v_j − v_i` may cancel to far less than its terms, and its rounding is
/// relative to the terms, not to the result.
#[derive(Debug, Clone, Copy)]
struct Scales {
    /// Force.
    force: f64,
    /// Torques.
    torque: f64,
    /// Tangential spring elongation.
    spring: f64,
    /// Rolling spring torque.
    rolling: f64,
}

/// The [`Scales`] of contact `c` under `law` with kinematics `k` and the
/// history `before` it started from.
fn scales(law: &ContactLaw, c: &Contact, k: &Kinematics, before: &[f64]) -> Scales {
    let normal = law.normal.force(k);
    let n_abs = normal.total.abs();
    // What v_c and ω_rel are computed from.
    let v = c.bi.v.length()
        + c.bj.v.length()
        + c.bi.omega.length() * k.lever_i
        + c.bj.omega.length() * k.lever_j;
    let w = c.bi.omega.length() + c.bj.omega.length();
    let old = blocks(before);
    let mut force = normal.elastic.abs() + normal.damping * v;
    let mut spring = 0.0;
    match law.tangential {
        TangentialModel::None => {}
        TangentialModel::DashpotSlider(DashpotSlider { friction, damping }) => {
            force += damping * v + friction * n_abs;
        }
        TangentialModel::SpringSlider(SpringSlider {
            friction,
            stiffness,
            damping_ratio,
        }) => {
            let k_t = match stiffness {
                TangentialStiffness::Linear { ratio } => ratio * normal.stiffness,
                TangentialStiffness::Mindlin { g_star } => {
                    8.0 * g_star * (k.r_eff * k.delta).sqrt()
                }
            };
            let gamma_t = damping_ratio * normal.damping;
            let xi = old.first().map_or(0.0, |x| x.length()) + v * c.dt;
            force += k_t * xi + gamma_t * v + friction * n_abs;
            spring = xi + (friction * n_abs + gamma_t * v) / k_t;
        }
    }
    let inertia = ContactInertia::pair(
        c.inv_inertia[0],
        c.bi.inv_mass,
        c.bi.radius,
        c.inv_inertia[1],
        c.bj.inv_mass,
        c.bj.radius,
    );
    let (mut couple, mut rolling) = (0.0, 0.0);
    if let Some(rp) = law.rolling.and_then(|r| r.spring_dashpot()) {
        let k_r = rp.stiffness(normal.stiffness, k.r_eff);
        let limit = rp.friction * rp.rolling_radius(k.r_eff) * n_abs;
        rolling = old.last().map_or(0.0, |m| m.length()) + k_r * w * c.dt + limit;
        couple += rolling + rp.damping_coefficient(k_r, inertia.rolling) * w;
    }
    if let Some(RollingModel::Cdt(cdt)) = law.rolling {
        couple += cdt.friction * k.r_eff * n_abs;
    }
    if let Some(SpinningModel::Edem(sp)) = &law.spinning {
        let disk = disk_radius_pair(c.bi.radius, c.bj.radius, k.r);
        couple += 2.0 / 3.0 * sp.friction * n_abs * disk
            + SPIN_SAFETY * w * inertia.min / c.dt
            + normal.damping * 4.0 * disk * disk * w;
    }
    Scales {
        force,
        torque: k.lever_i.max(k.lever_j) * force + couple,
        spring,
        rolling,
    }
}

/// The scale of each 3-vector of a history record.
fn history_scales(law: &ContactLaw, s: &Scales) -> Vec<f64> {
    let mut out = Vec::new();
    if law.tangential.history_len() > 0 {
        out.push(s.spring);
    }
    if law.rolling.is_some_and(|r| r.history_len() > 0) {
        out.push(s.rolling);
    }
    out
}

/// `|a − b| ≤ TOL (|a| + |b| + scale)`.
fn close(a: DVec3, b: DVec3, scale: f64) -> bool {
    (a - b).length() <= TOL * (a.length() + b.length() + scale)
}

/// The couple on `i`: its torque less the moment of the force about its centre.
fn couple_i(pf: &Forces, k: &Kinematics) -> DVec3 {
    pf.torque_i - k.lever_i * DVec3::from(k.n).cross(pf.force_i)
}

/// The couple on `j`.
fn couple_j(pf: &Forces, k: &Kinematics) -> DVec3 {
    pf.torque_j - k.lever_j * DVec3::from(k.n).cross(pf.force_i)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `F_j = −F_i`, and the torques close: the total torque about a fixed
    /// point, `x_i × F_i + x_j × F_j + τ_i + τ_j`, vanishes (angular
    /// momentum is exchanged, not made). The couples are `+M` on `i` and
    /// `−M` on `j`, and zero for a law without rolling or spinning.
    #[test]
    fn forces_and_torques_balance(law in law(), c in contact()) {
        let (pf, k, _, _) = evaluate_contact(&law, &c);
        let (f_i, f_j) = (pf.force_i, -pf.force_i);
        let (ai, aj) = (c.bi.x - c.origin, c.bj.x - c.origin);
        let total = ai.cross(f_i) + aj.cross(f_j) + pf.torque_i + pf.torque_j;
        let scale = (ai.length() + aj.length()) * f_i.length()
            + pf.torque_i.length()
            + pf.torque_j.length();
        prop_assert!(
            total.length() <= TOL * scale,
            "total torque {total} (scale {scale:e}): {pf:?}"
        );
        let lever = k.lever_i.max(k.lever_j) * f_i.length();
        let (mi, mj) = (couple_i(&pf, &k), couple_j(&pf, &k));
        prop_assert!(close(mi, -mj, lever), "couples {mi} and {mj}");
        if !law.needs_inertia() {
            prop_assert!(mi.length() <= TOL * lever, "a couple {mi} without rolling or spinning");
        }
    }

    /// Rotating every input (separation, velocities, spins, the history's
    /// 3-vectors) rotates every output (force, both torques, the new history).
    /// The centre distance `r` is passed as it was: `|q d|` may differ from
    /// it by an ulp, which shifts the overlap `R_i + R_j − r` by as much and
    /// the force of a barely touching contact by `ulp(r)/δ` relative (the
    /// conditioning of the overlap, not a property of the law).
    #[test]
    fn rotating_the_inputs_rotates_the_outputs(
        law in law(),
        c in contact(),
        axis in unit(),
        angle in -std::f64::consts::PI..std::f64::consts::PI,
    ) {
        let q = DQuat::from_axis_angle(axis, angle);
        let (pf, k, before, after) = evaluate_contact(&law, &c);
        let turn = |b: &Body| Body { x: q * b.x, v: q * b.v, omega: q * b.omega, ..*b };
        let (bi, bj) = (turn(&c.bi), turn(&c.bj));
        let mut turned = map_blocks(&before, |v| q * v);
        let (pq, _) = evaluate(
            &law,
            (&bi, c.inv_inertia[0]),
            (&bj, c.inv_inertia[1]),
            (q * c.d, c.d.length()),
            c.dt,
            &mut turned,
        );
        let s = scales(&law, &c, &k, &before);
        prop_assert!(close(pq.force_i, q * pf.force_i, s.force), "force {} vs {}", pq.force_i, q * pf.force_i);
        prop_assert!(close(pq.torque_i, q * pf.torque_i, s.torque), "torque on i {} vs {}", pq.torque_i, q * pf.torque_i);
        prop_assert!(close(pq.torque_j, q * pf.torque_j, s.torque), "torque on j {} vs {}", pq.torque_j, q * pf.torque_j);
        for ((new, old), scale) in blocks(&turned).into_iter().zip(blocks(&after)).zip(history_scales(&law, &s)) {
            prop_assert!(close(new, q * old, scale), "history {new} vs {}", q * old);
        }
    }

    /// After the step the tangential force is within the Coulomb limit
    /// `μ |F_n|` (`F_n` the normal part of the force), and the rolling
    /// spring within `μ_r R_r |F_n|`.
    #[test]
    fn friction_stays_within_the_coulomb_limits(law in law(), c in contact()) {
        let (pf, k, before, after) = evaluate_contact(&law, &c);
        let s = scales(&law, &c, &k, &before);
        let f_n = pf.force_i.dot(DVec3::from(k.n));
        let f_t = (pf.force_i - f_n * DVec3::from(k.n)).length();
        let mu = law.tangential.friction();
        prop_assert!(
            f_t <= mu * f_n.abs() + TOL * s.force,
            "|F_t| = {f_t:e} > μ |F_n| = {:e}", mu * f_n.abs()
        );
        if let Some(rp) = law.rolling.and_then(|r| r.spring_dashpot()) {
            let spring = blocks(&after).last().copied().unwrap().length();
            let limit = rp.friction
                * rp.rolling_radius(k.r_eff)
                * law.normal.force(&k).total.abs();
            prop_assert!(spring <= limit * (1.0 + TOL), "|M^k| = {spring:e} > {limit:e}");
        }
        if let (Some(RollingModel::Cdt(cdt)), None) = (law.rolling, law.spinning) {
            let couple = couple_i(&pf, &k).length();
            let limit = cdt.friction * k.r_eff * law.normal.force(&k).total.abs();
            prop_assert!(couple <= limit * (1.0 + TOL) + TOL * s.torque, "|M_r| = {couple:e} > {limit:e}");
        }
    }

    /// Evaluating the contact the other way round (`j` as the first body,
    /// `d → −d`, the history swapped by the models' own rule) gives each
    /// body the same force and torque, and the swapped new history.
    #[test]
    fn swapping_i_and_j_changes_nothing_physical(law in law(), c in contact()) {
        let (pf, k, before, after) = evaluate_contact(&law, &c);
        let mut swapped = before.clone();
        law.swap_history(&mut swapped);
        let mut expected = after.clone();
        law.swap_history(&mut expected);
        let (ps, _) = evaluate(
            &law,
            (&c.bj, c.inv_inertia[1]),
            (&c.bi, c.inv_inertia[0]),
            (-c.d, c.d.length()),
            c.dt,
            &mut swapped,
        );
        let s = scales(&law, &c, &k, &before);
        prop_assert!(close(ps.force_i, -pf.force_i, s.force), "force on j {} vs {}", ps.force_i, -pf.force_i);
        prop_assert!(close(ps.torque_i, pf.torque_j, s.torque), "torque on j {} vs {}", ps.torque_i, pf.torque_j);
        prop_assert!(close(ps.torque_j, pf.torque_i, s.torque), "torque on i {} vs {}", ps.torque_j, pf.torque_i);
        for ((new, old), scale) in blocks(&swapped).into_iter().zip(blocks(&expected)).zip(history_scales(&law, &s)) {
            prop_assert!(close(new, old, scale), "history {new} vs {old}");
        }
    }

    /// For a law without couples or stochastic friction, the force stage's
    /// shortcut [`ContactLaw::evaluate_plain`] gives the same bits as the
    /// general path.
    #[test]
    fn the_plain_path_gives_the_same_bits(law in plain_law(), c in contact()) {
        prop_assert!(law.is_plain());
        let (pf, k, before, after) = evaluate_contact(&law, &c);
        let mut h = before.clone();
        let plain = Forces::from(law.evaluate_plain(&k, c.dt, &mut h));
        prop_assert_eq!(plain, pf);
        let bits = |h: &[f64]| h.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&h), bits(&after));
    }
}

/// The strategies reach every branch the properties are about: sliding and
/// sticking springs, fully mobilised and loading rolling springs, both
/// bodies movable and one frozen.
#[test]
fn the_random_contacts_cover_the_regimes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut slip, mut stick, mut mobilised, mut loading, mut frozen) = (0, 0, 0, 0, 0);
    for _ in 0..2000 {
        let law = law().new_tree(&mut runner).unwrap().current();
        let c = contact().new_tree(&mut runner).unwrap().current();
        let (pf, k, before, after) = evaluate_contact(&law, &c);
        frozen += usize::from(c.bi.inv_mass == 0.0 || c.bj.inv_mass == 0.0);
        let f_n = pf.force_i.dot(DVec3::from(k.n)).abs();
        if let TangentialModel::SpringSlider(SpringSlider { friction, .. }) = law.tangential {
            if !c.fresh && friction > 0.1 && f_n > 0.0 {
                let f_t =
                    (pf.force_i - pf.force_i.dot(DVec3::from(k.n)) * DVec3::from(k.n)).length();
                if f_t >= friction * f_n * (1.0 - 1e-9) {
                    slip += 1;
                } else {
                    stick += 1;
                }
            }
        }
        if let Some(rp) = law.rolling.and_then(|r| r.spring_dashpot()) {
            let limit = rp.friction * rp.rolling_radius(k.r_eff) * law.normal.force(&k).total.abs();
            let spring = blocks(&after).last().copied().unwrap().length();
            if !c.fresh && limit > 0.0 {
                if spring >= limit * (1.0 - 1e-9) {
                    mobilised += 1;
                } else {
                    loading += 1;
                }
            }
        }
        assert_eq!(before.len(), law.history_len());
    }
    eprintln!(
        "of 2000: {slip} sliding and {stick} sticking springs, {mobilised} mobilised and \
         {loading} loading rolling springs, {frozen} with a frozen body"
    );
    for (what, n) in [
        ("sliding", slip),
        ("sticking", stick),
        ("mobilised", mobilised),
        ("loading", loading),
        ("frozen", frozen),
    ] {
        assert!(n >= 20, "only {n} {what} contacts");
    }
}
