//! Output safety: the one mechanism every command writes through.
//!
//! - **Atomic.** An output file is written to a temporary file in the destination directory and given its
//!   name only by [`AtomicOut::commit`], when it is complete. On Linux the temporary file is unnamed
//!   (`O_TMPFILE`): if pqkit fails, is interrupted or killed, the kernel frees it and nothing is left behind.
//!   Elsewhere (or on file systems without `O_TMPFILE`) the data is written to a file that is unlinked as soon
//!   as it is created (Unix) or deleted on close (Windows); only at commit is it copied into a named
//!   `.pqkit-*` file and renamed over the destination, so a kill during that last copy can leave that partial
//!   copy of the complete output.
//! - **Never onto an input or a key.** [`Guard`] records every file a command reads (inputs, key files,
//!   identities) by device and inode, after following symbolic links, and refuses an output that is one of
//!   them, even with `--force`. Two outputs of one command (a key pair) that are the same file by any
//!   spelling (`a.pem`, `sub/../a.pem`, a hard link) are refused too.
//! - **Whole or nothing.** [`Guard::write_files`] prepares every output before it names any, so a pair is
//!   written whole or not at all (a missing directory or a refused name fails before anything is written).
//! - **Never through a link or onto a device**: a destination that is a symbolic link, a device, a FIFO, a
//!   socket or a directory is refused even with `--force`; an existing file is replaced only with `--force`.
//! - `-` as an output is stdout; a closed stdout ends the program quietly ([`crate::error::CliError::ClosedStdout`]),
//!   after every file output has been committed.

use crate::error::{CliError, CliResult};
use std::fs::File;
use std::path::{Path, PathBuf};

enum Tmp {
    #[cfg(target_os = "linux")]
    Unnamed(File),
    /// An unlinked (or delete-on-close) file; copied to a named file only at commit.
    Hidden(File),
}

/// Refuses, even with `--force`, an output path that is a symbolic link (never followed nor replaced, as
/// age and minisign do) or anything but a regular file (a device, FIFO, socket or directory).
pub fn refuse_special(dest: &Path) -> CliResult {
    let name = dest.display().to_string();
    match dest.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Err(CliError::usage(format!(
            "{name}: is a symbolic link: refusing to write through it or replace it (remove it first)"
        ))),
        Ok(m) if !m.is_file() => Err(CliError::usage(format!(
            "{name}: not a regular file (a device, FIFO, socket or directory): refusing to write to it"
        ))),
        _ => Ok(()),
    }
}

/// An output file that appears at its destination only on [`commit`](AtomicOut::commit).
pub struct AtomicOut {
    tmp: Tmp,
    dest: PathBuf,
    force: bool,
    secret: bool,
}

impl AtomicOut {
    /// Prepares `dest` (mode 0600 if `secret`, else 0644). Fails at once if `dest` exists and `force` is
    /// false. Commands reach this through [`Guard`], which also keeps outputs off their inputs.
    fn create(dest: &Path, force: bool, secret: bool) -> CliResult<Self> {
        Self::create_with(dest, force, true, secret)
    }

