//! Where particles live: the simulation box with its periodic axes
//! ([`domain`]), the walls that bound it ([`walls`]) and how they move
//! ([`motion`]), and the regions that insertion and outlets use
//! ([`region`]).

pub mod domain;
pub mod motion;
pub mod region;
pub mod walls;
