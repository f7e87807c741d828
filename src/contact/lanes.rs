//! The Hooke normal force with a linear spring-slider (the chute's law) for
//! four contacts at once, one per lane, with the bits of the one-contact
//! path ([`Kinematics::pair`], [`hooke_force`], [`spring_slider_force`],
//! [`PairForce::plain`]): every lane does the same IEEE operations in the
//! same order, and where the one-contact path branches (a zero history, a
//! zero twist, a large twist, sliding, `no_tension`), both outcomes are
//! computed and the lane takes the one its branch would take. Vector
//! arithmetic rounds each lane as the scalar instruction does, so whether
//! the compiler packs the lanes into vector registers (it does with AVX2,
//! four doubles per instruction; see [`crate::simd::isa`]) changes no bit.
//!
//! The formulas and their sources are those of the one-contact functions.
//!
//! [`Kinematics::pair`]: super::Kinematics::pair
//! [`hooke_force`]: super::normal::hooke_force
//! [`spring_slider_force`]: super::tangential::spring_slider_force
//! [`PairForce::plain`]: super::PairForce::plain

use super::normal::{hooke_force, HookeDamping, NormalModel};
use super::tangential::{
    series_covers, series_sin_cos, spring_slider_force, TangentialModel, TangentialStiffness,
};
use super::{Body, ContactLaw, Kinematics, PairForce};
use glam::DVec3;

/// Number of contacts evaluated together.
pub const LANES: usize = 4;

/// One value per lane.
pub type Lanes = [f64; LANES];

/// A vector per lane, by component: `v[axis][lane]`.
pub type Vec3Lanes = [Lanes; 3];

/// Four contacts in canonical orientation (`i` the lower id), by lane.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContactLanes {
    /// Separation `d = x_j − x_i`.
    pub d: Vec3Lanes,
    /// Its length `r`.
    pub r: Lanes,
    /// Radii `R_i`, `R_j`.
    pub radius: [Lanes; 2],
    /// Velocities `v_i`, `v_j`.
    pub v: [Vec3Lanes; 2],
    /// Angular velocities `ω_i`, `ω_j`.
    pub omega: [Vec3Lanes; 2],
    /// Inverse masses (0 for a frozen particle).
    pub inv_mass: [Lanes; 2],
    /// The tangential spring `ξ` (the contact history): read, and written
    /// back with its new value.
    pub xi: Vec3Lanes,
}

/// What the four contacts give: the force on `i` (its negation on `j`) and
/// the torques on `i` and `j`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ForceLanes {
    /// Force on `i`.
    pub force_i: Vec3Lanes,
    /// Torque on `i`.
    pub torque_i: Vec3Lanes,
    /// Torque on `j`.
    pub torque_j: Vec3Lanes,
}

/// Hooke normal force with a linear spring-slider, the law of the chute
/// benchmark and of most LAMMPS-style granular runs, with its model choice
/// made once per run instead of per contact: one contact at a time
/// ([`Self::one`]) through the same functions as the general path, or four
/// ([`evaluate`]), with the same bits.
#[derive(Debug, Clone, Copy)]
pub struct HookeSpringSliderLaw {
    /// Normal stiffness `k_n`.
    pub stiffness: f64,
    /// Normal damping.
    pub damping: HookeDamping,
    /// Clamp the normal force at zero.
    pub no_tension: bool,
    /// Coulomb coefficient `μ`.
    pub friction: f64,
    /// `k_t / k_n`.
    pub ratio: f64,
    /// `γ_t / γ_n`.
    pub damping_ratio: f64,
}

impl HookeSpringSliderLaw {
    /// The law, if `law` is a plain (no couples, no noise) Hooke normal
    /// force with a linear spring-slider.
    pub fn of(law: &ContactLaw) -> Option<Self> {
        if !law.is_plain() {
            return None;
        }
        match (law.normal, law.tangential) {
            (
                NormalModel::Hooke {
                    stiffness,
                    damping,
                    no_tension,
                },
                TangentialModel::SpringSlider {
                    friction,
                    stiffness: TangentialStiffness::Linear { ratio },
                    damping_ratio,
                },
            ) => Some(Self {
                stiffness,
                damping,
                no_tension,
                friction,
                ratio,
                damping_ratio,
            }),
            _ => None,
        }
    }

