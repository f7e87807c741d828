//! Output files: particle frames and thermo rows in HDF5 (the names of the layout
//! in [`layout`], the writer in [`frames`] (tables in [`table`], contact lists in
//! [`contact_list`]), the readers in [`read`] and the summary
//! of `gravel info` in [`info`]), the XDMF sidecar that lets ParaView open the
//! frames as a time series (rendered in [`xdmf`], kept up to date frame by frame
//! in [`sidecar`]), and checkpoints ([`checkpoint`]).
//! Every file is written through an HDF5 driver (`vfd.rs`) that keeps an undo
//! journal ([`journal`]), so that a run killed while HDF5 writes leaves an
//! output its restart rolls back to the last flush.
//!
//! Every error names the file it concerns, see [`IoError`](crate::error::IoError).

pub mod checkpoint;
pub mod collective;
pub mod contact_list;
pub mod frames;
pub mod info;
pub mod journal;
pub mod layout;
pub mod read;
pub mod sidecar;
pub mod table;
pub mod verify;
mod vfd;
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

/// Open an HDF5 file read-only (see [`journaled`] and [`reach_written_end`]).
pub(crate) fn open_read(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    reach_written_end(journaled(path, hdf5::file::OpenMode::Read)?)
}

/// Open an HDF5 file for reading and writing (see [`journaled`] and
/// [`reach_written_end`]).
pub(crate) fn open_rw(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    reach_written_end(journaled(path, hdf5::file::OpenMode::ReadWrite)?)
}

/// Opens or creates `path` through the undo-journal driver ([`vfd`]), so that
/// a process killed while HDF5 writes leaves a file its next opening rolls
/// back to the last flush ([`journal`]); without HDF5's own lock
/// ([`unlocked`]). With an HDF5 the driver does not support, through the
/// default driver.
fn journaled(path: &std::path::Path, mode: hdf5::file::OpenMode) -> hdf5::Result<hdf5::File> {
    use hdf5::file::OpenMode;
    use hdf5_sys::h5f::{H5Fcreate, H5Fopen, H5F_ACC_RDONLY, H5F_ACC_RDWR, H5F_ACC_TRUNC};
    use hdf5_sys::h5p::H5P_DEFAULT;
    let fapl = hdf5::plist::FileAccess::build()
        .file_locking(false)
        .finish()?;
    if !vfd::use_driver(fapl.id()) {
        return match mode {
            OpenMode::Read => unlocked().open(path),
            OpenMode::ReadWrite => unlocked().open_rw(path),
            _ => unlocked().create(path),
        };
    }
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| hdf5::Error::from("a file name with a NUL byte"))?;
    // `h5call!` holds HDF5's lock and turns a negative id into the error
    // stack.
    let id = hdf5::h5call!({
        // SAFETY: `name` is a NUL-terminated string and `fapl` a valid
        // file-access list, both alive through the call.
        unsafe {
            match mode {
                OpenMode::Read => H5Fopen(name.as_ptr(), H5F_ACC_RDONLY, fapl.id()),
                OpenMode::ReadWrite => H5Fopen(name.as_ptr(), H5F_ACC_RDWR, fapl.id()),
                _ => H5Fcreate(name.as_ptr(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()),
            }
        }
    })?;
    // SAFETY: `id` is a file id just opened, owned by nobody else.
    unsafe { hdf5::from_id(id) }
}

/// Lets HDF5 read `file` up to its last byte when the file is longer than
/// the end its superblock records.
///
/// HDF5 writes the superblock, with the file's end, last when it flushes.
/// A process killed during that flush (or with metadata evicted from the
/// cache before it) leaves objects past the recorded end that the groups
/// already point to, and every read of them fails ("addr overflow").
/// The bytes are on disk: raising the end to the file's length
/// (`H5Fincrement_filesize` with no increment, as `h5clear --increment`
/// does) makes them readable again. A file closed cleanly ends where its
/// superblock says, and is not changed.
fn reach_written_end(file: hdf5::File) -> hdf5::Result<hdf5::File> {
    extern "C" {
        fn H5Fincrement_filesize(
            file_id: hdf5_sys::h5i::hid_t,
            increment: hdf5_sys::h5::hsize_t,
        ) -> hdf5_sys::h5::herr_t;
    }
    // SAFETY: `file.id()` is a valid, open file id for the life of `file`;
    // the call only reads the file's length and sets its end of address
    // space in memory; HDF5's global lock is held, as for every call of
    // the `hdf5` crate.
    let status = hdf5::sync::sync(|| unsafe { H5Fincrement_filesize(file.id(), 0) });
    if status < 0 {
        return Err("cannot read the file's length (H5Fincrement_filesize)".into());
    }
    Ok(file)
}

/// Removes the file at `path`; one that is not there is no error.
pub(crate) fn remove_if_there(path: &std::path::Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Create (truncate) an HDF5 file (see [`journaled`]).
pub(crate) fn create(path: &std::path::Path) -> hdf5::Result<hdf5::File> {
    journaled(path, hdf5::file::OpenMode::Create)
}
