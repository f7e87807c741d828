//! Running on many ranks: the transport ([`comm`], and `mpi_comm` over
//! MPI with the feature `mpi`), the grid of subdomains ([`grid`]), the ghost halo ([`halo`]), the
//! launcher's rank count ([`launcher`]), the migration of particles with their contact history ([`migrate`])
//! and the memory the ranks of a node share for the halo update ([`node_pages`]);
//! inside a rank, the threads' regions over the force stage's runs ([`team`]).

pub mod balance;
pub mod comm;
pub mod grid;
pub mod halo;
pub mod launcher;
pub mod migrate;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
pub mod node_pages;
pub mod team;
