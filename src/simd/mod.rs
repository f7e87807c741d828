//! Speed code: the choice between the baseline and AVX2 builds of the hot
//! loops ([`isa`]).

pub mod across;
pub(crate) mod eights;
pub mod isa;
pub mod lane;
pub mod prefetch;
