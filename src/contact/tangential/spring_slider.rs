//! The Cundall–Strack spring-slider tangential force, with history.

use super::TangentialLaw;
use crate::contact::kinematics::{rotate_about_normal, rotate_into_plane, Kinematics};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::contact::normal::NormalForce;
use crate::contact::Kind;
use crate::error::Result;
use crate::simd::lane::{Lane, V3};
use serde::Deserialize;

/// Cundall & Strack (Géotechnique 29 (1979) 47) spring-slider with the
/// history `ξ` (tangential spring elongation, 3 values). Each step the
/// stored `ξ` is rotated into the current tangent plane and rescaled to
/// its old length (Luding, Granular Matter 10 (2008) 235, eq. 17), then
/// `ξ += v_t Δt`, `F_t = −k_t ξ − γ_t v_t` (on `j`); if `|F_t| > μ|F_n|`
/// the force is scaled to `μ|F_n|` and `ξ = −(F_t + γ_t v_t)/k_t` (slip).
/// Beyond physics.md's recipe, `ξ` is also turned about `n` by the pair's
/// mean spin `½(ω_i + ω_j)·n Δt`, so that it co-rotates when the contact
/// twists. `k_t` is linear in the normal model's secant stiffness or
/// Mindlin's ([`TangentialStiffness`]); `γ_t = damping_ratio · γ_n`.
///
/// `ξ` follows `v_t`, `j`'s motion relative to `i`: with `i` and `j`
/// exchanged it is `−ξ` ([`Model::swap_history`]).
///
/// ```
/// use gravel::contact::normal::NormalForce;
/// use gravel::contact::tangential::{SpringSlider, TangentialLaw, TangentialStiffness};
/// use gravel::contact::Kinematics;
/// use glam::DVec3;
///
/// let m = SpringSlider {
///     friction: 0.5,
///     stiffness: TangentialStiffness::Linear { ratio: 1.0 },
///     damping_ratio: 0.0,
/// };
/// let normal = NormalForce { total: 10.0, elastic: 10.0, stiffness: 100.0, damping: 0.0 };
/// let k = Kinematics { n: DVec3::Z.into(), v_t: DVec3::X.into(), ..Kinematics::default() };
/// let mut xi = [0.0; 3];
/// // ξ = v_t Δt = 0.01 m, F_t = −k_t ξ = −100 · 0.01 = −1 N (below μ F_n = 5 N).
/// let f = m.force(&k, &normal, 0.01, &mut xi);
/// assert_eq!((DVec3::from(f), xi), (DVec3::new(-1.0, 0.0, 0.0), [0.01, 0.0, 0.0]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringSlider {
    /// Coulomb coefficient `μ`.
    pub friction: f64,
    /// Stiffness law.
    pub stiffness: TangentialStiffness,
    /// `γ_t = damping_ratio · γ_n`.
    pub damping_ratio: f64,
}

/// How the spring-slider's tangential stiffness is obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TangentialStiffness {
    /// `k_t = ratio · k_n` with the normal model's (secant) stiffness.
    Linear {
        /// `k_t / k_n`.
        ratio: f64,
    },
    /// Mindlin: `k_t = 8 G* sqrt(R* δ)`, with
    /// `1/G* = 2(2 − ν_a)(1 + ν_a)/E_a + 2(2 − ν_b)(1 + ν_b)/E_b`.
    Mindlin {
        /// Effective shear modulus `G*`.
        g_star: f64,
    },
}

/// The default `k_t / k_n` of a spring-slider under a Hooke normal model,
/// 2/7: LAMMPS `pair gran/hooke/history` with `Kt = NULL` ("Kt is set to
/// 2/7 of Kn"), the ratio at which normal and tangential oscillations of a
/// solid sphere share one period. Under Hertz the default is Mindlin's
/// stiffness (LAMMPS `tangential mindlin` with `NULL`, LIGGGHTS
/// `tangential_model history` with `model hertz`). Written in a config as
/// `stiffness_ratio = 0.2857142857142857`, the same `f64`.
pub const HOOKE_STIFFNESS_RATIO: f64 = 2.0 / 7.0;

/// `tangential = { model = "spring_slider", … }`. Without `stiffness_ratio`
/// or `mindlin`, the stiffness follows the normal model: Mindlin under
/// Hertz, [`HOOKE_STIFFNESS_RATIO`] under Hooke (resolved with the normal
/// model, in the config's contact laws).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Coulomb friction coefficient μ.
    pub friction: f64,
    /// Linear tangential stiffness k_t = ratio · k_n.
    pub stiffness_ratio: Option<f64>,
    /// Mindlin stiffness k_t = 8 G* sqrt(R* δ) (needs E and ν).
    #[serde(default)]
    pub mindlin: bool,
    /// Tangential damping γ_t = ratio · γ_n (default 0).
    #[serde(default)]
    pub damping_ratio: f64,
}

