//! Reading the state of a [`Simulation`] in the physics tests: bodies by
//! particle id, total momenta, closed forms, a deterministic random
//! generator for test inputs, and a one-thread pool.

use glam::DVec3;
use gravel::sim::Simulation;

/// `β(e) = −ln e / sqrt(ln² e + π²)` (physics.md), written out independently of the engine.
pub fn beta_of(e: f64) -> f64 {
    let l = e.ln();
    -l / (l * l + std::f64::consts::PI * std::f64::consts::PI).sqrt()
}

/// Mass of a solid sphere.
pub fn sphere_mass(radius: f64, density: f64) -> f64 {
    density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3)
}

/// Local index of the owned particle with global id `id` (the local order
/// changes at every neighbour-list rebuild).
pub fn local(sim: &Simulation, id: u64) -> usize {
    let p = &sim.particles;
    (0..p.n_owned)
        .find(|&k| p.id[k] == id)
        .unwrap_or_else(|| panic!("no particle with id {id}"))
}

/// `(x, v, ω, force, torque)` of the particle with id `id`.
pub fn body(sim: &Simulation, id: u64) -> (DVec3, DVec3, DVec3, DVec3, DVec3) {
    let k = local(sim, id);
    let p = &sim.particles;
    (p.x[k], p.v[k], p.omega[k], p.force[k], p.torque[k])
}

/// Total momenta of the owned particles and the scales round-off is relative to.
#[derive(Debug, Clone, Copy)]
pub struct Momenta {
    /// `Σ m v`.
    pub linear: DVec3,
    /// `Σ (m x × v + I ω)` about the origin, `I = 0.4 m R²`.
    pub angular: DVec3,
    /// `Σ m |v|`.
    pub linear_scale: f64,
    /// `Σ (m |x| |v| + I |ω|)`.
    pub angular_scale: f64,
}

/// The [`Momenta`] of the owned particles, summed in order of id.
pub fn momenta(sim: &Simulation) -> Momenta {
    let p = &sim.particles;
    let mut order: Vec<usize> = (0..p.n_owned).collect();
    order.sort_by_key(|&k| p.id[k]);
    let mut out = Momenta {
        linear: DVec3::ZERO,
        angular: DVec3::ZERO,
        linear_scale: 0.0,
        angular_scale: 0.0,
    };
    for k in order {
        let (m, r) = (p.mass[k], p.radius[k]);
        let inertia = 0.4 * m * r * r;
        out.linear += m * p.v[k];
        out.angular += m * p.x[k].cross(p.v[k]) + inertia * p.omega[k];
        out.linear_scale += m * p.v[k].length();
        out.angular_scale += m * p.x[k].length() * p.v[k].length() + inertia * p.omega[k].length();
    }
    out
}

/// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): a tiny deterministic generator for test inputs.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[a, b)`.
    pub fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
}

/// Run `f` on a one-thread rayon pool. The engine's results do not depend on
/// the thread count (its design promise), and these systems hold a handful of
/// particles, where waking pool threads every stage costs more than the work.
pub fn serial<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    pool(1).install(f)
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}
