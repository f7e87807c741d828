//! Where a value sits in the input, for error messages: the config file and
//! the key path, e.g. `contact.pair[0].rolling.damping` ([`Key`]), with the
//! range checks every section shares.
//!
//! A module of its own, below both `config` and `contact`: `config` walks
//! the file and hands each contact model the [`Key`] of its table; the
//! model (in `contact`) checks its own values with it, so that its errors
//! name the file and the key without `contact` depending on `config`.

use crate::error::{GravelError, Result};
use std::fmt::Display;
use std::path::Path;

/// A key path in a config file.
///
/// ```
/// use gravel::key::Key;
/// use std::path::Path;
///
/// let key = Key::new(Path::new("run.toml"), "contact.normal");
/// assert_eq!(key.field("stiffness").positive(1e3).unwrap(), 1e3);
/// let e = key.field("stiffness").positive(-1.0).unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "run.toml: contact.normal.stiffness: must be a positive number, got -1"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key<'a> {
    file: &'a Path,
    path: String,
}

impl<'a> Key<'a> {
    /// The key `path` (dotted, arrays numbered from 0) in `file`.
    pub fn new(file: &'a Path, path: impl Into<String>) -> Self {
        Self {
            file,
            path: path.into(),
        }
    }

    /// The dotted key path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The key `name` inside this table: `path.name`.
    pub fn field(&self, name: &str) -> Key<'a> {
        Key::new(self.file, format!("{}.{name}", self.path))
    }

    /// A config error about this key: `file: path: msg`.
    pub fn err(&self, msg: impl Display) -> GravelError {
        GravelError::config(self.file, format!("{}: {msg}", self.path))
    }

    /// `v` if it is finite and > 0.
    pub fn positive(&self, v: f64) -> Result<f64> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(format!("must be a positive number, got {v}")))
        }
    }

    /// `v` if it is finite and ≥ 0.
    pub fn non_negative(&self, v: f64) -> Result<f64> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(format!("must be zero or positive, got {v}")))
        }
    }

    /// `v` if it lies in `[0, 1]` (damping ratios and factors).
    pub fn unit_interval(&self, v: f64) -> Result<f64> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(format!("must lie in [0, 1], got {v}")))
        }
    }
}
