//! `pqkit encrypt` / `pqkit decrypt`: the pqkit file format (`pqkit::aead::stream`) on all cores. This file
//! holds the files, batches, threads and progress; every segment is sealed and opened by the library.

use crate::error::{CliError, CliResult};
use crate::format::{self, FileAlg, read_full};
use crate::io::is_stdin;
use crate::output::{Guard, Sink};
use crate::recipient;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pqkit::aead::TAG_LEN;
use pqkit::aead::stream::{
    FileKey, Header, KeySource, MAX_SEGMENTS, SEGMENT_CT_LEN as SEG_CT_LEN, SEGMENT_LEN as SEG_LEN, errors,
};
use rayon::prelude::*;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Inputs larger than this get a progress bar (when stderr is a terminal).
const PROGRESS_MIN: u64 = 4 << 20;

#[derive(Args)]
pub struct KeyArgs {
    /// Key file made by `pqkit keygen`. Without it (and without --passphrase-file) a passphrase is prompted.
    #[arg(long, short = 'k', value_name = "KEYFILE", conflicts_with = "passphrase_file")]
    key: Option<PathBuf>,
    /// Read the passphrase from the first line of this file instead of prompting.
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
}

#[derive(Args)]
pub struct CommonArgs {
    /// Output file (`-` for stdout). Default: stdout when reading stdin; otherwise INPUT.pqk (encrypt) or
    /// INPUT without .pqk (decrypt).
    #[arg(long = "out", short = 'o', value_name = "FILE", alias = "output")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file (never a symlink, device or FIFO, an input or the key file), and let
    /// `encrypt` write its binary output to a terminal.
    #[arg(long, short = 'f')]
    force: bool,
    /// Worker threads (default: all cores; at most 4 x the CPU count). The output does not depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Default cap on the Argon2id memory a file may ask for: 1 GiB (in KiB), 16 times the default cost, which a
/// laptop can spare; a forged header cannot make `decrypt` allocate more without `--max-memory`.
pub const DEFAULT_MAX_MEMORY: u32 = 1 << 20;
/// Default cap on Argon2id passes: at 1 GiB, 16 passes take tens of seconds on a laptop, not minutes.
pub const DEFAULT_MAX_PASSES: u32 = 16;
/// Default cap on Argon2id lanes (the file's parallelism; each lane needs at least 8 KiB).
pub const DEFAULT_MAX_LANES: u32 = 16;

/// The Argon2id costs this run accepts. `decrypt` refuses a file asking for more before any work, and
/// `encrypt` refuses to write a file that `decrypt` with the same limits would refuse.
#[derive(Args)]
pub struct LimitArgs {
    /// Largest Argon2id memory, in KiB, accepted (default 1 GiB; the format's ceiling is 4194304 = 4 GiB).
    #[arg(long, value_name = "KIB", default_value_t = DEFAULT_MAX_MEMORY)]
    max_memory: u32,
    /// Largest Argon2id pass count accepted (the format's ceiling is 64).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PASSES)]
    max_passes: u32,
    /// Largest Argon2id lane count accepted (the format's ceiling is 64).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LANES)]
    max_lanes: u32,
}

impl LimitArgs {
    /// Refuses costs above these limits, naming the flag that raises each; also refuses limits above the
    /// format's own ceilings (which no pqkit can read).
    fn check(&self, m: u32, t: u32, p: u32, what: &str) -> CliResult {
        use pqkit::aead::stream::{MAX_M_COST, MAX_P_COST, MAX_T_COST};
        for (flag, cost, limit, ceiling, unit) in [
            ("--max-memory", m, self.max_memory, MAX_M_COST, " KiB"),
            ("--max-passes", t, self.max_passes, MAX_T_COST, ""),
            ("--max-lanes", p, self.max_lanes, MAX_P_COST, ""),
        ] {
            if cost > ceiling {
                return Err(CliError::usage(format!(
                    "{what} Argon2id cost {cost}{unit} is above the format's ceiling {ceiling}{unit}: no pqkit \
                     can decrypt it"
                )));
            }
            if cost > limit {
                return Err(CliError::usage(format!(
                    "{what} Argon2id cost {cost}{unit} is above the limit {limit}{unit}: refusing before any \
                     work (raise it with {flag} {cost} if you trust this file)"
                )));
            }
        }
        Ok(())
    }
}

#[derive(Args)]
pub struct EncryptArgs {
    /// Input file; stdin when absent or "-".
    input: Option<PathBuf>,
    /// The AEAD. xchacha20-poly1305 is the default: fast on every CPU (no AES hardware needed), constant
    /// time in software, and its 24-byte nonce leaves a 19-byte random prefix per file.
    #[arg(long, value_enum, default_value = "xchacha20-poly1305")]
    alg: FileAlg,
    #[command(flatten)]
    key: KeyArgs,
    /// Encrypt to this recipient (a `pqkit-xwing1...` string printed by `pqkit keygen --alg xwing`) instead of a
    /// key or passphrase; repeat for several recipients. Writes a version-2 file.
    #[arg(long = "recipient", short = 'r', value_name = "RECIPIENT", conflicts_with_all = ["key", "passphrase_file"])]
    recipients: Vec<String>,
    /// Encrypt to every recipient listed in FILE (one per line; blank lines and `#` comments ignored);
    /// repeatable, and combines with -r.
    #[arg(long = "recipients-file", short = 'R', value_name = "FILE", conflicts_with_all = ["key", "passphrase_file"])]
    recipients_files: Vec<PathBuf>,
    /// Argon2id memory in KiB (passphrase only). Default 65536 (64 MiB), RFC 9106's second recommendation.
    #[arg(long, value_name = "KIB", default_value_t = 65536)]
    argon2_memory: u32,
    /// Argon2id passes (passphrase only).
    #[arg(long, value_name = "N", default_value_t = 3)]
    argon2_passes: u32,
    /// Argon2id lanes (passphrase only).
    #[arg(long, value_name = "N", default_value_t = 4)]
    argon2_lanes: u32,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct DecryptArgs {
    /// Input file; stdin when absent or "-".
    input: Option<PathBuf>,
    #[command(flatten)]
    key: KeyArgs,
    /// Identity file (from `pqkit keygen --alg xwing`) for a file encrypted to recipients; repeatable (each is
    /// tried).
    #[arg(long = "identity", short = 'i', value_name = "IDENTITY", conflicts_with_all = ["key", "passphrase_file"])]
    identities: Vec<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn open_input(p: &Option<PathBuf>) -> CliResult<(Box<dyn Read>, String, Option<u64>)> {
    if is_stdin(p) {
        return Ok((Box::new(std::io::stdin().lock()), "stdin".into(), None));
    }
    let p = p.as_ref().expect("not stdin");
    let name = p.display().to_string();
    let f = std::fs::File::open(p).map_err(|e| CliError::io(&name, e))?;
    let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    Ok((Box::new(f), name, len))
}

/// `-j` is bounded by this many threads per CPU: each thread holds a batch of segments in memory.
const MAX_THREADS_PER_CPU: usize = 4;

fn pool(threads: Option<usize>) -> CliResult<rayon::ThreadPool> {
    let n = match threads {
        Some(0) => return Err(CliError::usage("--threads must be at least 1")),
        Some(n) => {
            let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
            let max = cpus * MAX_THREADS_PER_CPU;
            if n > max {
                return Err(CliError::usage(format!(
                    "--threads {n}: at most {max} ({MAX_THREADS_PER_CPU} x the {cpus} CPUs); more threads only use \
                     memory"
                )));
            }
            n
        }
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| CliError::usage(e.to_string()))
}

fn progress(quiet: bool, len: Option<u64>) -> ProgressBar {
    match len {
        Some(len) if !quiet && len > PROGRESS_MIN && std::io::stderr().is_terminal() => {
            let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
            {
                pb.set_style(style);
            }
            pb
        }
        _ => ProgressBar::hidden(),
    }
}

fn read_passphrase(key: &KeyArgs, confirm: bool) -> CliResult<Zeroizing<Vec<u8>>> {
    if let Some(p) = &key.passphrase_file {
        let name = p.display().to_string();
        let data = Zeroizing::new(std::fs::read(p).map_err(|e| CliError::io(&name, e))?);
        let line = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Err(CliError::usage(format!("{name}: the passphrase is empty")));
        }
        return Ok(Zeroizing::new(line.to_vec()));
    }
    let pw = Zeroizing::new(rpassword::prompt_password("Passphrase: ").map_err(|e| {
        CliError::usage(format!(
            "cannot read the passphrase from a terminal ({e}): use --passphrase-file FILE or --key KEYFILE"
        ))
    })?);
    if pw.is_empty() {
        return Err(CliError::usage("the passphrase is empty"));
    }
    if confirm {
        let again = Zeroizing::new(rpassword::prompt_password("Passphrase (again): ").map_err(|e| {
            CliError::usage(format!(
                "cannot read the passphrase from a terminal ({e}): use --passphrase-file FILE or --key KEYFILE"
            ))
        })?);
        if *again != *pw {
            return Err(CliError::usage("the passphrases do not match"));
        }
    }
    Ok(Zeroizing::new(pw.as_bytes().to_vec()))
}

/// The file key for `header` from the user's key file or passphrase.
fn file_key(header: &Header, key: &KeyArgs, confirm: bool) -> CliResult<FileKey> {
    match (header.key_source(), &key.key) {
        (KeySource::Key, Some(path)) => Ok(FileKey::from_key(header, &format::read_keyfile(path)?)?),
        (KeySource::Key, None) => Err(CliError::usage("this file was encrypted with a key file: pass --key KEYFILE")),
        (KeySource::Argon2id { .. }, Some(_)) => {
            Err(CliError::usage("this file was encrypted with a passphrase, not a key file: drop --key"))
        }
        (KeySource::Argon2id { .. }, None) => {
            let pw = read_passphrase(key, confirm)?;
            Ok(FileKey::from_passphrase(header, &pw)?)
        }
        _ => Err(CliError::usage("this file uses a key source this pqkit does not support")),
    }
}

/// The output of `encrypt` / `decrypt`, checked against every file the command reads (the input, the key,
/// passphrase and identity files) by the one output mechanism.
fn sink(
    input: &Option<PathBuf>,
    output: &Option<PathBuf>,
    reads: &[(&Path, &str)],
    force: bool,
    decrypt: bool,
) -> CliResult<(Sink, String)> {
    let dest = match output {
        Some(p) => p.clone(),
        None if is_stdin(input) => PathBuf::from("-"),
        None => {
            let inp = input.as_ref().expect("not stdin");
            if decrypt {
                match inp.to_str().and_then(|s| s.strip_suffix(".pqk")) {
                    Some(stem) if !stem.is_empty() => PathBuf::from(stem),
                    _ => {
                        return Err(CliError::usage(format!(
                            "{}: name does not end in .pqk: say where to write the plaintext with -o",
                            inp.display()
                        )));
                    }
                }
            } else {
                let mut s = inp.clone().into_os_string();
                s.push(".pqk");
                PathBuf::from(s)
            }
        }
    };
    let mut g = Guard::new(force);
    for (p, role) in reads {
        g.protect(p, role);
    }
    if let Some(i) = input.as_ref().filter(|_| !is_stdin(input)) {
        g.protect(i, "input");
    }
    let d = g.output(&dest)?;
    if d == crate::output::Dest::Stdout && !decrypt && !force && std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "refusing to write binary ciphertext to a terminal: redirect it, give -o FILE, or use --force",
        ));
    }
    Ok((g.sink(&d, true)?, d.name()))
}

