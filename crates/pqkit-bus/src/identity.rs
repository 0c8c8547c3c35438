//! Agent identities: a name and a hybrid ML-DSA-65 + Ed25519 key pair; the `AgentId` names the public keys.

use crate::{Error, Result};
use pqkit::ec::ed25519;
use pqkit::hash::sha3::Sha3_256;
use pqkit::kdf::Hkdf;
use pqkit::mldsa::{MlDsa65ExpandedVerifyingKey, MlDsa65Signature, MlDsa65SigningKey, MlDsa65VerifyingKey};
use std::fmt;
use std::sync::{Arc, OnceLock};
use zeroize::Zeroizing;

/// ML-DSA-65 public key length.
pub const MLDSA_PK_LEN: usize = 1952;
/// ML-DSA-65 signature length.
pub const MLDSA_SIG_LEN: usize = 3309;
/// A hybrid signature: ML-DSA-65 then Ed25519.
pub const SIG_LEN: usize = MLDSA_SIG_LEN + 64;
/// Longest agent name, in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// ML-DSA context string of every bus signature (FIPS 204 domain separation).
const CTX: &[u8] = b"pqkit-bus v1";

/// The 16-byte name of an identity: `SHA3-256("pqkit-bus id v1" || mldsa_pk || ed25519_pk)[..16]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AgentId(pub [u8; 16]);

impl AgentId {
    /// Lower-case hex, 32 characters (used in `_INBOX.<id>` subjects).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({})", self.to_hex())
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// The public half of an identity: what peers see, verify against, and what the policy names.
#[derive(Clone)]
pub struct PublicIdentity {
    name: String,
    mldsa: MlDsa65VerifyingKey,
    ed: ed25519::VerifyingKey,
    id: AgentId,
    /// The ML-DSA key with its matrix A expanded, made by the first [`PublicIdentity::verify_pinned`] and shared
    /// by the clones made after it (public data: A is a function of the public key).
    expanded: OnceLock<Arc<MlDsa65ExpandedVerifyingKey>>,
}

impl fmt::Debug for PublicIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicIdentity").field("name", &self.name).field("id", &self.id).finish()
    }
}

impl PartialEq for PublicIdentity {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id && self.name == o.name && self.mldsa == o.mldsa && self.ed == o.ed
    }
}

fn agent_id(mldsa: &[u8], ed: &[u8]) -> AgentId {
    let mut h = Sha3_256::new();
    h.update(b"pqkit-bus id v1");
    h.update(mldsa);
    h.update(ed);
    let d = h.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&d.as_ref()[..16]);
    AgentId(id)
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN || name.bytes().any(|b| b.is_ascii_control()) {
        return Err(Error::InvalidName);
    }
    Ok(())
}

impl PublicIdentity {
    /// The agent's name (chosen by its owner; not unique: the [`AgentId`] is).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The agent's id.
    pub fn id(&self) -> AgentId {
        self.id
    }

