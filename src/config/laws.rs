//! `[contact]` and `[[contact.pair]]`: the sub-models of each material
//! pair, validated into a [`LawTable`](super::LawTable).
//!
//! Each model validates its own table (`from_spec` in its file under
//! `contact/`, with the key the table sits at); what is checked here is the
//! composition: which table applies to a pair, and the rules across slots
//! (a model that needs the normal model's stiffness, stochastic friction
//! replacing the tangential model).

use super::context::Ctx;
use super::schema::*;
use super::setup::{LawTable, Material};
use crate::contact::model::PairMaterials;
use crate::contact::tangential::spring_slider::HOOKE_STIFFNESS_RATIO;
use crate::contact::{
    ContactLaw, NormalModel, RollingModel, SpinningModel, StochasticModel, TangentialModel,
};
use crate::error::Result;
use crate::key::Key;

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

/// A model that needs the normal model's stiffness (`needs`, from
/// [`crate::contact::model::Model::needs_stiffness`]) with one that has none.
fn check_stiffness(key: &Key, needs: Option<&str>, normal: &NormalModel) -> Result<()> {
    match needs {
        Some(what) if !normal.has_stiffness() => {
            Err(key.err(format!("{what} (hooke or hertz), not {}", normal.name())))
        }
        _ => Ok(()),
    }
}

