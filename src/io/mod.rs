//! Output files: particle frames and thermo rows in HDF5 ([`h5out`]) and the XDMF
//! sidecar that lets ParaView open the frames as a time series ([`xdmf`]).
//!
//! Every error names the file it concerns, see [`IoError`].

pub mod checkpoint;
pub mod h5out;
pub mod xdmf;

use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};

/// An error while reading or writing an output file. Its message always starts with
/// the path of the file concerned.
#[derive(Debug)]
pub enum IoError {
    /// The operating system refused an operation (create, write, rename, ...).
    Fs {
        /// The file concerned.
        path: PathBuf,
        /// What was being done, e.g. "writing the XDMF sidecar".
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The HDF5 library reported an error.
    Hdf5 {
        /// The file concerned.
        path: PathBuf,
        /// What was being done, e.g. "writing frame 1000".
        context: String,
        /// The underlying error.
        source: hdf5::Error,
    },
    /// The file, or the data handed in, is not what gravel expects: not a gravel
    /// file, a missing frame, arrays of different lengths, a bad name, ...
    Invalid {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The result of an operation on an output file.
pub type IoResult<T> = Result<T, IoError>;

impl IoError {
    /// What went wrong, without the file's name (for messages that name it already).
    #[must_use]
    pub fn what(&self) -> String {
        match self {
            Self::Fs {
                context, source, ..
            } => format!("{context}: {source}"),
            Self::Hdf5 {
                context, source, ..
            } => format!("{context}: {source}"),
            Self::Invalid { message, .. } => message.clone(),
        }
    }

    /// The file the error concerns.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            Self::Fs { path, .. } | Self::Hdf5 { path, .. } | Self::Invalid { path, .. } => path,
        }
    }

    /// An [`IoError::Invalid`] for `path`.
    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fs {
                path,
                context,
                source,
            } => write!(f, "{}: {context}: {source}", path.display()),
            Self::Hdf5 {
                path,
                context,
                source,
            } => write!(f, "{}: {context}: {source}", path.display()),
            Self::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl Error for IoError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Fs { source, .. } => Some(source),
            Self::Hdf5 { source, .. } => Some(source),
            Self::Invalid { .. } => None,
        }
    }
}

/// Attaches the file path and what was being done to a lower-level error.
pub(crate) trait Context<T> {
    /// Converts the error into an [`IoError`] naming `path`; `context` says what was
    /// being done (only formatted when there is an error).
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T>;
}

impl<T> Context<T> for Result<T, hdf5::Error> {
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T> {
        self.map_err(|source| IoError::Hdf5 {
            path: path.to_path_buf(),
            context: context.to_string(),
            source,
        })
    }
}

impl<T> Context<T> for Result<T, std::io::Error> {
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T> {
        self.map_err(|source| IoError::Fs {
            path: path.to_path_buf(),
            context: context.to_string(),
            source,
        })
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_start_with_the_path() {
        let path = Path::new("out/run.h5");
        let fs: IoResult<()> = Err(std::io::Error::other("disk full")).at(path, "writing");
        let h5: IoResult<()> = Err(hdf5::Error::from("bad")).at(path, format_args!("frame {}", 3));
        let inv = IoError::invalid(path, "not a gravel file");
        for err in [fs.unwrap_err(), h5.unwrap_err(), inv] {
            assert!(err.to_string().starts_with("out/run.h5: "), "{err}");
            assert_eq!(err.path(), path);
        }
    }
}
