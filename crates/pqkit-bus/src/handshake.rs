//! The authenticated hybrid handshake (see docs/bus.md §2):
//!
//! ```text
//!   -> e25519, ekem
//!   <- e25519, ct(ekem), {id_R, sig_R(h1)}
//!   -> {id_I, sig_I(h2)}
//! ```
//!
//! ML-KEM-768 + X25519 ephemeral key exchange combined with HKDF-SHA256 over a SHA-256 transcript hash, both
//! identities proven with ML-DSA-65 + Ed25519 signatures over the transcript and sent encrypted. The result is
//! a pair of AES-256-GCM session keys, one per direction.

use crate::identity::{Identity, PublicIdentity, SIG_LEN};
use crate::{AgentId, Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use pqkit::mlkem::{Ciphertext, DecapsulationKey, EncapsulationKey, MlKem768};
use zeroize::Zeroizing;

const MAGIC: &[u8; 4] = b"PQB1";
const EK_LEN: usize = 1184;
const CT_LEN: usize = 1088;
/// Length of the first message.
pub const M1_LEN: usize = 5 + 32 + EK_LEN;

fn bad(reason: &'static str) -> Error {
    Error::Handshake { reason }
}

/// The two directions' AEAD keys of an established session.
pub struct SessionKeys {
    /// Seals what this side sends.
    pub send: Aes256Gcm,
    /// Opens what this side receives.
    pub recv: Aes256Gcm,
}

impl std::fmt::Debug for SessionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKeys { .. }")
    }
}

struct Derived {
    k_r: Aes256Gcm,
    k_i: Aes256Gcm,
    s_ir: Aes256Gcm,
    s_ri: Aes256Gcm,
}

fn derive(h1: &[u8], ss_kem: &[u8; 32], ss_dh: &[u8; 32]) -> Result<Derived> {
    let mut ikm = Zeroizing::new([0u8; 64]);
    ikm[..32].copy_from_slice(ss_kem);
    ikm[32..].copy_from_slice(ss_dh);
    let hk = Hkdf::<Sha256>::new(h1, ikm.as_ref());
    let mut okm = Zeroizing::new([0u8; 128]);
    hk.expand(b"pqkit-bus hs keys v1", okm.as_mut())?;
    Ok(Derived {
        k_r: Aes256Gcm::new(&okm[..32])?,
        k_i: Aes256Gcm::new(&okm[32..64])?,
        s_ir: Aes256Gcm::new(&okm[64..96])?,
        s_ri: Aes256Gcm::new(&okm[96..])?,
    })
}

fn random32() -> Result<Zeroizing<[u8; 32]>> {
    let mut k = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(k.as_mut())?;
    Ok(k)
}

fn header(m: &[u8], n: u8) -> Result<&[u8]> {
    if m.len() < 5 || &m[..4] != MAGIC || m[4] != n {
        return Err(bad("wrong magic or message number"));
    }
    Ok(&m[5..])
}

/// The initiator between its first and last message.
pub struct Initiator {
    x: X25519SecretKey,
    dk: DecapsulationKey<MlKem768>,
    m1: Vec<u8>,
}

impl std::fmt::Debug for Initiator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Initiator { .. }")
    }
}

/// The responder between its message and the initiator's last.
pub struct Responder {
    k_i: Aes256Gcm,
    s_ir: Aes256Gcm,
    s_ri: Aes256Gcm,
    h2: [u8; 32],
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder { .. }")
    }
}

/// Starts a handshake: returns the initiator's state and message 1.
pub fn initiate() -> Result<(Initiator, Vec<u8>)> {
    let x = X25519SecretKey::from_array(*random32()?);
    let (dk, ek) = DecapsulationKey::<MlKem768>::generate()?;
    let mut m1 = Vec::with_capacity(M1_LEN);
    m1.extend_from_slice(MAGIC);
    m1.push(1);
    m1.extend_from_slice(x.public_key().as_bytes());
    m1.extend_from_slice(ek.as_bytes());
    Ok((Initiator { x, dk, m1: m1.clone() }, m1))
}

