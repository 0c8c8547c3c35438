//! The key server's state file: every kept epoch of every scope (its secret, when it started, and the agent each
//! sender stream was granted to), so that a restarted key server still grants the receive keys of what was sealed
//! before the restart (durable messages a subscriber has not read yet) and never grants an (epoch, stream) twice.
//!
//! Format (`docs/bus.md` §9, "Key-server state file"): `MAGIC || nonce (12) || AES-256-GCM(body) || tag (16)`,
//! sealed under a key derived from the key server's identity seed, with `MAGIC || key server id (16)` as
//! associated data. The body: `scopes (4)`, then per scope `length (2) || scope || epochs (4)`, then per epoch
//! `epoch (4) || secret (32) || started, Unix seconds (8) || streams (4) || one agent id (16) per stream`; all
//! integers big-endian. The file is written to a temporary file in the same directory (mode 0600), synced and
//! renamed over the old one, before the grant it records is answered.

use super::wire::{MAX_STREAMS, random};
use crate::identity::{AgentId, Identity};
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use zeroize::Zeroizing;

/// One epoch of a key scope, as the key server keeps it.
pub(super) struct EpochKey {
    pub(super) epoch: u32,
    pub(super) secret: Zeroizing<[u8; 32]>,
    /// When it started (wall clock, so that it survives a restart through the state file).
    pub(super) started: SystemTime,
    pub(super) next_stream: u32,
    /// The agent each stream was granted to (index = stream; `len() == next_stream`).
    pub(super) grantees: Vec<AgentId>,
}

impl std::fmt::Debug for EpochKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochKey")
            .field("epoch", &self.epoch)
            .field("streams", &self.next_stream)
            .finish_non_exhaustive()
    }
}

/// The first bytes of a state file.
pub(super) const MAGIC: &[u8] = b"pqkit-bus key-server state v1\n";
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
/// A state file larger than this is refused (at most [`MAX_STREAMS`] grantees per epoch, in practice far fewer).
pub(super) const MAX_FILE: u64 = 256 << 20;

fn err(path: &Path, reason: impl Into<String>) -> Error {
    Error::StateFile { path: path.display().to_string(), reason: reason.into() }
}

fn aad(identity: &Identity) -> Vec<u8> {
    let mut a = MAGIC.to_vec();
    a.extend_from_slice(&identity.id().0);
    a
}

/// The body of a state file for these scopes.
fn encode(scopes: &HashMap<String, Vec<EpochKey>>) -> Zeroizing<Vec<u8>> {
    let mut b = Zeroizing::new(Vec::new());
    let mut names: Vec<&String> = scopes.keys().collect();
    names.sort();
    b.extend_from_slice(&(names.len() as u32).to_be_bytes());
    for name in names {
        let epochs = &scopes[name];
        b.extend_from_slice(&(name.len() as u16).to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&(epochs.len() as u32).to_be_bytes());
        for e in epochs {
            let started = e.started.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            b.extend_from_slice(&e.epoch.to_be_bytes());
            b.extend_from_slice(e.secret.as_ref());
            b.extend_from_slice(&started.to_be_bytes());
            b.extend_from_slice(&e.next_stream.to_be_bytes());
            for g in &e.grantees {
                b.extend_from_slice(&g.0);
            }
        }
    }
    b
}

/// Reads a body; `None` if it is malformed.
fn decode(b: &[u8]) -> Option<HashMap<String, Vec<EpochKey>>> {
    let mut r = Reader(b);
    let n = r.u32()?;
    let mut scopes = HashMap::new();
    for _ in 0..n {
        let len = usize::from(r.u16()?);
        let name = std::str::from_utf8(r.take(len)?).ok()?.to_string();
        let count = r.u32()?;
        let mut epochs: Vec<EpochKey> = Vec::new();
        for _ in 0..count {
            let epoch = r.u32()?;
            let mut secret = Zeroizing::new([0u8; 32]);
            secret.copy_from_slice(r.take(32)?);
            let started = UNIX_EPOCH.checked_add(Duration::from_secs(r.u64()?))?;
            let next_stream = r.u32()?;
            if next_stream > MAX_STREAMS || epochs.last().is_some_and(|p| p.epoch >= epoch) {
                return None;
            }
            let mut grantees = Vec::with_capacity(next_stream as usize);
            for _ in 0..next_stream {
                grantees.push(AgentId(r.take(16)?.try_into().ok()?));
            }
            epochs.push(EpochKey { epoch, secret, started, next_stream, grantees });
        }
        if scopes.insert(name, epochs).is_some() {
            return None;
        }
    }
    r.0.is_empty().then_some(scopes)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// The scopes saved in `path` by a key server with `identity`; `Ok(None)` when there is no such file yet.
pub(super) fn load(path: &Path, identity: &Identity) -> Result<Option<HashMap<String, Vec<EpochKey>>>> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(path, format!("cannot open it: {e}"))),
    };
    let mut data = Zeroizing::new(Vec::new());
    f.take(MAX_FILE + 1).read_to_end(&mut data).map_err(|e| err(path, format!("cannot read it: {e}")))?;
    if data.len() as u64 > MAX_FILE {
        return Err(err(path, format!("larger than {MAX_FILE} bytes")));
    }
    if data.len() < MAGIC.len() + NONCE_LEN + TAG_LEN || !data.starts_with(MAGIC) {
        return Err(err(path, "not a pqkit-bus key-server state file"));
    }
    let (nonce, rest) = data[MAGIC.len()..].split_at(NONCE_LEN);
    let (sealed, tag) = rest.split_at(rest.len() - TAG_LEN);
    let mut body = Zeroizing::new(sealed.to_vec());
    Aes256Gcm::new(identity.state_key())?
        .open_in_place_detached(nonce, &aad(identity), &mut body, tag)
        .map_err(|_| err(path, "does not authenticate: written by a key server with another identity, or damaged"))?;
    decode(&body)
        .map(Some)
        .ok_or_else(|| err(path, "malformed (it authenticates, so it was written by another version)"))
}