    /// [`create`](Self::create), with `O_TMPFILE` allowed or not (tests force the fallback with `false`).
    fn create_with(dest: &Path, force: bool, allow_o_tmpfile: bool, secret: bool) -> CliResult<Self> {
        let name = dest.display().to_string();
        refuse_special(dest)?;
        if !force && dest.symlink_metadata().is_ok() {
            return Err(CliError::usage(format!("{name}: output file already exists (use --force to overwrite it)")));
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        #[cfg(target_os = "linux")]
        if allow_o_tmpfile {
            use rustix::fs::{Mode, OFlags};
            let mode = Mode::from_raw_mode(if secret { 0o600 } else { 0o644 });
            if let Ok(fd) = rustix::fs::open(&dir, OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC, mode) {
                return Ok(AtomicOut { tmp: Tmp::Unnamed(File::from(fd)), dest: dest.to_path_buf(), force, secret });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = allow_o_tmpfile;
        let f = tempfile::tempfile_in(&dir).map_err(|e| CliError::io(&dir.display().to_string(), e))?;
        Ok(AtomicOut { tmp: Tmp::Hidden(f), dest: dest.to_path_buf(), force, secret })
    }

    /// The temporary file to write to.
    pub fn file(&mut self) -> &mut File {
        match &mut self.tmp {
            #[cfg(target_os = "linux")]
            Tmp::Unnamed(f) => f,
            Tmp::Hidden(f) => f,
        }
    }

    /// Flushes to disk and gives the file its name.
    fn commit(mut self) -> CliResult {
        let name = self.dest.display().to_string();
        self.file().sync_all().map_err(|e| CliError::io(&name, e))?;
        let exists = || CliError::usage(format!("{name}: output file exists (use --force to overwrite it)"));
        match self.tmp {
            #[cfg(target_os = "linux")]
            Tmp::Unnamed(f) => {
                use rustix::fs::{AtFlags, CWD};
                use std::os::fd::AsRawFd;
                let proc = format!("/proc/self/fd/{}", f.as_raw_fd());
                let target = if self.force {
                    let mut rnd = [0u8; 8];
                    pqkit::rng::fill_os(&mut rnd).map_err(|e| CliError::usage(e.to_string()))?;
                    let tmpname = format!(".pqkit-{}.tmp", hex::encode(rnd));
                    self.dest.with_file_name(tmpname)
                } else {
                    self.dest.clone()
                };
                match rustix::fs::linkat(CWD, proc.as_str(), CWD, &target, AtFlags::SYMLINK_FOLLOW) {
                    Ok(()) => {}
                    Err(rustix::io::Errno::EXIST) if !self.force => return Err(exists()),
                    Err(e) => return Err(CliError::io(&name, e.into())),
                }
                if self.force {
                    std::fs::rename(&target, &self.dest).map_err(|e| {
                        let _ = std::fs::remove_file(&target);
                        CliError::io(&name, e)
                    })?;
                }
                Ok(())
            }
            Tmp::Hidden(mut f) => {
                use std::io::{Seek, SeekFrom};
                let dir = match self.dest.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let mut t = tempfile::Builder::new()
                    .prefix(".pqkit-")
                    .tempfile_in(&dir)
                    .map_err(|e| CliError::io(&dir.display().to_string(), e))?;
                f.seek(SeekFrom::Start(0)).map_err(|e| CliError::io(&name, e))?;
                std::io::copy(&mut f, t.as_file_mut()).map_err(|e| CliError::io(&name, e))?;
                #[cfg(unix)]
                if !self.secret {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = t.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
                }
                t.as_file().sync_all().map_err(|e| CliError::io(&name, e))?;
                let r = if self.force { t.persist(&self.dest) } else { t.persist_noclobber(&self.dest) };
                r.map(|_| ()).map_err(|e| {
                    if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                        exists()
                    } else {
                        CliError::io(&name, e.error)
                    }
                })
            }
        }
    }
}

/// A file's identity: device and inode, after following symbolic links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId(u64, u64);

fn file_id(p: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| FileId(m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        // No inode here: the canonical path stands in for it.
        use std::hash::{Hash, Hasher};
        let c = std::fs::canonicalize(p).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        c.hash(&mut h);
        Some(FileId(0, h.finish()))
    }
}

/// Where a path that may not exist yet points: its directory resolved, then its own name.
fn resolved(p: &Path) -> Option<PathBuf> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
}

/// An output destination, checked by [`Guard::output`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    /// `-`: standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

impl Dest {
    /// The name for messages.
    pub fn name(&self) -> String {
        match self {
            Dest::Stdout => "stdout".into(),
            Dest::File(p) => p.display().to_string(),
        }
    }
}

/// One command's inputs and outputs: every output is checked against every input and every other output
/// before anything is written, and written atomically. See the module documentation.
pub struct Guard {
    force: bool,
    /// Files the command reads, by identity, with what they are (for the message).
    protected: Vec<(FileId, String)>,
    /// Outputs planned so far: the path, its identity if it exists, its resolved path.
    outputs: Vec<(PathBuf, Option<FileId>, Option<PathBuf>)>,
    stdout_taken: bool,
}

impl Guard {
    /// A guard; `force` lets an output replace an existing file that is not protected.
    pub fn new(force: bool) -> Self {
        Guard { force, protected: Vec::new(), outputs: Vec::new(), stdout_taken: false }
    }

