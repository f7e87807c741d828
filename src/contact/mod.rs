//! The contact law: one slot per sub-model kind, composed per material pair.
//!
//! Following the layout of LAMMPS' `GRANULAR` package, a [`ContactLaw`] holds
//! one normal ([`normal`]) and one tangential ([`tangential`]) sub-model, and
//! optional rolling-resistance ([`rolling`]) and spinning-friction
//! ([`spinning`]) couples and stochastic friction ([`stochastic`]). Each slot
//! is a folder with one file per model; the slot's registry enum (e.g.
//! [`NormalModel`]) is chosen by the config's `model = "..."` and dispatched
//! statically by `match` ([`model`] says what a model file owns and how a
//! slot lists its models). Kinematics are computed once per pair
//! ([`Kinematics`]); sub-models are pure functions of run-constant
//! parameters, the kinematics, the normal model's output and their own
//! slice of the contact's history.
//!
//! Every pair is evaluated in its canonical orientation (`i` = lower global
//! id) so that the two particles of a contact — on the same rank or on two —
//! compute the same bits; `i` receives [`PairForce::force_i`] and `j` its
//! exact negation.

pub mod kinematics;
#[cfg(test)]
mod lane_tests;
pub mod model;
pub mod normal;
pub mod rolling;
pub mod spinning;
pub mod stochastic;
pub mod tangential;
#[cfg(test)]
mod test_support;

pub use kinematics::{Body, Kinematics};
pub use normal::{NormalForce, NormalModel, NormalSpec};
pub use rolling::{RollingModel, RollingSpec};
pub use spinning::{SpinningModel, SpinningSpec};
pub use stochastic::{StochasticModel, StochasticSpec};
pub use tangential::{TangentialModel, TangentialSpec};

use crate::rng::PairNoise;
use crate::simd::lane::{Lane, V3};
use stochastic::{stochastic_pair, StochasticPairInput};

/// The kinds of the normal and tangential sub-models, as numbers a kernel
/// can be specialised on at compile time ([`ContactLaw::evaluate_as`]).
#[derive(Debug)]
pub struct Kind;

impl Kind {
    /// Not known at compile time: any kind, chosen at run time.
    pub const ANY: u8 = 0;
    /// [`NormalModel::Hooke`].
    pub const HOOKE: u8 = 1;
    /// [`NormalModel::Hertz`].
    pub const HERTZ: u8 = 2;
    /// [`NormalModel::Wca`].
    pub const WCA: u8 = 3;
    /// [`TangentialModel::None`].
    pub const NONE: u8 = 4;
    /// [`TangentialModel::DashpotSlider`].
    pub const DASHPOT_SLIDER: u8 = 5;
    /// [`TangentialModel::SpringSlider`].
    pub const SPRING_SLIDER: u8 = 6;
}

/// The panic of a sub-model evaluated as another kind than its own (a
/// caller's bug), out of line so that the kernels stay lean.
#[cold]
#[inline(never)]
pub(crate) fn kind_mismatch() -> ! {
    panic!("a contact sub-model evaluated as another kind than its own")
}

/// The composed contact law of one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactLaw {
    /// Normal force model.
    pub normal: NormalModel,
    /// Tangential force model.
    pub tangential: TangentialModel,
    /// Markovian stochastic friction of particle–particle contacts, if any
    /// (then `tangential` is `None`: the config refuses both).
    pub stochastic: Option<StochasticModel>,
    /// Rolling resistance (`None`: model "none").
    pub rolling: Option<RollingModel>,
    /// Spinning friction (`None`: model "none").
    pub spinning: Option<SpinningModel>,
}

/// What the stochastic friction of a particle–particle contact needs beyond
/// [`Kinematics`]: the two bodies in canonical orientation, their inverse
/// moments of inertia and global ids, the step and the noise generator.
#[derive(Debug, Clone, Copy)]
pub struct PairContext<'a> {
    /// Body `i` (the lower global id).
    pub bi: &'a Body,
    /// Body `j`.
    pub bj: &'a Body,
    /// `1/I_i` (0 for a frozen particle).
    pub inv_inertia_i: f64,
    /// `1/I_j` (0 for a frozen particle).
    pub inv_inertia_j: f64,
    /// Global id of `i`.
    pub id_i: u64,
    /// Global id of `j`.
    pub id_j: u64,
    /// The step whose forces are being computed (names the noise).
    pub step: u64,
    /// The generator of the stochastic-friction stream under the run's seed.
    pub noise: &'a PairNoise,
}

