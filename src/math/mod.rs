//! Small numerical functions shared by the models: the scaled complementary error
//! function of the stochastic friction laws ([`erfcx`](erfcx::erfcx)) and the
//! short sine and cosine series of the contact twist ([`series`]); and
//! numbers printed for people, to a few significant digits ([`figures`]).

pub mod erfcx;
pub mod figures;
pub mod gauss_legendre;
#[cfg(test)]
pub(crate) mod quadrature;
pub mod series;
pub mod sphere_box;
