//! Time-step helpers: the critical time of the stiffest contact and a safe step.
//!
//! - Hertz: the Rayleigh time of the smallest particle,
//!   `t_R = π R sqrt(ρ/G) / (0.1631 ν + 0.8766)` (Li, Xu, Thornton, Powder
//!   Technol. 160 (2005) 219). Stable limit `0.3 t_R`; `"auto"` picks `0.15 t_R`.
//! - Hooke: the collision time of the lightest pair,
//!   `t_c = π / sqrt(k_n/m* − (γ_n/2m*)²)`. Stable limit `t_c/10`; `"auto"` `t_c/50`.
//! - WCA: `τ = σ sqrt(m/ε)` of the lightest particle. Stable limit `0.01 τ`;
//!   `"auto"` `0.002 τ`.

/// The derived time scales of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeScales {
    /// The critical time (Rayleigh, collision or WCA time), seconds.
    pub critical: f64,
    /// Largest step gravel accepts without `allow_large_dt`.
    pub stable: f64,
    /// The step `dt = "auto"` chooses.
    pub auto: f64,
    /// Which time this is.
    pub kind: &'static str,
}

impl TimeScales {
    /// Rayleigh time scales for a Hertz contact.
    pub fn rayleigh(radius: f64, density: f64, youngs: f64, poisson: f64) -> Self {
        let g = youngs / (2.0 * (1.0 + poisson));
        let t = std::f64::consts::PI * radius * (density / g).sqrt() / (0.1631 * poisson + 0.8766);
        Self {
            critical: t,
            stable: 0.3 * t,
            auto: 0.15 * t,
            kind: "Rayleigh time",
        }
    }

    /// Collision-time scales for a Hooke contact of effective mass `m_eff`.
    pub fn hooke(stiffness: f64, gamma: f64, m_eff: f64) -> Self {
        // Damped frequency; an overdamped contact has none, and then the
        // undamped ω₀ = sqrt(k/m*) sets the explicit integrator's limit.
        let w0_2 = stiffness / m_eff;
        let w2 = w0_2 - (gamma / (2.0 * m_eff)).powi(2);
        let t = std::f64::consts::PI / if w2 > 0.0 { w2 } else { w0_2 }.sqrt();
        Self {
            critical: t,
            stable: t / 10.0,
            auto: t / 50.0,
            kind: "Hooke collision time",
        }
    }

    /// WCA time scales for the lightest particle of mass `mass`.
    pub fn wca(sigma: f64, epsilon: f64, mass: f64) -> Self {
        let t = sigma * (mass / epsilon).sqrt();
        Self {
            critical: t,
            stable: 0.01 * t,
            auto: 0.002 * t,
            kind: "WCA time sigma*sqrt(m/epsilon)",
        }
    }

    /// The most restrictive of two.
    pub fn min(self, other: Self) -> Self {
        if other.stable < self.stable {
            other
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooke_collision_time_matches_the_chute_case() {
        // k_n = 2e5, γ_n = 50 m*, m = π/6 (d = 1, ρ = 1), m* = m/2.
        let m_eff = std::f64::consts::PI / 12.0;
        let t = TimeScales::hooke(2e5, 50.0 * m_eff, m_eff);
        let expect = std::f64::consts::PI / (2e5 / m_eff - 625.0f64).sqrt();
        assert!((t.critical - expect).abs() < 1e-15);
        assert!(1e-4 < t.stable);
    }
}