    /// Encoding: `name_len (1) || name || mldsa65_pk (1952) || ed25519_pk (32)`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.name.len() as u8);
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(self.mldsa.as_bytes());
        out.extend_from_slice(self.ed.as_bytes());
    }

    /// Decodes [`encode`](Self::encode)'s output from the front of `b`; returns it and the bytes consumed.
    pub fn decode(b: &[u8]) -> Result<(Self, usize)> {
        let bad = |reason| Error::Handshake { reason };
        let n = *b.first().ok_or(bad("identity truncated"))? as usize;
        let total = 1 + n + MLDSA_PK_LEN + 32;
        if b.len() < total {
            return Err(bad("identity truncated"));
        }
        let name = std::str::from_utf8(&b[1..1 + n]).map_err(|_| bad("identity name is not UTF-8"))?;
        check_name(name).map_err(|_| bad("identity name is empty, too long or has control characters"))?;
        let pk = &b[1 + n..1 + n + MLDSA_PK_LEN];
        let ek = &b[1 + n + MLDSA_PK_LEN..total];
        let mldsa = MlDsa65VerifyingKey::from_bytes(pk)?;
        let ed = ed25519::VerifyingKey::from_bytes(ek)?;
        Ok((
            PublicIdentity { name: name.to_string(), id: agent_id(pk, ek), mldsa, ed, expanded: OnceLock::new() },
            total,
        ))
    }

    /// Verifies a hybrid signature: both ML-DSA-65 and Ed25519 must verify.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<()> {
        if sig.len() != SIG_LEN {
            return Err(Error::Crypto(pqkit::Error::length("pqkit-bus", "hybrid signature", SIG_LEN, sig.len())));
        }
        let m = MlDsa65Signature::from_bytes(&sig[..MLDSA_SIG_LEN])?;
        let e = ed25519::Signature::from_bytes(&sig[MLDSA_SIG_LEN..])?;
        // Both are checked whatever the first gives, so the time does not say which half failed.
        let r1 = self.mldsa.verify(msg, CTX, &m);
        let r2 = self.ed.verify(msg, &e);
        r1?;
        r2?;
        Ok(())
    }

    /// [`verify`](Self::verify) for an identity that verifies many signatures (a pinned broker, a peer whose
    /// messages are checked repeatedly): the first call expands the ML-DSA matrix A once and keeps it (about
    /// 30 KB, shared by clones made afterwards), so later calls skip ExpandA. Same results and errors as
    /// [`verify`](Self::verify); A is public, so keeping it changes nothing about what is secret.
    pub fn verify_pinned(&self, msg: &[u8], sig: &[u8]) -> Result<()> {
        if sig.len() != SIG_LEN {
            return Err(Error::Crypto(pqkit::Error::length("pqkit-bus", "hybrid signature", SIG_LEN, sig.len())));
        }
        let m = MlDsa65Signature::from_bytes(&sig[..MLDSA_SIG_LEN])?;
        let e = ed25519::Signature::from_bytes(&sig[MLDSA_SIG_LEN..])?;
        let x = self.expanded.get_or_init(|| Arc::new(self.mldsa.expand()));
        // Both are checked whatever the first gives, as in `verify`.
        let r1 = x.verify(msg, CTX, &m);
        let r2 = self.ed.verify(msg, &e);
        r1?;
        r2?;
        Ok(())
    }
}

/// The first line of an agent key file.
pub const KEY_FILE_HEADER: &str = "pqkit-bus agent v1";

/// The agent key file for `name` and `seed` (secret: it holds the seed), as `pqkit keygen --alg agent` writes it:
/// three lines, `pqkit-bus agent v1`, `name <name>`, `seed <64 lower-case hex digits>`, each ending in `\n`.
/// Every binding reads and writes this one format through [`parse_key_file`] and this function.
pub fn key_file(name: &str, seed: &[u8; 32]) -> Result<Zeroizing<Vec<u8>>> {
    check_name(name)?;
    let mut out = Zeroizing::new(Vec::with_capacity(KEY_FILE_HEADER.len() + name.len() + 80));
    out.extend_from_slice(KEY_FILE_HEADER.as_bytes());
    out.extend_from_slice(b"\nname ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\nseed ");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in seed {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
    out.push(b'\n');
    Ok(out)
}

/// Reads an agent key file (the format of [`key_file`]; a trailing `\r` on a line and text after the third line
/// are ignored): the name and the seed. The error names the line at fault, never the seed.
pub fn parse_key_file(data: &[u8]) -> Result<(String, Zeroizing<[u8; 32]>)> {
    let bad = |reason: &'static str| Error::KeyFile { reason };
    let text = std::str::from_utf8(data).map_err(|_| bad("not UTF-8"))?;
    let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next() != Some(KEY_FILE_HEADER) {
        return Err(bad("the first line is not `pqkit-bus agent v1`"));
    }
    let name = lines.next().and_then(|l| l.strip_prefix("name ")).ok_or_else(|| bad("no `name` line"))?;
    check_name(name)?;
    let hex = lines.next().and_then(|l| l.strip_prefix("seed ")).ok_or_else(|| bad("no `seed` line"))?.trim();
    if hex.len() != 64 {
        return Err(bad("the seed is not 64 hex digits"));
    }
    let mut seed = Zeroizing::new([0u8; 32]);
    for (o, pair) in seed.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        let digit = |c: u8| (c as char).to_digit(16);
        match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => *o = (h * 16 + l) as u8,
            _ => return Err(bad("the seed is not hex")),
        }
    }
    Ok((name.to_string(), seed))
}

