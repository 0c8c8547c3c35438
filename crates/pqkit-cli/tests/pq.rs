//! End-to-end tests of `pqkit kem` (ML-KEM) and `pqkit sign` (ML-DSA): seeded keygen matches the library,
//! round trips, implicit rejection, tampering, bad key files and no silent overwrite.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn pqkit() -> Command {
    Command::cargo_bin("pqkit").unwrap()
}

fn out_str(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap().trim().to_string()
}

const KEM_SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\
                        202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f";
const M: &str = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf";
const DSA_SEED: &str = "f0e0d0c0b0a0908070605040302010000102030405060708090a0b0c0d0e0f10";

fn kem_keygen(dir: &Path, alg: &str, seed: Option<&str>) -> (PathBuf, PathBuf) {
    let (dk, ek) = (dir.join(format!("{alg}.dk")), dir.join(format!("{alg}.ek")));
    let mut c = pqkit();
    c.args(["kem", "keygen", "--alg", alg]).arg("--dk").arg(&dk).arg("--ek").arg(&ek);
    if let Some(s) = seed {
        c.args(["--seed", s]);
    }
    c.assert().success();
    (dk, ek)
}

fn lib_kem<P: pqkit::mlkem::Params>() -> (Vec<u8>, Vec<u8>, Vec<u8>, [u8; 32]) {
    let seed = hex::decode(KEM_SEED).unwrap();
    let (dk, ek) = pqkit::mlkem::DecapsulationKey::<P>::from_seed64(&seed).unwrap();
    let m: [u8; 32] = hex::decode(M).unwrap().try_into().unwrap();
    let (ct, ss) = ek.encapsulate_deterministic(&m);
    (dk.to_bytes().as_ref().to_vec(), ek.as_bytes().to_vec(), ct.as_bytes().to_vec(), *ss.as_bytes())
}

#[test]
fn kem_seeded_matches_library_and_round_trips() {
    use pqkit::mlkem::{MlKem512, MlKem768, MlKem1024};
    let dir = tempfile::tempdir().unwrap();
    for (alg, (ldk, lek, lct, lss)) in [
        ("ml-kem-512", lib_kem::<MlKem512>()),
        ("ml-kem-768", lib_kem::<MlKem768>()),
        ("ml-kem-1024", lib_kem::<MlKem1024>()),
    ] {
        let (dk, ek) = kem_keygen(dir.path(), alg, Some(KEM_SEED));
        assert_eq!(fs::read(&dk).unwrap(), ldk, "{alg} dk");
        assert_eq!(fs::read(&ek).unwrap(), lek, "{alg} ek");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&dk).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let ct = dir.path().join(format!("{alg}.ct"));
        let a =
            pqkit().args(["kem", "encaps", "--alg", alg, "--m", M]).arg("--ek").arg(&ek).arg("--ct").arg(&ct).assert();
        let a = a.success();
        assert_eq!(out_str(&a), hex::encode(lss), "{alg} encaps secret");
        assert_eq!(fs::read(&ct).unwrap(), lct, "{alg} ct");
        let a = pqkit().args(["kem", "decaps", "--alg", alg]).arg("--dk").arg(&dk).arg("--ct").arg(&ct).assert();
        assert_eq!(out_str(&a.success()), hex::encode(lss), "{alg} decaps secret");

        // Implicit rejection: a modified ciphertext gives a different secret, exit 0.
        let mut bad = lct.clone();
        bad[5] ^= 1;
        let badp = dir.path().join(format!("{alg}.bad"));
        fs::write(&badp, &bad).unwrap();
        let a = pqkit().args(["kem", "decaps", "--alg", alg]).arg("--dk").arg(&dk).arg("--ct").arg(&badp).assert();
        let s = out_str(&a.success());
        assert_eq!(s.len(), 64);
        assert_ne!(s, hex::encode(lss));

        // Existing ciphertext not overwritten without --force.
        pqkit()
            .args(["kem", "encaps", "--alg", alg])
            .arg("--ek")
            .arg(&ek)
            .arg("--ct")
            .arg(&ct)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("exists"));
        assert_eq!(fs::read(&ct).unwrap(), lct);
    }
}

#[test]
fn kem_random_round_trip_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (dk, ek) = kem_keygen(dir.path(), "ml-kem-768", None);
    let ct = dir.path().join("ct");
    let a = pqkit().args(["kem", "encaps", "--alg", "ml-kem-768"]).arg("--ek").arg(&ek).arg("--ct").arg(&ct).assert();
    let s1 = out_str(&a.success());
    let a = pqkit().args(["kem", "decaps", "--alg", "ml-kem-768"]).arg("--dk").arg(&dk).arg("--ct").arg(&ct).assert();
    assert_eq!(out_str(&a.success()), s1);

    // Keygen refuses to overwrite, then --force replaces.
    let before = fs::read(&dk).unwrap();
    pqkit()
        .args(["kem", "keygen", "--alg", "ml-kem-768"])
        .arg("--dk")
        .arg(&dk)
        .arg("--ek")
        .arg(&ek)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists"));
    assert_eq!(fs::read(&dk).unwrap(), before);
    pqkit()
        .args(["kem", "keygen", "--alg", "ml-kem-768", "--force"])
        .arg("--dk")
        .arg(&dk)
        .arg("--ek")
        .arg(&ek)
        .assert()
        .success();
    assert_ne!(fs::read(&dk).unwrap(), before);

    // Wrong parameter set: wrong-length key file, exit 2 naming the file.
    pqkit()
        .args(["kem", "decaps", "--alg", "ml-kem-512"])
        .arg("--dk")
        .arg(&dk)
        .arg("--ct")
        .arg(&ct)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(dk.display().to_string()));
    pqkit()
        .args(["kem", "encaps", "--alg", "ml-kem-1024"])
        .arg("--ek")
        .arg(&ek)
        .arg("--ct")
        .arg(dir.path().join("ct2"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(ek.display().to_string()));
    assert!(!dir.path().join("ct2").exists());
    // Bad seed length.
    pqkit()
        .args(["kem", "keygen", "--alg", "ml-kem-512", "--seed", "00"])
        .arg("--dk")
        .arg(dir.path().join("x"))
        .arg("--ek")
        .arg(dir.path().join("y"))
        .assert()
        .code(2);
}

