use std::path::PathBuf;

/// Why a source could not be loaded. Always names the file and, where known, where in it.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {what}")]
    Bad { path: PathBuf, what: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: loading cancelled")]
    Cancelled { path: PathBuf },
}

impl ImportError {
    pub fn bad(path: &std::path::Path, what: impl Into<String>) -> ImportError {
        ImportError::Bad { path: path.to_path_buf(), what: what.into() }
    }
    pub fn io(path: &std::path::Path, source: std::io::Error) -> ImportError {
        ImportError::Io { path: path.to_path_buf(), source }
    }
}
