//! The contact law: one slot per sub-model kind, composed per material pair.
//!
//! Following the layout of LAMMPS' `GRANULAR` package, a [`ContactLaw`] holds
//! one normal and one tangential sub-model (each an `enum` chosen by the
//! config's `model = "..."`, dispatched statically by `match`). Kinematics
//! are computed once per pair ([`Kinematics`]); sub-models are pure functions
//! of run-constant parameters, the kinematics, the normal model's output and
//! their own slice of the contact's history.
//!
//! Every pair is evaluated in its canonical orientation (`i` = lower global
//! id) so that the two particles of a contact — on the same rank or on two —
//! compute the same bits; `i` receives [`PairForce::force_i`] and `j` its
//! exact negation.

pub mod kinematics;
pub mod normal;
pub mod rolling;
pub mod spinning;
pub mod stochastic;
pub mod tangential;

pub use kinematics::{Body, Kinematics};
pub use normal::{NormalForce, NormalModel};
pub use stochastic::StochasticFriction;
pub use tangential::TangentialModel;

use crate::rng::PairNoise;
use glam::DVec3;
use stochastic::{stochastic_pair, StochasticPairInput};

/// The composed contact law of one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactLaw {
    /// Normal force model.
    pub normal: NormalModel,
    /// Tangential force model.
    pub tangential: TangentialModel,
    /// Markovian stochastic friction of particle–particle contacts, if any
    /// (then `tangential` is `None`: the config refuses both).
    pub stochastic: Option<StochasticFriction>,
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

/// Forces and torques of one contact.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairForce {
    /// Force on `i` (`j` receives `−force_i`).
    pub force_i: DVec3,
    /// Torque on `i`.
    pub torque_i: DVec3,
    /// Torque on `j`.
    pub torque_j: DVec3,
}

impl ContactLaw {
    /// History values per contact this law needs.
    pub fn history_len(&self) -> usize {
        self.tangential.history_len()
    }

    /// Evaluate a contact from its kinematics; `history` is the contact's record.
    ///
    /// The normal force acts along `−n` on `i`; the tangential force `F_t` on
    /// `j` is subtracted; torques are `ℓ_i n × F_i` on `i` and `ℓ_j n × F_i`
    /// on `j` (the lever arm of `j` points along `−n`, and `j` feels `−F_i`).
    #[inline]
    pub fn evaluate(&self, k: &Kinematics, dt: f64, history: &mut [f64]) -> PairForce {
        let normal = self.normal.force(k);
        let f_t = self.tangential.force(k, &normal, dt, history);
        let force_i = -normal.total * k.n - f_t;
        let arm = k.n.cross(force_i);
        PairForce {
            force_i,
            torque_i: k.lever_i * arm,
            torque_j: if k.lever_j.is_finite() {
                k.lever_j * arm
            } else {
                DVec3::ZERO
            },
        }
    }

    /// Evaluate a particle–particle contact: [`Self::evaluate`] plus, when
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
    ) -> PairForce {
        let mut pf = self.evaluate(k, dt, history);
        if let Some(s) = &self.stochastic {
            let w = self.normal.force(k).elastic.abs();
            let input = StochasticPairInput {
                n: k.n,
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
            let normals = if s.kt > 0.0 {
                ctx.noise.pair_normals(ctx.step, ctx.id_i, ctx.id_j)
            } else {
                [0.0; 6]
            };
            let out = stochastic_pair(&s.law, s.kt, dt, &input, &normals);
            pf.force_i += out.force_i;
            pf.torque_i += out.torque_i;
            pf.torque_j += out.torque_j;
        }
        pf
    }
}