    /// Records a file the command reads (`role`: "input", "key file", "identity file" ...). `-` (stdin) and
    /// files that do not exist are ignored.
    pub fn protect(&mut self, path: &Path, role: &str) {
        if path.as_os_str() == "-" {
            return;
        }
        if let Some(id) = file_id(path) {
            self.protected.push((id, format!("{role} {}", path.display())));
        }
    }

    /// Checks an output path (`-` is stdout) against the inputs and the other outputs, and returns its
    /// destination. Nothing is written yet.
    pub fn output(&mut self, path: &Path) -> CliResult<Dest> {
        if path.as_os_str() == "-" {
            if self.stdout_taken {
                return Err(CliError::usage("two outputs to stdout (-): give one of them a file name"));
            }
            self.stdout_taken = true;
            return Ok(Dest::Stdout);
        }
        let name = path.display().to_string();
        refuse_special(path)?;
        let id = file_id(path);
        if let Some(id) = id
            && let Some((_, what)) = self.protected.iter().find(|(p, _)| *p == id)
        {
            return Err(CliError::usage(format!(
                "{name}: this is the {what}: refusing to overwrite it (even with --force)"
            )));
        }
        let res = resolved(path);
        for (other, oid, ores) in &self.outputs {
            let same = match (id, oid) {
                (Some(a), Some(b)) => a == *b,
                _ => res.is_some() && res == *ores,
            };
            if same || path == other {
                return Err(CliError::usage(format!(
                    "{name}: the same file as the output {}: two outputs cannot be written to the same file",
                    other.display()
                )));
            }
        }
        if id.is_some() && !self.force {
            return Err(CliError::usage(format!("{name}: output file already exists (use --force to overwrite it)")));
        }
        if res.is_none() {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            return Err(CliError::usage(format!("{name}: the directory {} does not exist", dir.display())));
        }
        self.outputs.push((path.to_path_buf(), id, res));
        Ok(Dest::File(path.to_path_buf()))
    }

    /// An optional output: `None` stays `None` (the command prints instead).
    pub fn output_opt(&mut self, path: Option<&Path>) -> CliResult<Option<Dest>> {
        path.map(|p| self.output(p)).transpose()
    }

    /// Opens a streaming output (for `encrypt` / `decrypt`): a file appears only at [`Sink::finish`].
    pub fn sink(&self, dest: &Dest, secret: bool) -> CliResult<Sink> {
        match dest {
            Dest::Stdout => Ok(Sink::Stdout(std::io::stdout().lock())),
            Dest::File(p) => Ok(Sink::File(AtomicOut::create(p, self.force, secret)?, self.ids())),
        }
    }

    fn ids(&self) -> Vec<FileId> {
        self.protected.iter().map(|(id, _)| *id).collect()
    }

    /// Writes one output whole: a file atomically, or stdout.
    pub fn write(&self, dest: &Dest, data: &[u8], secret: bool) -> CliResult {
        self.write_files(&[(dest, data, secret)])
    }

