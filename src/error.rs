//! Errors and the exit codes they map to (0 success, 1 a run that failed, 2 bad input).

use std::fmt;
use std::path::{Path, PathBuf};

/// Everything that can stop gravel.
#[derive(Debug)]
pub enum GravelError {
    /// Bad config or arguments, found before step 0 (exit 2).
    Config {
        /// The file at fault.
        file: PathBuf,
        /// What was wrong, naming the key or line and what is allowed.
        message: String,
    },
    /// A run that went bad (exit 1): names the particle or rank and the cause.
    Run(String),
    /// Output could not be written or read (exit 1).
    Io(String),
    /// The run failed on another rank, which reports the cause (exit 1;
    /// this rank prints nothing more).
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

impl fmt::Display for GravelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GravelError::Config { file, message } => write!(f, "{}: {}", file.display(), message),
            GravelError::Run(m) => write!(f, "run failed: {m}"),
            GravelError::Io(m) => write!(f, "i/o error: {m}"),
            GravelError::Elsewhere(m) => write!(f, "run stopped: {m}"),
        }
    }
}

impl std::error::Error for GravelError {}

/// Result alias.
pub type Result<T> = std::result::Result<T, GravelError>;

impl From<crate::io::IoError> for GravelError {
    fn from(e: crate::io::IoError) -> Self {
        GravelError::Io(e.to_string())
    }
}