/// Answers message 1 as `identity`: returns the responder's state and message 2.
pub fn respond(identity: &Identity, m1: &[u8]) -> Result<(Responder, Vec<u8>)> {
    let body = header(m1, 1)?;
    if body.len() != 32 + EK_LEN {
        return Err(bad("message 1 has the wrong length"));
    }
    let pe = X25519PublicKey::from_bytes(&body[..32])?;
    let ek = EncapsulationKey::<MlKem768>::from_bytes(&body[32..])?;
    let x = X25519SecretKey::from_array(*random32()?);
    let xr = x.public_key();
    let ss_dh = x.diffie_hellman(&pe)?;
    let (ct, ss_kem) = ek.encapsulate()?;
    let mut t = Sha256::new();
    t.update(b"pqkit-bus hs v2");
    t.update(m1);
    t.update(xr.as_bytes());
    t.update(ct.as_bytes());
    let h1 = t.finalize();
    let d = derive(h1.as_ref(), ss_kem.as_bytes(), ss_dh.as_bytes())?;
    // The box: id_R || sig_R("pqkit-bus hs sig R" || h1).
    let mut boxed = Vec::with_capacity(2048 + SIG_LEN + 16);
    identity.public().encode(&mut boxed);
    let mut tbs = b"pqkit-bus hs sig R".to_vec();
    tbs.extend_from_slice(h1.as_ref());
    identity.sign(&tbs, &mut boxed)?;
    let tag = d.k_r.seal_in_place_detached(&[0u8; 12], h1.as_ref(), &mut boxed)?;
    let mut m2 = Vec::with_capacity(5 + 32 + CT_LEN + boxed.len() + 16);
    m2.extend_from_slice(MAGIC);
    m2.push(2);
    m2.extend_from_slice(xr.as_bytes());
    m2.extend_from_slice(ct.as_bytes());
    m2.extend_from_slice(&boxed);
    m2.extend_from_slice(&tag);
    let mut t2 = Sha256::new();
    t2.update(h1.as_ref());
    t2.update(&m2);
    let h2 = t2.finalize();
    let mut h2b = [0u8; 32];
    h2b.copy_from_slice(h2.as_ref());
    Ok((Responder { k_i: d.k_i, s_ir: d.s_ir, s_ri: d.s_ri, h2: h2b }, m2))
}

fn open_box<'a>(k: &Aes256Gcm, aad: &[u8], sealed: &'a mut [u8]) -> Result<&'a mut [u8]> {
    if sealed.len() < 16 {
        return Err(bad("sealed identity truncated"));
    }
    let n = sealed.len() - 16;
    let (ct, tag) = sealed.split_at_mut(n);
    k.open_in_place_detached(&[0u8; 12], aad, ct, tag).map_err(|_| bad("sealed identity does not authenticate"))?;
    Ok(ct)
}

fn read_identity(plain: &[u8], label: &[u8], h: &[u8]) -> Result<PublicIdentity> {
    let (id, used) = PublicIdentity::decode(plain)?;
    if plain.len() != used + SIG_LEN {
        return Err(bad("identity box has the wrong length"));
    }
    let mut tbs = label.to_vec();
    tbs.extend_from_slice(h);
    id.verify(&tbs, &plain[used..]).map_err(|_| bad("transcript signature does not verify"))?;
    Ok(id)
}

/// What the initiator requires of the responder's identity.
enum Expect<'a> {
    Anyone,
    Id(AgentId),
    Pinned(&'a PublicIdentity),
}

impl Initiator {
    /// Processes message 2 and answers as `identity`. With `expect = Some(id)` the responder must prove that
    /// identity. Returns the session keys, the responder's identity and message 3.
    pub fn finish(
        self,
        identity: &Identity,
        m2: &[u8],
        expect: Option<AgentId>,
    ) -> Result<(SessionKeys, PublicIdentity, Vec<u8>)> {
        let (k, peer, m3) = self.finish_inner(identity, m2, expect.map_or(Expect::Anyone, Expect::Id))?;
        // finish_inner returns the decoded identity whenever it is not pinned.
        let peer = peer.ok_or(bad("the responder's identity was not decoded"))?;
        Ok((k, peer, m3))
    }

    /// [`finish`](Self::finish) against a responder whose whole public identity the initiator already holds
    /// (an agent connecting to its broker): the identity in message 2 must be byte for byte the pinned one's
    /// encoding, and its signatures are checked with the pinned, already parsed keys, so the identity is not
    /// decoded, re-parsed and re-hashed. Returns the session keys and message 3.
    pub fn finish_pinned(
        self,
        identity: &Identity,
        m2: &[u8],
        responder: &PublicIdentity,
    ) -> Result<(SessionKeys, Vec<u8>)> {
        let (k, _, m3) = self.finish_inner(identity, m2, Expect::Pinned(responder))?;
        Ok((k, m3))
    }