    /// Writes several outputs (a key pair) whole or not at all: every file is prepared and filled before any
    /// is named; if naming a later one fails, the earlier ones this call created are removed. Stdout comes
    /// last, after every file is in place.
    pub fn write_files(&self, outs: &[(&Dest, &[u8], bool)]) -> CliResult {
        use std::io::Write;
        let mut prepared = Vec::new();
        for (dest, data, secret) in outs {
            if let Dest::File(p) = dest {
                let mut o = AtomicOut::create(p, self.force, *secret)?;
                o.file().write_all(data).map_err(|e| CliError::io(&p.display().to_string(), e))?;
                prepared.push((p.clone(), o, p.symlink_metadata().is_ok()));
            }
        }
        let ids = self.ids();
        let mut created: Vec<PathBuf> = Vec::new();
        for (p, o, existed) in prepared {
            let r = recheck(&p, &ids).and_then(|_| o.commit());
            if let Err(e) = r {
                for c in &created {
                    let _ = std::fs::remove_file(c);
                }
                return Err(e);
            }
            if !existed {
                created.push(p);
            }
        }
        for (dest, data, _) in outs {
            if **dest == Dest::Stdout {
                crate::io::write_stdout(data)?;
            }
        }
        Ok(())
    }
}

/// The last check before a file is named: a file that appeared at `p` meanwhile must not be an input.
fn recheck(p: &Path, protected: &[FileId]) -> CliResult {
    match file_id(p) {
        Some(id) if protected.contains(&id) => Err(CliError::usage(format!(
            "{}: is now one of this command's inputs (it changed while pqkit ran): not replaced",
            p.display()
        ))),
        _ => Ok(()),
    }
}

/// A streaming output: stdout, or a file named only at [`finish`](Sink::finish).
pub enum Sink {
    Stdout(std::io::StdoutLock<'static>),
    File(AtomicOut, Vec<FileId>),
}

impl Sink {
    /// Where to write.
    pub fn writer(&mut self) -> &mut dyn std::io::Write {
        match self {
            Sink::Stdout(s) => s,
            Sink::File(f, _) => f.file(),
        }
    }
    /// Whether this is stdout.
    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout(_))
    }
    /// Flushes stdout, or gives the file its name.
    pub fn finish(self, name: &str) -> CliResult {
        use std::io::Write;
        match self {
            Sink::Stdout(mut s) => s.flush().map_err(|e| CliError::io(name, e)),
            Sink::File(f, ids) => {
                recheck(&f.dest, &ids)?;
                f.commit()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// Both paths (O_TMPFILE where the platform has it, and the unlinked fallback): while the output is being
    /// written nothing new is named in the directory (so SIGINT or SIGKILL leave nothing behind), dropping
    /// without commit leaves nothing, and commit gives exactly the written bytes under the destination name.
    #[test]
    fn nothing_named_until_commit() {
        for allow in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("other"), b"x").unwrap();
            let dest = dir.path().join("out.bin");
            let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();

            let mut o = AtomicOut::create_with(&dest, false, allow, true).unwrap();
            o.file().write_all(&data).unwrap();
            assert_eq!(names(dir.path()), ["other"], "allow_o_tmpfile={allow}: a named file exists mid-write");
            drop(o);
            assert_eq!(names(dir.path()), ["other"], "allow_o_tmpfile={allow}: left behind after drop");

            let mut o = AtomicOut::create_with(&dest, false, allow, true).unwrap();
            o.file().write_all(&data).unwrap();
            assert_eq!(names(dir.path()), ["other"]);
            o.commit().unwrap();
            assert_eq!(names(dir.path()), ["other", "out.bin"]);
            assert_eq!(std::fs::read(&dest).unwrap(), data);

            // Without --force an existing destination is refused (at create and at commit); with it, replaced.
            assert!(AtomicOut::create_with(&dest, false, allow, true).is_err());
            let mut o = AtomicOut::create_with(&dest, true, allow, true).unwrap();
            std::fs::remove_file(&dest).unwrap();
            std::fs::write(&dest, b"raced in").unwrap();
            o.file().write_all(b"new").unwrap();
            o.commit().unwrap();
            assert_eq!(std::fs::read(&dest).unwrap(), b"new");
            assert_eq!(names(dir.path()), ["other", "out.bin"]);

            let dest2 = dir.path().join("second");
            let mut o = AtomicOut::create_with(&dest2, false, allow, true).unwrap();
            std::fs::write(&dest2, b"raced in").unwrap();
            o.file().write_all(b"new").unwrap();
            assert!(o.commit().is_err(), "allow_o_tmpfile={allow}: commit replaced a file created meanwhile");
            assert_eq!(std::fs::read(&dest2).unwrap(), b"raced in");
            assert_eq!(names(dir.path()), ["other", "out.bin", "second"]);
        }
    }
}
