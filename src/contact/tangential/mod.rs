//! Tangential force models: none, DEMLab dashpot-slider, Cundall–Strack
//! spring-slider, one file each, listed in the registry [`TangentialModel`].
//!
//! The force computed here is the force on `j`: it opposes `j`'s sliding
//! relative to `i` (`v_t` is `j`'s contact-point velocity relative to `i`).
//! `i` receives the opposite force. A contact's history record starts with
//! the tangential model's values.

pub mod dashpot_slider;
pub mod spring_slider;

pub use dashpot_slider::DashpotSlider;
pub use spring_slider::{SpringSlider, TangentialStiffness};

use super::kinematics::Kinematics;
use super::model::{kind_of, registry, Key, Model, PairMaterials};
use super::normal::NormalForce;
use super::{kind_mismatch, Kind};
use crate::error::Result;
use crate::simd::lane::{Lane, V3};

/// The kernel of a tangential model, besides what every [`Model`] provides.
pub trait TangentialLaw: Model {
    /// The tangential force on `j` of a contact (or of a group, one per
    /// lane), from the kinematics and the normal model's output; `history`
    /// holds the model's [`Model::HISTORY_LEN`] values and is updated.
    fn force<T: Lane>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T>;

    /// The Coulomb coefficient `μ` that bounds `|F_t| ≤ μ|F_n|`.
    fn friction(&self) -> f64;
}

/// Model "none": no tangential force (the unit variant
/// [`TangentialModel::None`] dispatches to it).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Frictionless;

impl Model for Frictionless {
    type Spec = ();
    const KIND: u8 = Kind::NONE;

    fn from_spec(_: &(), _: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Frictionless)
    }
}

impl TangentialLaw for Frictionless {
    #[inline(always)]
    fn force<T: Lane>(&self, _: &Kinematics<T>, _: &NormalForce<T>, _: f64, _: &mut [T]) -> V3<T> {
        V3::zero()
    }

    fn friction(&self) -> f64 {
        0.0
    }
}

registry! {
    /// A tangential model with its run-constant parameters for one material pair.
    pub enum TangentialModel;
    /// Tangential force models, chosen by `model = "..."` (default none).
    pub enum TangentialSpec or
        /// No tangential force.
        None;
    unit
        /// No tangential force ([`Frictionless`]).
        None => Frictionless;
    each: each_tangential, $;
    /// DEMLab dashpot-slider, no history ([`dashpot_slider`]).
    DashpotSlider(DashpotSlider) = "dashpot_slider",
    /// Cundall–Strack spring-slider with history ([`spring_slider`]).
    SpringSlider(SpringSlider) = "spring_slider",
}

impl TangentialModel {
    /// The Coulomb coefficient `μ` ([`TangentialLaw::friction`]; 0 for none).
    pub fn friction(&self) -> f64 {
        each_tangential!(self, m => m.friction())
    }

    /// Tangential force on `j` (per lane). `history` is this model's slice
    /// (length [`Self::history_len`]).
    #[inline(always)]
    pub fn force<T: Lane>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T> {
        self.force_as::<T, { Kind::ANY }>(k, normal, dt, history)
    }

    /// [`Self::force`] of a model whose kind `KIND` is known where the
    /// caller is compiled ([`Kind::ANY`]: not known).
    ///
    /// # Panics
    /// If the model is not of kind `KIND`.
    #[inline(always)]
    pub fn force_as<T: Lane, const KIND: u8>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T> {
        each_tangential!(self, m => {
            if KIND == Kind::ANY || KIND == kind_of(m) {
                m.force(k, normal, dt, history)
            } else {
                kind_mismatch()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn kin(n: DVec3, v_t: DVec3) -> Kinematics {
        Kinematics {
            n: n.into(),
            r: 1.0,
            delta: 0.01,
            delta_dot: 0.0,
            lever_i: 0.5,
            lever_j: 0.5,
            v_t: v_t.into(),
            omega_rel: DVec3::ZERO.into(),
            spin_n: 0.0,
            r_eff: 0.25,
            m_eff: 1.0,
        }
    }

    fn normal(total: f64) -> NormalForce {
        NormalForce {
            total,
            elastic: total,
            stiffness: 100.0,
            damping: 2.0,
        }
    }

    #[test]
    fn dashpot_slider_is_viscous_below_and_coulomb_above_the_limit() {
        let m = TangentialModel::DashpotSlider(DashpotSlider {
            friction: 0.5,
            damping: 3.0,
        });
        let slow: DVec3 = m
            .force(
                &kin(DVec3::Z, DVec3::new(0.1, 0.0, 0.0)),
                &normal(10.0),
                1e-3,
                &mut [],
            )
            .into();
        assert!((slow - DVec3::new(-0.3, 0.0, 0.0)).length() < 1e-15);
        let fast: DVec3 = m
            .force(
                &kin(DVec3::Z, DVec3::new(0.0, 10.0, 0.0)),
                &normal(10.0),
                1e-3,
                &mut [],
            )
            .into();
        assert!((fast - DVec3::new(0.0, -5.0, 0.0)).length() < 1e-14);
    }

    #[test]
    fn spring_slider_accumulates_then_slips_at_coulomb_limit() {
        let m = TangentialModel::SpringSlider(SpringSlider {
            friction: 0.5,
            stiffness: TangentialStiffness::Linear { ratio: 1.0 },
            damping_ratio: 0.0,
        });
        let mut h = [0.0; 3];
        let k = kin(DVec3::Z, DVec3::new(1.0, 0.0, 0.0));
        let f: DVec3 = m.force(&k, &normal(10.0), 0.01, &mut h).into();
        // ξ = 0.01, F = −100 · 0.01 = −1 (below μF_n = 5).
        assert!((f.x + 1.0).abs() < 1e-14 && h[0] == 0.01);
        for _ in 0..10 {
            m.force(&k, &normal(10.0), 0.01, &mut h);
        }
        let f: DVec3 = m.force(&k, &normal(10.0), 0.01, &mut h).into();
        assert!((f.length() - 5.0).abs() < 1e-12, "slipping force {f}");
        assert!(
            (h[0] - 0.05).abs() < 1e-14,
            "spring reset to the slip length"
        );
    }

    #[test]
    fn history_lengths_follow_the_kinds() {
        assert_eq!(
            TangentialModel::history_len_of(Kind::SPRING_SLIDER),
            Some(3)
        );
        assert_eq!(
            TangentialModel::history_len_of(Kind::DASHPOT_SLIDER),
            Some(0)
        );
        assert_eq!(TangentialModel::history_len_of(Kind::NONE), Some(0));
        assert_eq!(TangentialModel::history_len_of(Kind::ANY), None);
        assert_eq!(TangentialModel::None.history_len(), 0);
    }
}