/// Segments per batch and thread: each batch is read, processed in parallel, then written in order.
const SEGS_PER_THREAD: usize = 8;

pub fn encrypt(a: EncryptArgs) -> CliResult {
    // Recipients (version-2 files), parsed before anything is opened or written.
    let mut recipients = Vec::new();
    for r in &a.recipients {
        recipients.push(recipient::parse_recipient(r)?);
    }
    for f in &a.recipients_files {
        recipients.extend(recipient::read_recipients_file(f)?);
    }
    let source = if a.key.key.is_some() || !recipients.is_empty() {
        KeySource::Key
    } else {
        a.limits.check(a.argon2_memory, a.argon2_passes, a.argon2_lanes, "--argon2-*: the")?;
        pqkit::kdf::argon2::Params::new(a.argon2_memory, a.argon2_passes, a.argon2_lanes)?;
        KeySource::Argon2id { m_cost: a.argon2_memory, t_cost: a.argon2_passes, p_cost: a.argon2_lanes }
    };
    let (mut input, in_name, in_len) = open_input(&a.input)?;
    let mut reads: Vec<(&Path, &str)> = a.recipients_files.iter().map(|p| (p.as_path(), "recipients file")).collect();
    reads.extend(a.key.key.iter().map(|p| (p.as_path(), "key file")));
    reads.extend(a.key.passphrase_file.iter().map(|p| (p.as_path(), "passphrase file")));
    let (mut out, out_name) = sink(&a.input, &a.common.output, &reads, a.common.force, false)?;
    let header = format::new_header(a.alg, source)?;
    let (prefix, key) = if recipients.is_empty() {
        (Vec::new(), file_key(&header, &a.key, true)?)
    } else {
        let (prefix, raw) = recipient::wrap(&recipients)?;
        (prefix, FileKey::from_key(&header, &raw[..])?)
    };
    let pool = pool(a.common.threads)?;
    let pb = progress(a.common.quiet, in_len);
    recipient::write_prefix(out.writer(), &prefix, &out_name)?;
    out.writer().write_all(header.as_bytes()).map_err(|e| CliError::io(&out_name, e))?;

    let batch = pool.current_num_threads() * SEGS_PER_THREAD;
    let mut buf = Zeroizing::new(vec![0u8; batch * SEG_LEN + 1]);
    let mut ct = Vec::with_capacity(batch * SEG_CT_LEN);
    let mut carry: Option<u8> = None;
    let mut index: u64 = 0;
    loop {
        let mut n = 0;
        if let Some(b) = carry.take() {
            buf[0] = b;
            n = 1;
        }
        n += read_full(&mut input, &mut buf[n..]).map_err(|e| CliError::io(&in_name, e))?;
        let eof = n < buf.len();
        let data_len = if eof { n } else { n - 1 };
        if !eof {
            carry = Some(buf[n - 1]);
        }
        let nseg = if eof { data_len.div_ceil(SEG_LEN).max(1) } else { data_len / SEG_LEN };
        if index + nseg as u64 > MAX_SEGMENTS {
            return Err(CliError::usage(format!(
                "{in_name}: input too large for one file (at most 2^32 segments, 256 TiB)"
            )));
        }
        let data = &buf[..data_len];
        ct.clear();
        ct.resize(data_len + nseg * TAG_LEN, 0);
        pool.install(|| {
            ct.par_chunks_mut(SEG_CT_LEN).enumerate().try_for_each(|(k, oc)| {
                let plen = oc.len() - TAG_LEN;
                let g = index + k as u64;
                let last = eof && k == nseg - 1;
                let (body, tag) = oc.split_at_mut(plen);
                body.copy_from_slice(&data[k * SEG_LEN..k * SEG_LEN + plen]);
                tag.copy_from_slice(&key.seal_segment(g, last, body)?);
                Ok::<(), pqkit::Error>(())
            })
        })?;
        out.writer().write_all(&ct).map_err(|e| CliError::io(&out_name, e))?;
        pb.inc(data_len as u64);
        index += nseg as u64;
        if eof {
            break;
        }
    }
    pb.finish_and_clear();
    out.finish(&out_name)
}

