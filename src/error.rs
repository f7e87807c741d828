//! Errors and the exit codes they map to (0 success, 1 a run that failed, 2 bad input),
//! and the error of an output file, [`IoError`], which names the file.

use std::fmt;
use std::path::{Path, PathBuf};

/// Everything that can stop gravel.
#[derive(Debug, thiserror::Error)]
pub enum GravelError {
    /// Bad config or arguments, found before step 0 (exit 2).
    #[error("{}: {message}", file.display())]
    Config {
        /// The file at fault.
        file: PathBuf,
        /// What was wrong, naming the key or line and what is allowed.
        message: String,
    },
    /// A run that went bad (exit 1): names the particle or rank and the cause.
    #[error("run failed: {0}")]
    Run(String),
    /// Output could not be written or read (exit 1).
    #[error("i/o error: {0}")]
    Io(String),
    /// The run failed on another rank, which reports the cause (exit 1;
    /// this rank prints nothing more).
    #[error("run stopped: {0}")]
    Elsewhere(String),
}

impl GravelError {
    /// A config error in `file`.
    pub fn config(file: &Path, message: impl Into<String>) -> Self {
        GravelError::Config {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }

    /// The process exit status this error maps to.
    pub fn exit_code(&self) -> i32 {
        match self {
            GravelError::Config { .. } => 2,
            GravelError::Run(_) | GravelError::Io(_) | GravelError::Elsewhere(_) => 1,
        }
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, GravelError>;

impl From<IoError> for GravelError {
    fn from(e: IoError) -> Self {
        GravelError::Io(e.to_string())
    }
}

/// An error while reading or writing an output file. Its message always starts with
/// the path of the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The operating system refused an operation (create, write, rename, ...).
    #[error("{}: {context}: {source}", path.display())]
    Fs {
        /// The file concerned.
        path: PathBuf,
        /// What was being done, e.g. "writing the XDMF sidecar".
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The HDF5 library reported an error.
    #[error("{}: {context}: {source}", path.display())]
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
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The result of an operation on an output file.
pub type IoResult<T> = std::result::Result<T, IoError>;

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

/// Attaches the file path and what was being done to a lower-level error.
pub(crate) trait Context<T> {
    /// Converts the error into an [`IoError`] naming `path`; `context` says what was
    /// being done (only formatted when there is an error).
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T>;
}

impl<T> Context<T> for std::result::Result<T, hdf5::Error> {
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T> {
        self.map_err(|source| IoError::Hdf5 {
            path: path.to_path_buf(),
            context: context.to_string(),
            source,
        })
    }
}

impl<T> Context<T> for std::result::Result<T, std::io::Error> {
    fn at(self, path: &Path, context: impl fmt::Display) -> IoResult<T> {
        self.map_err(|source| IoError::Fs {
            path: path.to_path_buf(),
            context: context.to_string(),
            source,
        })
    }
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
