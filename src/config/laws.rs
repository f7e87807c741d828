//! `[contact]` and `[[contact.pair]]`: the sub-models of each material
//! pair, validated into a [`LawTable`](super::LawTable).

use super::context::Ctx;
use super::schema::*;
use super::setup::{elastic, LawTable, Material};
use crate::contact::normal::{damping_ratio_from_restitution, HookeDamping};
use crate::contact::stochastic::FrictionLaw;
use crate::contact::tangential::TangentialStiffness;
use crate::contact::{
    ContactLaw, NormalModel, RollingParams, SpinningParams, StochasticFriction, TangentialModel,
};
use crate::error::Result;

/// One sub-model slot of a material pair: the `[[contact.pair]]` override's
/// spec if it sets this slot, else `[contact]`'s, with the key that messages name.
pub(super) fn slot<'a, T>(
    over: Option<(usize, &'a PairOverride)>,
    name: &str,
    pick: impl Fn(&'a PairOverride) -> Option<&'a T>,
    default: &'a T,
) -> (String, &'a T) {
    match over.and_then(|(k, p)| pick(p).map(|s| (k, s))) {
        Some((k, s)) => (format!("contact.pair[{k}].{name}"), s),
        None => (format!("contact.{name}"), default),
    }
}

pub(super) fn law_table(cx: &Ctx, c: &ContactConfig, mats: &[Material]) -> Result<LawTable> {
    let n = mats.len();
    let mut laws = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            let over = c.pair.iter().enumerate().find(|(_, p)| {
                (p.materials[0] == mats[a].name && p.materials[1] == mats[b].name)
                    || (p.materials[0] == mats[b].name && p.materials[1] == mats[a].name)
            });
            let (nkey, normal) = slot(over, "normal", |p| p.normal.as_ref(), &c.normal);
            let (tkey, tangential) =
                slot(over, "tangential", |p| p.tangential.as_ref(), &c.tangential);
            let (stkey, stochastic) =
                slot(over, "stochastic", |p| p.stochastic.as_ref(), &c.stochastic);
            let (rkey, rolling) = slot(over, "rolling", |p| p.rolling.as_ref(), &c.rolling);
            let (skey, spinning) = slot(over, "spinning", |p| p.spinning.as_ref(), &c.spinning);
            let normal = normal_model(cx, &nkey, normal, &mats[a], &mats[b])?;
            let tangential = tangential_model(cx, &tkey, tangential, &normal, &mats[a], &mats[b])?;
            let stochastic = stochastic_model(cx, &stkey, stochastic)?;
            if stochastic.is_some() && tangential != TangentialModel::None {
                return Err(cx.err(format!(
                    "{stkey}: stochastic friction replaces the tangential model, but {tkey} is also set for materials `{}` and `{}`; \
                     set tangential = {{ model = \"none\" }} or stochastic = {{ model = \"none\" }} (in a [[contact.pair]] for this pair)",
                    mats[a].name, mats[b].name
                )));
            }
            let rolling = rolling_model(cx, &rkey, rolling, &normal)?;
            let spinning = spinning_model(cx, &skey, spinning, &normal)?;
            laws.push(ContactLaw {
                normal,
                tangential,
                stochastic,
                rolling,
                spinning,
            });
        }
    }
    for (k, p) in c.pair.iter().enumerate() {
        for name in &p.materials {
            cx.material(&format!("contact.pair[{k}].materials"), name, mats)?;
        }
    }
    let history_len = laws.iter().map(|l| l.history_len()).max().unwrap_or(0);
    Ok(LawTable {
        n,
        laws,
        history_len,
    })
}

pub(super) fn stochastic_model(
    cx: &Ctx,
    key: &str,
    s: &StochasticSpec,
) -> Result<Option<StochasticFriction>> {
    let kt = |v: f64| cx.non_negative(&format!("{key}.kT"), v);
    let gamma = |v: f64| cx.non_negative(&format!("{key}.gamma"), v);
    let kappa = |v: f64| cx.non_negative(&format!("{key}.kappa"), v);
    Ok(match *s {
        StochasticSpec::None => None,
        StochasticSpec::Linear { gamma: g, kt: t } => Some(StochasticFriction {
            law: FrictionLaw::Linear { gamma: gamma(g)? },
            kt: kt(t)?,
        }),
        StochasticSpec::Coulomb { kappa: k, kt: t } => Some(StochasticFriction {
            law: FrictionLaw::Coulomb { kappa: kappa(k)? },
            kt: kt(t)?,
        }),
        StochasticSpec::CoulombNewton {
            gamma: g,
            kappa: k,
            kt: t,
        } => Some(StochasticFriction {
            law: FrictionLaw::CoulombNewton {
                gamma: gamma(g)?,
                kappa: kappa(k)?,
            },
            kt: kt(t)?,
        }),
    })
}

