//! The contract between a contact model's file and its slot: what every
//! model provides ([`Model`]), what its validation reads besides its own
//! table ([`Key`], [`PairMaterials`]), and how a slot lists its models
//! ([`registry!`](crate::contact::model) below).
//!
//! A model is one struct in one file (e.g. `contact/normal/hooke.rs`) that
//! holds its run-constant parameters and owns its TOML table (`Spec`, a
//! serde struct that denies unknown keys), its validation (`from_spec`,
//! whose errors name the key), its history (`HISTORY_LEN` values per
//! contact and how they read with `i` and `j` exchanged, `swap_history`),
//! its kernel (the slot's trait, e.g. [`super::normal::NormalLaw`]) and its
//! documentation. The slot's `mod.rs` lists the models once, in a
//! `registry!`, which makes the slot's two enums (the models and their
//! TOML tables, chosen by `model = "..."`) and the dispatch between them.

use super::Kind;
use crate::error::Result;
pub use crate::key::Key;
use serde::Deserialize;

/// What every contact model provides besides its kernel.
pub trait Model: Copy {
    /// Its TOML table without the `model = "..."` tag: a serde struct
    /// with `deny_unknown_fields`.
    type Spec;

    /// Its kind, for the force stage's kernels specialised at compile time
    /// ([`Kind`]); [`Kind::ANY`], the default, for a model that has none.
    const KIND: u8 = Kind::ANY;

    /// History values it keeps per contact (default none). A contact's
    /// record holds the tangential model's, then the rolling model's.
    const HISTORY_LEN: usize = 0;

    /// The model of one material pair from its table. `key` is where the
    /// table sits (its errors name `key.field(...)`), `materials` the pair's
    /// two materials.
    fn from_spec(spec: &Self::Spec, key: &Key, materials: &PairMaterials) -> Result<Self>;

    /// Whether the model reads the contact's effective radius `R*`
    /// ([`Kinematics::r_eff`](super::Kinematics::r_eff), which the force
    /// stage leaves out, as NaN, for a law none of whose models reads it).
    /// Default: no.
    fn reads_r_eff(&self) -> bool {
        false
    }

    /// `Some(what)` if the model needs a normal model with a stiffness (an
    /// overlap-based one: not WCA); `what` starts the error that says so,
    /// e.g. "model \"spring_slider\" needs an overlap-based normal model".
    /// Default: `None`.
    fn needs_stiffness(&self) -> Option<&'static str> {
        None
    }

    /// Its parameters in the config's words, for `gravel check`
    /// (`restitution 0.5`), numbers to 4 significant digits; empty for a
    /// model without any (the default).
    fn describe(&self) -> String {
        String::new()
    }

    /// Turn `history` (its `HISTORY_LEN` values) into what it holds for the
    /// same contact seen with `i` and `j` exchanged (`n → −n`,
    /// `v_t → −v_t`, `ω_rel → −ω_rel`). Contacts are always evaluated in
    /// canonical orientation; this says what the history *is*, and the
    /// property tests check it (evaluating a pair both ways gives the same
    /// physics). The default, for a model without history, does nothing.
    fn swap_history(history: &mut [f64]) {
        debug_assert!(
            Self::HISTORY_LEN == 0,
            "a model with history must say how it swaps"
        );
        let _ = history;
    }
}

/// A material as the models' validation sees it.
pub trait Elastic {
    /// Its Young's modulus `E` and Poisson ratio `ν`, or an error naming
    /// `key` (the model that needs them) and the material.
    fn elastic(&self, key: &Key) -> Result<(f64, f64)>;
}

/// The two materials of a contact's material pair.
#[derive(Clone, Copy)]
pub struct PairMaterials<'a>(pub [&'a dyn Elastic; 2]);

impl PairMaterials<'_> {
    /// `(E, ν)` of both materials; the error names `key` and the material
    /// that lacks them.
    pub fn elastic(&self, key: &Key) -> Result<[(f64, f64); 2]> {
        Ok([self.0[0].elastic(key)?, self.0[1].elastic(key)?])
    }
}

/// A material with given elastic constants, for tests and examples.
///
/// ```
/// use gravel::contact::model::{Elastic, Key, PairMaterials, Solid};
/// use std::path::Path;
///
/// let glass = Solid(Some((5e6, 0.3)));
/// let pair = PairMaterials([&glass, &glass]);
/// let key = Key::new(Path::new("a.toml"), "contact.normal");
/// assert_eq!(pair.elastic(&key).unwrap(), [(5e6, 0.3); 2]);
/// assert!(Solid(None).elastic(&key).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solid(pub Option<(f64, f64)>);

