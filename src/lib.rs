//! # gravel
//!
//! A discrete element method (DEM) code for granular materials that gives the
//! same trajectory to the last bit on any number of threads (and, with the
//! MPI transport, ranks). See the README for the user's guide and
//! `physics.md` for every formula.
//!
//! Layers, top to bottom of a step: [`config`] → [`sim`] (stages) →
//! [`integrate`], [`neighbor`] + [`domain`] (halo) + [`comm`], [`forces`] →
//! [`contact`] sub-models and [`walls`]; [`insert`] adds particles,
//! [`diagnostics`] and [`io`] report.

#![warn(missing_docs)]

pub mod comm;
pub mod config;
pub mod contact;
pub mod decomp;
pub mod diagnostics;
pub mod domain;
pub mod error;
pub mod forces;
pub mod history;
pub mod hugealloc;
pub mod insert;
pub mod integrate;
pub mod io;
pub mod isa;
pub mod neighbor;
pub mod particles;
pub mod report;
pub mod rng;
pub mod run;
pub mod sim;
pub mod snapshot;
pub mod timestep;
pub mod walls;