fn lib_dsa<P: pqkit::mldsa::Params>() -> (Vec<u8>, Vec<u8>) {
    let xi: [u8; 32] = hex::decode(DSA_SEED).unwrap().try_into().unwrap();
    let (sk, vk) = pqkit::mldsa::SigningKey::<P>::from_seed(&xi);
    ((*sk.to_bytes()).as_ref().to_vec(), vk.as_bytes().to_vec())
}

#[test]
fn sign_verify_all_sets() {
    use pqkit::mldsa::{MlDsa44, MlDsa65, MlDsa87};
    let dir = tempfile::tempdir().unwrap();
    let msg = dir.path().join("msg");
    fs::write(&msg, b"attack at dawn").unwrap();
    let msg2 = dir.path().join("msg2");
    fs::write(&msg2, b"attack at dusk").unwrap();
    for (alg, (lsk, lvk)) in
        [("ml-dsa-44", lib_dsa::<MlDsa44>()), ("ml-dsa-65", lib_dsa::<MlDsa65>()), ("ml-dsa-87", lib_dsa::<MlDsa87>())]
    {
        let (sk, vk) = (dir.path().join(format!("{alg}.sk")), dir.path().join(format!("{alg}.vk")));
        pqkit()
            .args(["sign", "keygen", "--alg", alg, "--seed", DSA_SEED])
            .arg("--sk")
            .arg(&sk)
            .arg("--vk")
            .arg(&vk)
            .assert()
            .success();
        assert_eq!(fs::read(&sk).unwrap(), lsk, "{alg} sk");
        assert_eq!(fs::read(&vk).unwrap(), lvk, "{alg} vk");

        // Deterministic signing is reproducible; signature printed in hex.
        let sign = || {
            let a = pqkit()
                .args(["sign", "sign", "--alg", alg, "--deterministic", "--ctx", "0102"])
                .arg("--sk")
                .arg(&sk)
                .arg(&msg)
                .assert();
            out_str(&a.success())
        };
        let s = sign();
        assert_eq!(s, sign());
        let sigf = dir.path().join(format!("{alg}.sig"));
        fs::write(&sigf, &s).unwrap();
        let verify = |m: &Path, sig: &Path, ctx: &str| {
            pqkit()
                .args(["sign", "verify", "--alg", alg, "--ctx", ctx])
                .arg("--vk")
                .arg(&vk)
                .arg("--sig")
                .arg(sig)
                .arg(m)
                .assert()
        };
        verify(&msg, &sigf, "0102").success().stdout("OK\n");
        verify(&msg2, &sigf, "0102").code(1);
        verify(&msg, &sigf, "0103").code(1);
        // Modified signature (hex form, a byte of z).
        let mut raw = hex::decode(&s).unwrap();
        raw[40] ^= 1;
        let badf = dir.path().join(format!("{alg}.badsig"));
        fs::write(&badf, hex::encode(&raw)).unwrap();
        verify(&msg, &badf, "0102").code(1);

        // Hedged signing from stdin, raw --out, verify from stdin.
        let rawf = dir.path().join(format!("{alg}.rawsig"));
        pqkit()
            .args(["sign", "sign", "--alg", alg])
            .arg("--sk")
            .arg(&sk)
            .arg("--out")
            .arg(&rawf)
            .write_stdin("stdin message")
            .assert()
            .success();
        pqkit()
            .args(["sign", "verify", "--alg", alg])
            .arg("--vk")
            .arg(&vk)
            .arg("--sig")
            .arg(&rawf)
            .write_stdin("stdin message")
            .assert()
            .success();
        pqkit()
            .args(["sign", "sign", "--alg", alg])
            .arg("--sk")
            .arg(&sk)
            .arg("--out")
            .arg(&rawf)
            .write_stdin("x")
            .assert()
            .code(2)
            .stderr(predicate::str::contains("exists"));
    }
}

#[test]
fn sign_bad_key_files() {
    let dir = tempfile::tempdir().unwrap();
    let (sk, vk) = (dir.path().join("sk"), dir.path().join("vk"));
    pqkit().args(["sign", "keygen", "--alg", "ml-dsa-65"]).arg("--sk").arg(&sk).arg("--vk").arg(&vk).assert().success();
    let msg = dir.path().join("m");
    fs::write(&msg, b"m").unwrap();
    // Wrong parameter set for the key file: exit 2 naming the file, no secret in the message.
    pqkit()
        .args(["sign", "sign", "--alg", "ml-dsa-44"])
        .arg("--sk")
        .arg(&sk)
        .arg(&msg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(sk.display().to_string()));
    let short = dir.path().join("short");
    fs::write(&short, [0u8; 10]).unwrap();
    pqkit()
        .args(["sign", "verify", "--alg", "ml-dsa-65"])
        .arg("--vk")
        .arg(&short)
        .arg("--sig")
        .arg(&short)
        .arg(&msg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("short"));
    // Keygen does not overwrite without --force.
    let before = fs::read(&sk).unwrap();
    pqkit()
        .args(["sign", "keygen", "--alg", "ml-dsa-65"])
        .arg("--sk")
        .arg(&sk)
        .arg("--vk")
        .arg(&vk)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists"));
    assert_eq!(fs::read(&sk).unwrap(), before);
}
