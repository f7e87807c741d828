//! Radius distributions of generated particles: fixed, uniform, truncated
//! normal and log-normal, and discrete (by number or by mass).
//!
//! Every distribution is a distribution of the **number** of particles over
//! radius: a draw is one particle's radius. A discrete distribution given by
//! mass is turned into number weights when it is read
//! ([`RadiusDist::discrete`]).

use super::uniform;
use crate::rng::box_muller;
use rand_core::Rng;
use rand_pcg::Pcg64;

/// A radius distribution, by number.
#[derive(Debug, Clone, PartialEq)]
pub enum RadiusDist {
    /// Every particle has this radius.
    Fixed(f64),
    /// Uniform in `[min, max]`.
    Uniform {
        /// Smallest radius.
        min: f64,
        /// Largest radius.
        max: f64,
    },
    /// Normal with `mean` and `sd`, truncated to `[min, max]` by rejection.
    Normal {
        /// Mean of the untruncated normal.
        mean: f64,
        /// Standard deviation of the untruncated normal.
        sd: f64,
        /// Smallest radius.
        min: f64,
        /// Largest radius.
        max: f64,
    },
    /// Log-normal whose untruncated radius has mean `mean` and standard
    /// deviation `sd` (of the radius itself, not of its logarithm),
    /// truncated to `[min, max]` by rejection. `ln R` is normal with
    /// `σ² = ln(1 + sd²/mean²)` and `μ = ln(mean) − σ²/2`.
    LogNormal {
        /// Mean of the untruncated radius.
        mean: f64,
        /// Standard deviation of the untruncated radius.
        sd: f64,
        /// Smallest radius.
        min: f64,
        /// Largest radius.
        max: f64,
    },
    /// `values[k]` with number probability `number[k]` (summing to 1).
    Discrete {
        /// The radii.
        values: Vec<f64>,
        /// Their number fractions.
        number: Vec<f64>,
    },
}

/// A uniform variate in the open interval `(0, 1)`: the midpoints of 2^53
/// cells, safe for `ln`.
fn open_uniform(rng: &mut Pcg64) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

impl RadiusDist {
    /// A discrete distribution from `fractions` by `mass` (true) or by
    /// number (false). By mass, a size's number weight is its mass fraction
    /// over its particle's volume: `n_k ∝ f_k / r_k³` (one material per
    /// block, so mass ∝ volume), normalised to sum to 1.
    pub fn discrete(values: Vec<f64>, fractions: &[f64], mass: bool) -> Self {
        let w: Vec<f64> = values
            .iter()
            .zip(fractions)
            .map(|(&r, &f)| if mass { f / (r * r * r) } else { f })
            .collect();
        let total: f64 = w.iter().sum();
        RadiusDist::Discrete {
            values,
            number: w.iter().map(|x| x / total).collect(),
        }
    }

    /// `(μ, σ)` of `ln R` for a log-normal radius of mean `mean` and
    /// standard deviation `sd`.
    pub fn lognormal_params(mean: f64, sd: f64) -> (f64, f64) {
        let s2 = (1.0 + (sd / mean).powi(2)).ln();
        (mean.ln() - 0.5 * s2, s2.sqrt())
    }

    /// One particle's radius.
    pub fn draw(&self, rng: &mut Pcg64) -> f64 {
        match *self {
            RadiusDist::Fixed(r) => r,
            RadiusDist::Uniform { min, max } => {
                if min == max {
                    min
                } else {
                    min + (max - min) * uniform(rng)
                }
            }
            RadiusDist::Normal { mean, sd, min, max } => loop {
                let z = box_muller(open_uniform(rng), open_uniform(rng))[0];
                let r = mean + sd * z;
                if (min..=max).contains(&r) {
                    return r;
                }
            },
            RadiusDist::LogNormal { mean, sd, min, max } => {
                let (mu, sigma) = Self::lognormal_params(mean, sd);
                loop {
                    let z = box_muller(open_uniform(rng), open_uniform(rng))[0];
                    let r = (mu + sigma * z).exp();
                    if (min..=max).contains(&r) {
                        return r;
                    }
                }
            }
            RadiusDist::Discrete {
                ref values,
                ref number,
            } => {
                let u = uniform(rng);
                let mut acc = 0.0;
                for (&r, &p) in values.iter().zip(number) {
                    acc += p;
                    if u < acc {
                        return r;
                    }
                }
                // Rounding left the sum a hair below 1: the last size.
                *values.last().expect("at least one value")
            }
        }
    }

