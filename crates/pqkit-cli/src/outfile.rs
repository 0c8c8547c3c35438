//! All-or-nothing output files.
//!
//! The output is written to a temporary file in the destination directory and given its name only by
//! [`AtomicOut::commit`]. On Linux the temporary file is unnamed (`O_TMPFILE`): if pqkit fails, is
//! interrupted or killed, the kernel frees it and nothing is left behind. Elsewhere (or on file systems
//! without `O_TMPFILE`) it is a named `.pqkit-*` file that is removed when pqkit fails or exits normally.

use crate::{CliError, CliResult};
use std::fs::File;
use std::path::{Path, PathBuf};

enum Tmp {
    #[cfg(target_os = "linux")]
    Unnamed(File),
    Named(tempfile::NamedTempFile),
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
        {
            use rustix::fs::{Mode, OFlags};
            if let Ok(fd) =
                rustix::fs::open(&dir, OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o600))
            {
                return Ok(AtomicOut { tmp: Tmp::Unnamed(File::from(fd)), dest: dest.to_path_buf(), force });
            }
        }
        let t = tempfile::Builder::new()
            .prefix(".pqkit-")
            .tempfile_in(&dir)
            .map_err(|e| CliError::io(&dir.display().to_string(), e))?;
        Ok(AtomicOut { tmp: Tmp::Named(t), dest: dest.to_path_buf(), force })
    }

    /// The temporary file to write to.
    pub fn file(&mut self) -> &mut File {
        match &mut self.tmp {
            #[cfg(target_os = "linux")]
            Tmp::Unnamed(f) => f,
            Tmp::Named(t) => t.as_file_mut(),
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
            Tmp::Named(t) => {
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