pub(super) fn restitution(cx: &Ctx, key: &str, e: f64) -> Result<f64> {
    if e > 0.0 && e <= 1.0 {
        Ok(damping_ratio_from_restitution(e))
    } else {
        Err(cx.err(format!("{key}.restitution: must lie in (0, 1], got {e}")))
    }
}

pub(super) fn normal_model(
    cx: &Ctx,
    key: &str,
    s: &NormalSpec,
    a: &Material,
    b: &Material,
) -> Result<NormalModel> {
    Ok(match *s {
        NormalSpec::Hooke {
            stiffness,
            restitution: e,
            damping_rate,
            no_tension,
        } => {
            let stiffness = cx.positive(&format!("{key}.stiffness"), stiffness)?;
            let damping = match (e, damping_rate) {
                (Some(e), None) => HookeDamping::Restitution {
                    beta: restitution(cx, key, e)?,
                },
                (None, Some(r)) => HookeDamping::Rate {
                    rate: cx.non_negative(&format!("{key}.damping_rate"), r)?,
                },
                _ => return Err(cx.err(format!("{key}: give exactly one of `restitution` or `damping_rate` for model \"hooke\""))),
            };
            NormalModel::Hooke {
                stiffness,
                damping,
                no_tension,
            }
        }
        NormalSpec::Hertz {
            restitution: e,
            no_tension,
        } => {
            let (ea, na) = elastic(cx, key, a)?;
            let (eb, nb) = elastic(cx, key, b)?;
            NormalModel::Hertz {
                e_star: 1.0 / ((1.0 - na * na) / ea + (1.0 - nb * nb) / eb),
                beta: restitution(cx, key, e)?,
                no_tension,
            }
        }
        NormalSpec::Wca { epsilon, sigma } => NormalModel::Wca {
            epsilon: cx.positive(&format!("{key}.epsilon"), epsilon)?,
            sigma: cx.positive(&format!("{key}.sigma"), sigma)?,
        },
    })
}

pub(super) fn tangential_model(
    cx: &Ctx,
    key: &str,
    s: &TangentialSpec,
    normal: &NormalModel,
    a: &Material,
    b: &Material,
) -> Result<TangentialModel> {
    Ok(match *s {
        TangentialSpec::None => TangentialModel::None,
        TangentialSpec::DashpotSlider { friction, damping } => TangentialModel::DashpotSlider {
            friction: cx.non_negative(&format!("{key}.friction"), friction)?,
            damping: cx.non_negative(&format!("{key}.damping"), damping)?,
        },
        TangentialSpec::SpringSlider {
            friction,
            stiffness_ratio,
            mindlin,
            damping_ratio,
        } => {
            let friction = cx.non_negative(&format!("{key}.friction"), friction)?;
            let damping_ratio = cx.non_negative(&format!("{key}.damping_ratio"), damping_ratio)?;
            let stiffness = match (stiffness_ratio, mindlin) {
                (Some(_), true) => return Err(cx.err(format!("{key}: give either `stiffness_ratio` or `mindlin = true`, not both"))),
                (Some(r), false) => TangentialStiffness::Linear {
                    ratio: cx.positive(&format!("{key}.stiffness_ratio"), r)?,
                },
                (None, true) => {
                    let (ea, na) = elastic(cx, key, a)?;
                    let (eb, nb) = elastic(cx, key, b)?;
                    TangentialStiffness::Mindlin {
                        g_star: 1.0 / (2.0 * (2.0 - na) * (1.0 + na) / ea + 2.0 * (2.0 - nb) * (1.0 + nb) / eb),
                    }
                }
                (None, false) => {
                    return Err(cx.err(format!("{key}: model \"spring_slider\" needs `stiffness_ratio = k_t/k_n` or `mindlin = true`")))
                }
            };
            if matches!(stiffness, TangentialStiffness::Linear { .. }) && !normal.has_stiffness() {
                return Err(cx.err(format!("{key}: `stiffness_ratio` needs a normal model with a stiffness (hooke or hertz), not wca")));
            }
            if matches!(normal, NormalModel::Wca { .. }) {
                return Err(cx.err(format!("{key}: model \"spring_slider\" needs an overlap-based normal model (hooke or hertz), not wca")));
            }
            TangentialModel::SpringSlider {
                friction,
                stiffness,
                damping_ratio,
            }
        }
    })
}