/// A header the library refused: not a pqkit file, or a corrupted or unsupported header (exit 1); an I/O
/// error is exit 2.
fn header_error(name: &str, e: std::io::Error) -> CliError {
    match e.get_ref().and_then(|i| i.downcast_ref::<pqkit::Error>()) {
        Some(pqkit::Error::InvalidEncoding { reason, .. }) => CliError::auth(format!("{name}: {reason}")),
        Some(other) => CliError::auth(format!("{name}: {other}")),
        None => CliError::io(name, e),
    }
}

/// The message for segment `g` failing to open with `e` (the library tells truncation and appending apart).
fn segment_error(e: pqkit::Error, g: u64, last: bool, passphrase: bool) -> CliError {
    if e == errors::TRUNCATED {
        CliError::auth(format!("ciphertext truncated after segment {g}: the final segment is missing"))
    } else if e == errors::APPENDED {
        CliError::auth(format!("data appended after the final segment {g}: the file was extended"))
    } else if e != errors::SEGMENT_FAILED {
        CliError::auth(e.to_string())
    } else if g == 0 {
        CliError::auth(if passphrase {
            "wrong passphrase or corrupted header (segment 0 failed to authenticate)"
        } else {
            "wrong key or corrupted header (segment 0 failed to authenticate)"
        })
    } else if last {
        CliError::auth(format!(
            "segment {g} (the last) failed to authenticate: corrupted, truncated, or bytes were appended"
        ))
    } else {
        CliError::auth(format!("segment {g} failed to authenticate: corrupted, or segments were reordered or dropped"))
    }
}