    /// One contact with kinematics `kin` and spring `xi` (3 values,
    /// updated): [`hooke_force`], [`spring_slider_force`],
    /// [`PairForce::plain`], as [`ContactLaw::evaluate_plain`] calls them.
    #[inline(always)]
    pub fn one(&self, kin: &Kinematics, dt: f64, xi: &mut [f64]) -> PairForce {
        let normal = hooke_force(self.stiffness, self.damping, self.no_tension, kin);
        let stiffness = TangentialStiffness::Linear { ratio: self.ratio };
        let f_t = spring_slider_force(
            self.friction,
            stiffness,
            self.damping_ratio,
            kin,
            &normal,
            dt,
            xi,
        );
        PairForce::plain(kin, &normal, f_t)
    }
}

impl ContactLanes {
    /// Put a contact in lane `l`: bodies `i` and `j` (their positions are
    /// not read), separation `d = x_j − x_i` of length `r`, spring `xi`.
    #[inline(always)]
    pub fn set(&mut self, l: usize, [bi, bj]: [&Body; 2], (d, r): (DVec3, f64), xi: [f64; 3]) {
        set_lane(&mut self.d, l, d.to_array());
        self.r[l] = r;
        for (side, b) in [bi, bj].into_iter().enumerate() {
            set_lane(&mut self.v[side], l, b.v.to_array());
            set_lane(&mut self.omega[side], l, b.omega.to_array());
            self.radius[side][l] = b.radius;
            self.inv_mass[side][l] = b.inv_mass;
        }
        set_lane(&mut self.xi, l, xi);
    }
}

/// `a · b`, as `DVec3::dot` sums it: `(a_x b_x + a_y b_y) + a_z b_z`.
#[inline(always)]
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    (a[0] * b[0]) + (a[1] * b[1]) + (a[2] * b[2])
}

/// `a × b`, as `DVec3::cross` computes it.
#[inline(always)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - b[1] * a[2],
        a[2] * b[0] - b[2] * a[0],
        a[0] * b[1] - b[0] * a[1],
    ]
}

/// `s v`.
#[inline(always)]
fn scale(s: f64, v: [f64; 3]) -> [f64; 3] {
    [s * v[0], s * v[1], s * v[2]]
}

