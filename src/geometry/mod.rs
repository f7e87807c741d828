//! Where particles live: the simulation box with its periodic axes
//! ([`domain`]), the walls that bound it ([`walls`]) and the regions that
//! insertion and outlets use ([`region`]); outlets and the `lost` rule for
//! particles that leave through an open face ([`outlet`]).

pub mod domain;
pub mod outlet;
pub mod region;
pub mod walls;