impl Model for SpringSlider {
    fn describe(&self) -> String {
        let stiffness = match self.stiffness {
            TangentialStiffness::Linear { ratio } => {
                format!("stiffness_ratio {}", crate::math::figures::sig(ratio, 4))
            }
            TangentialStiffness::Mindlin { .. } => "mindlin".to_string(),
        };
        let damping = if self.damping_ratio > 0.0 {
            format!(
                ", damping_ratio {}",
                crate::math::figures::sig(self.damping_ratio, 4)
            )
        } else {
            String::new()
        };
        format!(
            "friction {}, {stiffness}{damping}",
            crate::math::figures::sig(self.friction, 4)
        )
    }

    type Spec = Spec;
    const KIND: u8 = Kind::SPRING_SLIDER;
    const HISTORY_LEN: usize = 3;

    fn from_spec(s: &Spec, key: &Key, materials: &PairMaterials) -> Result<Self> {
        let friction = key.field("friction").non_negative(s.friction)?;
        let damping_ratio = key.field("damping_ratio").non_negative(s.damping_ratio)?;
        let stiffness = match (s.stiffness_ratio, s.mindlin) {
            (Some(_), true) => {
                return Err(key.err("give either `stiffness_ratio` or `mindlin = true`, not both"))
            }
            (Some(r), false) => TangentialStiffness::Linear {
                ratio: key.field("stiffness_ratio").positive(r)?,
            },
            (None, true) => {
                let [(ea, na), (eb, nb)] = materials.elastic(key)?;
                TangentialStiffness::Mindlin {
                    g_star: 1.0
                        / (2.0 * (2.0 - na) * (1.0 + na) / ea + 2.0 * (2.0 - nb) * (1.0 + nb) / eb),
                }
            }
            (None, false) => return Err(key.err(
                "model \"spring_slider\" needs `stiffness_ratio = k_t/k_n` or `mindlin = true` \
                     (the default comes from a hooke or hertz normal model)",
            )),
        };
        Ok(SpringSlider {
            friction,
            stiffness,
            damping_ratio,
        })
    }

    fn reads_r_eff(&self) -> bool {
        matches!(self.stiffness, TangentialStiffness::Mindlin { .. })
    }

    fn needs_stiffness(&self) -> Option<&'static str> {
        Some(match self.stiffness {
            TangentialStiffness::Linear { .. } => {
                "`stiffness_ratio` needs a normal model with a stiffness"
            }
            TangentialStiffness::Mindlin { .. } => {
                "model \"spring_slider\" needs an overlap-based normal model"
            }
        })
    }

    /// `ξ` is `j`'s displacement relative to `i`: it changes sign.
    fn swap_history(history: &mut [f64]) {
        for h in &mut history[..3] {
            *h = -*h;
        }
    }
}

impl TangentialLaw for SpringSlider {
    #[inline(always)]
    fn force<T: Lane>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T> {
        let k_t = match self.stiffness {
            TangentialStiffness::Linear { ratio } => T::splat(ratio) * normal.stiffness,
            TangentialStiffness::Mindlin { g_star } => {
                T::splat(8.0 * g_star) * (k.r_eff * k.delta).sqrt()
            }
        };
        let gamma_t = T::splat(self.damping_ratio) * normal.damping;
        let old = V3::new(history[0], history[1], history[2]);
        let dt = T::splat(dt);
        let turned = rotate_about_normal(rotate_into_plane(old, k.n), k.n, k.spin_n * dt);
        let xi = turned + k.v_t.scale(dt);
        let f = xi.scale(-k_t) - k.v_t.scale(gamma_t);
        let limit = T::splat(self.friction) * normal.total.abs();
        let f2 = f.length_squared();
        let slides = f2.gt(limit * limit);
        // The root and the two divisions only where a lane slides (most
        // contacts of a settled bed stick): the same bits either way.
        let (xi, f) = if T::any(slides) {
            let capped = f.scale(limit / f2.sqrt());
            // One division for the three components.
            let back = (-(capped + k.v_t.scale(gamma_t))).scale(T::splat(1.0) / k_t);
            let slid = V3::select(k_t.gt(T::splat(0.0)), back, V3::zero());
            (V3::select(slides, slid, xi), V3::select(slides, capped, f))
        } else {
            (xi, f)
        };
        history[0] = xi.x;
        history[1] = xi.y;
        history[2] = xi.z;
        f
    }

    fn friction(&self) -> f64 {
        self.friction
    }
}
