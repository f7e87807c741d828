//! The kernel over four and eight lanes against the same kernel one
//! contact at a time: every law, every case in every lane, the same bits,
//! in every build of the hot loops the processor runs (baseline, AVX2,
//! AVX-512; see [`crate::simd::isa`]).

use super::kinematics::PairBodies;
use super::normal::{Hertz, Hooke, HookeDamping, Wca};
use super::rolling::{Cdt, Epsd, TypeC};
use super::spinning::Edem;
use super::tangential::{DashpotSlider, SpringSlider, TangentialStiffness};
use super::*;
use crate::rng::{particle_uniforms, Stream};
use crate::simd::isa::{processor_best, Isa};
use crate::simd::lane::Lanes;
use glam::DVec3;

/// A contact: the two bodies, the separation, the history record and the
/// couples' inertia.
struct Case {
    bi: Body,
    bj: Body,
    d: DVec3,
    history: [f64; 6],
    inertia: ContactInertia,
}

/// Draws from the project's counter-based generator, in `[−1, 1)`.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> f64 {
        self.0 += 1;
        2.0 * particle_uniforms(7, self.0, Stream::RandomInsertion, 0)[0] - 1.0
    }
    fn vec(&mut self, scale: f64) -> DVec3 {
        DVec3::new(self.next(), self.next(), self.next()) * scale
    }
}

/// Overlapping spheres with random motion and history, and the edge cases
/// where the kernel selects per lane: a zero record, a spring along the
/// normal, no twist, a twist too large for the series, a frozen partner,
/// springs so long the contact slides and the rolling spring is fully
/// mobilised, a spin exactly about the normal, no relative spin about it.
fn cases() -> Vec<Case> {
    let mut draw = Draws(0);
    let mut out = Vec::new();
    for c in 0..80 {
        let body = |draw: &mut Draws| Body {
            x: DVec3::ZERO,
            v: draw.vec(2.0),
            omega: draw.vec(5.0),
            radius: 0.5 + 0.25 * draw.next(),
            inv_mass: 1.0 + 0.5 * draw.next(),
        };
        let (mut bi, mut bj) = (body(&mut draw), body(&mut draw));
        let n = draw.vec(1.0).normalize();
        let mut d = n * (bi.radius + bj.radius) * (1.0 - 0.02 * (1.0 + draw.next()));
        let scale = 1e-3 * (c % 4) as f64;
        let mut history = [0.0; 6];
        for (k, h) in history.iter_mut().enumerate() {
            *h = draw.next() * if k < 3 { scale } else { 10.0 * scale };
        }
        match c % 10 {
            0 => history = [0.0; 6],
            1 => {
                // n exactly along z and the springs along it: their
                // projections are exactly zero.
                (bi.radius, bj.radius) = (0.52, 0.52);
                d = DVec3::Z;
                history = [0.0, 0.0, 1e-3, 0.0, 0.0, 2e-3];
            }
            2 => (bi.omega, bj.omega) = (DVec3::ZERO, DVec3::ZERO),
            3 => (bi.omega, bj.omega) = (n * 4000.0, n * 3000.0),
            4 => bj.inv_mass = 0.0,
            5 => {
                for h in &mut history {
                    *h = draw.next();
                }
            }
            6 => bj.omega = bi.omega,
            7 => (bi.omega, bj.omega) = (n * 2.0, DVec3::ZERO),
            _ => {}
        }
        let inertia = ContactInertia::pair(
            40.0 + draw.next(),
            bi.inv_mass,
            bi.radius,
            40.0 + draw.next(),
            bj.inv_mass,
            bj.radius,
        );
        out.push(Case {
            bi,
            bj,
            d,
            history,
            inertia,
        });
    }
    out
}

