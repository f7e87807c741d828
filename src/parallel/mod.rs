//! Running on many ranks: the transport ([`comm`], and `mpi_comm` over
//! MPI with the feature `mpi`), the grid of subdomains ([`grid`]), the ghost halo ([`halo`]), the
//! launcher's rank count ([`launcher`]) and the migration of particles with their contact history ([`migrate`]).

pub mod balance;
pub mod comm;
pub mod grid;
pub mod halo;
pub mod launcher;
pub mod migrate;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
