//! The C key API against the `openssl` command: keys openssl makes load through `pqkit_private_key_import`
//! (PKCS#8 and SEC1, DER and PEM), keys and signatures the C API writes are read and verified by openssl,
//! openssl's signatures verify here, and both sides derive the same shared secret.
//!
//! Needs `openssl` (apt-get install openssl): under CI (`CI` set) a missing command fails the test; elsewhere
//! it says loudly that it skipped.

#[path = "../../pqkit/tests/common/tool.rs"]
mod tool;

use pqkit_ffi::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn have_openssl() -> bool {
    tool::available("openssl", "version", "apt-get install openssl")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pqkit-ffi-keys-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn openssl(args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl").args(args).output().expect("run openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The openssl names of each key type: `genpkey` arguments.
const TYPES: [(PqkitKeyType, &[&str]); 4] = [
    (PqkitKeyType::Ed25519, &["-algorithm", "ed25519"]),
    (PqkitKeyType::X25519, &["-algorithm", "x25519"]),
    (PqkitKeyType::P256, &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]),
    (PqkitKeyType::Secp256k1, &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"]),
];

struct Sk(*mut PqkitPrivateKey);
struct Pk(*mut PqkitPublicKey);

impl Drop for Sk {
    fn drop(&mut self) {
        // SAFETY: a live handle from pqkit_private_key_import/generate, freed once.
        unsafe { pqkit_private_key_free(self.0) }
    }
}
impl Drop for Pk {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { pqkit_public_key_free(self.0) }
    }
}

fn import_private(t: PqkitKeyType, f: PqkitKeyFormat, data: &[u8]) -> Sk {
    let mut h = core::ptr::null_mut();
    // SAFETY: data is a live slice; h is a valid out-pointer.
    let st = unsafe { pqkit_private_key_import(t as u32, f as u32, data.as_ptr(), data.len(), &mut h) };
    assert_eq!(st, PqkitStatus::Ok, "{t:?} {f:?}");
    Sk(h)
}

fn import_public(t: PqkitKeyType, f: PqkitKeyFormat, data: &[u8]) -> Pk {
    let mut h = core::ptr::null_mut();
    // SAFETY: as above.
    let st = unsafe { pqkit_public_key_import(t as u32, f as u32, data.as_ptr(), data.len(), &mut h) };
    assert_eq!(st, PqkitStatus::Ok, "{t:?} {f:?}");
    Pk(h)
}

fn export_private(k: &Sk, f: PqkitKeyFormat) -> Vec<u8> {
    let mut buf = vec![0u8; 1024];
    let mut n = 0usize;
    // SAFETY: a live handle, a writable buffer of its length and an out-pointer.
    let st = unsafe { pqkit_private_key_export(k.0, f as u32, buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(st, PqkitStatus::Ok, "{f:?}");
    buf.truncate(n);
    buf
}

fn public_of(k: &Sk) -> Pk {
    let mut h = core::ptr::null_mut();
    // SAFETY: a live handle and an out-pointer.
    assert_eq!(unsafe { pqkit_private_key_public_key(k.0, &mut h) }, PqkitStatus::Ok);
    Pk(h)
}

fn export_public(k: &Pk, f: PqkitKeyFormat) -> Vec<u8> {
    let mut buf = vec![0u8; 1024];
    let mut n = 0usize;
    // SAFETY: as export_private.
    let st = unsafe { pqkit_public_key_export(k.0, f as u32, buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(st, PqkitStatus::Ok, "{f:?}");
    buf.truncate(n);
    buf
}

fn sign(k: &Sk, msg: &[u8], f: PqkitSignatureFormat) -> Vec<u8> {
    let mut buf = vec![0u8; 128];
    let mut n = 0usize;
    // SAFETY: live handle and buffers.
    let st = unsafe { pqkit_private_key_sign(k.0, msg.as_ptr(), msg.len(), f as u32, buf.as_mut_ptr(), 128, &mut n) };
    assert_eq!(st, PqkitStatus::Ok);
    buf.truncate(n);
    buf
}

fn verify(k: &Pk, msg: &[u8], f: PqkitSignatureFormat, sig: &[u8]) -> PqkitStatus {
    // SAFETY: live handle and buffers.
    unsafe { pqkit_public_key_verify(k.0, msg.as_ptr(), msg.len(), f as u32, sig.as_ptr(), sig.len()) }
}

fn agree(k: &Sk, peer: &Pk) -> [u8; 32] {
    let mut ss = [0u8; 32];
    // SAFETY: live handles, a 32-byte buffer.
    assert_eq!(unsafe { pqkit_private_key_agree(k.0, peer.0, ss.as_mut_ptr(), 32) }, PqkitStatus::Ok);
    ss
}

fn is_ec(t: PqkitKeyType) -> bool {
    matches!(t, PqkitKeyType::P256 | PqkitKeyType::Secp256k1)
}

#[test]
fn keys_made_by_openssl_load_in_every_format() {
    if !have_openssl() {
        return;
    }
    use PqkitKeyFormat as F;
    for (t, genargs) in TYPES {
        let d = dir(&format!("load-{t:?}"));
        let pem = d.join("key.pem");
        let mut args = vec!["genpkey"];
        args.extend_from_slice(genargs);
        args.extend_from_slice(&["-out", p(&pem)]);
        openssl(&args);
        let pem_bytes = std::fs::read(&pem).unwrap();
        let der = openssl(&["pkcs8", "-topk8", "-nocrypt", "-in", p(&pem), "-outform", "DER"]);
        let spki_pem = openssl(&["pkey", "-in", p(&pem), "-pubout"]);
        let spki_der = openssl(&["pkey", "-in", p(&pem), "-pubout", "-outform", "DER"]);

        let from_pem = import_private(t, F::Pkcs8Pem, &pem_bytes);
        let from_der = import_private(t, F::Pkcs8Der, &der);
        assert_eq!(export_private(&from_pem, F::Raw), export_private(&from_der, F::Raw), "{t:?}");
        // What pqkit writes is what openssl wrote.
        assert_eq!(export_private(&from_pem, F::Pkcs8Pem), pem_bytes, "{t:?}");
        assert_eq!(export_private(&from_pem, F::Pkcs8Der), der, "{t:?}");
        let public = public_of(&from_pem);
        assert_eq!(export_public(&public, F::SpkiPem), spki_pem, "{t:?}");
        assert_eq!(export_public(&public, F::SpkiDer), spki_der, "{t:?}");
        let imported = import_public(t, F::SpkiPem, &spki_pem);
        assert_eq!(export_public(&imported, F::Raw), export_public(&public, F::Raw));
        let imported = import_public(t, F::SpkiDer, &spki_der);
        assert_eq!(export_public(&imported, F::Raw), export_public(&public, F::Raw));

        if is_ec(t) {
            // OpenSSL's "traditional" EC PRIVATE KEY (SEC1), PEM and DER.
            let sec1_pem = openssl(&["ec", "-in", p(&pem)]);
            let sec1_der = openssl(&["ec", "-in", p(&pem), "-outform", "DER"]);
            let a = import_private(t, F::Sec1Pem, &sec1_pem);
            let b = import_private(t, F::Sec1Der, &sec1_der);
            assert_eq!(export_private(&a, F::Raw), export_private(&from_pem, F::Raw));
            assert_eq!(export_private(&b, F::Raw), export_private(&from_pem, F::Raw));
            assert_eq!(export_private(&a, F::Sec1Pem), sec1_pem, "{t:?}");
            assert_eq!(export_private(&a, F::Sec1Der), sec1_der, "{t:?}");
        }
    }
}

#[test]
fn keys_and_signatures_written_here_are_read_by_openssl() {
    if !have_openssl() {
        return;
    }
    use PqkitKeyFormat as F;
    let msg = b"signed through the pqkit C API, checked by openssl";
    for (t, _) in TYPES {
        let d = dir(&format!("write-{t:?}"));
        let mut h = core::ptr::null_mut();
        // SAFETY: an out-pointer.
        assert_eq!(unsafe { pqkit_private_key_generate(t as u32, &mut h) }, PqkitStatus::Ok);
        let key = Sk(h);
        let pub_key = public_of(&key);
        let key_pem = d.join("key.pem");
        let pub_pem = d.join("pub.pem");
        std::fs::write(&key_pem, export_private(&key, F::Pkcs8Pem)).unwrap();
        std::fs::write(&pub_pem, export_public(&pub_key, F::SpkiPem)).unwrap();
        // openssl reads the private key and derives the same public key.
        let derived = openssl(&["pkey", "-in", p(&key_pem), "-pubout"]);
        assert_eq!(derived, std::fs::read(&pub_pem).unwrap(), "{t:?}");
        let der_file = d.join("key.der");
        std::fs::write(&der_file, export_private(&key, F::Pkcs8Der)).unwrap();
        assert_eq!(openssl(&["pkey", "-in", p(&der_file), "-inform", "DER", "-pubout"]), derived);
        if is_ec(t) {
            let sec1 = d.join("sec1.pem");
            std::fs::write(&sec1, export_private(&key, F::Sec1Pem)).unwrap();
            assert_eq!(openssl(&["pkey", "-in", p(&sec1), "-pubout"]), derived);
        }

        let msg_file = d.join("msg");
        std::fs::write(&msg_file, msg).unwrap();
        let sig_file = d.join("sig");
        match t {
            PqkitKeyType::Ed25519 => {
                std::fs::write(&sig_file, sign(&key, msg, PqkitSignatureFormat::Raw)).unwrap();
                let out = openssl(&[
                    "pkeyutl",
                    "-verify",
                    "-pubin",
                    "-inkey",
                    p(&pub_pem),
                    "-rawin",
                    "-in",
                    p(&msg_file),
                    "-sigfile",
                    p(&sig_file),
                ]);
                assert!(String::from_utf8_lossy(&out).contains("Signature Verified Successfully"));
                // and the reverse: openssl signs, the C API verifies
                let theirs = openssl(&["pkeyutl", "-sign", "-inkey", p(&key_pem), "-rawin", "-in", p(&msg_file)]);
                assert_eq!(verify(&pub_key, msg, PqkitSignatureFormat::Raw, &theirs), PqkitStatus::Ok);
                assert_eq!(
                    verify(&pub_key, &msg[1..], PqkitSignatureFormat::Raw, &theirs),
                    PqkitStatus::AuthenticationFailed
                );
            }
            PqkitKeyType::P256 | PqkitKeyType::Secp256k1 => {
                std::fs::write(&sig_file, sign(&key, msg, PqkitSignatureFormat::Der)).unwrap();
                let out =
                    openssl(&["dgst", "-sha256", "-verify", p(&pub_pem), "-signature", p(&sig_file), p(&msg_file)]);
                assert!(String::from_utf8_lossy(&out).contains("Verified OK"));
                let theirs = openssl(&["dgst", "-sha256", "-sign", p(&key_pem), p(&msg_file)]);
                assert_eq!(verify(&pub_key, msg, PqkitSignatureFormat::Der, &theirs), PqkitStatus::Ok);
                assert_eq!(
                    verify(&pub_key, &msg[1..], PqkitSignatureFormat::Der, &theirs),
                    PqkitStatus::AuthenticationFailed
                );
            }
            PqkitKeyType::X25519 => {}
        }

        if t != PqkitKeyType::Ed25519 {
            // Key agreement: openssl's peer key, derived on both sides.
            let (_, genargs) = TYPES.iter().find(|(x, _)| *x == t).unwrap();
            let peer_pem = d.join("peer.pem");
            let mut args = vec!["genpkey"];
            args.extend_from_slice(genargs);
            args.extend_from_slice(&["-out", p(&peer_pem)]);
            openssl(&args);
            let peer_pub = d.join("peer_pub.pem");
            std::fs::write(&peer_pub, openssl(&["pkey", "-in", p(&peer_pem), "-pubout"])).unwrap();
            let theirs = openssl(&["pkeyutl", "-derive", "-inkey", p(&peer_pem), "-peerkey", p(&pub_pem)]);
            let peer = import_public(t, F::SpkiPem, &std::fs::read(&peer_pub).unwrap());
            assert_eq!(agree(&key, &peer).to_vec(), theirs, "{t:?}");
        }
    }
}
