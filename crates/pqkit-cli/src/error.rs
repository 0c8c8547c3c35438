//! The command line's one error type and its exit codes.
//!
//! Exit codes: 0 success; 1 authentication, decryption or verification failed; 2 usage, input or I/O error;
//! 141 (the status a shell reports for SIGPIPE) when stdout was closed by its reader, which ends the program
//! quietly. Messages never hold secret bytes.

/// A failure, with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Authentication or verification failed (exit 1).
    Auth(String),
    /// Usage, input or I/O error (exit 2).
    Usage(String),
    /// Stdout was closed by its reader (exit 141, no message).
    ClosedStdout,
}

impl CliError {
    pub fn usage(msg: impl Into<String>) -> Self {
        CliError::Usage(msg.into())
    }
    pub fn auth(msg: impl Into<String>) -> Self {
        CliError::Auth(msg.into())
    }
    /// An I/O error on `what` (a file name, "stdin" or "stdout"). A broken pipe on stdout is not an error
    /// to report: the reader went away.
    pub fn io(what: &str, e: std::io::Error) -> Self {
        if what == "stdout" && e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::ClosedStdout;
        }
        CliError::Usage(format!("{what}: {e}"))
    }
    /// The same error with `prefix: ` before its message (usage errors only).
    pub fn in_file(self, prefix: &std::path::Path) -> Self {
        match self {
            CliError::Usage(m) => CliError::Usage(format!("{}: {m}", prefix.display())),
            other => other,
        }
    }
    /// The exit code.
    pub fn code(&self) -> u8 {
        match self {
            CliError::Auth(_) => 1,
            CliError::Usage(_) => 2,
            CliError::ClosedStdout => 141,
        }
    }
}

/// Library errors on caller input (bad lengths, parameters) are usage errors; authentication is exit 1.
impl From<pqkit::Error> for CliError {
    fn from(e: pqkit::Error) -> Self {
        match e {
            pqkit::Error::AuthenticationFailed { .. } => CliError::Auth(e.to_string()),
            _ => CliError::Usage(e.to_string()),
        }
    }
}

impl From<pqkit_bus::Error> for CliError {
    fn from(e: pqkit_bus::Error) -> Self {
        CliError::Usage(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

/// A library error about a file, prefixed with its name.
pub fn in_file(path: &std::path::Path) -> impl Fn(pqkit::Error) -> CliError + '_ {
    move |e| CliError::from(e).in_file(path)
}
