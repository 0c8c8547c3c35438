//! Inputs and stdout: `-` for stdin everywhere, files read whole with their names in every error, hex options
//! decoded without echoing them, and every write to stdout checked (a closed stdout ends the program quietly,
//! [`CliError::ClosedStdout`]; `println!` would panic).

use crate::error::{CliError, CliResult};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Whether an optional input path means stdin (absent or `-`).
pub fn is_stdin(p: &Option<PathBuf>) -> bool {
    p.as_ref().is_none_or(|p| p.as_os_str() == "-")
}

/// Reads a whole file; the error names it.
pub fn read_file(path: &Path) -> CliResult<Zeroizing<Vec<u8>>> {
    if path.as_os_str() == "-" {
        return read_stdin();
    }
    std::fs::read(path).map(Zeroizing::new).map_err(|e| CliError::io(&path.display().to_string(), e))
}

/// Reads all of stdin.
pub fn read_stdin() -> CliResult<Zeroizing<Vec<u8>>> {
    let mut v = Zeroizing::new(Vec::new());
    std::io::stdin().read_to_end(&mut v).map_err(|e| CliError::io("stdin", e))?;
    Ok(v)
}

/// Reads the message input: a file, or stdin when absent or `-`.
pub fn read_input(input: &Option<PathBuf>) -> CliResult<Zeroizing<Vec<u8>>> {
    match input {
        Some(p) if p.as_os_str() != "-" => read_file(p),
        _ => read_stdin(),
    }
}

/// Writes `data` to stdout and flushes it.
pub fn write_stdout(data: &[u8]) -> CliResult {
    let mut o = std::io::stdout().lock();
    o.write_all(data).and_then(|_| o.flush()).map_err(|e| CliError::io("stdout", e))
}

/// Prints one line on stdout.
pub fn print_line(s: &str) -> CliResult {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{s}").and_then(|_| o.flush()).map_err(|e| CliError::io("stdout", e))
}

/// Prints a line on stderr; a closed stderr is ignored (there is nowhere left to report it).
pub fn warn(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "pqkit: {msg}");
}

/// Decodes a hex option of an exact length (if given); the error names the option, never its value.
pub fn unhex(opt: &str, s: &str, len: Option<usize>) -> CliResult<Zeroizing<Vec<u8>>> {
    use pqkit_cli::parse::hex::{HexError, decode_exact};
    decode_exact(s, len).map_err(|e| match e {
        HexError::NotHex => CliError::usage(format!("{opt}: not valid hex")),
        HexError::WrongLength { expected, actual } => {
            CliError::usage(format!("{opt}: expected {expected} bytes, got {actual}"))
        }
    })
}

/// Warns, as ssh does for its keys, when a file holding a secret is readable or writable by others.
pub fn warn_if_exposed(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            let mode = m.permissions().mode() & 0o777;
            if m.is_file() && mode & 0o077 != 0 {
                warn(&format!(
                    "warning: {} holds a secret key but is accessible by others (mode {mode:04o}): chmod 600 it",
                    path.display()
                ));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