/// `a + b`.
#[inline(always)]
fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a − b`.
#[inline(always)]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `if take { a } else { b }`, per component (a select, not a branch).
#[inline(always)]
fn pick(take: bool, a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        if take { a[0] } else { b[0] },
        if take { a[1] } else { b[1] },
        if take { a[2] } else { b[2] },
    ]
}

/// Lane `l` of a vector.
#[inline(always)]
fn lane(v: &Vec3Lanes, l: usize) -> [f64; 3] {
    [v[0][l], v[1][l], v[2][l]]
}

/// Write lane `l` of a vector.
#[inline(always)]
fn set_lane(v: &mut Vec3Lanes, l: usize, x: [f64; 3]) {
    for (axis, value) in v.iter_mut().zip(x) {
        axis[l] = value;
    }
}

/// Evaluate the four contacts of `c` with time step `dt`, updating their
/// springs `c.xi`.
#[inline(always)]
pub fn evaluate(law: &HookeSpringSliderLaw, dt: f64, c: &mut ContactLanes) -> ForceLanes {
    // Two passes over the lanes, each without a branch, around the rare
    // twist that the series does not cover.
    let mut n = Vec3Lanes::default();
    let mut v_t = Vec3Lanes::default();
    let mut xi = Vec3Lanes::default();
    let mut in_plane = Vec3Lanes::default();
    let (mut lever, mut total, mut gamma_t, mut angle) = (
        [Lanes::default(); 2],
        [0.0; LANES],
        [0.0; LANES],
        [0.0; LANES],
    );
    let k_t = law.ratio * law.stiffness;
    for l in 0..LANES {
        // Kinematics::pair.
        let (ri, rj, r) = (c.radius[0][l], c.radius[1][l], c.r[l]);
        let nl = scale(1.0 / r, lane(&c.d, l));
        let delta = ri + rj - r;
        let lever_i = ri - 0.5 * delta;
        let lever_j = rj - 0.5 * delta;
        let (vi, vj) = (lane(&c.v[0], l), lane(&c.v[1], l));
        let (wi, wj) = (lane(&c.omega[0], l), lane(&c.omega[1], l));
        let v_c = sub(
            add(sub(vj, vi), cross(wj, scale(-lever_j, nl))),
            cross(wi, scale(lever_i, nl)),
        );
        let vn = dot(v_c, nl);
        let vt = sub(v_c, scale(vn, nl));
        let spin_n = 0.5 * dot(add(wi, wj), nl);
        let m_eff = 1.0 / (c.inv_mass[0][l] + c.inv_mass[1][l]);
        // hooke_force.
        let gamma = match law.damping {
            HookeDamping::Restitution { beta } => 2.0 * beta * (law.stiffness * m_eff).sqrt(),
            HookeDamping::Rate { rate } => rate * m_eff,
        };
        let elastic = law.stiffness * delta;
        let t = elastic + gamma * -vn;
        total[l] = if law.no_tension && t < 0.0 { 0.0 } else { t };
        gamma_t[l] = law.damping_ratio * gamma;
        // spring_slider_force: the spring into the tangent plane, at its
        // length (rotate_into_plane) ...
        let old = lane(&c.xi, l);
        let old2 = dot(old, old);
        let p = sub(old, scale(dot(old, nl), nl));
        let new2 = dot(p, p);
        let rescaled = scale((old2 / new2).sqrt(), p);
        let plane = pick(old2 == 0.0, old, pick(new2 == 0.0, [0.0; 3], rescaled));
        // ... turned about n by the twist (rotate_about_normal, by the
        // series of small_sin_cos; a larger twist is redone below).
        let a = spin_n * dt;
        let (s, co) = series_sin_cos(a);
        let turned = add(scale(co, plane), scale(s, cross(nl, plane)));
        set_lane(&mut xi, l, pick(a == 0.0, plane, turned));
        set_lane(&mut in_plane, l, plane);
        set_lane(&mut n, l, nl);
        set_lane(&mut v_t, l, vt);
        (lever[0][l], lever[1][l], angle[l]) = (lever_i, lever_j, a);
    }
    for (l, &a) in angle.iter().enumerate() {
        if a != 0.0 && !series_covers(a) {
            let (s, co) = a.sin_cos();
            let (plane, nl) = (lane(&in_plane, l), lane(&n, l));
            set_lane(
                &mut xi,
                l,
                add(scale(co, plane), scale(s, cross(nl, plane))),
            );
        }
    }
    let mut out = ForceLanes::default();
    for l in 0..LANES {
        let (nl, vt, g) = (lane(&n, l), lane(&v_t, l), gamma_t[l]);
        let x = add(lane(&xi, l), scale(dt, vt));
        let f = sub(scale(-k_t, x), scale(g, vt));
        let limit = law.friction * total[l].abs();
        let f2 = dot(f, f);
        let slides = f2 > limit * limit;
        let capped = scale(limit / f2.sqrt(), f);
        let f_t = pick(slides, capped, f);
        let sum = add(capped, scale(g, vt));
        let back = [-sum[0] / k_t, -sum[1] / k_t, -sum[2] / k_t];
        set_lane(
            &mut c.xi,
            l,
            pick(slides, pick(k_t > 0.0, back, [0.0; 3]), x),
        );
        // PairForce::plain.
        let force_i = sub(scale(-total[l], nl), f_t);
        let arm = cross(nl, force_i);
        let (lever_i, lever_j) = (lever[0][l], lever[1][l]);
        set_lane(&mut out.force_i, l, force_i);
        set_lane(&mut out.torque_i, l, scale(lever_i, arm));
        let torque_j = pick(lever_j.is_finite(), scale(lever_j, arm), [0.0; 3]);
        set_lane(&mut out.torque_j, l, torque_j);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{particle_uniforms, Stream};

    /// A contact: the two bodies, the separation and the spring.
    type Case = (Body, Body, DVec3, DVec3);

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

    /// Overlapping spheres with random motion and springs, and the edge
    /// cases where the one-contact path branches: a zero spring, a spring
    /// along the normal, no twist, a twist too large for the series, a
    /// frozen partner, a spring so long the contact slides.
    fn cases() -> Vec<Case> {
        let mut draw = Draws(0);
        let mut out = Vec::new();
        for c in 0..64 {
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
            let mut xi = draw.vec(1e-3 * (c % 4) as f64);
            match c % 8 {
                0 => xi = DVec3::ZERO,
                1 => {
                    // n exactly along z and the spring along it: its
                    // projection is exactly zero.
                    (bi.radius, bj.radius) = (0.52, 0.52);
                    (d, xi) = (DVec3::Z, DVec3::Z * 1e-3);
                }
                2 => (bi.omega, bj.omega) = (DVec3::ZERO, DVec3::ZERO),
                3 => (bi.omega, bj.omega) = (n * 4000.0, n * 3000.0),
                4 => bj.inv_mass = 0.0,
                5 => xi = draw.vec(1.0),
                _ => {}
            }
            out.push((bi, bj, d, xi));
        }
        out
    }

    /// The one-contact path: force on i, torques on i and j, new spring.
    fn one(law: &HookeSpringSliderLaw, dt: f64, (bi, bj, d, xi): &Case) -> [DVec3; 4] {
        let kin = Kinematics::pair(bi, bj, *d, d.length());
        let mut rec = xi.to_array();
        let pf = law.one(&kin, dt, &mut rec);
        [pf.force_i, pf.torque_i, pf.torque_j, DVec3::from_array(rec)]
    }

    fn bits(v: &[DVec3; 4]) -> Vec<u64> {
        v.iter()
            .flat_map(|x| x.to_array().map(f64::to_bits))
            .collect()
    }

    /// Every lane gives the bits of the one-contact path, for every case
    /// in every lane, under both damping forms, with and without
    /// `no_tension` and with a zero tangential stiffness.
    #[test]
    fn each_lane_gives_the_bits_of_the_one_contact_path() {
        // Random spins turn a spring by less than 1e-3 per step (the
        // series), case 3 by 0.35 (`sin_cos`).
        let dt = 1e-4;
        let laws = [
            (HookeDamping::Rate { rate: 50.0 }, false, 2.0 / 7.0, 0.0),
            (
                HookeDamping::Restitution { beta: 0.3 },
                true,
                2.0 / 7.0,
                0.5,
            ),
            (HookeDamping::Rate { rate: 5000.0 }, true, 0.0, 0.0),
        ];
        let cases = cases();
        let (mut slid, mut stuck) = (0, 0);
        for (damping, no_tension, ratio, damping_ratio) in laws {
            let law = HookeSpringSliderLaw {
                stiffness: 2.0e5,
                damping,
                no_tension,
                friction: 0.5,
                ratio,
                damping_ratio,
            };
            // Each case in each lane: groups of four, shifted by one.
            for start in 0..cases.len() {
                let group: Vec<&Case> = (0..LANES)
                    .map(|l| &cases[(start + l) % cases.len()])
                    .collect();
                let mut c = ContactLanes::default();
                for (l, (bi, bj, d, xi)) in group.iter().enumerate() {
                    c.set(l, [bi, bj], (*d, d.length()), xi.to_array());
                }
                let out = evaluate(&law, dt, &mut c);
                for (l, case) in group.iter().enumerate() {
                    let v = |x: &Vec3Lanes| DVec3::new(x[0][l], x[1][l], x[2][l]);
                    let lanes = [
                        v(&out.force_i),
                        v(&out.torque_i),
                        v(&out.torque_j),
                        v(&c.xi),
                    ];
                    let expected = one(&law, dt, case);
                    assert_eq!(
                        bits(&lanes),
                        bits(&expected),
                        "case {}, lane {l}",
                        (start + l) % cases.len()
                    );
                    // Which branch the case took: without friction's cap
                    // the force differs where it slides.
                    let uncapped = HookeSpringSliderLaw {
                        friction: f64::MAX,
                        ..law
                    };
                    if one(&uncapped, dt, case)[0] == expected[0] {
                        stuck += 1;
                    } else {
                        slid += 1;
                    }
                }
            }
        }
        assert!(slid > 0 && stuck > 0, "slid {slid}, stuck {stuck}");
    }
}
