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
    // The size first (a capacity of 0), then the key.
    let mut n = 0usize;
    // SAFETY: a live handle; NULL with capacity 0; an out-pointer.
    let st = unsafe { pqkit_private_key_export(k.0, f as u32, core::ptr::null_mut(), 0, &mut n) };
    assert_eq!(st, PqkitStatus::BufferTooSmall, "{f:?}");
    let mut buf = vec![0u8; n];
    let mut m = 0usize;
    // SAFETY: a live handle, a writable buffer of its length and an out-pointer.
    let st = unsafe { pqkit_private_key_export(k.0, f as u32, buf.as_mut_ptr(), buf.len(), &mut m) };
    assert_eq!(st, PqkitStatus::Ok, "{f:?}");
    assert_eq!(m, n);
    buf
}

fn public_of(k: &Sk) -> Pk {
    let mut h = core::ptr::null_mut();
    // SAFETY: a live handle and an out-pointer.
    assert_eq!(unsafe { pqkit_private_key_public_key(k.0, &mut h) }, PqkitStatus::Ok);
    Pk(h)
}

fn export_public(k: &Pk, f: PqkitKeyFormat) -> Vec<u8> {
    // The size first (a capacity of 0), then the key.
    let mut n = 0usize;
    // SAFETY: a live handle; NULL with capacity 0; an out-pointer.
    let st = unsafe { pqkit_public_key_export(k.0, f as u32, core::ptr::null_mut(), 0, &mut n) };
    assert_eq!(st, PqkitStatus::BufferTooSmall, "{f:?}");
    let mut buf = vec![0u8; n];
    let mut m = 0usize;
    // SAFETY: a live handle, a writable buffer of its length and an out-pointer.
    let st = unsafe { pqkit_public_key_export(k.0, f as u32, buf.as_mut_ptr(), buf.len(), &mut m) };
    assert_eq!(st, PqkitStatus::Ok, "{f:?}");
    assert_eq!(m, n);
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
            PqkitKeyType::X25519 | PqkitKeyType::Rsa => {}
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

fn rsa_sign(k: &Sk, padding: PqkitRsaPadding, msg: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut n = 0usize;
    // SAFETY: live handle and buffers.
    let st = unsafe {
        pqkit_rsa_sign(
            k.0,
            padding as u32,
            PqkitRsaHash::Sha256 as u32,
            msg.as_ptr(),
            msg.len(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut n,
        )
    };
    assert_eq!(st, PqkitStatus::Ok);
    buf.truncate(n);
    buf
}

fn rsa_verify(k: &Pk, padding: PqkitRsaPadding, msg: &[u8], sig: &[u8]) -> PqkitStatus {
    // SAFETY: live handle and buffers.
    unsafe {
        pqkit_rsa_verify(
            k.0,
            padding as u32,
            PqkitRsaHash::Sha256 as u32,
            msg.as_ptr(),
            msg.len(),
            sig.as_ptr(),
            sig.len(),
        )
    }
}

#[test]
fn rsa_keys_signatures_and_oaep_against_openssl() {
    if !have_openssl() {
        return;
    }
    use PqkitKeyFormat as F;
    let d = dir("rsa");
    let pem = d.join("key.pem");
    openssl(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", p(&pem)]);
    let pem_bytes = std::fs::read(&pem).unwrap();
    let pkcs8_der = openssl(&["pkcs8", "-topk8", "-nocrypt", "-in", p(&pem), "-outform", "DER"]);
    let pkcs1_pem = openssl(&["rsa", "-in", p(&pem), "-traditional"]);
    let pkcs1_der = openssl(&["rsa", "-in", p(&pem), "-traditional", "-outform", "DER"]);
    let spki_pem = openssl(&["pkey", "-in", p(&pem), "-pubout"]);
    let spki_der = openssl(&["pkey", "-in", p(&pem), "-pubout", "-outform", "DER"]);
    let rsapub_pem = openssl(&["rsa", "-in", p(&pem), "-RSAPublicKey_out"]);
    let rsapub_der = openssl(&["rsa", "-in", p(&pem), "-RSAPublicKey_out", "-outform", "DER"]);

    // openssl's files load, and pqkit writes each back byte for byte.
    let key = import_private(PqkitKeyType::Rsa, F::Pkcs8Pem, &pem_bytes);
    for (f, bytes) in
        [(F::Pkcs8Pem, &pem_bytes), (F::Pkcs8Der, &pkcs8_der), (F::Pkcs1Pem, &pkcs1_pem), (F::Pkcs1Der, &pkcs1_der)]
    {
        let k = import_private(PqkitKeyType::Rsa, f, bytes);
        assert_eq!(&export_private(&k, f), bytes, "{f:?}");
        assert_eq!(export_private(&k, F::Pkcs8Der), pkcs8_der, "{f:?}");
    }
    let public = public_of(&key);
    for (f, bytes) in
        [(F::SpkiPem, &spki_pem), (F::SpkiDer, &spki_der), (F::Pkcs1Pem, &rsapub_pem), (F::Pkcs1Der, &rsapub_der)]
    {
        assert_eq!(&export_public(&public, f), bytes, "{f:?}");
        let k = import_public(PqkitKeyType::Rsa, f, bytes);
        assert_eq!(export_public(&k, F::SpkiDer), spki_der, "{f:?}");
    }

    // A key generated here is read by openssl, which derives the same public key.
    let mut h = core::ptr::null_mut();
    // SAFETY: an out-pointer.
    assert_eq!(unsafe { pqkit_private_key_generate_rsa(2048, &mut h) }, PqkitStatus::Ok);
    let ours = Sk(h);
    let ours_pem = d.join("ours.pem");
    std::fs::write(&ours_pem, export_private(&ours, F::Pkcs1Pem)).unwrap();
    assert_eq!(openssl(&["pkey", "-in", p(&ours_pem), "-pubout"]), export_public(&public_of(&ours), F::SpkiPem));
    openssl(&["rsa", "-in", p(&ours_pem), "-check", "-noout"]);

    // Signatures both ways, PSS and PKCS#1 v1.5 with SHA-256.
    let msg = b"RSA through the pqkit C API";
    let msg_file = d.join("msg");
    std::fs::write(&msg_file, msg).unwrap();
    let pub_file = d.join("pub.pem");
    std::fs::write(&pub_file, &spki_pem).unwrap();
    let sig_file = d.join("sig");
    for (padding, opts) in [
        (PqkitRsaPadding::Pss, &["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:-1"][..]),
        (PqkitRsaPadding::Pkcs1v15, &[][..]),
    ] {
        std::fs::write(&sig_file, rsa_sign(&key, padding, msg)).unwrap();
        let mut args = vec!["dgst", "-sha256"];
        args.extend_from_slice(opts);
        args.extend_from_slice(&["-verify", p(&pub_file), "-signature", p(&sig_file), p(&msg_file)]);
        assert!(String::from_utf8_lossy(&openssl(&args)).contains("Verified OK"), "{padding:?}");
        // openssl signs (PSS with its default salt length), the C API verifies
        let mut args = vec!["dgst", "-sha256"];
        if padding == PqkitRsaPadding::Pss {
            args.extend_from_slice(&["-sigopt", "rsa_padding_mode:pss"]);
        }
        args.extend_from_slice(&["-sign", p(&pem), p(&msg_file)]);
        let theirs = openssl(&args);
        assert_eq!(rsa_verify(&public, padding, msg, &theirs), PqkitStatus::Ok, "{padding:?}");
        assert_eq!(rsa_verify(&public, padding, &msg[1..], &theirs), PqkitStatus::AuthenticationFailed);
        if padding == PqkitRsaPadding::Pkcs1v15 {
            // deterministic: the same bytes
            assert_eq!(rsa_sign(&key, padding, msg), theirs);
        }
    }

    // OAEP both ways: SHA-256 with a label, and openssl's default (SHA-1, no label).
    let label = b"oaep label";
    for (hash, hash_name, with_label) in [(PqkitRsaHash::Sha256, "sha256", true), (PqkitRsaHash::Sha1, "sha1", false)] {
        let label: &[u8] = if with_label { label } else { b"" };
        let label_hex: String = label.iter().map(|b| format!("{b:02x}")).collect();
        let md = format!("rsa_oaep_md:{hash_name}");
        let mgf = format!("rsa_mgf1_md:{hash_name}");
        let lab = format!("rsa_oaep_label:{label_hex}");
        let mut opts = vec!["-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", md.as_str(), "-pkeyopt", mgf.as_str()];
        if with_label {
            opts.extend_from_slice(&["-pkeyopt", lab.as_str()]);
        }
        let mut ct = vec![0u8; 256];
        let mut n = 0usize;
        // SAFETY: live handle and buffers.
        let st = unsafe {
            pqkit_rsa_oaep_encrypt(
                public.0,
                hash as u32,
                label.as_ptr(),
                label.len(),
                msg.as_ptr(),
                msg.len(),
                ct.as_mut_ptr(),
                ct.len(),
                &mut n,
            )
        };
        assert_eq!(st, PqkitStatus::Ok);
        let ct_file = d.join("ct");
        std::fs::write(&ct_file, &ct[..n]).unwrap();
        let mut args = vec!["pkeyutl", "-decrypt", "-inkey", p(&pem), "-in", p(&ct_file)];
        args.extend_from_slice(&opts);
        assert_eq!(openssl(&args), msg, "{hash:?}");

        let mut args = vec!["pkeyutl", "-encrypt", "-pubin", "-inkey", p(&pub_file), "-in", p(&msg_file)];
        args.extend_from_slice(&opts);
        let theirs = openssl(&args);
        let mut back = vec![0u8; 256];
        // SAFETY: live handle and buffers.
        let st = unsafe {
            pqkit_rsa_oaep_decrypt(
                key.0,
                hash as u32,
                label.as_ptr(),
                label.len(),
                theirs.as_ptr(),
                theirs.len(),
                back.as_mut_ptr(),
                back.len(),
                &mut n,
            )
        };
        assert_eq!(st, PqkitStatus::Ok, "{hash:?}");
        assert_eq!(&back[..n], msg);
    }
}
