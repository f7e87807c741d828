//! The state of a run on one rank: the particle arrays ([`particles`]),
//! the byte records they travel in ([`pack`]), the rank-agnostic
//! snapshot a checkpoint holds ([`snapshot`]), the periodic images of
//! owned particles among the ghosts ([`images`]), the rows a checkpoint is
//! written from ([`rows`]), and exact reservations for arrays refilled to a
//! known size ([`room`]).

pub mod history;
pub mod images;
pub mod pack;
pub mod particles;
pub mod room;
pub mod rows;
pub mod snapshot;