    /// `n` radii, drawn in order from `rng`.
    pub fn draw_many(&self, rng: &mut Pcg64, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.draw(rng)).collect()
    }

    /// The smallest radius the distribution can give.
    pub fn min(&self) -> f64 {
        match *self {
            RadiusDist::Fixed(r) => r,
            RadiusDist::Uniform { min, .. }
            | RadiusDist::Normal { min, .. }
            | RadiusDist::LogNormal { min, .. } => min,
            RadiusDist::Discrete { ref values, .. } => {
                values.iter().copied().fold(f64::INFINITY, f64::min)
            }
        }
    }

    /// The largest radius the distribution can give.
    pub fn max(&self) -> f64 {
        match *self {
            RadiusDist::Fixed(r) => r,
            RadiusDist::Uniform { max, .. }
            | RadiusDist::Normal { max, .. }
            | RadiusDist::LogNormal { max, .. } => max,
            RadiusDist::Discrete { ref values, .. } => values.iter().copied().fold(0.0, f64::max),
        }
    }

    /// The mean particle volume `⟨(4/3) π R³⟩`, by a 4,000-point midpoint
    /// rule over `[min, max]` for the truncated normal and log-normal
    /// (relative error far below the spread of a fill's count), exact
    /// otherwise. Used to size a `fill` before its radii are drawn.
    pub fn mean_volume(&self) -> f64 {
        let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        match *self {
            RadiusDist::Fixed(r) => ball(r),
            RadiusDist::Uniform { min, max } if min == max => ball(min),
            RadiusDist::Uniform { min, max } => {
                4.0 / 3.0 * std::f64::consts::PI * (max.powi(4) - min.powi(4)) / (4.0 * (max - min))
            }
            RadiusDist::Normal { min, max, .. } | RadiusDist::LogNormal { min, max, .. } => {
                if min == max {
                    return ball(min);
                }
                let density = |r: f64| match *self {
                    RadiusDist::Normal { mean, sd, .. } => (-0.5 * ((r - mean) / sd).powi(2)).exp(),
                    RadiusDist::LogNormal { mean, sd, .. } => {
                        let (mu, s) = Self::lognormal_params(mean, sd);
                        (-0.5 * ((r.ln() - mu) / s).powi(2)).exp() / r
                    }
                    _ => unreachable!(),
                };
                let n = 4000;
                let h = (max - min) / n as f64;
                let (mut w, mut v) = (0.0, 0.0);
                for k in 0..n {
                    let r = min + (k as f64 + 0.5) * h;
                    let p = density(r);
                    w += p;
                    v += p * ball(r);
                }
                v / w
            }
            RadiusDist::Discrete {
                ref values,
                ref number,
            } => values.iter().zip(number).map(|(&r, &p)| p * ball(r)).sum(),
        }
    }
}

/// Count, mean, standard deviation (sample, `n − 1`), smallest and largest
/// of a set of radii: what the run prints per block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeStats {
    /// How many.
    pub count: usize,
    /// Mean radius.
    pub mean: f64,
    /// Sample standard deviation of the radius.
    pub sd: f64,
    /// Smallest radius.
    pub min: f64,
    /// Largest radius.
    pub max: f64,
}

impl SizeStats {
    /// The statistics of `radii` (all zero for none).
    pub fn of(radii: impl IntoIterator<Item = f64>) -> Self {
        let v: Vec<f64> = radii.into_iter().collect();
        let n = v.len();
        if n == 0 {
            return SizeStats {
                count: 0,
                mean: 0.0,
                sd: 0.0,
                min: 0.0,
                max: 0.0,
            };
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let ss: f64 = v.iter().map(|r| (r - mean).powi(2)).sum();
        SizeStats {
            count: n,
            mean,
            sd: if n > 1 {
                (ss / (n - 1) as f64).sqrt()
            } else {
                0.0
            },
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(0.0, f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insert::stream;

    #[test]
    fn truncated_draws_stay_in_range_and_discrete_by_mass_weights_by_volume() {
        let mut rng = stream(1, 2, 3);
        let n = RadiusDist::Normal {
            mean: 1.0,
            sd: 0.5,
            min: 0.8,
            max: 1.1,
        };
        let l = RadiusDist::LogNormal {
            mean: 1.0,
            sd: 0.5,
            min: 0.5,
            max: 2.0,
        };
        for _ in 0..10_000 {
            let r = n.draw(&mut rng);
            assert!((0.8..=1.1).contains(&r));
            let r = l.draw(&mut rng);
            assert!((0.5..=2.0).contains(&r));
        }
        // Equal masses of radius 1 and 2: eight times as many of radius 1.
        let d = RadiusDist::discrete(vec![1.0, 2.0], &[0.5, 0.5], true);
        let RadiusDist::Discrete { number, .. } = &d else {
            unreachable!()
        };
        assert!((number[0] - 8.0 / 9.0).abs() < 1e-15 && (number[1] - 1.0 / 9.0).abs() < 1e-15);
        assert_eq!((d.min(), d.max()), (1.0, 2.0));
    }

    #[test]
    fn mean_volume_matches_its_closed_forms() {
        let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        // ⟨R³⟩ of U[1, 2] = (2⁴ − 1⁴)/(4·1) = 3.75.
        let u = RadiusDist::Uniform { min: 1.0, max: 2.0 };
        assert!((u.mean_volume() - ball(3.75f64.cbrt())).abs() < 1e-12);
        // A normal truncated far out in its tails: ⟨R³⟩ = μ³ + 3μσ².
        let n = RadiusDist::Normal {
            mean: 1.0,
            sd: 0.05,
            min: 0.5,
            max: 1.5,
        };
        let want = 4.0 / 3.0 * std::f64::consts::PI * (1.0 + 3.0 * 0.0025);
        assert!(
            (n.mean_volume() / want - 1.0).abs() < 1e-6,
            "{}",
            n.mean_volume()
        );
        // Untruncated log-normal: ⟨R³⟩ = exp(3μ + 9σ²/2).
        let l = RadiusDist::LogNormal {
            mean: 1.0,
            sd: 0.1,
            min: 0.3,
            max: 3.0,
        };
        let (mu, s) = RadiusDist::lognormal_params(1.0, 0.1);
        let want = 4.0 / 3.0 * std::f64::consts::PI * (3.0 * mu + 4.5 * s * s).exp();
        assert!((l.mean_volume() / want - 1.0).abs() < 1e-6);
    }

    #[test]
    fn size_stats_are_the_sample_moments() {
        let s = SizeStats::of([1.0, 2.0, 3.0, 6.0]);
        assert_eq!((s.count, s.mean, s.min, s.max), (4, 3.0, 1.0, 6.0));
        assert!((s.sd - (14.0f64 / 3.0).sqrt()).abs() < 1e-15);
    }
}