/// The rotational inertia a contact's couples need, per lane: the
/// rolling-mode inertia `I_r` ([`rolling::pair_rolling_inertia`], or for a
/// wall [`rolling::wall_rolling_inertia`] of the particle alone) and the
/// smallest moment of inertia of the contact's particles (walls and frozen
/// particles excluded), for the spinning limit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ContactInertia<T: Lane = f64> {
    /// Rolling-mode inertia `I_r` \[kg m²\].
    pub rolling: T,
    /// `min(I)` over the contact's movable particles \[kg m²\].
    pub min: T,
}

impl ContactInertia {
    /// Two spheres, from their inverse moments of inertia, inverse masses and
    /// radii (an inverse of 0, a frozen particle, counts as immovable).
    #[inline]
    pub fn pair(
        inv_inertia_i: f64,
        inv_mass_i: f64,
        radius_i: f64,
        inv_inertia_j: f64,
        inv_mass_j: f64,
        radius_j: f64,
    ) -> Self {
        Self::of_bodies(
            BodyInertia::of(inv_inertia_i, inv_mass_i, radius_i),
            BodyInertia::of(inv_inertia_j, inv_mass_j, radius_j),
        )
    }

    /// Two spheres, from each one's [`BodyInertia`]:
    /// `I_r = (1/a_i + 1/a_j)⁻¹` ([`rolling::pair_rolling_inertia`], the
    /// same bits) and `min(I_i, I_j)`.
    #[inline(always)]
    pub fn of_bodies(i: BodyInertia, j: BodyInertia) -> Self {
        Self {
            rolling: 1.0 / (i.inv_rolling + j.inv_rolling),
            min: i.moment.min(j.moment),
        }
    }

    /// A sphere on a wall: `I_r = I_i + m_i R_i²` and `min(I) = I_i`.
    #[inline]
    pub fn wall(inv_inertia: f64, inv_mass: f64, radius: f64) -> Self {
        let i = 1.0 / inv_inertia;
        Self {
            rolling: rolling::wall_rolling_inertia(i, 1.0 / inv_mass, radius),
            min: i,
        }
    }
}

/// One sphere's part of [`ContactInertia::pair`], which depends on that
/// sphere alone: its moment of inertia `I = 1/(1/I)` and the inverse
/// `1/a` of its rolling inertia about the contact point,
/// `a = I + m R²` ([`rolling::wall_rolling_inertia`], `m = 1/(1/m)`).
/// The force stage finds it once per particle at each neighbour-list
/// build (the particles' inertia changes only there) rather than twice
/// per contact (four divisions fewer a contact).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BodyInertia {
    /// Moment of inertia `I` \[kg m²\] (infinite for a frozen particle).
    pub moment: f64,
    /// `1/a` \[1/(kg m²)\] (zero for a frozen particle).
    pub inv_rolling: f64,
}

impl BodyInertia {
    /// From the sphere's inverse moment of inertia, inverse mass and radius.
    #[inline]
    pub fn of(inv_inertia: f64, inv_mass: f64, radius: f64) -> Self {
        let moment = 1.0 / inv_inertia;
        Self {
            moment,
            inv_rolling: 1.0 / rolling::wall_rolling_inertia(moment, 1.0 / inv_mass, radius),
        }
    }
}

/// Forces and torques of one contact (or of a group, per lane).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairForce<T: Lane = f64> {
    /// Force on `i` (`j` receives `−force_i`).
    pub force_i: V3<T>,
    /// Torque on `i`.
    pub torque_i: V3<T>,
    /// Torque on `j`.
    pub torque_j: V3<T>,
}

