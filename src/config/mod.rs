//! Configuration: the TOML schema ([`schema`]) and its validation into the
//! typed parameters a run uses ([`Setup`]). Every error names the file, the key
//! (or the TOML line) and what is allowed, and is raised before step 0.

mod agree;
mod context;
pub mod diagnostics;
mod file_slices;
mod fixed;
mod laws;
pub mod limits;
mod outlets;
mod particles;
mod region;
pub mod schema;
mod setup;
mod toml_error;
mod walls;

pub use diagnostics::{DiagnosticSpec, GridSpec, KernelKind, Measure};
pub use particles::{BlockSizes, POUR_PREVIEW};
pub use setup::{Balance, LawTable, Material, OutputSettings, Setup, FIELD_NAMES};