/// The laws: every normal, tangential, rolling and spinning model, with
/// their options and degenerate parameters.
fn laws() -> Vec<ContactLaw> {
    let plain = |normal, tangential| ContactLaw {
        normal,
        tangential,
        stochastic: None,
        rolling: None,
        spinning: None,
    };
    let hooke = |damping, no_tension| {
        NormalModel::from(Hooke {
            stiffness: 2.0e5,
            damping,
            no_tension,
        })
    };
    let hertz = |no_tension| {
        NormalModel::from(Hertz {
            e_star: 3.0e6,
            beta: 0.3,
            no_tension,
        })
    };
    let spring = |friction, stiffness, damping_ratio| {
        TangentialModel::from(SpringSlider {
            friction,
            stiffness,
            damping_ratio,
        })
    };
    let linear = |ratio| TangentialStiffness::Linear { ratio };
    let mindlin = TangentialStiffness::Mindlin { g_star: 1.2e6 };
    let rate = HookeDamping::Rate { rate: 50.0 };
    let epsd = Epsd::new(0.1, 0.3);
    let epsd_torsion = RollingModel::from(Epsd {
        torsion_torque: true,
        mobilised_damping_factor: 0.4,
        ..epsd
    });
    let epsd = RollingModel::from(epsd);
    let spin = SpinningModel::from(Edem { friction: 0.5 });
    vec![
        plain(hooke(rate, false), spring(0.5, linear(2.0 / 7.0), 0.0)),
        plain(
            hooke(HookeDamping::Restitution { beta: 0.3 }, true),
            spring(0.5, linear(2.0 / 7.0), 0.5),
        ),
        plain(
            hooke(HookeDamping::Rate { rate: 5000.0 }, true),
            spring(0.5, linear(0.0), 0.0),
        ),
        plain(hertz(false), spring(0.5, mindlin, 0.0)),
        plain(
            hertz(true),
            DashpotSlider {
                friction: 0.4,
                damping: 30.0,
            }
            .into(),
        ),
        plain(
            Wca {
                epsilon: 1.0,
                sigma: 1.0,
            }
            .into(),
            TangentialModel::None,
        ),
        ContactLaw {
            rolling: Some(epsd),
            spinning: Some(spin),
            ..plain(hooke(rate, false), TangentialModel::None)
        },
        ContactLaw {
            rolling: Some(epsd_torsion),
            spinning: Some(spin),
            ..plain(hertz(false), spring(0.5, mindlin, 1.0))
        },
        ContactLaw {
            rolling: Some(
                TypeC {
                    friction: 0.2,
                    damping: 0.5,
                    stiffness_factor: 1.5,
                    rolling_radius: Some(0.4),
                }
                .into(),
            ),
            ..plain(hertz(true), spring(0.3, linear(0.3), 0.0))
        },
        ContactLaw {
            rolling: Some(Epsd::new(0.0, 0.3).into()),
            ..plain(hertz(false), spring(0.5, mindlin, 0.0))
        },
        ContactLaw {
            rolling: Some(Cdt { friction: 0.2 }.into()),
            spinning: Some(spin),
            ..plain(hooke(rate, true), spring(0.5, linear(2.0 / 7.0), 0.3))
        },
    ]
}

/// The one-contact path: force on i, torques on i and j, new history.
fn one(law: &ContactLaw, dt: f64, c: &Case) -> Vec<u64> {
    let kin = Kinematics::pair(&c.bi, &c.bj, c.d, c.d.length());
    let h = law.history_len();
    let mut rec = c.history[..h].to_vec();
    let pf = law.evaluate_with(&kin, dt, &mut rec, || c.inertia);
    let mut out = Vec::new();
    for v in [pf.force_i, pf.torque_i, pf.torque_j] {
        out.extend([v.x, v.y, v.z]);
    }
    out.extend(rec);
    out.into_iter().map(f64::to_bits).collect()
}

/// A law that says it does not read `R*` ([`ContactLaw::reads_r_eff`])
/// gives the same bits when the force stage leaves `R*` out (NaN), for
/// every law and case.
#[test]
fn a_law_that_leaves_out_r_eff_does_not_read_it() {
    let dt = 1e-4;
    for (k, law) in laws().iter().enumerate() {
        for (n, c) in cases().iter().enumerate() {
            let bodies = PairBodies::of(&c.bi, &c.bj, c.d, c.d.length());
            let kin = Kinematics::of_pair_for(&bodies, law.reads_r_eff());
            let h = law.history_len();
            let mut rec = c.history[..h].to_vec();
            let pf = law.evaluate_with(&kin, dt, &mut rec, || c.inertia);
            let mut bits: Vec<u64> = Vec::new();
            for v in [pf.force_i, pf.torque_i, pf.torque_j] {
                bits.extend([v.x, v.y, v.z].map(f64::to_bits));
            }
            bits.extend(rec.iter().map(|v| v.to_bits()));
            assert_eq!(bits, one(law, dt, c), "law {k}, case {n}");
        }
    }
}

