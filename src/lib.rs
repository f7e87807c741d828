//! # gravel
//!
//! A discrete element method (DEM) code for granular materials that gives the
//! same trajectory to the last bit on any number of threads (and, with the
//! MPI transport, ranks). See the README for the user's guide and
//! `physics.md` for every formula.
//!
//! Layers, top to bottom of a step (`docs/architecture.md` has the map):
//! [`config`] → [`sim`] (named stages) → [`integrate`], [`neighbor`] +
//! [`parallel`] (halo, migration, transport), [`force`] → [`contact`]
//! sub-models and [`geometry`] (box, walls); [`state`] holds the particles
//! and snapshots, [`insert`] adds particles, [`diagnostics`] and [`io`]
//! report, [`run`] drives a run with its output, [`simd`] holds the
//! speed code, and [`math`] the small numerical functions the models share.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod config;
pub mod contact;
pub mod diagnostics;
pub mod error;
pub mod force;
pub mod geometry;
pub mod insert;
pub mod integrate;
pub mod io;
pub mod key;
pub mod math;
pub mod neighbor;
pub mod parallel;
pub mod rng;
pub mod run;
pub mod sim;
pub mod simd;
pub mod state;
