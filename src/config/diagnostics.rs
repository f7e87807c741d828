//! `[[diagnostics]]`: what the run measures of itself besides the thermo
//! row, validated into [`DiagnosticSpec`]s.

use super::context::Ctx;
use super::region::region;
use super::schema::{CellsSpec, DiagnosticConfig, RegionConfig};
use crate::error::Result;
use crate::geometry::domain::Domain;
use glam::DVec3;

/// The most bins of a profile, or cells along one axis of a grid.
pub const MAX_BINS: u64 = 100_000;

/// The most cells of a coarse-graining grid (16 sums of 8 bytes each per
/// cell, twice per rank while a sample is reduced: 256 MB at most).
pub const MAX_CELLS: u64 = 1_000_000;

/// What a diagnostic measures, with what it needs besides its box.
#[derive(Debug, Clone, PartialEq)]
pub enum Measure {
    /// One box: its quantities without a bins dimension.
    Region,
    /// `bins` equal slabs along `axis` (0, 1, 2).
    Profile {
        /// The axis the bins divide.
        axis: usize,
        /// Number of bins.
        bins: usize,
    },
    /// Kernel-smoothed continuum fields on a grid of cells.
    CoarseGrain(GridSpec),
    /// Every touching contact.
    Contacts,
}

impl Measure {
    /// The name `kind` takes in the config and the output.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Region => "region",
            Self::Profile { .. } => "profile",
            Self::CoarseGrain(_) => "coarse_grain",
            Self::Contacts => "contacts",
        }
    }
}

/// The smoothing kernel of a coarse-graining grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// A Gaussian of standard deviation `w`, cut off at `3w`.
    Gaussian,
    /// Lucy's quartic polynomial, of support `3w`.
    Lucy,
}

impl KernelKind {
    /// The name `kernel` takes in the config and the output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gaussian => "gaussian",
            Self::Lucy => "lucy",
        }
    }
}

/// A coarse-graining grid: the box divided into `cells[d]` equal cells
/// along each axis `d` (one along an axis that is not gridded, over which
/// the fields are averaged).
#[derive(Debug, Clone, PartialEq)]
pub struct GridSpec {
    /// Whether each axis is gridded (written as a dimension of the fields).
    pub gridded: [bool; 3],
    /// Cells along each axis (1 along the averaged ones).
    pub cells: [usize; 3],
    /// The kernel.
    pub kernel: KernelKind,
    /// The kernel's width `w`.
    pub width: f64,
}

