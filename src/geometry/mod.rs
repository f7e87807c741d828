//! Where particles live: the simulation box with its periodic axes
//! ([`domain`]), the walls that bound it ([`walls`]) and how they move
//! ([`motion`]), the regions that insertion and outlets use ([`region`]),
//! outlets and the `lost` rule for particles that leave through an open
//! face ([`outlet`]), and walls drawn as triangles ([`surface`]).

pub mod domain;
pub mod mesh;
pub mod motion;
pub mod outlet;
pub mod region;
pub mod surface;
pub mod walls;
