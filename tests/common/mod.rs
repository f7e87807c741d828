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
