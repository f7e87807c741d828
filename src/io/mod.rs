//! Output files: particle frames and thermo rows in HDF5 (the names of the layout
//! in [`layout`], the writer in [`frames`] (tables in [`table`], contact lists in
//! [`contact_list`]), the readers in [`read`] and the summary
//! of `gravel info` in [`info`]), the XDMF sidecar that lets ParaView open the
//! frames as a time series ([`xdmf`]), and checkpoints ([`checkpoint`]).
//!
//! Every error names the file it concerns, see [`IoError`](crate::error::IoError).

pub mod checkpoint;
pub mod collective;
pub mod contact_list;
pub mod frames;
pub mod info;
pub mod layout;
pub mod read;
pub mod table;
pub mod verify;
pub mod xdmf;

#[cfg(test)]
mod tests;

/// HDF5 files are opened without HDF5's own file lock, in every mode, so
/// that a reader (`gravel info`, a test, a script) never makes a later
/// writer of the same file fail with "unable to lock file", and so that one
/// process may hold a file open twice (HDF5 refuses mixed locking flags).
/// gravel writes each file from one process (rank 0) and flushes it, and
/// checkpoints are replaced atomically by a rename; many HPC sites turn the
/// lock off anyway (`HDF5_USE_FILE_LOCKING=FALSE`) because parallel file
/// systems handle it badly.
fn unlocked() -> hdf5::FileBuilder {
    let mut b = hdf5::File::with_options();
    b.with_fapl(|p| p.file_locking(false));
    b
}

/// Open an HDF5 file read-only (see [`unlocked`]).
pub(crate) fn open_read(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    unlocked().open(path)
}

/// Open an HDF5 file for reading and writing (see [`unlocked`]).
pub(crate) fn open_rw(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    unlocked().open_rw(path)
}

/// Create (truncate) an HDF5 file (see [`unlocked`]).
pub(crate) fn create(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    unlocked().create(path)
}