/// A `[0, 1]` setting (damping ratios and factors).
pub(super) fn unit_interval(cx: &Ctx, key: &str, v: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(cx.err(format!("{key}: must lie in [0, 1], got {v}")))
    }
}

pub(super) fn rolling_model(
    cx: &Ctx,
    key: &str,
    s: &RollingSpec,
    normal: &NormalModel,
) -> Result<Option<RollingParams>> {
    let p = match *s {
        RollingSpec::None => return Ok(None),
        RollingSpec::Epsd {
            friction,
            damping,
            torsion_torque,
            mobilised_damping_factor,
        } => RollingParams {
            torsion_torque,
            mobilised_damping_factor: unit_interval(
                cx,
                &format!("{key}.mobilised_damping_factor"),
                mobilised_damping_factor,
            )?,
            ..RollingParams::epsd(
                cx.non_negative(&format!("{key}.friction"), friction)?,
                unit_interval(cx, &format!("{key}.damping"), damping)?,
            )
        },
        RollingSpec::TypeC {
            friction,
            damping,
            stiffness_factor,
            rolling_radius,
        } => RollingParams::type_c(
            cx.non_negative(&format!("{key}.friction"), friction)?,
            unit_interval(cx, &format!("{key}.damping"), damping)?,
            cx.positive(&format!("{key}.stiffness_factor"), stiffness_factor)?,
            match rolling_radius {
                Some(r) => Some(cx.positive(&format!("{key}.rolling_radius"), r)?),
                None => None,
            },
        ),
    };
    if !normal.has_stiffness() {
        return Err(cx.err(format!(
            "{key}: a rolling resistance model needs a normal model with a stiffness \
             (hooke or hertz), not wca"
        )));
    }
    p.validate().map_err(|e| cx.err(format!("{key}: {e}")))?;
    Ok(Some(p))
}