/// `N` cases through the lanes: each lane's results, as [`one`] gives them.
#[inline(always)]
fn lanes<const N: usize>(law: &ContactLaw, dt: f64, group: &[&Case]) -> Vec<Vec<u64>> {
    let h = law.history_len();
    let mut bodies = PairBodies::<Lanes<N>>::default();
    let mut history = [Lanes::<N>::default(); 6];
    let mut inertia = ContactInertia::<Lanes<N>>::default();
    for (l, c) in group.iter().enumerate() {
        bodies.set_lane(l, [&c.bi, &c.bj], c.d, c.d.length());
        for (lanes, &v) in history.iter_mut().zip(&c.history) {
            lanes.set_lane(l, v);
        }
        inertia.rolling.set_lane(l, c.inertia.rolling);
        inertia.min.set_lane(l, c.inertia.min);
    }
    let kin = Kinematics::of_pair(&bodies);
    let pf = law.evaluate_with(&kin, dt, &mut history[..h], || inertia);
    (0..group.len())
        .map(|l| {
            let mut out = Vec::new();
            for v in [pf.force_i, pf.torque_i, pf.torque_j] {
                let v = v.lane(l);
                out.extend([v.x, v.y, v.z]);
            }
            out.extend(history[..h].iter().map(|x| x.lane(l)));
            out.into_iter().map(f64::to_bits).collect()
        })
        .collect()
}

/// `$name`: [`lanes`] compiled by the build macro `$build`, as the pair
/// loop's build of that name.
macro_rules! lanes_with {
    ($name:ident, $build:ident) => {
        crate::$build! {
            fn $name<const N: usize>(
                law: &ContactLaw,
                dt: f64,
                group: &[&Case],
            ) -> Vec<Vec<u64>> {
                lanes::<N>(law, dt, group)
            }
        }
    };
}
lanes_with!(lanes_avx2, avx2_build);
lanes_with!(lanes_avx512, avx512_build);

/// [`lanes`] in build `isa`, which the processor must run.
fn lanes_in<const N: usize>(isa: Isa, law: &ContactLaw, dt: f64, group: &[&Case]) -> Vec<Vec<u64>> {
    assert!(isa <= processor_best());
    match isa {
        Isa::Baseline => lanes::<N>(law, dt, group),
        // SAFETY: the processor has AVX2 (asserted above).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { lanes_avx2::<N>(law, dt, group) },
        // SAFETY: the processor has AVX-512 (asserted above).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { lanes_avx512::<N>(law, dt, group) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only the baseline build off x86-64"),
    }
}

/// Every lane gives the bits of the one-contact path, for every case in
/// every lane, under every law, in groups of four and of eight (the widths
/// the pair loop uses), mixed and of one case repeated (so that groups where no lane slides, or none has its
/// rolling spring mobilised, which skip the capping, are among them), in
/// every build the processor runs; and the cases reach both sides of the
/// slide selection.
#[test]
fn each_lane_gives_the_bits_of_the_one_contact_path() {
    // Random spins turn a spring by less than 1e-3 per step (the series),
    // case 3 by 0.35 (sin and cos).
    let dt = 1e-4;
    let cases = cases();
    let (mut slid, mut stuck) = (0, 0);
    for (k, law) in laws().iter().enumerate() {
        let mixed = (0..cases.len()).map(|start| (start, 1));
        let alike = (0..cases.len()).map(|start| (start, 0));
        for (start, stride) in mixed.chain(alike) {
            let builds = Isa::ALL.into_iter().filter(|&i| i <= processor_best());
            for (width, isa) in builds.flat_map(|i| [(4, i), (8, i)]) {
                let group: Vec<&Case> = (0..width)
                    .map(|l| &cases[(start + stride * l) % cases.len()])
                    .collect();
                let results = match width {
                    4 => lanes_in::<4>(isa, law, dt, &group),
                    _ => lanes_in::<8>(isa, law, dt, &group),
                };
                for (l, (lanes, case)) in results.iter().zip(&group).enumerate() {
                    let expected = one(law, dt, case);
                    assert_eq!(
                        *lanes,
                        expected,
                        "law {k}, case {}, lane {l} of {width}, {} build",
                        (start + stride * l) % cases.len(),
                        isa.name()
                    );
                }
            }
        }
        // Which branch the cases took: without friction's cap the force
        // differs where the contact slides.
        for case in &cases {
            let expected = one(law, dt, case);
            let uncapped = match law.tangential {
                TangentialModel::SpringSlider(s) => ContactLaw {
                    tangential: SpringSlider {
                        friction: f64::MAX,
                        ..s
                    }
                    .into(),
                    ..*law
                },
                _ => continue,
            };
            if one(&uncapped, dt, case)[..3] == expected[..3] {
                stuck += 1;
            } else {
                slid += 1;
            }
        }
    }
    assert!(slid > 0 && stuck > 0, "slid {slid}, stuck {stuck}");
}