    /// The common path; the responder's identity is returned when it was decoded (not with `Expect::Pinned`,
    /// whose caller already holds it).
    fn finish_inner(
        self,
        identity: &Identity,
        m2: &[u8],
        expect: Expect<'_>,
    ) -> Result<(SessionKeys, Option<PublicIdentity>, Vec<u8>)> {
        let body = header(m2, 2)?;
        if body.len() < 32 + CT_LEN + 16 {
            return Err(bad("message 2 truncated"));
        }
        let pr = X25519PublicKey::from_bytes(&body[..32])?;
        let ct = Ciphertext::<MlKem768>::from_bytes(&body[32..32 + CT_LEN])?;
        let ss_kem = self.dk.decapsulate(&ct);
        let ss_dh = self.x.diffie_hellman(&pr)?;
        let mut t = Sha256::new();
        t.update(b"pqkit-bus hs v2");
        t.update(&self.m1);
        t.update(pr.as_bytes());
        t.update(ct.as_bytes());
        let h1 = t.finalize();
        let d = derive(h1.as_ref(), ss_kem.as_bytes(), ss_dh.as_bytes())?;
        let mut sealed = body[32 + CT_LEN..].to_vec();
        let plain = open_box(&d.k_r, h1.as_ref(), &mut sealed)?;
        let peer = match expect {
            Expect::Pinned(pinned) => {
                let mut enc = Vec::with_capacity(2048);
                pinned.encode(&mut enc);
                if !plain.starts_with(&enc) {
                    return Err(bad("the responder is not the expected identity"));
                }
                if plain.len() != enc.len() + SIG_LEN {
                    return Err(bad("identity box has the wrong length"));
                }
                let mut tbs = b"pqkit-bus hs sig R".to_vec();
                tbs.extend_from_slice(h1.as_ref());
                // The pinned identity keeps its expanded ML-DSA matrix across handshakes (`verify_pinned`).
                pinned
                    .verify_pinned(&tbs, &plain[enc.len()..])
                    .map_err(|_| bad("transcript signature does not verify"))?;
                None
            }
            Expect::Id(want) => {
                let peer = read_identity(plain, b"pqkit-bus hs sig R", h1.as_ref())?;
                if peer.id() != want {
                    return Err(bad("the responder is not the expected identity"));
                }
                Some(peer)
            }
            Expect::Anyone => Some(read_identity(plain, b"pqkit-bus hs sig R", h1.as_ref())?),
        };
        let mut t2 = Sha256::new();
        t2.update(h1.as_ref());
        t2.update(m2);
        let h2 = t2.finalize();
        let mut boxed = Vec::with_capacity(2048 + SIG_LEN + 16);
        identity.public().encode(&mut boxed);
        let mut tbs = b"pqkit-bus hs sig I".to_vec();
        tbs.extend_from_slice(h2.as_ref());
        identity.sign(&tbs, &mut boxed)?;
        let tag = d.k_i.seal_in_place_detached(&[0u8; 12], h2.as_ref(), &mut boxed)?;
        let mut m3 = Vec::with_capacity(5 + boxed.len() + 16);
        m3.extend_from_slice(MAGIC);
        m3.push(3);
        m3.extend_from_slice(&boxed);
        m3.extend_from_slice(&tag);
        Ok((SessionKeys { send: d.s_ir, recv: d.s_ri }, peer, m3))
    }
}

