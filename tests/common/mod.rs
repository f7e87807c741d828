//! Helpers shared by the integration tests, one file per job:
//!
//! - [`cli`]: starting the `gravel` binary (and `mpirun`), reading what it printed;
//! - [`configs`]: the config builder ([`Config`], [`Case`] for the physics
//!   tests) and the shared configs;
//! - [`bits`]: comparing results to the last bit;
//! - [`physics`]: bodies by id, momenta, closed forms, test inputs.
//!
//! Everything is re-exported here (`use common::*;`). Each test crate uses
//! only part of it.
#![allow(dead_code, unused_imports)]

pub mod bits;
pub mod cli;
pub mod configs;
pub mod physics;

pub use bits::*;
pub use cli::*;
pub use configs::*;
pub use physics::*;

/// Panic, naming the pair, if two particles of `sim` touch (their
/// separation, images included, is less than the sum of their radii) and
/// the neighbour list lacks the pair: what the rebuild rule must never let
/// happen (`gravel::neighbor::trigger`). Frozen pairs are never listed.
/// Returns the number of touching pairs seen from the owned particles.
pub fn assert_list_holds_every_contact(sim: &gravel::sim::Simulation) -> usize {
    let p = &sim.particles;
    let rows = sim.neighbors.rows();
    let mut touching = 0;
    for i in 0..p.n_owned {
        let listed: std::collections::BTreeSet<usize> =
            rows.row(i).map(|e| rows.partner(e)).collect();
        for j in 0..p.len() {
            if j == i || (p.frozen[i] && p.frozen[j]) {
                continue;
            }
            let d = (p.x[j] - p.x[i]) + (p.shift_of(j) - p.shift_of(i));
            if d.length() >= p.radius[i] + p.radius[j] {
                continue;
            }
            touching += 1;
            assert!(
                listed.contains(&j) || (j < p.n_owned && rows.row(j).any(|e| rows.partner(e) == i)),
                "step {}: particles {} and {} touch ({} < {}) but are not in the list",
                sim.step,
                p.id[i],
                p.id[j],
                d.length(),
                p.radius[i] + p.radius[j]
            );
        }
    }
    touching
}
