//! The command line's side of public-key file encryption: recipient strings from `-r` and `-R` files,
//! identity files from `-i`, and the messages a user reads. The format itself (identities, recipient strings,
//! the recipient section that wraps the file key with HPKE) is `pqkit::aead::recipients`.

use crate::error::{CliError, CliResult};
use pqkit::aead::recipients::{self, Identity, Recipient, errors};
use std::io::{Read, Write};
use std::path::Path;
use zeroize::Zeroizing;

pub use pqkit::aead::recipients::{IDENTITY_PREFIX, VERSION};

/// Parses a recipient string; errors say what is wrong (usage error, exit 2). Only a string that starts
/// like a recipient (public) is quoted in a message: anything else may be a secret pasted by mistake.
pub fn parse_recipient(s: &str) -> CliResult<Recipient> {
    let s = s.trim();
    if s.starts_with(IDENTITY_PREFIX) || s.starts_with(crate::keyfile::SYMMETRIC_PREFIX) || s.starts_with("seed ") {
        return Err(CliError::usage(
            "this is a secret key (an identity or key file line), not a recipient: give the recipient that \
             `pqkit pubkey IDENTITY` prints, and keep the identity secret",
        ));
    }
    s.parse::<Recipient>().map_err(|e| match e {
        pqkit::Error::InvalidEncoding { reason, .. } if e == errors::NOT_A_RECIPIENT => CliError::usage(reason),
        pqkit::Error::InvalidEncoding { reason, .. } => {
            let short: String = s.chars().take(24).collect();
            CliError::usage(format!("recipient {short}...: {}", reason.trim_start_matches("recipient: ")))
        }
        other => CliError::usage(format!("recipient: {other}")),
    })
}

/// Reads `-R FILE`: one recipient per line; blank lines and lines starting with `#` are ignored.
pub fn read_recipients_file(path: &Path) -> CliResult<Vec<Recipient>> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| CliError::io(&name, e))?);
    if text.lines().any(|l| l.trim().starts_with(IDENTITY_PREFIX)) || text.starts_with(crate::keyfile::AGENT_HEADER) {
        return Err(CliError::usage(format!(
            "{name}: this is an identity file (a secret key), not a recipients file: give its recipient \
             (pqkit pubkey {name}) instead"
        )));
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_recipient(line).map_err(|e| match e {
            CliError::Usage(m) => CliError::usage(format!("{name}:{}: {m}", i + 1)),
            other => other,
        })?);
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{name}: no recipients in the file")));
    }
    Ok(out)
}

/// A new X-Wing identity: the identity file's text and its recipient string (`pqkit keygen --alg xwing`).
pub fn new_identity() -> CliResult<(Zeroizing<Vec<u8>>, String)> {
    let id = Identity::generate()?;
    Ok((Zeroizing::new(id.to_text().as_bytes().to_vec()), id.recipient().to_string()))
}

/// The recipient string of the identity in `path` (`pqkit pubkey IDENTITY`).
pub fn recipient_of_identity(path: &Path) -> CliResult<String> {
    Ok(read_identity(path)?.recipient().to_string())
}

/// Reads an identity file; errors name the file, never its content.
pub fn read_identity(path: &Path) -> CliResult<Identity> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read(path).map_err(|e| CliError::io(&name, e))?);
    crate::io::warn_if_exposed(path);
    let bad = || {
        CliError::usage(format!(
            "{name}: not a pqkit identity file (expected a line {IDENTITY_PREFIX} and 64 hex digits; make one with \
             pqkit keygen --alg xwing)"
        ))
    };
    let s = std::str::from_utf8(&text).map_err(|_| bad())?;
    Identity::from_text(s).map_err(|_| bad())
}

/// The version-2 prefix (magic, version, recipient section) for `recipients`, and the raw key of the inner
/// version-1 file.
pub fn wrap(recipients: &[Recipient]) -> CliResult<(Vec<u8>, Zeroizing<[u8; 32]>)> {
    recipients::wrap(recipients).map_err(|e| CliError::usage(e.to_string()))
}

/// Reads the recipient section after `start` (`"PQKITENC" || 0x02`, already read) and unwraps the file key
/// with `identities`; returns the inner file's raw key. Every failure is exit 1 and happens before any output
/// exists.
pub fn unwrap(r: &mut dyn Read, name: &str, start: Vec<u8>, identities: &[Identity]) -> CliResult<Zeroizing<[u8; 32]>> {
    recipients::unwrap(r, &start, identities).map_err(|e| {
        match e.get_ref().and_then(|i| i.downcast_ref::<pqkit::Error>()) {
            Some(k) if *k == errors::NO_MATCH => CliError::auth(format!(
                "{name}: no recipient stanza opens with this identity (wrong identity, or a tampered stanza); nothing \
             was written"
            )),
            Some(pqkit::Error::InvalidEncoding { reason, .. }) => {
                CliError::auth(format!("{name}: {reason}; nothing was written"))
            }
            Some(other) => CliError::auth(format!("{name}: {other}")),
            None => CliError::io(name, e),
        }
    })
}

/// Writes the version-2 prefix.
pub fn write_prefix(w: &mut dyn Write, prefix: &[u8], name: &str) -> CliResult {
    w.write_all(prefix).map_err(|e| CliError::io(name, e))
}
