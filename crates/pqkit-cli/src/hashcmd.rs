//! `pqkit hash`: sha256sum-style digests and `--check`.

use crate::format::read_full;
use crate::{CliError, CliResult};
use clap::{Args, ValueEnum};
use pqkit::hash::Hasher;
use pqkit::hash::blake2::{Blake2b, Blake2s};
use pqkit::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use pqkit::hash::sha3::{Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256};
use pqkit::hash::skein::Skein512;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

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
    /// With --check: print only failures.
    #[arg(long)]
    quiet: bool,
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

fn digest_path(alg: HashAlg, len: Option<usize>, path: &str) -> CliResult<Vec<u8>> {
    if path == "-" {
        return digest_reader(alg, len, &mut std::io::stdin().lock(), "stdin");
    }
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(path, e))?;
    digest_reader(alg, len, &mut f, path)
}

/// sha256sum escaping: names with `\` or newline get a leading `\` and escapes.
fn escape(name: &str) -> (bool, String) {
    if name.contains('\\') || name.contains('\n') || name.contains('\r') {
        (true, name.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r"))
    } else {
        (false, name.to_string())
    }
}

fn unescape(name: &str) -> String {
    let mut out = String::new();
    let mut it = name.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn run(a: HashArgs) -> CliResult {
    if a.check {
        return check(&a);
    }
    Digest::new(a.alg, a.len)?; // validate options even with no input
    let files: Vec<String> =
        if a.files.is_empty() { vec!["-".into()] } else { a.files.iter().map(|p| p.display().to_string()).collect() };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = None;
    for f in &files {
        match digest_path(a.alg, a.len, f) {
            Ok(d) => {
                let (esc, name) = escape(f);
                let _ = writeln!(out, "{}{}  {}", if esc { "\\" } else { "" }, hex::encode(d), name);
            }
            Err(e) => {
                // Keep going like sha256sum; report each failure.
                let (CliError::Usage(m) | CliError::Auth(m)) = &e;
                eprintln!("pqkit: {m}");
                err = Some(e);
            }
        }
    }
    out.flush().map_err(|e| CliError::io("stdout", e))?;
    match err {
        Some(CliError::Usage(_)) | Some(CliError::Auth(_)) => Err(CliError::usage("some files could not be read")),
        None => Ok(()),
    }
}

fn check(a: &HashArgs) -> CliResult {
    let lists: Vec<String> =
        if a.files.is_empty() { vec!["-".into()] } else { a.files.iter().map(|p| p.display().to_string()).collect() };
    let (mut failed, mut unreadable, mut malformed, mut ok) = (0usize, 0usize, 0usize, 0usize);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for list in &lists {
        let reader: Box<dyn BufRead> = if list == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(std::io::BufReader::new(std::fs::File::open(list).map_err(|e| CliError::io(list, e))?))
        };
        for (lineno, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| CliError::io(list, e))?;
            if line.trim().is_empty() {
                continue;
            }
            let (esc, rest) = match line.strip_prefix('\\') {
                Some(r) => (true, r),
                None => (false, line.as_str()),
            };
            let parsed = rest.split_once(' ').and_then(|(h, n)| {
                let n = n.strip_prefix(' ').or_else(|| n.strip_prefix('*'))?;
                let d = hex::decode(h).ok().filter(|d| !d.is_empty())?;
                Some((d, if esc { unescape(n) } else { n.to_string() }))
            });
            let Some((want, name)) = parsed else {
                eprintln!("pqkit: {list}:{}: improperly formatted digest line", lineno + 1);
                malformed += 1;
                continue;
            };
            let len = if default_len(a.alg).is_some() { Some(a.len.unwrap_or(want.len())) } else { None };
            match digest_path(a.alg, len, &name) {
                Ok(got) if pqkit::ct::eq(&got, &want) => {
                    ok += 1;
                    if !a.quiet {
                        let _ = writeln!(out, "{name}: OK");
                    }
                }
                Ok(_) => {
                    failed += 1;
                    let _ = writeln!(out, "{name}: FAILED");
                }
                Err(e) => {
                    unreadable += 1;
                    let (CliError::Usage(m) | CliError::Auth(m)) = e;
                    eprintln!("pqkit: {m}");
                    let _ = writeln!(out, "{name}: FAILED open or read");
                }
            }
        }
    }
    let _ = out.flush();
    if malformed > 0 && ok + failed + unreadable == 0 {
        return Err(CliError::usage("no properly formatted digest lines found"));
    }
    if failed > 0 || unreadable > 0 {
        return Err(CliError::auth(format!(
            "WARNING: {failed} computed digest(s) did not match, {unreadable} file(s) could not be read"
        )));
    }
    if malformed > 0 {
        return Err(CliError::usage(format!("{malformed} line(s) improperly formatted")));
    }
    Ok(())
}
