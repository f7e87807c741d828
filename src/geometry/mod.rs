//! Where particles live: the simulation box with its periodic axes
//! ([`domain`]) and the walls that bound it ([`walls`]).

pub mod domain;
pub mod walls;