impl<T: Lane> PairForce<T> {
    /// The forces and torques of a contact without couples, from its normal
    /// force and its tangential force `F_t` on `j`: `F_i = −F_n n − F_t`,
    /// torques `ℓ_i n × F_i` on `i` and `ℓ_j n × F_i` on `j` (none for a wall).
    #[inline(always)]
    pub fn plain(k: &Kinematics<T>, normal: &NormalForce<T>, f_t: V3<T>) -> Self {
        let force_i = k.n.scale(-normal.total) - f_t;
        let arm = k.n.cross(force_i);
        PairForce {
            force_i,
            torque_i: arm.scale(k.lever_i),
            torque_j: V3::select(k.lever_j.is_finite(), arm.scale(k.lever_j), V3::zero()),
        }
    }
}

impl ContactLaw {
    /// History values per contact this law needs.
    ///
    /// Layout: the tangential model's values first, then the rolling
    /// model's (e.g. the EPSD spring torque `M^k`). Normal, spinning and
    /// stochastic models keep none.
    pub fn history_len(&self) -> usize {
        self.tangential.history_len() + self.rolling.map_or(0, |r| r.history_len())
    }

    /// Turn a contact's record (its [`Self::history_len`] values) into what
    /// it holds for the same contact with `i` and `j` exchanged, slot by
    /// slot ([`model::Model::swap_history`]).
    pub fn swap_history(&self, history: &mut [f64]) {
        let t_len = self.tangential.history_len();
        self.tangential.swap_history(&mut history[..t_len]);
        if let Some(r) = &self.rolling {
            r.swap_history(&mut history[t_len..]);
        }
    }

    /// Whether the law reads the effective radius `R*` of a contact: Hertz,
    /// a Mindlin spring, and rolling resistance do
    /// ([`model::Model::reads_r_eff`]).
    pub fn reads_r_eff(&self) -> bool {
        self.normal.reads_r_eff()
            || self.tangential.reads_r_eff()
            || self.rolling.is_some_and(|r| r.reads_r_eff())
            || self.spinning.is_some_and(|s| s.reads_r_eff())
    }

    /// Whether the law has a couple (rolling or spinning) that needs the
    /// contact's [`ContactInertia`].
    #[inline]
    pub fn needs_inertia(&self) -> bool {
        self.rolling.is_some() || self.spinning.is_some()
    }

    /// What the lane kernels are specialised on ([`Self::evaluate_as`]):
    /// the normal and tangential kinds ([`Kind`]) and whether the law has
    /// couples.
    #[inline]
    pub fn kinds(&self) -> (u8, u8, bool) {
        (
            self.normal.kind(),
            self.tangential.kind(),
            self.needs_inertia(),
        )
    }

    /// Evaluate a contact from its kinematics; `history` is the contact's record.
    ///
    /// The normal force acts along `−n` on `i`; the tangential force `F_t` on
    /// `j` is subtracted; torques are `ℓ_i n × F_i` on `i` and `ℓ_j n × F_i`
    /// on `j` (the lever arm of `j` points along `−n`, and `j` feels `−F_i`).
    ///
    /// # Panics
    ///
    /// If the law has rolling resistance or spinning friction, which need the
    /// bodies' inertia: use [`ContactLaw::evaluate_with`].
    #[inline(always)]
    pub fn evaluate(&self, k: &Kinematics, dt: f64, history: &mut [f64]) -> PairForce {
        self.evaluate_with(k, dt, history, || {
            panic!("ContactLaw::evaluate: rolling/spinning couples need evaluate_with")
        })
    }