/// An agent's identity: its name and hybrid signing keys (zeroized on drop; `Debug` shows only the public part).
/// A clone is a second copy of the secret keys (the NATS agent keeps one to sign checkpoints), zeroized on drop too.
#[derive(Clone)]
pub struct Identity {
    mldsa: MlDsa65SigningKey,
    ed: ed25519::SigningKey,
    /// The key a key server seals its state file under (derived from the seed like the signing keys).
    state_key: Zeroizing<[u8; 32]>,
    public: PublicIdentity,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity").field("public", &self.public).finish_non_exhaustive()
    }
}

impl Identity {
    /// A fresh identity from OS randomness.
    pub fn generate(name: &str) -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        pqkit::rng::fill_os(seed.as_mut())?;
        Self::from_seed(name, &seed)
    }

    /// The identity for a 32-byte seed (both key pairs are derived from it with HKDF-SHA256).
    pub fn from_seed(name: &str, seed: &[u8; 32]) -> Result<Self> {
        check_name(name)?;
        let hk = Hkdf::<pqkit::hash::sha2::Sha256>::new(b"pqkit-bus identity v1", seed);
        let mut a = Zeroizing::new([0u8; 32]);
        let mut b = Zeroizing::new([0u8; 32]);
        hk.expand(b"ML-DSA-65", a.as_mut())?;
        hk.expand(b"Ed25519", b.as_mut())?;
        let mut state_key = Zeroizing::new([0u8; 32]);
        hk.expand(b"key-server state", state_key.as_mut())?;
        let (mldsa, vk) = MlDsa65SigningKey::from_seed(&a);
        let ed = ed25519::SigningKey::from_seed(&b);
        let evk = ed.verifying_key();
        let id = agent_id(vk.as_bytes(), evk.as_bytes());
        let public = PublicIdentity { name: name.to_string(), mldsa: vk, ed: evk, id, expanded: OnceLock::new() };
        Ok(Identity { mldsa, ed, state_key, public })
    }

    /// The identity in an agent key file (see [`key_file`]).
    pub fn from_key_file(data: &[u8]) -> Result<Self> {
        let (name, seed) = parse_key_file(data)?;
        Self::from_seed(&name, &seed)
    }

    /// The key a key server with this identity seals its state file under.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn state_key(&self) -> &[u8; 32] {
        &self.state_key
    }

    /// The public half.
    pub fn public(&self) -> &PublicIdentity {
        &self.public
    }
    /// The agent id.
    pub fn id(&self) -> AgentId {
        self.public.id
    }
    /// The name.
    pub fn name(&self) -> &str {
        &self.public.name
    }

    /// A hybrid signature (`SIG_LEN` bytes) over `msg`: ML-DSA-65 (hedged) then Ed25519.
    pub fn sign(&self, msg: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let s = self.mldsa.sign(msg, CTX)?;
        out.extend_from_slice(s.as_bytes());
        out.extend_from_slice(self.ed.sign(msg).as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_file_round_trips_and_rejects_every_bad_line() {
        let seed = [0xa5u8; 32];
        let file = key_file("alice", &seed).unwrap();
        assert_eq!(
            std::str::from_utf8(&file).unwrap(),
            format!("pqkit-bus agent v1\nname alice\nseed {}\n", "a5".repeat(32))
        );
        let (name, back) = parse_key_file(&file).unwrap();
        assert_eq!((name.as_str(), *back), ("alice", seed));
        assert_eq!(Identity::from_key_file(&file).unwrap().id(), Identity::from_seed("alice", &seed).unwrap().id());
        // CRLF line ends and upper-case hex are read too.
        let crlf = format!("pqkit-bus agent v1\r\nname alice\r\nseed {}\r\n", "A5".repeat(32));
        assert_eq!(*parse_key_file(crlf.as_bytes()).unwrap().1, seed);
        let hex = "a5".repeat(32);
        for (text, why) in [
            (format!("pqkit-bus agent v2\nname a\nseed {hex}\n"), "first line"),
            (format!("pqkit-bus agent v1\nnom a\nseed {hex}\n"), "`name`"),
            (format!("pqkit-bus agent v1\nname a\nsead {hex}\n"), "`seed`"),
            ("pqkit-bus agent v1\nname a\nseed abcd\n".to_string(), "64 hex"),
            (format!("pqkit-bus agent v1\nname a\nseed {}zz\n", &hex[2..]), "not hex"),
        ] {
            let e = parse_key_file(text.as_bytes()).unwrap_err();
            assert!(matches!(e, Error::KeyFile { .. }), "{text:?}: {e:?}");
            assert!(e.to_string().contains(why), "{e}");
            assert!(!e.to_string().contains(&hex[..16]), "the error shows the seed: {e}");
        }
        assert!(matches!(parse_key_file(b"\xff"), Err(Error::KeyFile { reason: "not UTF-8" })));
        assert!(matches!(
            parse_key_file(format!("pqkit-bus agent v1\nname \nseed {hex}\n").as_bytes()),
            Err(Error::InvalidName)
        ));
        assert!(matches!(key_file("", &seed), Err(Error::InvalidName)));
    }

    #[test]
    fn sign_verify_and_reject() {
        let a = Identity::from_seed("alice", &[1; 32]).unwrap();
        let b = Identity::from_seed("bob", &[2; 32]).unwrap();
        assert_ne!(a.id(), b.id());
        let mut sig = Vec::new();
        a.sign(b"hello", &mut sig).unwrap();
        a.public().verify(b"hello", &sig).unwrap();
        assert!(b.public().verify(b"hello", &sig).is_err());
        assert!(a.public().verify(b"hellO", &sig).is_err());
        // Either half broken is a failure.
        for i in [10, MLDSA_SIG_LEN + 10] {
            let mut s = sig.clone();
            s[i] ^= 1;
            assert!(a.public().verify(b"hello", &s).is_err(), "flip at {i}");
        }
        assert!(a.public().verify(b"hello", &sig[..SIG_LEN - 1]).is_err());
        // The pinned path (A kept after the first call) gives the same answers, before and after its cache fills
        // and in a clone sharing it.
        let pin = a.public().clone();
        for _ in 0..2 {
            pin.verify_pinned(b"hello", &sig).unwrap();
            assert!(pin.verify_pinned(b"hellO", &sig).is_err());
            assert!(b.public().verify_pinned(b"hello", &sig).is_err());
            for i in [10, MLDSA_SIG_LEN + 40] {
                let mut s = sig.clone();
                s[i] ^= 1;
                let want = match i {
                    10 => "ML-DSA-65",
                    _ => "Ed25519",
                };
                match pin.verify_pinned(b"hello", &s) {
                    Err(Error::Crypto(pqkit::Error::AuthenticationFailed { algorithm })) => assert_eq!(algorithm, want),
                    other => panic!("flip at {i}: {other:?}"),
                }
            }
            assert!(pin.verify_pinned(b"hello", &sig[..SIG_LEN - 1]).is_err());
        }
        pin.clone().verify_pinned(b"hello", &sig).unwrap();
        let mut enc = Vec::new();
        a.public().encode(&mut enc);
        let (d, n) = PublicIdentity::decode(&enc).unwrap();
        assert_eq!(n, enc.len());
        assert_eq!(&d, a.public());
        assert!(PublicIdentity::decode(&enc[..enc.len() - 1]).is_err());
        assert!(Identity::from_seed("", &[0; 32]).is_err());
    }
}
