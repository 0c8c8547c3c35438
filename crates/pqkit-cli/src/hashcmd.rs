//! `pqkit hash`: sha256sum-style digests and `--check`.

use crate::error::{CliError, CliResult};
use crate::format::read_full;
use clap::{Args, ValueEnum};
use pqkit::hash::Hasher;
use pqkit::hash::blake2::{Blake2b, Blake2s};
use pqkit::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use pqkit::hash::sha3::{Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256};
use pqkit::hash::skein::Skein512;
use pqkit_cli::parse::checklist::{escape, format_line, lines, parse_line};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HashAlg {
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    #[value(name = "sha512-224")]
    Sha512_224,
    #[value(name = "sha512-256")]
    Sha512_256,
    #[value(name = "sha3-224")]
    Sha3_224,
    #[value(name = "sha3-256")]
    Sha3_256,
    #[value(name = "sha3-384")]
    Sha3_384,
    #[value(name = "sha3-512")]
    Sha3_512,
    /// SHAKE128 (default output 32 bytes; any length with --len).
    Shake128,
    /// SHAKE256 (default output 64 bytes; any length with --len).
    Shake256,
    /// BLAKE2b (default 64 bytes; 1..=64 with --len).
    Blake2b,
    /// BLAKE2s (default 32 bytes; 1..=32 with --len).
    Blake2s,
    /// Skein-512 (default 64 bytes; any length with --len).
    Skein512,
}

#[derive(Args)]
pub struct HashArgs {
    /// The hash function.
    #[arg(long, value_enum, default_value = "sha256")]
    alg: HashAlg,
    /// Output length in bytes, for XOFs (shake*) and variable-length hashes (blake2*, skein512).
    #[arg(long, value_name = "N")]
    len: Option<usize>,
    /// Read lists of digests from FILES and verify them.
    #[arg(long, short = 'c')]
    check: bool,
    /// With --check: do not print OK for each verified file.
    #[arg(long)]
    quiet: bool,
    /// With --check: print nothing; the exit code alone tells (0 all matched, 1 otherwise).
    #[arg(long)]
    status: bool,
    /// With --check: exit 1 on improperly formatted lines.
    #[arg(long)]
    strict: bool,
    /// With --check: warn about each improperly formatted line.
    #[arg(long, short = 'w')]
    warn: bool,
    /// With --check: skip listed files that do not exist (exit 1 if no file was verified).
    #[arg(long)]
    ignore_missing: bool,
    /// Files to hash; stdin when none (or "-").
    files: Vec<PathBuf>,
}

/// Object-safe view of a fixed-output [`Hasher`].
trait DynHasher {
    fn up(&mut self, d: &[u8]);
    fn fin(self: Box<Self>) -> Vec<u8>;
}

impl<H: Hasher> DynHasher for H {
    fn up(&mut self, d: &[u8]) {
        Hasher::update(self, d)
    }
    fn fin(self: Box<Self>) -> Vec<u8> {
        Hasher::finalize(*self).as_ref().to_vec()
    }
}

fn boxed<H: Hasher + 'static>() -> Box<dyn DynHasher> {
    Box::new(H::new())
}

/// A streaming digest of any supported algorithm.
enum Digest {
    Fixed(Box<dyn DynHasher>),
    Shake128(Shake128, usize),
    Shake256(Shake256, usize),
    Blake2b(Blake2b),
    Blake2s(Blake2s),
    Skein(Skein512),
}

fn default_len(alg: HashAlg) -> Option<usize> {
    match alg {
        HashAlg::Shake128 | HashAlg::Blake2s => Some(32),
        HashAlg::Shake256 | HashAlg::Blake2b | HashAlg::Skein512 => Some(64),
        _ => None,
    }
}

