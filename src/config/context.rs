//! The checks every config section shares, with the file named in each
//! error ([`Ctx`]).

use super::setup::Material;
use crate::error::{GravelError, Result};
use crate::key::Key;
use glam::DVec3;
use std::path::Path;

pub(super) struct Ctx<'a> {
    pub(super) file: &'a Path,
}

impl Ctx<'_> {
    pub(super) fn err(&self, msg: impl Into<String>) -> GravelError {
        GravelError::config(self.file, msg)
    }
    /// The key `path` of this file, which model validation reads (see
    /// [`crate::key`]).
    pub(super) fn key(&self, path: impl Into<String>) -> Key<'_> {
        Key::new(self.file, path)
    }
    pub(super) fn positive(&self, key: &str, v: f64) -> Result<f64> {
        self.key(key).positive(v)
    }
    pub(super) fn non_negative(&self, key: &str, v: f64) -> Result<f64> {
        self.key(key).non_negative(v)
    }
    pub(super) fn material(&self, key: &str, name: &str, mats: &[Material]) -> Result<u32> {
        mats.iter()
            .position(|m| m.name == name)
            .map(|k| k as u32)
            .ok_or_else(|| {
                let known: Vec<&str> = mats.iter().map(|m| m.name.as_str()).collect();
                self.err(format!(
                    "{key}: unknown material `{name}`; defined materials: [{}]",
                    known.join(", ")
                ))
            })
    }
    /// The rule for the names that become HDF5 names in the output (wall
    /// and diagnostic names): 1 to 64 characters, each a letter, a digit,
    /// `_`, `-` or `.`, not starting with `.`, and each name given once
    /// among `named` (key and name, in config order).
    pub(super) fn names<'n>(
        &self,
        what: &str,
        named: impl IntoIterator<Item = (String, &'n str)>,
    ) -> Result<()> {
        let mut seen: Vec<&str> = Vec::new();
        for (key, name) in named {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
            if name.is_empty()
                || name.len() > 64
                || name.starts_with('.')
                || !name.chars().all(allowed)
            {
                return Err(self.err(format!(
                    "{key}: `{name}` is not a usable {what} name: 1 to 64 characters, each a letter, a digit, `_`, `-` or `.`, not starting with `.`"
                )));
            }
            if seen.contains(&name) {
                return Err(self.err(format!("{key}: the {what} name `{name}` is given twice")));
            }
            seen.push(name);
        }
        Ok(())
    }
    pub(super) fn unit(&self, key: &str, v: [f64; 3]) -> Result<DVec3> {
        let d = DVec3::from_array(v);
        let l = d.length();
        if !(l.is_finite() && l > 0.0) {
            return Err(self.err(format!("{key}: must be a non-zero vector, got {v:?}")));
        }
        Ok(d / l)
    }
}
