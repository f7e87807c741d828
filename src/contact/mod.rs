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
pub use tangential::TangentialModel;

use glam::DVec3;

/// The composed contact law of one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactLaw {
    /// Normal force model.
    pub normal: NormalModel,
    /// Tangential force model.
    pub tangential: TangentialModel,
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
    #[inline(always)]
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
}
