//! `[[diagnostics]]`: what the run measures of itself besides the thermo
//! row, validated into [`DiagnosticSpec`]s.

use super::context::Ctx;
use super::schema::DiagnosticConfig;
use super::walls::region;
use crate::error::Result;
use crate::geometry::domain::Domain;
use glam::DVec3;

/// The most bins of a profile.
pub const MAX_BINS: u64 = 100_000;

/// What a diagnostic measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// One box: its quantities without a bins dimension.
    Region,
    /// Bins along an axis.
    Profile,
}

impl DiagnosticKind {
    /// The name `kind` takes in the config and the output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Region => "region",
            Self::Profile => "profile",
        }
    }
}

/// A validated `[[diagnostics]]` block: `bins` boxes of equal width along
/// `axis` dividing `lo..hi` (a region is one bin).
#[derive(Debug, Clone, PartialEq)]
pub struct DiagnosticSpec {
    /// The group's name, `/diagnostics/<name>/`.
    pub name: String,
    /// What it measures.
    pub kind: DiagnosticKind,
    /// Steps between samples.
    pub every: u64,
    /// Samples averaged into each row: a row every `every · average` steps.
    pub average: u64,
    /// The box.
    pub lo: DVec3,
    /// The box.
    pub hi: DVec3,
    /// The axis the bins divide (0, 1, 2).
    pub axis: usize,
    /// Number of bins.
    pub bins: usize,
}

/// Validate the `[[diagnostics]]` blocks against the box.
pub(super) fn diagnostics(
    cx: &Ctx,
    cfg: &[DiagnosticConfig],
    domain: &Domain,
) -> Result<Vec<DiagnosticSpec>> {
    let specs = cfg
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let key = format!("diagnostics[{k}]");
            let every_and_average = |every: u64, average: Option<u64>| -> Result<(u64, u64)> {
                if every == 0 {
                    return Err(cx.err(format!("{key}.every: must be at least 1 (steps between samples), got 0")));
                }
                let average = average.unwrap_or(1);
                if average == 0 || every.checked_mul(average).is_none() {
                    return Err(cx.err(format!(
                        "{key}.average: must be at least 1 and every · average must fit in 64 bits, got {average}"
                    )));
                }
                Ok((every, average))
            };
            Ok(match d {
                DiagnosticConfig::Region {
                    name,
                    every,
                    average,
                    region: r,
                } => {
                    let (every, average) = every_and_average(*every, *average)?;
                    let (lo, hi) = region(cx, &key, r, domain)?;
                    DiagnosticSpec {
                        name: name.clone(),
                        kind: DiagnosticKind::Region,
                        every,
                        average,
                        lo,
                        hi,
                        axis: 2,
                        bins: 1,
                    }
                }
                DiagnosticConfig::Profile {
                    name,
                    every,
                    average,
                    axis,
                    bins,
                    region: r,
                } => {
                    let (every, average) = every_and_average(*every, *average)?;
                    let Some(axis) = ["x", "y", "z"].iter().position(|a| a == axis) else {
                        return Err(cx.err(format!(
                            "{key}.axis: must be \"x\", \"y\" or \"z\", got \"{axis}\""
                        )));
                    };
                    if !(1..=MAX_BINS).contains(bins) {
                        return Err(cx.err(format!(
                            "{key}.bins: must lie in 1..={MAX_BINS}, got {bins}"
                        )));
                    }
                    let (lo, hi) = match r {
                        Some(r) => region(cx, &key, r, domain)?,
                        None => (domain.lo, domain.hi),
                    };
                    DiagnosticSpec {
                        name: name.clone(),
                        kind: DiagnosticKind::Profile,
                        every,
                        average,
                        lo,
                        hi,
                        axis,
                        bins: *bins as usize,
                    }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    cx.names(
        "diagnostic",
        specs
            .iter()
            .enumerate()
            .map(|(k, s)| (format!("diagnostics[{k}].name"), s.name.as_str())),
    )?;
    Ok(specs)
}