impl Responder {
    /// Processes message 3: returns the session keys and the initiator's proven identity.
    pub fn finish(self, m3: &[u8]) -> Result<(SessionKeys, PublicIdentity)> {
        let body = header(m3, 3)?;
        let mut sealed = body.to_vec();
        let plain = open_box(&self.k_i, &self.h2, &mut sealed)?;
        let peer = read_identity(plain, b"pqkit-bus hs sig I", &self.h2)?;
        Ok((SessionKeys { send: self.s_ri, recv: self.s_ir }, peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> (Identity, Identity) {
        (Identity::from_seed("init", &[7; 32]).unwrap(), Identity::from_seed("resp", &[8; 32]).unwrap())
    }

    #[test]
    fn round_trip_keys_agree() {
        let (a, b) = ids();
        let (st, m1) = initiate().unwrap();
        let (rs, m2) = respond(&b, &m1).unwrap();
        let (ka, peer_b, m3) = st.finish(&a, &m2, Some(b.id())).unwrap();
        let (kb, peer_a) = rs.finish(&m3).unwrap();
        assert_eq!(peer_b.id(), b.id());
        assert_eq!(peer_a.id(), a.id());
        // Each side's send key opens at the other side, and not the other way round.
        let sealed = ka.send.seal(&[1; 12], b"", b"ping").unwrap();
        assert_eq!(kb.recv.open(&[1; 12], b"", &sealed).unwrap(), b"ping");
        assert!(kb.send.open(&[1; 12], b"", &sealed).is_err());
    }

    #[test]
    fn pinned_responder_is_checked_byte_for_byte() {
        let (a, b) = ids();
        let c = Identity::from_seed("resp", &[9; 32]).unwrap();
        // The pinned path agrees with the decoding path.
        let (st, m1) = initiate().unwrap();
        let (rs, m2) = respond(&b, &m1).unwrap();
        let (ka, m3) = st.finish_pinned(&a, &m2, b.public()).unwrap();
        let (kb, peer_a) = rs.finish(&m3).unwrap();
        assert_eq!(peer_a.id(), a.id());
        let sealed = ka.send.seal(&[2; 12], b"", b"ping").unwrap();
        assert_eq!(kb.recv.open(&[2; 12], b"", &sealed).unwrap(), b"ping");
        // Another responder (even one with the same name) is refused with the exact error.
        let (st, m1) = initiate().unwrap();
        let (_, m2) = respond(&c, &m1).unwrap();
        match st.finish_pinned(&a, &m2, b.public()) {
            Err(Error::Handshake { reason }) => assert_eq!(reason, "the responder is not the expected identity"),
            other => panic!("wrong result {:?}", other.map(|_| ())),
        }
        // A tampered box fails authentication before any identity check.
        let (st, m1) = initiate().unwrap();
        let (_, mut m2) = respond(&b, &m1).unwrap();
        m2[5 + 32 + CT_LEN + 100] ^= 1;
        match st.finish_pinned(&a, &m2, b.public()) {
            Err(Error::Handshake { reason }) => assert_eq!(reason, "sealed identity does not authenticate"),
            other => panic!("wrong result {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn every_tampered_byte_class_fails() {
        let (a, b) = ids();
        // Tampered message 1 (the responder's keys then differ from the initiator's).
        let (st, mut m1) = initiate().unwrap();
        m1[40] ^= 1;
        let (_, m2) = respond(&b, &m1).unwrap();
        assert!(matches!(st.finish(&a, &m2, None), Err(Error::Handshake { .. })));
        // Tampered message 2 ciphertext / box.
        for pos in [6, 5 + 32 + 10, 5 + 32 + CT_LEN + 5, usize::MAX] {
            let (st, m1) = initiate().unwrap();
            let (_, mut m2) = respond(&b, &m1).unwrap();
            let pos = if pos == usize::MAX { m2.len() - 1 } else { pos };
            m2[pos] ^= 0x20;
            assert!(st.finish(&a, &m2, None).is_err(), "m2 flip at {pos}");
        }
        // Wrong expected responder.
        let (st, m1) = initiate().unwrap();
        let (_, m2) = respond(&b, &m1).unwrap();
        assert!(matches!(st.finish(&a, &m2, Some(a.id())), Err(Error::Handshake { .. })));
        // Tampered or truncated message 3, and message 3 from another handshake (replay).
        let (st, m1) = initiate().unwrap();
        let (rs, m2) = respond(&b, &m1).unwrap();
        let (_, _, m3) = st.finish(&a, &m2, None).unwrap();
        let mut bad3 = m3.clone();
        bad3[100] ^= 1;
        let (st2, m1b) = initiate().unwrap();
        let (rs2, m2b) = respond(&b, &m1b).unwrap();
        let _ = st2.finish(&a, &m2b, None).unwrap();
        assert!(rs2.finish(&m3).is_err(), "message 3 replayed into another handshake");
        assert!(rs.finish(&bad3).is_err());
        // Truncations and wrong message numbers.
        let (_, m1) = initiate().unwrap();
        assert!(respond(&b, &m1[..m1.len() - 1]).is_err());
        assert!(respond(&b, &[]).is_err());
        let mut wrong = m1.clone();
        wrong[4] = 2;
        assert!(respond(&b, &wrong).is_err());
        let (st, m1) = initiate().unwrap();
        let (_, m2) = respond(&b, &m1).unwrap();
        assert!(st.finish(&a, &m2[..m2.len() - 20], None).is_err());
    }
}
