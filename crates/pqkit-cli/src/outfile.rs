//! All-or-nothing output files.
//!
//! The output is written to a temporary file in the destination directory and given its name only by
//! [`AtomicOut::commit`]. On Linux the temporary file is unnamed (`O_TMPFILE`): if pqkit fails, is
//! interrupted or killed, the kernel frees it and nothing is left behind. Elsewhere (or on file systems
//! without `O_TMPFILE`) the data is written to a file that is unlinked as soon as it is created (Unix) or
//! deleted on close (Windows), so an interrupted or killed pqkit still leaves nothing named behind while the
//! output is being produced (for `decrypt`, while the plaintext is not yet fully authenticated). Only at
//! [`AtomicOut::commit`], when the output is complete, is it copied into a named `.pqkit-*` file in the
//! destination directory and renamed over the destination; a kill during that last copy can leave that
//! partial copy of the complete, authenticated output.

use crate::{CliError, CliResult};
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
}

impl AtomicOut {
    /// Prepares `dest`. Fails at once if `dest` exists and `force` is false.
    pub fn create(dest: &Path, force: bool) -> CliResult<Self> {
        Self::create_with(dest, force, true)
    }

    /// [`create`](Self::create), with `O_TMPFILE` allowed or not (tests force the fallback with `false`).
    fn create_with(dest: &Path, force: bool, allow_o_tmpfile: bool) -> CliResult<Self> {
        let name = dest.display().to_string();
        refuse_special(dest)?;
        if !force && dest.symlink_metadata().is_ok() {
            return Err(CliError::usage(format!("{name}: output file exists (use --force to overwrite it)")));
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        #[cfg(target_os = "linux")]
        if allow_o_tmpfile {
            use rustix::fs::{Mode, OFlags};
            if let Ok(fd) =
                rustix::fs::open(&dir, OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o600))
            {
                return Ok(AtomicOut { tmp: Tmp::Unnamed(File::from(fd)), dest: dest.to_path_buf(), force });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = allow_o_tmpfile;
        let f = tempfile::tempfile_in(&dir).map_err(|e| CliError::io(&dir.display().to_string(), e))?;
        Ok(AtomicOut { tmp: Tmp::Hidden(f), dest: dest.to_path_buf(), force })
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
    pub fn commit(mut self) -> CliResult {
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

            let mut o = AtomicOut::create_with(&dest, false, allow).unwrap();
            o.file().write_all(&data).unwrap();
            assert_eq!(names(dir.path()), ["other"], "allow_o_tmpfile={allow}: a named file exists mid-write");
            drop(o);
            assert_eq!(names(dir.path()), ["other"], "allow_o_tmpfile={allow}: left behind after drop");

            let mut o = AtomicOut::create_with(&dest, false, allow).unwrap();
            o.file().write_all(&data).unwrap();
            assert_eq!(names(dir.path()), ["other"]);
            o.commit().unwrap();
            assert_eq!(names(dir.path()), ["other", "out.bin"]);
            assert_eq!(std::fs::read(&dest).unwrap(), data);

            // Without --force an existing destination is refused (at create and at commit); with it, replaced.
            assert!(AtomicOut::create_with(&dest, false, allow).is_err());
            let mut o = AtomicOut::create_with(&dest, true, allow).unwrap();
            std::fs::remove_file(&dest).unwrap();
            std::fs::write(&dest, b"raced in").unwrap();
            o.file().write_all(b"new").unwrap();
            o.commit().unwrap();
            assert_eq!(std::fs::read(&dest).unwrap(), b"new");
            assert_eq!(names(dir.path()), ["other", "out.bin"]);

            let dest2 = dir.path().join("second");
            let mut o = AtomicOut::create_with(&dest2, false, allow).unwrap();
            std::fs::write(&dest2, b"raced in").unwrap();
            o.file().write_all(b"new").unwrap();
            assert!(o.commit().is_err(), "allow_o_tmpfile={allow}: commit replaced a file created meanwhile");
            assert_eq!(std::fs::read(&dest2).unwrap(), b"raced in");
            assert_eq!(names(dir.path()), ["other", "out.bin", "second"]);
        }
    }
}
