//! The state of a run on one rank: the particle arrays ([`particles`]),
//! the byte records they travel in ([`pack`]), and the rank-agnostic
//! snapshot a checkpoint holds ([`snapshot`]).

pub mod history;
pub mod pack;
pub mod particles;
pub mod snapshot;