impl Digest {
    fn new(alg: HashAlg, len: Option<usize>) -> CliResult<Self> {
        if len.is_some() && default_len(alg).is_none() {
            return Err(CliError::usage(format!("--len applies only to shake*, blake2* and skein512, not {alg:?}")));
        }
        let l = len.or(default_len(alg)).unwrap_or(0);
        if default_len(alg).is_some() && l == 0 {
            return Err(CliError::usage("--len must be at least 1"));
        }
        if l > MAX_LEN {
            return Err(CliError::usage(format!("--len {l}: at most {MAX_LEN} bytes")));
        }
        Ok(match alg {
            HashAlg::Sha224 => Digest::Fixed(boxed::<Sha224>()),
            HashAlg::Sha256 => Digest::Fixed(boxed::<Sha256>()),
            HashAlg::Sha384 => Digest::Fixed(boxed::<Sha384>()),
            HashAlg::Sha512 => Digest::Fixed(boxed::<Sha512>()),
            HashAlg::Sha512_224 => Digest::Fixed(boxed::<Sha512_224>()),
            HashAlg::Sha512_256 => Digest::Fixed(boxed::<Sha512_256>()),
            HashAlg::Sha3_224 => Digest::Fixed(boxed::<Sha3_224>()),
            HashAlg::Sha3_256 => Digest::Fixed(boxed::<Sha3_256>()),
            HashAlg::Sha3_384 => Digest::Fixed(boxed::<Sha3_384>()),
            HashAlg::Sha3_512 => Digest::Fixed(boxed::<Sha3_512>()),
            HashAlg::Shake128 => Digest::Shake128(Shake128::new(), l),
            HashAlg::Shake256 => Digest::Shake256(Shake256::new(), l),
            HashAlg::Blake2b => Digest::Blake2b(Blake2b::new(l)?),
            HashAlg::Blake2s => Digest::Blake2s(Blake2s::new(l)?),
            HashAlg::Skein512 => Digest::Skein(Skein512::new(l)?),
        })
    }
    fn update(&mut self, d: &[u8]) {
        match self {
            Digest::Fixed(h) => h.up(d),
            Digest::Shake128(h, _) => {
                h.update(d);
            }
            Digest::Shake256(h, _) => {
                h.update(d);
            }
            Digest::Blake2b(h) => {
                h.update(d);
            }
            Digest::Blake2s(h) => {
                h.update(d);
            }
            Digest::Skein(h) => h.update(d),
        }
    }
    fn finish(self) -> CliResult<Vec<u8>> {
        Ok(match self {
            Digest::Fixed(h) => h.fin(),
            Digest::Shake128(h, l) => {
                let mut o = vec![0u8; l];
                h.finalize_into(&mut o);
                o
            }
            Digest::Shake256(h, l) => {
                let mut o = vec![0u8; l];
                h.finalize_into(&mut o);
                o
            }
            Digest::Blake2b(h) => h.finalize_vec(),
            Digest::Blake2s(h) => h.finalize_vec(),
            Digest::Skein(h) => h.finalize(),
        })
    }
}

fn digest_reader(alg: HashAlg, len: Option<usize>, r: &mut dyn Read, name: &str) -> CliResult<Vec<u8>> {
    let mut d = Digest::new(alg, len)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = read_full(r, &mut buf).map_err(|e| CliError::io(name, e))?;
        d.update(&buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    d.finish()
}

/// Largest `--len`: 16 MiB of XOF output is more than any digest needs, and is allocated at once.
const MAX_LEN: usize = 16 << 20;

fn digest_path(alg: HashAlg, len: Option<usize>, path: &Path) -> CliResult<Vec<u8>> {
    if path.as_os_str() == "-" {
        return digest_reader(alg, len, &mut std::io::stdin().lock(), "stdin");
    }
    let name = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(&name, e))?;
    digest_reader(alg, len, &mut f, &name)
}

fn name_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().as_bytes().to_vec()
    }
}

fn path_of(b: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(b).into_owned())
    }
}

fn files_or_stdin(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.is_empty() { vec![PathBuf::from("-")] } else { files.to_vec() }
}

