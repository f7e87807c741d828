//! Small numerical functions shared by the models: the scaled complementary error
//! function of the stochastic friction laws ([`erfcx`](erfcx::erfcx)).

pub mod erfcx;
#[cfg(test)]
pub(crate) mod quadrature;
