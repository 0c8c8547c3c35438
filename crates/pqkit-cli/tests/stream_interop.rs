//! The `pqkit` binary and the library's `pqkit::aead::stream` read each other's files, and the binary reports
//! the library's header checks with exit status 1.

use assert_cmd::Command;
use pqkit::aead::stream::{Algorithm, Decryptor, Encryptor, Header, KeySource, MAX_M_COST};
use predicates::prelude::*;
use std::fs;
use std::io::{Read, Write};

const SEG: usize = 65536;

fn pqkit() -> Command {
    let mut c = Command::cargo_bin("pqkit").unwrap();
    c.env_remove("PQKIT_TEST_FIXED_RANDOM");
    c
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 9) as u8).collect()
}

#[test]
fn cli_and_library_read_each_others_files() {
    let dir = tempfile::tempdir().unwrap();
    let keyfile = dir.path().join("key");
    pqkit().arg("keygen").arg("--out").arg(&keyfile).assert().success();
    let text = fs::read_to_string(&keyfile).unwrap();
    let key = hex::decode(text.trim_end().strip_prefix("PQKIT-KEY-V1:").unwrap()).unwrap();
    let pw = dir.path().join("pw");
    fs::write(&pw, b"hunter2 hunter2\n").unwrap();
    for (i, (name, alg)) in [
        ("xchacha20-poly1305", Algorithm::XChaCha20Poly1305),
        ("kusumi512-poly1305", Algorithm::Kusumi512Poly1305),
        ("aes-256-gcm", Algorithm::Aes256Gcm),
    ]
    .into_iter()
    .enumerate()
    {
        let pt = data(2 * SEG + 77, i as u8);
        // CLI -> library.
        let out =
            pqkit().args(["encrypt", "--alg", name, "--key"]).arg(&keyfile).write_stdin(pt.clone()).output().unwrap();
        assert!(out.status.success());
        let mut back = Vec::new();
        Decryptor::with_key(&key, &out.stdout[..]).unwrap().read_to_end(&mut back).unwrap();
        assert!(back == pt, "{name}: CLI -> library");

        // Library -> CLI, key file and passphrase.
        let mut enc = Encryptor::with_key(alg, &key, Vec::new()).unwrap();
        enc.write_all(&pt).unwrap();
        let file = enc.finish().unwrap();
        let out = pqkit().args(["decrypt", "--key"]).arg(&keyfile).write_stdin(file).output().unwrap();
        assert!(out.status.success());
        assert!(out.stdout == pt, "{name}: library -> CLI");
        let params = pqkit::kdf::argon2::Params::new(64, 1, 2).unwrap();
        let mut enc = Encryptor::with_passphrase(alg, b"hunter2 hunter2", params, Vec::new()).unwrap();
        enc.write_all(&pt).unwrap();
        let file = enc.finish().unwrap();
        let out = pqkit().args(["decrypt", "--passphrase-file"]).arg(&pw).write_stdin(file).output().unwrap();
        assert!(out.status.success());
        assert!(out.stdout == pt, "{name}: library passphrase -> CLI");
    }
}

#[test]
fn header_limits_are_refused_before_the_passphrase_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let source = KeySource::Argon2id { m_cost: 64, t_cost: 1, p_cost: 1 };
    let mut file = Header::new(Algorithm::XChaCha20Poly1305, source, &[1; 32], &[2; 19]).unwrap().as_bytes().to_vec();
    file[12..16].copy_from_slice(&(MAX_M_COST + 1).to_be_bytes());
    file.extend_from_slice(&[0u8; 100]);
    let input = dir.path().join("forged.pqk");
    fs::write(&input, &file).unwrap();
    let out = dir.path().join("out");
    // No --passphrase-file and no terminal: the header is refused before any prompt.
    pqkit()
        .arg("decrypt")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("above this pqkit's limits"));
    assert!(!out.exists());
    // Other header faults are exit 1 with the library's reason. (Version 2 is the recipient format.)
    file[8] = 3;
    fs::write(&input, &file).unwrap();
    pqkit()
        .arg("decrypt")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unsupported format version"));
}