pub fn run(a: HashArgs) -> CliResult {
    if let Some(l) = a.len
        && l > MAX_LEN
    {
        return Err(CliError::usage(format!("--len {l}: at most {MAX_LEN} bytes")));
    }
    if a.check {
        return check(&a);
    }
    if a.status || a.strict || a.quiet || a.ignore_missing || a.warn {
        return Err(CliError::usage(
            "--status, --strict, --quiet, --warn and --ignore-missing apply only with --check",
        ));
    }
    Digest::new(a.alg, a.len)?; // validate options even with no input
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = false;
    for f in files_or_stdin(&a.files) {
        match digest_path(a.alg, a.len, &f) {
            Ok(d) => {
                out.write_all(&format_line(&d, &name_bytes(&f))).map_err(|e| CliError::io("stdout", e))?;
            }
            Err(e) => {
                // Keep going like sha256sum; report each failure.
                if let CliError::Usage(m) | CliError::Auth(m) = &e {
                    crate::io::warn(m);
                }
                err = true;
            }
        }
    }
    out.flush().map_err(|e| CliError::io("stdout", e))?;
    if err { Err(CliError::usage("some files could not be read")) } else { Ok(()) }
}

/// `--check`, with sha256sum's semantics and exit codes: 0 when every listed file matched; 1 when a digest
/// did not match, a file or list could not be read, no line was properly formatted, or (with --strict) a
/// line was improperly formatted.
fn check(a: &HashArgs) -> CliResult {
    // The digest length every line must have: a shorter (or longer) digest is not a match, even for a XOF.
    let want_len = Digest::new(a.alg, a.len)?.finish()?.len();
    let (mut failed, mut unreadable, mut malformed, mut ok, mut bad_lists) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut say = |name: &[u8], what: &str| -> CliResult {
        let (pre, name) = escape(name);
        let mut line = pre.as_bytes().to_vec();
        line.extend_from_slice(&name);
        line.extend_from_slice(what.as_bytes());
        line.push(b'\n');
        out.write_all(&line).map_err(|e| CliError::io("stdout", e))
    };
    for list in files_or_stdin(&a.files) {
        let lname = list.display().to_string();
        let mut data = Vec::new();
        let read = if list.as_os_str() == "-" {
            std::io::stdin().lock().read_to_end(&mut data)
        } else {
            std::fs::File::open(&list).and_then(|mut f| f.read_to_end(&mut data))
        };
        if let Err(e) = read {
            eprintln!("pqkit: {lname}: {e}");
            bad_lists += 1;
            continue;
        }
        let mut lines_ok = 0usize;
        for (lineno, line) in lines(&data) {
            let Some((want, name)) = parse_line(line, want_len) else {
                if a.warn {
                    eprintln!("pqkit: {lname}: {lineno}: improperly formatted {:?} checksum line", a.alg);
                }
                malformed += 1;
                continue;
            };
            lines_ok += 1;
            let path = path_of(&name);
            if a.ignore_missing && path.as_os_str() != "-" && !path.exists() {
                continue;
            }
            match digest_path(a.alg, a.len, &path) {
                Ok(got) if pqkit::ct::eq(&got, &want) => {
                    ok += 1;
                    if !a.quiet && !a.status {
                        say(&name, ": OK")?;
                    }
                }
                Ok(_) => {
                    failed += 1;
                    if !a.status {
                        say(&name, ": FAILED")?;
                    }
                }
                Err(e) => {
                    unreadable += 1;
                    if !a.status {
                        if let CliError::Usage(m) | CliError::Auth(m) = e {
                            crate::io::warn(&m);
                        }
                        say(&name, ": FAILED open or read")?;
                    }
                }
            }
        }
        if lines_ok == 0 {
            eprintln!("pqkit: {lname}: no properly formatted {:?} checksum lines found", a.alg);
            bad_lists += 1;
        } else if a.ignore_missing && ok + failed + unreadable == 0 {
            eprintln!("pqkit: {lname}: no file was verified");
            bad_lists += 1;
        }
    }
    out.flush().map_err(|e| CliError::io("stdout", e))?;
    if !a.status {
        if malformed > 0 {
            eprintln!("pqkit: WARNING: {malformed} line(s) improperly formatted");
        }
        if unreadable > 0 {
            eprintln!("pqkit: WARNING: {unreadable} listed file(s) could not be read");
        }
        if failed > 0 {
            eprintln!("pqkit: WARNING: {failed} computed checksum(s) did NOT match");
        }
    }
    if failed > 0 || unreadable > 0 || bad_lists > 0 || (a.strict && malformed > 0) {
        return Err(CliError::Auth(String::new()));
    }
    Ok(())
}