impl Elastic for Solid {
    fn elastic(&self, key: &Key) -> Result<(f64, f64)> {
        self.0
            .ok_or_else(|| key.err("needs `youngs_modulus` and `poisson_ratio`"))
    }
}

/// The table of `model = "none"`, which takes no other key (a struct, not
/// a unit variant, so that serde refuses a key beside the tag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoKeys {}

/// [`Model::KIND`] of a model value (for the registries' dispatch).
#[inline(always)]
pub const fn kind_of<M: Model>(_: &M) -> u8 {
    M::KIND
}

/// [`Model::HISTORY_LEN`] of a model value.
#[inline(always)]
pub const fn history_len_of<M: Model>(_: &M) -> usize {
    M::HISTORY_LEN
}

/// [`Model::swap_history`] of a model value.
#[inline]
pub fn swap_history_of<M: Model>(_: &M, history: &mut [f64]) {
    M::swap_history(&mut history[..M::HISTORY_LEN]);
}

/// Declares a slot's registry: the list of its models, each once, as
/// `Variant(Type) = "toml name"` with its rustdoc. It makes
///
/// - the model enum (`pub enum NormalModel { Hooke(Hooke), … }`), with
///   `From<Type>` for each model;
/// - the spec enum, the slot's TOML table (`pub enum NormalSpec {
///   Hooke(<Hooke as Model>::Spec), … }`), chosen by `model = "..."`;
/// - `from_spec`, `name`, `kind`, `history_len`, `swap_history` and the
///   `const fn history_len_of(kind)` on the model enum, by dispatch;
/// - a local macro (`each: NAME, $`) that the slot's `mod.rs` dispatches
///   its kernels with: `NAME!(self, m => m.force(k))` is a `match` with
///   one arm per model, `m` the model inside.
///
/// A slot whose table may be `model = "none"` says so after the spec enum:
/// `or None` gives the spec a `None(NoKeys)` variant (the default), and
/// `from_spec` then returns `Option<Model>`; with `unit None => Zst` as
/// well, the model enum has the unit variant `None`, dispatched as the
/// zero-sized model `Zst`, and `from_spec` maps the table to it.
macro_rules! registry {
    (
        $(#[$model_meta:meta])*
        pub enum $Model:ident;
        $(#[$spec_meta:meta])*
        pub enum $Spec:ident $(or $(#[$none_meta:meta])* $SpecNone:ident)?;
        $(unit $(#[$unit_meta:meta])* $Unit:ident => $UnitModel:ident;)?
        each: $each:ident, $d:tt;
        $(
            $(#[$vmeta:meta])*
            $V:ident($T:ty) = $name:literal,
        )+
    ) => {
        $(#[$model_meta])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum $Model {
            $($(#[$unit_meta])* $Unit,)?
            $($(#[$vmeta])* $V($T),)+
        }

        $(#[$spec_meta])*
        #[derive(Debug, Clone, serde::Deserialize)]
        #[serde(tag = "model", deny_unknown_fields)]
        pub enum $Spec {
            $($(#[$none_meta])* #[serde(rename = "none")] $SpecNone($crate::contact::model::NoKeys),)?
            $($(#[$vmeta])* #[serde(rename = $name)] $V(<$T as $crate::contact::model::Model>::Spec),)+
        }

        $(
            impl Default for $Spec {
                fn default() -> Self {
                    Self::$SpecNone($crate::contact::model::NoKeys {})
                }
            }
        )?

        $(
            impl From<$T> for $Model {
                fn from(m: $T) -> Self {
                    Self::$V(m)
                }
            }
        )+

        #[allow(unused_macros)]
        macro_rules! $each {
            ($d value:expr, $d m:ident => $d body:expr) => {
                match $d value {
                    $($Model::$Unit => {
                        let $d m = &$UnitModel;
                        $d body
                    })?
                    $($Model::$V($d m) => $d body,)+
                }
            };
        }

        impl $Model {
            $crate::contact::model::registry!(@from_spec $Model $Spec
                [$($SpecNone)?] [$($Unit)?] $($V($T))+);

            /// The model's name in the config (`model = "..."`).
            pub fn name(&self) -> &'static str {
                match self {
                    $($Model::$Unit => "none",)?
                    $($Model::$V(_) => $name,)+
                }
            }

            /// The model's name with its parameters, for `gravel check`:
            /// `hertz (restitution 0.5)`, `none`
            /// ([`Model::describe`](crate::contact::model::Model::describe)).
            pub fn describe(&self) -> String {
                let params: String = $each!(self, m => $crate::contact::model::Model::describe(m));
                if params.is_empty() {
                    self.name().to_string()
                } else {
                    format!("{} ({params})", self.name())
                }
            }

            /// The model's kind ([`Kind`](crate::contact::Kind)).
            #[inline(always)]
            pub fn kind(&self) -> u8 {
                $each!(self, m => $crate::contact::model::kind_of(m))
            }

            /// History values the model keeps per contact.
            #[inline(always)]
            pub fn history_len(&self) -> usize {
                $each!(self, m => $crate::contact::model::history_len_of(m))
            }

            /// The history values of a model of kind `kind`, if the kind
            /// says ([`Kind::ANY`](crate::contact::Kind::ANY) does not).
            #[inline(always)]
            pub const fn history_len_of(kind: u8) -> Option<usize> {
                use $crate::contact::model::Model;
                if kind == $crate::contact::Kind::ANY {
                    return None;
                }
                $(if kind == <$UnitModel as Model>::KIND {
                    return Some(<$UnitModel as Model>::HISTORY_LEN);
                })?
                $(if kind == <$T as Model>::KIND {
                    return Some(<$T as Model>::HISTORY_LEN);
                })+
                None
            }

            /// Whether the model reads the effective radius `R*`
            /// ([`Model::reads_r_eff`](crate::contact::model::Model::reads_r_eff)).
            pub fn reads_r_eff(&self) -> bool {
                $each!(self, m => $crate::contact::model::Model::reads_r_eff(m))
            }

            /// What needs a normal model with a stiffness, if anything
            /// ([`Model::needs_stiffness`](crate::contact::model::Model::needs_stiffness)).
            pub fn needs_stiffness(&self) -> Option<&'static str> {
                $each!(self, m => $crate::contact::model::Model::needs_stiffness(m))
            }

            /// Turn the model's history (its first
            /// [`history_len`](Self::history_len) values of `history`) into
            /// what it holds with `i` and `j` exchanged
            /// ([`Model::swap_history`](crate::contact::model::Model::swap_history)).
            pub fn swap_history(&self, history: &mut [f64]) {
                $each!(self, m => $crate::contact::model::swap_history_of(m, history))
            }
        }
    };

    // A slot whose every table gives a model: `from_spec` returns the model
    // (`model = "none"`, if the slot has it, gives the unit variant).
    (@from_spec $Model:ident $Spec:ident [] [] $($rest:tt)+) => {
        $crate::contact::model::registry!(@to_model $Spec [] $($rest)+);
    };
    (@from_spec $Model:ident $Spec:ident [$SpecNone:ident] [$Unit:ident] $($rest:tt)+) => {
        $crate::contact::model::registry!(@to_model $Spec [$SpecNone => $Unit] $($rest)+);
    };
    (@to_model $Spec:ident [$($SpecNone:ident => $Unit:ident)?] $($V:ident($T:ty))+) => {
        /// The model of one material pair from its TOML table; errors
        /// name `key` (the table's key path) and what is allowed.
        pub fn from_spec(
            spec: &$Spec,
            key: &$crate::key::Key,
            materials: &$crate::contact::model::PairMaterials,
        ) -> $crate::error::Result<Self> {
            Ok(match spec {
                $($Spec::$SpecNone(_) => Self::$Unit,)?
                $($Spec::$V(s) => Self::$V(<$T as $crate::contact::model::Model>::from_spec(s, key, materials)?),)+
            })
        }
    };
    // A slot whose table may be `model = "none"` with no model for it:
    // `from_spec` returns `None` for that table.
    (@from_spec $Model:ident $Spec:ident [$SpecNone:ident] [] $($V:ident($T:ty))+) => {
        /// The model of one material pair from its TOML table (`None` for
        /// `model = "none"`); errors name `key` (the table's key path) and
        /// what is allowed.
        pub fn from_spec(
            spec: &$Spec,
            key: &$crate::key::Key,
            materials: &$crate::contact::model::PairMaterials,
        ) -> $crate::error::Result<Option<Self>> {
            Ok(match spec {
                $Spec::$SpecNone(_) => None,
                $($Spec::$V(s) => Some(Self::$V(<$T as $crate::contact::model::Model>::from_spec(s, key, materials)?)),)+
            })
        }
    };
}
pub(crate) use registry;