    /// Whether the law is normal + tangential only (no couple, no stochastic
    /// friction): then [`Self::evaluate_plain`] gives the same bits as the
    /// general paths with less code in the hot loop.
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.stochastic.is_none() && !self.needs_inertia()
    }

    /// Evaluate a contact of a law without couples or stochastic friction
    /// ([`Self::is_plain`]): the normal and tangential forces and the torques
    /// `ℓ_i n × F_i`, `ℓ_j n × F_i`, exactly as [`Self::evaluate_with`] computes them.
    #[inline(always)]
    pub fn evaluate_plain<T: Lane>(
        &self,
        k: &Kinematics<T>,
        dt: f64,
        history: &mut [T],
    ) -> PairForce<T> {
        self.evaluate_as::<T, { Kind::ANY }, { Kind::ANY }, false>(k, dt, history, || {
            unreachable!("a plain law has no couples")
        })
    }

    /// Evaluate a contact, or a group of contacts (one per lane), with the
    /// rolling and spinning couples: the one kernel of every law but
    /// stochastic friction.
    ///
    /// As [`ContactLaw::evaluate`], plus the pure couple
    /// `M = M_r + M_s` (rolling resistance, then spinning friction) added as
    /// `+M` to the torque on `i` and `−M` to the torque on `j`, so the total
    /// angular momentum is untouched. `inertia` is called only when the law
    /// has a couple (walls: [`ContactInertia::wall`]). `history` holds the
    /// tangential values, then the rolling spring torque.
    ///
    /// The rolling law gets the normal model's secant stiffness and total
    /// force `F_n` (physics.md); the spinning law gets `F_n`, the normal
    /// model's `γ_n`, and `R_disk` from the sphere–sphere intersection
    /// circle, or for a wall the sphere–plane circle `a² = 2Rδ − δ²` (also
    /// used for cylinders, where the cut is not exactly a circle). A group
    /// holds contacts of one kind: all pairs, or all walls.
    #[inline(always)]
    pub fn evaluate_with<T: Lane>(
        &self,
        k: &Kinematics<T>,
        dt: f64,
        history: &mut [T],
        inertia: impl FnOnce() -> ContactInertia<T>,
    ) -> PairForce<T> {
        self.evaluate_as::<T, { Kind::ANY }, { Kind::ANY }, true>(k, dt, history, inertia)
    }

    /// [`Self::evaluate_with`] of a law whose normal and tangential kinds
    /// (`NORMAL`, `TANGENTIAL`, see [`Kind`]) and whether it has couples
    /// (`COUPLES`) are known where the caller is compiled, so that the code
    /// of every other law drops out: the same kernel, specialised.
    ///
    /// # Panics
    /// If the law is not of those kinds. A law with couples must have
    /// `COUPLES` (without, its couples are left out).
    #[inline(always)]
    pub fn evaluate_as<T: Lane, const NORMAL: u8, const TANGENTIAL: u8, const COUPLES: bool>(
        &self,
        k: &Kinematics<T>,
        dt: f64,
        history: &mut [T],
        inertia: impl FnOnce() -> ContactInertia<T>,
    ) -> PairForce<T> {
        let normal = self.normal.force_as::<T, NORMAL>(k);
        let t_len = TangentialModel::history_len_of(TANGENTIAL)
            .unwrap_or_else(|| self.tangential.history_len());
        // The couples first: they read neither the tangential force nor
        // its history, and done before it they keep fewer values alive at
        // once (a group's values fill the registers); the same operations,
        // so the same bits.
        debug_assert!(
            COUPLES || !self.needs_inertia(),
            "a law with couples taken as one without"
        );
        // A group holds pairs only or walls only (a wall's `ℓ_j` is infinite).
        let wall = !T::any(k.lever_j.is_finite());
        let couple = if COUPLES && self.needs_inertia() {
            Some(self.couple(k, wall, &normal, dt, &mut history[t_len..], inertia()))
        } else {
            None
        };
        let f_t = self
            .tangential
            .force_as::<T, TANGENTIAL>(k, &normal, dt, &mut history[..t_len]);
        let mut pf = PairForce::plain(k, &normal, f_t);
        if let Some(couple) = couple {
            pf.torque_i = pf.torque_i + couple;
            if !wall {
                pf.torque_j = pf.torque_j - couple;
            }
        }
        pf
    }

    /// The pure couple `M = M_r + M_s` on `i` of contacts (rolling
    /// resistance, then spinning friction; see [`Self::evaluate_with`]),
    /// with the rolling spring torque in `history`; `wall` when the
    /// contacts are with walls.
    #[inline(always)]
    fn couple<T: Lane>(
        &self,
        k: &Kinematics<T>,
        wall: bool,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
        inertia: ContactInertia<T>,
    ) -> V3<T> {
        let mut couple = V3::zero();
        if let Some(rp) = &self.rolling {
            let input = rolling::RollingInput {
                n: k.n,
                omega_rel: k.omega_rel,
                k_n: normal.stiffness,
                r_eff: k.r_eff,
                normal_force: normal.total,
                inertia_r: inertia.rolling,
                dt,
            };
            couple = couple + rp.couple(&input, history);
        }
        if let Some(sp) = &self.spinning {
            let half_delta = T::splat(0.5) * k.delta;
            let disk_radius = if wall {
                spinning::disk_radius_wall(k.lever_i + half_delta, k.delta)
            } else {
                spinning::disk_radius_pair(k.lever_i + half_delta, k.lever_j + half_delta, k.r)
            };
            let input = spinning::SpinningInput {
                n: k.n,
                omega_rel: k.omega_rel,
                normal_force: normal.total,
                disk_radius,
                min_inertia: inertia.min,
                gamma_n: normal.damping,
                dt,
            };
            couple = couple + sp.couple(&input);
        }
        couple
    }

    /// Evaluate a particle–particle contact: [`Self::evaluate_with`] plus, when
    /// the law has stochastic friction, its force and torques
    /// ([`stochastic::stochastic_pair`]).
    ///
    /// The load is `w = |F_n^el|`, the conservative normal force; the noise
    /// is the six normal variates of `ctx.noise` for `(step, id_i, id_j)`,
    /// which depend on the unordered pair only, so the bits do not depend on
    /// who evaluates the pair or in which order. A frozen body counts as
    /// infinitely heavy (its inverse mass and inertia are 0).
    #[inline]
    pub fn evaluate_pair(
        &self,
        k: &Kinematics,
        dt: f64,
        history: &mut [f64],
        ctx: &PairContext,
        inertia: impl FnOnce() -> ContactInertia,
    ) -> PairForce {
        let mut pf = self.evaluate_with(k, dt, history, inertia);
        if let Some(s) = &self.stochastic {
            let w = self.normal.force(k).elastic.abs();
            let input = StochasticPairInput {
                n: k.n.into(),
                v_i: ctx.bi.v,
                v_j: ctx.bj.v,
                omega_i: ctx.bi.omega,
                omega_j: ctx.bj.omega,
                r_i: ctx.bi.radius,
                r_j: ctx.bj.radius,
                m_i: 1.0 / ctx.bi.inv_mass,
                m_j: 1.0 / ctx.bj.inv_mass,
                inertia_i: 1.0 / ctx.inv_inertia_i,
                inertia_j: 1.0 / ctx.inv_inertia_j,
                w,
            };
            let normals = if s.kt() > 0.0 {
                ctx.noise.pair_normals(ctx.step, ctx.id_i, ctx.id_j)
            } else {
                [0.0; 6]
            };
            let out = stochastic_pair(s, dt, &input, &normals);
            pf.force_i = pf.force_i + out.force_i.into();
            pf.torque_i = pf.torque_i + out.torque_i.into();
            pf.torque_j = pf.torque_j + out.torque_j.into();
        }
        pf
    }
}