/// Writes `scopes` to `path` for a key server with `identity`: a temporary file in the same directory (mode 0600),
/// synced, renamed over `path`, and the directory synced, so a crash leaves the old file or the new one.
pub(super) fn save(path: &Path, identity: &Identity, scopes: &HashMap<String, Vec<EpochKey>>) -> Result<()> {
    let mut body = encode(scopes);
    let nonce = random::<NONCE_LEN>()?;
    let tag =
        Aes256Gcm::new(identity.state_key())?.seal_in_place_detached(nonce.as_ref(), &aad(identity), &mut body)?;
    let mut out = Zeroizing::new(Vec::with_capacity(MAGIC.len() + NONCE_LEN + body.len() + TAG_LEN));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(nonce.as_ref());
    out.extend_from_slice(&body);
    out.extend_from_slice(&tag);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| err(path, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let write = || -> std::io::Result<()> {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut f = o.open(&tmp)?;
        f.write_all(&out)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(path, format!("cannot write it: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seed: u8) -> Identity {
        Identity::from_seed("keys", &[seed; 32]).unwrap()
    }

    fn sample() -> HashMap<String, Vec<EpochKey>> {
        let mut m = HashMap::new();
        let ek = |epoch: u32, n: u32| EpochKey {
            epoch,
            secret: Zeroizing::new([epoch as u8; 32]),
            started: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + u64::from(epoch)),
            next_stream: n,
            grantees: (0..n).map(|i| AgentId([i as u8; 16])).collect(),
        };
        m.insert("orders".to_string(), vec![ek(7, 2), ek(8, 0)]);
        m.insert("events".to_string(), vec![ek(1, 3)]);
        m
    }

    fn same(a: &HashMap<String, Vec<EpochKey>>, b: &HashMap<String, Vec<EpochKey>>) -> bool {
        a.len() == b.len()
            && a.iter().all(|(k, v)| {
                b.get(k).is_some_and(|w| {
                    v.len() == w.len()
                        && v.iter().zip(w).all(|(x, y)| {
                            x.epoch == y.epoch
                                && *x.secret == *y.secret
                                && x.started == y.started
                                && x.next_stream == y.next_stream
                                && x.grantees == y.grantees
                        })
                })
            })
    }

    #[test]
    fn state_round_trips_and_is_sealed_to_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ks.state");
        assert!(load(&path, &id(1)).unwrap().is_none(), "no file yet: a first start");
        save(&path, &id(1), &sample()).unwrap();
        assert!(same(&load(&path, &id(1)).unwrap().unwrap(), &sample()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // No secret in clear: each epoch's secret bytes appear nowhere in the file.
        let data = std::fs::read(&path).unwrap();
        assert!(!data.windows(32).any(|w| w == [7u8; 32] || w == [1u8; 32]));
        // Another identity cannot read it.
        let e = load(&path, &id(2)).unwrap_err().to_string();
        assert!(e.contains("does not authenticate") && e.contains("ks.state"), "{e}");
        // Saving again replaces it, and leaves no temporary file behind.
        save(&path, &id(1), &HashMap::new()).unwrap();
        assert!(load(&path, &id(1)).unwrap().unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn damaged_truncated_and_foreign_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ks.state");
        save(&path, &id(1), &sample()).unwrap();
        let good = std::fs::read(&path).unwrap();
        for i in [0, MAGIC.len(), MAGIC.len() + NONCE_LEN, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[i] ^= 1;
            std::fs::write(&path, &bad).unwrap();
            let e = load(&path, &id(1)).unwrap_err().to_string();
            assert!(e.contains("ks.state"), "byte {i}: {e}");
        }
        for n in [0, 10, MAGIC.len() + NONCE_LEN + TAG_LEN - 1, good.len() - 1] {
            std::fs::write(&path, &good[..n]).unwrap();
            assert!(matches!(load(&path, &id(1)), Err(Error::StateFile { .. })), "truncated to {n}");
        }
        std::fs::write(&path, b"pqkit-bus agent v1\nname x\n").unwrap();
        assert!(load(&path, &id(1)).unwrap_err().to_string().contains("not a pqkit-bus key-server state file"));
        // A directory that does not exist: the write fails with the path named.
        let e = save(&dir.path().join("no/such/dir/ks.state"), &id(1), &sample()).unwrap_err().to_string();
        assert!(e.contains("cannot write it"), "{e}");
    }

    #[test]
    fn malformed_bodies_are_refused_not_panicking() {
        let body = encode(&sample());
        assert!(decode(&body).is_some());
        for n in 0..body.len() {
            assert!(decode(&body[..n]).is_none(), "truncated body of {n} bytes accepted");
        }
        let mut longer = body.to_vec();
        longer.push(0);
        assert!(decode(&longer).is_none(), "trailing bytes accepted");
        // Epochs out of order, and more streams than allowed.
        let mut m = HashMap::new();
        let ek = |epoch: u32| EpochKey {
            epoch,
            secret: Zeroizing::new([0; 32]),
            started: UNIX_EPOCH,
            next_stream: 0,
            grantees: Vec::new(),
        };
        m.insert("a".to_string(), vec![ek(5), ek(5)]);
        assert!(decode(&encode(&m)).is_none());
        let mut b = encode(&HashMap::from([("a".to_string(), vec![ek(5)])])).to_vec();
        let at = b.len() - 4;
        b[at..].copy_from_slice(&(MAX_STREAMS + 1).to_be_bytes());
        assert!(decode(&b).is_none());
    }
}
