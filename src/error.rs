//! The library's one error type. Every variant carries enough context (path, setting, key,
//! source and line) for a user to act on the message without reading the code.

use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in fpdb.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The storage engine reported an error.
    #[error("storage error: {0}")]
    Storage(String),

    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// Another process holds the store open for writing.
    #[error(
        "store {} is locked by another process (one writer at a time); wait for it to finish, \
         or use `fpdb query`, which opens the store read-only",
        path.display()
    )]
    Locked {
        /// The store directory.
        path: PathBuf,
    },

    /// There is no store at the given path (and creating one was not asked for).
    #[error("no fpdb store at {} (a store is created by the first `fpdb ingest`)", path.display())]
    NotFound {
        /// The store directory.
        path: PathBuf,
    },

    /// The store path names something that is not a directory (a file, a device).
    #[error(
        "{} is a file, not an fpdb store (a store is a directory, created by the first \
         `fpdb ingest`): give --db the store's directory or a new path",
        path.display()
    )]
    NotAStore {
        /// The path given.
        path: PathBuf,
    },

    /// The store was written by an incompatible version of fpdb, or is not an fpdb store.
    #[error("incompatible store format: found {found}, this fpdb reads {expected}")]
    IncompatibleFormat {
        /// What the store says it is.
        found: String,
        /// What this build understands.
        expected: String,
    },

    /// The store records settings (decision rules) this build does not know: a newer fpdb
    /// made it, and this one would decide without those rules.
    #[error(
        "the store was made with rules this fpdb does not know ({}): a newer fpdb made it; \
         open it with that one",
        names.join(", ")
    )]
    UnknownRules {
        /// The settings' names.
        names: Vec<String>,
    },

    /// The store was created with other fingerprint settings than the ones asked for now.
    #[error(
        "the store was created with {setting} = {stored}, but {setting} = {requested} was \
         requested; fingerprints made with different settings cannot be compared (use the \
         store's setting, or a new store)"
    )]
    OptionsMismatch {
        /// Name of the setting.
        setting: &'static str,
        /// The value saved in the store.
        stored: String,
        /// The value asked for.
        requested: String,
    },

    /// A record on disk could not be decoded.
    #[error("corrupt record in column family `{cf}`, key {key}: {detail}")]
    Corruption {
        /// Column family.
        cf: &'static str,
        /// Hex of the key.
        key: String,
        /// What was wrong.
        detail: String,
    },

    /// One input record could not be used; the run goes on without it.
    #[error("{source_name}:{line}: {reason}")]
    BadInput {
        /// File name, or `-` for stdin.
        source_name: String,
        /// 1-based line number (record number for formats without lines).
        line: u64,
        /// What was wrong.
        reason: String,
    },

    /// An option value is out of range or inconsistent.
    #[error("invalid option: {0}")]
    InvalidOption(String),

    /// The store was opened read-only and a write was attempted.
    #[error("the store is open read-only")]
    ReadOnly,
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