#[cfg(test)]
mod tests {
    use super::rolling::Epsd;
    use super::tangential::{SpringSlider, TangentialStiffness};
    use super::*;

    /// A record holds the tangential spring elongation, then the rolling
    /// spring torque: vectors of `j` relative to `i`, which both change
    /// sign when `i` and `j` are exchanged.
    #[test]
    fn swapping_negates_both_springs() {
        let law = ContactLaw {
            normal: normal::Hooke {
                stiffness: 1.0,
                damping: normal::HookeDamping::Rate { rate: 0.0 },
                no_tension: false,
            }
            .into(),
            tangential: SpringSlider {
                friction: 0.5,
                stiffness: TangentialStiffness::Linear { ratio: 1.0 },
                damping_ratio: 0.0,
            }
            .into(),
            stochastic: None,
            rolling: Some(Epsd::new(0.1, 0.3).into()),
            spinning: None,
        };
        let mut h = [1.0, -2.0, 3.0, 0.5, 0.0, -0.25];
        law.swap_history(&mut h);
        assert_eq!(h, [-1.0, 2.0, -3.0, -0.5, -0.0, 0.25]);
        let plain = ContactLaw {
            tangential: TangentialModel::None,
            ..law
        };
        let mut h = [0.5, 0.0, -0.25];
        plain.swap_history(&mut h);
        assert_eq!(h, [-0.5, -0.0, 0.25]);
    }
}