/// A validated `[[diagnostics]]` block.
#[derive(Debug, Clone, PartialEq)]
pub struct DiagnosticSpec {
    /// The group's name, `/diagnostics/<name>/`.
    pub name: String,
    /// Steps between samples.
    pub every: u64,
    /// Samples averaged into each row: a row every `every · average` steps.
    pub average: u64,
    /// The box (the domain for `contacts`).
    pub lo: DVec3,
    /// The box.
    pub hi: DVec3,
    /// What it measures.
    pub measure: Measure,
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
            let spec = |name: &String, every, average, (lo, hi), measure| DiagnosticSpec {
                name: name.clone(),
                every,
                average,
                lo,
                hi,
                measure,
            };
            let box_or_domain = |r: &Option<RegionConfig>| match r {
                Some(r) => region(cx, &key, r, domain),
                None => Ok((domain.lo, domain.hi)),
            };
            Ok(match d {
                DiagnosticConfig::Region {
                    name,
                    every,
                    average,
                    region: r,
                } => {
                    let (every, average) = every_and_average(*every, *average)?;
                    spec(name, every, average, region(cx, &key, r, domain)?, Measure::Region)
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
                    let bins = count(cx, &format!("{key}.bins"), *bins)?;
                    spec(name, every, average, box_or_domain(r)?, Measure::Profile { axis, bins })
                }
                DiagnosticConfig::CoarseGrain {
                    name,
                    every,
                    average,
                    axes,
                    bins,
                    kernel,
                    width,
                    region: r,
                } => {
                    let (every, average) = every_and_average(*every, *average)?;
                    let grid = grid(cx, &key, axes, bins, kernel.as_deref(), *width, domain)?;
                    spec(name, every, average, box_or_domain(r)?, Measure::CoarseGrain(grid))
                }
                DiagnosticConfig::Contacts { name, every } => {
                    let (every, average) = every_and_average(*every, None)?;
                    spec(name, every, average, (domain.lo, domain.hi), Measure::Contacts)
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

/// A count of bins or cells along one axis, `1..=MAX_BINS`.
fn count(cx: &Ctx, key: &str, n: u64) -> Result<usize> {
    if !(1..=MAX_BINS).contains(&n) {
        return Err(cx.err(format!("{key}: must lie in 1..={MAX_BINS}, got {n}")));
    }
    Ok(n as usize)
}

/// Validate a coarse-graining grid: `axes` names the gridded axes in order
/// ("x", "xz", "xyz", ...), `bins` one count for all or one each, at most
/// [`MAX_CELLS`] cells in all; the kernel's support `3w` is shorter than
/// every periodic axis of the box (a sphere's kernel reaches at most its
/// nearest images).
fn grid(
    cx: &Ctx,
    key: &str,
    axes: &str,
    bins: &CellsSpec,
    kernel: Option<&str>,
    width: f64,
    domain: &Domain,
) -> Result<GridSpec> {
    const ORDERED: [&str; 7] = ["x", "y", "z", "xy", "xz", "yz", "xyz"];
    if !ORDERED.contains(&axes) {
        return Err(cx.err(format!(
            "{key}.axes: must name the gridded axes in order, one of {}, got \"{axes}\"",
            ORDERED.map(|a| format!("\"{a}\"")).join(", ")
        )));
    }
    let gridded = [0, 1, 2].map(|d| axes.contains(["x", "y", "z"][d]));
    let counts = match bins {
        CellsSpec::All(n) => vec![*n; axes.len()],
        CellsSpec::Each(v) if v.len() == axes.len() => v.clone(),
        CellsSpec::Each(v) => {
            return Err(cx.err(format!(
            "{key}.bins: must have one count per gridded axis ({} for axes = \"{axes}\"), got {}",
            axes.len(),
            v.len()
        )))
        }
    };
    let mut cells = [1; 3];
    let mut gridded_axes = (0..3).filter(|&d| gridded[d]);
    for n in &counts {
        let d = gridded_axes.next().expect("one count per gridded axis");
        cells[d] = count(cx, &format!("{key}.bins"), *n)?;
    }
    let total: u64 = cells.iter().map(|&n| n as u64).product();
    if total > MAX_CELLS {
        return Err(cx.err(format!(
            "{key}.bins: the grid has {total} cells, more than the {MAX_CELLS} allowed"
        )));
    }
    let kernel = match kernel.unwrap_or("gaussian") {
        "gaussian" => KernelKind::Gaussian,
        "lucy" => KernelKind::Lucy,
        other => {
            return Err(cx.err(format!(
                "{key}.kernel: must be \"gaussian\" or \"lucy\", got \"{other}\""
            )))
        }
    };
    if !(width.is_finite() && width > 0.0) {
        return Err(cx.err(format!(
            "{key}.width: must be a number > 0 (the kernel's width, m), got {width}"
        )));
    }
    let length = domain.hi - domain.lo;
    if let Some(d) = (0..3).find(|&d| domain.periodic[d] && 3.0 * width >= length[d]) {
        return Err(cx.err(format!(
            "{key}.width: the kernel's support 3 · width = {} must be shorter than the periodic {} axis ({})",
            3.0 * width,
            ["x", "y", "z"][d],
            length[d]
        )));
    }
    Ok(GridSpec {
        gridded,
        cells,
        kernel,
        width,
    })
}