/// `tangential = { model = "spring_slider", friction = μ }` with neither
/// `stiffness_ratio` nor `mindlin`: the stiffness follows the normal model,
/// Mindlin's under Hertz and `k_t = 2/7 k_n` under Hooke
/// ([`HOOKE_STIFFNESS_RATIO`]), as LAMMPS's `pair gran/*` (`Kt = NULL`)
/// and LIGGGHTS's Hertz model do. The spec with that stiffness written
/// out, or `None` where the spec needs no default.
fn default_stiffness(
    spec: &TangentialSpec,
    normal: &NormalModel,
    key: &Key,
) -> Result<Option<TangentialSpec>> {
    let TangentialSpec::SpringSlider(s) = spec else {
        return Ok(None);
    };
    if s.stiffness_ratio.is_some() || s.mindlin {
        return Ok(None);
    }
    let mut s = s.clone();
    match normal {
        NormalModel::Hertz(_) => s.mindlin = true,
        NormalModel::Hooke(_) => s.stiffness_ratio = Some(HOOKE_STIFFNESS_RATIO),
        other => {
            return Err(key.err(format!(
                "model \"spring_slider\" takes its default stiffness from a hooke or hertz normal model, not {}; \
                 its stiffness needs a normal model with a stiffness",
                other.name()
            )))
        }
    }
    Ok(Some(TangentialSpec::SpringSlider(s)))
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
            let pair = PairMaterials([&mats[a], &mats[b]]);
            let (nkey, normal) = slot(over, "normal", |p| p.normal.as_ref(), &c.normal);
            let (tkey, tangential) =
                slot(over, "tangential", |p| p.tangential.as_ref(), &c.tangential);
            let (stkey, stochastic) =
                slot(over, "stochastic", |p| p.stochastic.as_ref(), &c.stochastic);
            let (rkey, rolling) = slot(over, "rolling", |p| p.rolling.as_ref(), &c.rolling);
            let (skey, spinning) = slot(over, "spinning", |p| p.spinning.as_ref(), &c.spinning);
            let normal = NormalModel::from_spec(normal, &cx.key(nkey), &pair)?;
            let tkey = cx.key(tkey);
            let tangential = match default_stiffness(tangential, &normal, &tkey)? {
                Some(spec) => TangentialModel::from_spec(&spec, &tkey, &pair)?,
                None => TangentialModel::from_spec(tangential, &tkey, &pair)?,
            };
            check_stiffness(&tkey, tangential.needs_stiffness(), &normal)?;
            let stochastic =
                StochasticModel::from_spec(stochastic, &cx.key(stkey.as_str()), &pair)?;
            if stochastic.is_some() && tangential != TangentialModel::None {
                return Err(cx.err(format!(
                    "{stkey}: stochastic friction replaces the tangential model, but {} is also set for materials `{}` and `{}`; \
                     set tangential = {{ model = \"none\" }} or stochastic = {{ model = \"none\" }} (in a [[contact.pair]] for this pair)",
                    tkey.path(), mats[a].name, mats[b].name
                )));
            }
            let rkey = cx.key(rkey);
            let rolling = RollingModel::from_spec(rolling, &rkey, &pair)?;
            check_stiffness(&rkey, rolling.and_then(|r| r.needs_stiffness()), &normal)?;
            let skey = cx.key(skey);
            let spinning = SpinningModel::from_spec(spinning, &skey, &pair)?;
            check_stiffness(&skey, spinning.and_then(|s| s.needs_stiffness()), &normal)?;
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
        for name in p.materials.iter() {
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

#[cfg(test)]
mod tests {
    use crate::config::Setup;
    use crate::contact::normal::{damping_ratio_from_restitution, Hertz, Hooke, HookeDamping};
    use crate::contact::rolling::Epsd;
    use crate::contact::stochastic::CoulombNewton;
    use crate::contact::tangential::{DashpotSlider, SpringSlider, TangentialStiffness};
    use crate::contact::{NormalModel, StochasticModel, TangentialModel};
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
        let normal = NormalModel::Hooke(Hooke {
            stiffness: 1e4,
            damping: HookeDamping::Restitution {
                beta: damping_ratio_from_restitution(0.5),
            },
            no_tension: false,
        });
        let spring = TangentialModel::SpringSlider(SpringSlider {
            friction: 0.5,
            stiffness: TangentialStiffness::Linear { ratio: 0.25 },
            damping_ratio: 0.0,
        });
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
            TangentialModel::DashpotSlider(DashpotSlider {
                friction: 0.3,
                damping: 2.0
            })
        );
        assert_eq!(pair.rolling, Some(Epsd::new(0.1, 0.2).into()));
        // Dashpot slider keeps no history, the rolling spring 3 values; the
        // table's record is the longest any law needs.
        assert_eq!(pair.history_len(), 3);
        assert_eq!(t.history_len, 3);
    }

    /// `{ model = "spring_slider", friction }` alone: `k_t = 2/7 k_n` under
    /// Hooke and Mindlin under Hertz, bit for bit the laws of the same
    /// stiffness written out (`Debug` of `f64` prints the shortest text
    /// that reads back to the same bits), also in a pair override.
    #[test]
    fn spring_slider_default_stiffness_follows_the_normal_model() {
        let ratio: f64 = "0.2857142857142857".parse().unwrap();
        assert_eq!(ratio.to_bits(), super::HOOKE_STIFFNESS_RATIO.to_bits());
        for (normal, written) in [
            (
                r#"{ model = "hooke", stiffness = 1e4, restitution = 0.5 }"#,
                "stiffness_ratio = 0.2857142857142857",
            ),
            (
                r#"{ model = "hertz", restitution = 0.5 }"#,
                "mindlin = true",
            ),
        ] {
            let table = |extra: &str| {
                let t = laws(&format!(
                    "[contact]\nnormal = {normal}\ntangential = {{ model = \"spring_slider\", friction = 0.5{extra} }}\n\n\
                     [[contact.pair]]\nmaterials = [\"a\", \"b\"]\ntangential = {{ model = \"spring_slider\", friction = 0.3{extra} }}"
                ));
                format!("{t:?}")
            };
            let default = table("");
            assert_eq!(default, table(&format!(", {written}")), "{normal}");
            let expected = if written.starts_with("mindlin") {
                "Mindlin"
            } else {
                "Linear { ratio: 0.2857142857142857 }"
            };
            assert!(default.contains(expected), "{default}");
        }
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
                NormalModel::Hertz(Hertz {
                    e_star,
                    beta,
                    no_tension,
                }),
                TangentialModel::SpringSlider(SpringSlider {
                    stiffness: TangentialStiffness::Mindlin { g_star },
                    friction,
                    damping_ratio,
                }),
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
            NormalModel::Hooke(Hooke {
                stiffness: 2e5,
                damping: HookeDamping::Rate { rate: 50.0 },
                no_tension: false,
            })
        );
        assert_eq!(law.tangential, TangentialModel::None);
        assert_eq!(
            law.stochastic,
            Some(StochasticModel::CoulombNewton(CoulombNewton {
                gamma: 1.5,
                kappa: 0.3,
                kt: 0.25,
            }))
        );
        assert_eq!(t.history_len, 0);
    }
}