pub(super) fn spinning_model(
    cx: &Ctx,
    key: &str,
    s: &SpinningSpec,
    normal: &NormalModel,
) -> Result<Option<SpinningParams>> {
    let p = match *s {
        SpinningSpec::None => return Ok(None),
        SpinningSpec::Edem { friction } => SpinningParams {
            friction: cx.non_negative(&format!("{key}.friction"), friction)?,
        },
    };
    if matches!(normal, NormalModel::Wca { .. }) {
        return Err(cx.err(format!(
            "{key}: model \"edem\" needs an overlap-based normal model (hooke or hertz), \
             not wca"
        )));
    }
    p.validate().map_err(|e| cx.err(format!("{key}: {e}")))?;
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use crate::config::Setup;
    use crate::contact::normal::{damping_ratio_from_restitution, HookeDamping};
    use crate::contact::stochastic::FrictionLaw;
    use crate::contact::tangential::TangentialStiffness;
    use crate::contact::{NormalModel, RollingParams, StochasticFriction, TangentialModel};
    use std::path::Path;

    /// Three materials (a, b, c) with `contact` as the `[contact]` section
    /// and its pair overrides.
    fn laws(contact: &str) -> crate::config::LawTable {
        let text = format!(
            r#"
[run]
name = "laws"
dt = 1e-6
steps = 1

[domain]
lo = [0.0, 0.0, 0.0]
hi = [1.0, 1.0, 1.0]

[[material]]
name = "a"
density = 1000.0
youngs_modulus = 1.0e7
poisson_ratio = 0.2

[[material]]
name = "b"
density = 2000.0
youngs_modulus = 4.0e7
poisson_ratio = 0.4

[[material]]
name = "c"
density = 3000.0
youngs_modulus = 1.0e7
poisson_ratio = 0.2

{contact}

[[particles]]
kind = "list"
material = "a"
radius = 0.01
position = [[0.5, 0.5, 0.5]]
"#
        );
        Setup::from_str(Path::new("laws.toml"), &text)
            .unwrap_or_else(|e| panic!("{e}"))
            .laws
    }

    #[test]
    fn the_table_is_symmetric_and_overrides_only_their_pair() {
        let t = laws(
            r#"[contact]
normal = { model = "hooke", stiffness = 1e4, restitution = 0.5 }
tangential = { model = "spring_slider", friction = 0.5, stiffness_ratio = 0.25 }

[[contact.pair]]
materials = ["b", "a"]
tangential = { model = "dashpot_slider", friction = 0.3, damping = 2.0 }
rolling = { model = "epsd", friction = 0.1, damping = 0.2 }"#,
        );
        assert_eq!(t.n, 3);
        assert_eq!(t.laws.len(), 9);
        for a in 0..3 {
            for b in 0..3 {
                assert_eq!(t.get(a, b), t.get(b, a), "laws ({a}, {b})");
            }
        }
        let normal = NormalModel::Hooke {
            stiffness: 1e4,
            damping: HookeDamping::Restitution {
                beta: damping_ratio_from_restitution(0.5),
            },
            no_tension: false,
        };
        let spring = TangentialModel::SpringSlider {
            friction: 0.5,
            stiffness: TangentialStiffness::Linear { ratio: 0.25 },
            damping_ratio: 0.0,
        };
        for (a, b) in [(0, 0), (1, 1), (2, 2), (0, 2), (1, 2)] {
            let law = t.get(a, b);
            assert_eq!((law.normal, law.tangential), (normal, spring), "({a}, {b})");
            assert!(law.rolling.is_none() && law.spinning.is_none() && law.stochastic.is_none());
            assert_eq!(law.history_len(), 3);
        }
        let pair = t.get(0, 1);
        assert_eq!(
            pair.normal, normal,
            "slots the override leaves unset keep [contact]'s"
        );
        assert_eq!(
            pair.tangential,
            TangentialModel::DashpotSlider {
                friction: 0.3,
                damping: 2.0
            }
        );
        assert_eq!(pair.rolling, Some(RollingParams::epsd(0.1, 0.2)));
        // Dashpot slider keeps no history, the rolling spring 3 values; the
        // table's record is the longest any law needs.
        assert_eq!(pair.history_len(), 3);
        assert_eq!(t.history_len, 3);
    }

    #[test]
    fn hertz_and_mindlin_combine_the_two_materials() {
        let t = laws(
            r#"[contact]
normal = { model = "hertz", restitution = 0.7, no_tension = true }
tangential = { model = "spring_slider", friction = 0.4, mindlin = true, damping_ratio = 0.5 }"#,
        );
        let moduli = |a: u32, b: u32| match (t.get(a, b).normal, t.get(a, b).tangential) {
            (
                NormalModel::Hertz {
                    e_star,
                    beta,
                    no_tension,
                },
                TangentialModel::SpringSlider {
                    stiffness: TangentialStiffness::Mindlin { g_star },
                    friction,
                    damping_ratio,
                },
            ) => {
                assert_eq!(beta, damping_ratio_from_restitution(0.7));
                assert!(no_tension);
                assert_eq!((friction, damping_ratio), (0.4, 0.5));
                (e_star, g_star)
            }
            other => panic!("{other:?}"),
        };
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-15 * y.abs();
        // One material: E* = E/(2(1 − ν²)), G* = E/(4(2 − ν)(1 + ν)).
        let (e, nu) = (1.0e7, 0.2);
        let (es, gs) = moduli(0, 0);
        assert!(close(es, e / (2.0 * (1.0 - nu * nu))), "{es}");
        assert!(close(gs, e / (4.0 * (2.0 - nu) * (1.0 + nu))), "{gs}");
        // Materials a and c share their elastic constants.
        assert_eq!(moduli(0, 2), moduli(0, 0));
        // a and b: 1/E* = (1 − ν_a²)/E_a + (1 − ν_b²)/E_b,
        // 1/G* = 2(2 − ν_a)(1 + ν_a)/E_a + 2(2 − ν_b)(1 + ν_b)/E_b.
        let (es, gs) = moduli(0, 1);
        assert!(close(es, 1.0 / (0.96 / 1.0e7 + 0.84 / 4.0e7)), "{es}");
        assert!(
            close(
                gs,
                1.0 / (2.0 * 1.8 * 1.2 / 1.0e7 + 2.0 * 1.6 * 1.4 / 4.0e7)
            ),
            "{gs}"
        );
        assert_eq!(moduli(1, 0), moduli(0, 1));
    }

    #[test]
    fn damping_rate_and_stochastic_friction() {
        let t = laws(
            r#"[contact]
normal = { model = "hooke", stiffness = 2e5, damping_rate = 50.0 }
stochastic = { model = "coulomb_newton", gamma = 1.5, kappa = 0.3, kT = 0.25 }"#,
        );
        let law = t.get(1, 2);
        assert_eq!(
            law.normal,
            NormalModel::Hooke {
                stiffness: 2e5,
                damping: HookeDamping::Rate { rate: 50.0 },
                no_tension: false,
            }
        );
        assert_eq!(law.tangential, TangentialModel::None);
        assert_eq!(
            law.stochastic,
            Some(StochasticFriction {
                law: FrictionLaw::CoulombNewton {
                    gamma: 1.5,
                    kappa: 0.3
                },
                kt: 0.25,
            })
        );
        assert_eq!(t.history_len, 0);
    }
}