pub fn decrypt(a: DecryptArgs) -> CliResult {
    let (mut input, in_name, in_len) = open_input(&a.input)?;
    // A version-2 file starts with the recipient section; version 1 is read as before.
    let mut first = [0u8; 9];
    let n = read_full(&mut input, &mut first).map_err(|e| CliError::io(&in_name, e))?;
    let magic = n == first.len() && first[..8] == pqkit::aead::stream::MAGIC;
    if magic && first[8] != pqkit::aead::stream::VERSION && first[8] != recipient::VERSION {
        return Err(CliError::auth(format!(
            "{in_name}: unsupported format version {} (this pqkit reads versions 1 and 2) or corrupted header",
            first[8]
        )));
    }
    let v2 = magic && first[8] == recipient::VERSION;
    let (header, key, passphrase) = if v2 {
        if a.identities.is_empty() {
            return Err(CliError::usage(format!("{in_name}: this file is encrypted to recipients: pass -i IDENTITY")));
        }
        let ids = a.identities.iter().map(|p| recipient::read_identity(p)).collect::<CliResult<Vec<_>>>()?;
        let raw = recipient::unwrap(&mut input, &in_name, first.to_vec(), &ids)?;
        let header = Header::read_from(&mut input).map_err(|e| header_error(&in_name, e))?;
        if header.key_source() != KeySource::Key {
            return Err(CliError::auth(format!(
                "{in_name}: corrupted header: the inner header of a recipient file must use a raw key"
            )));
        }
        let key = FileKey::from_key(&header, &raw[..])?;
        (header, key, false)
    } else {
        input = Box::new(std::io::Cursor::new(first[..n].to_vec()).chain(input));
        let header = Header::read_from(&mut input).map_err(|e| header_error(&in_name, e))?;
        if !a.identities.is_empty() {
            return Err(CliError::usage(format!(
                "{in_name}: this file was not encrypted to a recipient (it uses a key file or a passphrase): drop -i"
            )));
        }
        let passphrase = matches!(header.key_source(), KeySource::Argon2id { .. });
        if let KeySource::Argon2id { m_cost, t_cost, p_cost } = header.key_source() {
            a.limits.check(m_cost, t_cost, p_cost, &format!("{in_name}: the header asks for an"))?;
        }
        let key = file_key(&header, &a.key, false)?;
        (header, key, passphrase)
    };
    let _ = &header;
    let mut reads: Vec<(&Path, &str)> = a.identities.iter().map(|p| (p.as_path(), "identity file")).collect();
    reads.extend(a.key.key.iter().map(|p| (p.as_path(), "key file")));
    reads.extend(a.key.passphrase_file.iter().map(|p| (p.as_path(), "passphrase file")));
    let (mut out, out_name) = sink(&a.input, &a.common.output, &reads, a.common.force, true)?;
    let pool = pool(a.common.threads)?;
    let pb = progress(a.common.quiet, in_len);

    let batch = pool.current_num_threads() * SEGS_PER_THREAD;
    let mut buf = Zeroizing::new(vec![0u8; batch * SEG_CT_LEN + 1]);
    let mut carry: Option<u8> = None;
    let mut index: u64 = 0;
    let to_stdout = out.is_stdout();
    let fail = |e: CliError, index: u64| -> CliError {
        match e {
            CliError::Auth(m) if to_stdout && index > 0 => {
                CliError::Auth(format!("{in_name}: {m}; segments 0 to {} were already written to stdout", index - 1))
            }
            CliError::Auth(m) if to_stdout => CliError::Auth(format!("{in_name}: {m}; nothing was written")),
            CliError::Auth(m) => CliError::Auth(format!("{in_name}: {m}; {out_name} was not written")),
            other => other,
        }
    };
    loop {
        let mut n = 0;
        if let Some(b) = carry.take() {
            buf[0] = b;
            n = 1;
        }
        n += read_full(&mut input, &mut buf[n..]).map_err(|e| CliError::io(&in_name, e))?;
        let eof = n < buf.len();
        let data_len = if eof { n } else { n - 1 };
        if !eof {
            carry = Some(buf[n - 1]);
        }
        if data_len == 0 {
            // Only possible for the first batch: a carried byte means more data.
            return Err(fail(CliError::auth("ciphertext truncated after the header: no segments"), index));
        }
        let nseg = if eof { data_len.div_ceil(SEG_CT_LEN) } else { data_len / SEG_CT_LEN };
        let last_len = data_len - (nseg - 1) * SEG_CT_LEN;
        if last_len < TAG_LEN {
            let g = index + nseg as u64 - 1;
            return Err(fail(
                CliError::auth(format!(
                    "ciphertext truncated or extended: segment {g} has only {last_len} bytes, less than a tag"
                )),
                index,
            ));
        }
        if index + nseg as u64 > MAX_SEGMENTS {
            return Err(fail(CliError::auth("more than 2^32 segments: not a valid pqkit file"), index));
        }
        let data = &mut buf[..data_len];
        let failures: Vec<(usize, pqkit::Error)> = pool.install(|| {
            data.par_chunks_mut(SEG_CT_LEN)
                .enumerate()
                .filter_map(|(k, chunk)| {
                    let g = index + k as u64;
                    let last = eof && k == nseg - 1;
                    let (body, tag) = chunk.split_at_mut(chunk.len() - TAG_LEN);
                    key.open_segment(g, last, body, tag).err().map(|e| (k, e))
                })
                .collect()
        });
        if let Some((k, e)) = failures.into_iter().min_by_key(|&(k, _)| k) {
            // Segments before k decrypted; the whole batch is discarded, plaintext wiped with `buf`.
            let g = index + k as u64;
            let last = eof && k == nseg - 1;
            return Err(fail(segment_error(e, g, last, passphrase), index));
        }
        let w = out.writer();
        for chunk in data.chunks(SEG_CT_LEN) {
            w.write_all(&chunk[..chunk.len() - TAG_LEN]).map_err(|e| CliError::io(&out_name, e))?;
        }
        pb.inc(data_len as u64);
        index += nseg as u64;
        if eof {
            break;
        }
    }
    pb.finish_and_clear();
    out.finish(&out_name)
}
