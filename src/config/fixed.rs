//! The one rule for fixed-size values: a key of `N` values (a vector, a
//! periodicity triple, a rank grid, a material pair) must have exactly `N`.
//!
//! serde reads a `[T; N]` from the first `N` entries of a longer TOML array
//! and drops the rest without a word; [`Fixed`] reads the whole array and
//! refuses any other length. Every fixed-size key of [`super::schema`] is a
//! [`Fixed`] (a unit test there keeps it so), and [`key_at`] names the key
//! path of the value a TOML error points at, so that the message reads
//! `domain.lo: expected exactly 3 values, got 4`.

use super::toml_error::{all, Node};
use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Exactly `N` values of type `T`.
#[derive(Clone, Copy, PartialEq)]
pub struct Fixed<T, const N: usize>(pub [T; N]);

/// The start of every message about a wrong length, so that
/// [`super::Setup::from_str`] can add the key path.
pub(super) const WRONG_LENGTH: &str = "expected exactly ";

impl<T: fmt::Debug, const N: usize> fmt::Debug for Fixed<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T, const N: usize> Default for Fixed<T, N>
where
    [T; N]: Default,
{
    fn default() -> Self {
        Self(Default::default())
    }
}

impl<T, const N: usize> From<[T; N]> for Fixed<T, N> {
    fn from(v: [T; N]) -> Self {
        Self(v)
    }
}

impl<T, const N: usize> std::ops::Deref for Fixed<T, N> {
    type Target = [T; N];
    fn deref(&self) -> &[T; N] {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Fixed<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for V<T, N> {
            type Value = Fixed<T, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of exactly {N} values")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut got = Vec::with_capacity(N);
                while got.len() < N {
                    match seq.next_element()? {
                        Some(v) => got.push(v),
                        None => break,
                    }
                }
                let mut n = got.len();
                if n == N {
                    while seq.next_element::<IgnoredAny>()?.is_some() {
                        n += 1;
                    }
                }
                match <[T; N]>::try_from(got) {
                    Ok(v) if n == N => Ok(Fixed(v)),
                    _ => Err(A::Error::custom(format!(
                        "{WRONG_LENGTH}{N} values, got {n}"
                    ))),
                }
            }
        }
        d.deserialize_seq(V::<T, N>(PhantomData))
    }
}

/// Where the value of a wrong-length error lies: its dotted key path
/// (arrays numbered from 0, as [`crate::key::Key`] writes them) and its
/// offset in `text`, from the error's `span` and the length it `got`.
///
/// The span is that of the value itself, or, inside a `kind`-tagged table
/// (`[[wall]]`, `[[particles]]`, which serde reads through a buffer), that
/// of the table: then the value is the array of `got` plain values in it
/// (several such arrays are all named). `None` if the text does not parse
/// or nothing fits.
pub(super) fn wrong_length_at(
    text: &str,
    span: Range<usize>,
    got: usize,
) -> Option<(String, usize)> {
    let is_list = |v: &DeValue| {
        matches!(v, DeValue::Array(a) if a.len() == got
            && a.iter().all(|e| !matches!(e.get_ref(), DeValue::Array(_) | DeValue::Table(_))))
    };
    let root = DeValue::Table(DeTable::parse(text).ok()?.into_inner());
    let mut nodes = Vec::new();
    all("", &root, &mut nodes);
    // The innermost node with that span: an array of tables and its single
    // table can share one.
    let (path, _, at) = nodes.iter().rev().find(|(_, s, _)| *s == span)?;
    if is_list(at) {
        return Some((path.clone(), span.start));
    }
    let mut inside = Vec::new();
    all(path, at, &mut inside);
    let mut fits: Vec<&Node> = inside.iter().filter(|(_, _, v)| is_list(v)).collect();
    fits.sort_by_key(|(_, s, _)| s.start);
    let first = fits.first()?;
    let names: Vec<&str> = fits.iter().map(|(p, _, _)| p.as_str()).collect();
    Some((names.join(" or "), first.1.start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct T {
        v: Fixed<f64, 3>,
        #[serde(default)]
        w: Option<Vec<Fixed<u32, 2>>>,
    }

    fn parse(text: &str) -> Result<T, String> {
        toml::from_str::<T>(text).map_err(|e| {
            let got = e.message().rsplit(' ').next().unwrap().parse().unwrap();
            let path = e
                .span()
                .and_then(|s| wrong_length_at(text, s, got))
                .map(|p| p.0);
            format!("{path:?}: {}", e.message())
        })
    }

    #[test]
    fn exactly_n_values_are_read_and_any_other_count_is_refused() {
        assert_eq!(
            parse("v = [1.0, 2.0, 3.0]").unwrap().v,
            Fixed([1.0, 2.0, 3.0])
        );
        for (text, got) in [
            ("v = [1.0, 2.0, 3.0, 4.0]", 4),
            ("v = [1.0, 2.0]", 2),
            ("v = []", 0),
            ("v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", 6),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(
                e,
                format!("Some(\"v\"): expected exactly 3 values, got {got}"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_key_path_of_a_nested_value_is_named() {
        let good = parse("v = [1.0, 2.0, 3.0]\nw = [[1, 2], [3, 4]]").unwrap();
        assert_eq!(good.w, Some(vec![Fixed([1, 2]), Fixed([3, 4])]));
        let text = "v = [1.0, 2.0, 3.0]\nw = [[1, 2], [1, 2, 3]]\n";
        assert_eq!(
            parse(text).unwrap_err(),
            "Some(\"w[1]\"): expected exactly 2 values, got 3"
        );
    }

    /// In a `kind`-tagged table serde reports the table; the array of the
    /// wrong length in it is named, every one where several fit.
    #[test]
    fn in_a_tagged_table_the_array_of_that_length_is_named() {
        #[derive(Debug, Deserialize)]
        #[serde(tag = "kind")]
        #[allow(dead_code)]
        enum E {
            A { p: Fixed<f64, 3>, r: Vec<f64> },
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Top {
            e: Vec<E>,
        }
        let named = |text: &str| {
            let e = toml::from_str::<Top>(text).unwrap_err();
            wrong_length_at(text, e.span().unwrap(), 4).map(|p| p.0)
        };
        let one = "[[e]]\nkind = \"A\"\nr = [1.0]\np = [1.0, 2.0, 3.0, 4.0]\n";
        assert_eq!(named(one).as_deref(), Some("e[0].p"));
        let two = "[[e]]\nkind = \"A\"\nr = [1.0, 2.0, 3.0, 4.0]\np = [1.0, 2.0, 3.0, 4.0]\n";
        assert_eq!(named(two).as_deref(), Some("e[0].r or e[0].p"));
    }
}
