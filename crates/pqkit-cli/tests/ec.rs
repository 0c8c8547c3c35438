//! End-to-end tests of `pqkit sign --alg ed25519|p256|secp256k1` and `pqkit ecdh --alg x25519|p256|secp256k1`:
//! known answers through --seed (RFC 8032 test 1, RFC 7748 §6.1, RFC 6979 A.2.5), round trips, exit codes (1 bad
//! signature, 2 malformed input), no silent overwrite, and interoperability of the written PEM files and
//! signatures with the `openssl` command.

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

// RFC 8032 §7.1 test 1 (empty message).
const T1_SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const T1_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const T1_SIG: &str = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
// RFC 7748 §6.1.
const ALICE: &str = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
const ALICE_PUB: &str = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
const BOB: &str = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
const BOB_PUB: &str = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
const SHARED: &str = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

fn ed_keygen(dir: &Path, name: &str, seed: Option<&str>) -> (PathBuf, PathBuf) {
    let (sk, vk) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.pub.pem")));
    let mut c = pqkit();
    c.args(["sign", "keygen", "--alg", "ed25519"]).arg("--sk").arg(&sk).arg("--vk").arg(&vk);
    if let Some(s) = seed {
        c.args(["--seed", s]);
    }
    c.assert().success();
    (sk, vk)
}

fn x_keygen(dir: &Path, name: &str, seed: Option<&str>) -> (PathBuf, PathBuf) {
    let (sk, pk) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.pub.pem")));
    let mut c = pqkit();
    c.args(["ecdh", "keygen", "--alg", "x25519"]).arg("--sk").arg(&sk).arg("--pk").arg(&pk);
    if let Some(s) = seed {
        c.args(["--seed", s]);
    }
    c.assert().success();
    (sk, pk)
}

fn sign(sk: &Path, msg: &Path) -> String {
    out_str(&pqkit().args(["sign", "sign", "--alg", "ed25519", "--sk"]).arg(sk).arg(msg).assert().success())
}

fn verify(vk: &Path, sig: &Path, msg: &Path) -> assert_cmd::assert::Assert {
    pqkit().args(["sign", "verify", "--alg", "ed25519", "--vk"]).arg(vk).arg("--sig").arg(sig).arg(msg).assert()
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn ed25519_rfc8032_test1_via_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (sk, vk) = ed_keygen(dir.path(), "t1", Some(T1_SEED));
    #[cfg(unix)]
    {
        assert_eq!(mode(&sk), 0o600);
        assert_eq!(mode(&vk) & 0o077, 0o044);
    }
    // The files are the RFC 8410 encodings of the RFC 8032 key.
    let lib = pqkit::ec::ed25519::SigningKey::from_bytes(&hex::decode(T1_SEED).unwrap()).unwrap();
    assert_eq!(fs::read_to_string(&sk).unwrap(), *lib.to_pkcs8_pem().unwrap());
    let pubkey = pqkit::ec::ed25519::VerifyingKey::from_public_key_pem(&fs::read_to_string(&vk).unwrap()).unwrap();
    assert_eq!(hex::encode(pubkey.as_bytes()), T1_PUBLIC);

    // Sign the empty message from a file and from stdin: the RFC's signature.
    let msg = dir.path().join("empty");
    fs::write(&msg, b"").unwrap();
    assert_eq!(sign(&sk, &msg), T1_SIG);
    let a = pqkit().args(["sign", "sign", "--alg", "ed25519", "--sk"]).arg(&sk).write_stdin("").assert().success();
    assert_eq!(out_str(&a), T1_SIG);

    // Verify the hex form and the raw --out form.
    let sig_hex = dir.path().join("sig.hex");
    fs::write(&sig_hex, format!("{T1_SIG}\n")).unwrap();
    verify(&vk, &sig_hex, &msg).success().stdout("OK\n");
    let sig_raw = dir.path().join("sig.bin");
    pqkit()
        .args(["sign", "sign", "--alg", "ed25519", "--sk"])
        .arg(&sk)
        .arg("-o")
        .arg(&sig_raw)
        .arg(&msg)
        .assert()
        .success();
    assert_eq!(fs::read(&sig_raw).unwrap(), hex::decode(T1_SIG).unwrap());
    verify(&vk, &sig_raw, &msg).success().stdout("OK\n");
}

#[test]
fn ed25519_random_round_trip_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let (sk, vk) = ed_keygen(dir.path(), "a", None);
    let (sk2, vk2) = ed_keygen(dir.path(), "b", None);
    assert_ne!(fs::read(&sk).unwrap(), fs::read(&sk2).unwrap());
    let msg = dir.path().join("msg");
    fs::write(&msg, b"hello ed25519").unwrap();
    let sig = dir.path().join("sig");
    fs::write(&sig, sign(&sk, &msg)).unwrap();
    verify(&vk, &sig, &msg).success().stdout("OK\n");

    // Exit 1: another message, another key, a flipped bit of S (a flipped bit of R may leave no curve point,
    // which is a malformed signature, exit 2; S stays below L but for a 2^-186 chance).
    let other = dir.path().join("other");
    fs::write(&other, b"hello ed25519!").unwrap();
    verify(&vk, &sig, &other).code(1).stderr(predicate::str::contains("signature verification failed"));
    verify(&vk2, &sig, &msg).code(1).stderr(predicate::str::contains("signature verification failed"));
    let mut raw = hex::decode(fs::read_to_string(&sig).unwrap().trim()).unwrap();
    raw[40] ^= 4;
    let bad = dir.path().join("bad.sig");
    fs::write(&bad, &raw).unwrap();
    verify(&vk, &bad, &msg).code(1);

    // No overwrite without --force; with --force a new key replaces the old one.
    pqkit()
        .args(["sign", "keygen", "--alg", "ed25519"])
        .arg("--sk")
        .arg(&sk)
        .arg("--vk")
        .arg(dir.path().join("new.pub"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert!(!dir.path().join("new.pub").exists());
    let before = fs::read(&sk).unwrap();
    pqkit()
        .args(["sign", "keygen", "--alg", "ed25519", "--force"])
        .arg("--sk")
        .arg(&sk)
        .arg("--vk")
        .arg(&vk)
        .assert()
        .success();
    assert_ne!(fs::read(&sk).unwrap(), before);
    verify(&vk, &sig, &msg).code(1);
}

#[test]
fn ed25519_malformed_input_is_exit_2_and_bad_signatures_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let (sk, vk) = ed_keygen(dir.path(), "k", Some(T1_SEED));
    let msg = dir.path().join("empty");
    fs::write(&msg, b"").unwrap();
    let sig = dir.path().join("sig");
    fs::write(&sig, T1_SIG).unwrap();
    let write = |name: &str, data: &[u8]| {
        let p = dir.path().join(name);
        fs::write(&p, data).unwrap();
        p
    };

    // Malformed public key files.
    let garbage = write("garbage.pem", b"not a key\n");
    verify(&garbage, &sig, &msg)
        .code(2)
        .stderr(predicate::str::contains("garbage.pem").and(predicate::str::contains("not a key file")));
    // A private key where the public key is due, and the other way round.
    verify(&sk, &sig, &msg).code(2).stderr(predicate::str::contains("a public key is needed"));
    pqkit()
        .args(["sign", "sign", "--alg", "ed25519", "--sk"])
        .arg(&vk)
        .arg(&msg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a private key is needed"));
    // An X25519 key given to Ed25519.
    let (xsk, xpk) = x_keygen(dir.path(), "x", Some(ALICE));
    verify(&xpk, &sig, &msg)
        .code(2)
        .stderr(predicate::str::contains("the key is X25519; --alg ed25519 needs an Ed25519 key"));
    pqkit()
        .args(["sign", "sign", "--alg", "ed25519", "--sk"])
        .arg(&xsk)
        .arg(&msg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the key is X25519; --alg ed25519 needs an Ed25519 key"));
    // A truncated PEM.
    let pem = fs::read_to_string(&vk).unwrap();
    let cut = write("cut.pem", &pem.as_bytes()[..pem.len() - 10]);
    verify(&cut, &sig, &msg).code(2).stderr(predicate::str::contains("cut.pem"));
    // A public key of small order (the identity) in a well-formed SubjectPublicKeyInfo.
    let mut identity = hex::decode("302a300506032b6570032100").unwrap();
    identity.push(1);
    identity.extend_from_slice(&[0; 31]);
    let small = write("small.der", &identity);
    verify(&small, &sig, &msg).code(2).stderr(predicate::str::contains("point of small order"));

    // Malformed signatures: wrong length, not hex, S not below L.
    let short = write("short.sig", &T1_SIG.as_bytes()[..126]);
    verify(&vk, &short, &msg).code(1).stderr(predicate::str::contains("signature must be 64 bytes"));
    let nothex = write("nothex.sig", b"zz");
    verify(&vk, &nothex, &msg).code(1).stderr(predicate::str::contains("nothex.sig"));
    let mut big_s = hex::decode(T1_SIG).unwrap();
    big_s[63] = 0xff;
    let big = write("big.sig", &big_s);
    verify(&vk, &big, &msg).code(1).stderr(predicate::str::contains("not below the group order"));
    let mut bad_r = hex::decode(T1_SIG).unwrap();
    bad_r[..32].copy_from_slice(&[0xff; 32]);
    bad_r[31] = 0x7f; // y = 2^255 - 1, not below p
    let badr = write("badr.sig", &bad_r);
    verify(&vk, &badr, &msg)
        .code(1)
        .stderr(predicate::str::contains("badr.sig").and(predicate::str::contains("signature R: non-canonical")));

    // Options: a context (Ed25519 takes none), a seed of the wrong length or not hex.
    pqkit()
        .args(["sign", "sign", "--alg", "ed25519", "--ctx", "01", "--sk"])
        .arg(&sk)
        .arg(&msg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Ed25519 takes no context"));
    for seed in ["00", "xyz"] {
        pqkit()
            .args(["sign", "keygen", "--alg", "ed25519", "--seed", seed])
            .arg("--sk")
            .arg(dir.path().join("s.pem"))
            .arg("--vk")
            .arg(dir.path().join("s.pub"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--seed"));
    }
    // A missing key file.
    verify(&dir.path().join("missing.pem"), &sig, &msg).code(2).stderr(predicate::str::contains("missing.pem"));
}

#[test]
fn x25519_rfc7748_via_seed_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (ask, apk) = x_keygen(dir.path(), "alice", Some(ALICE));
    let (bsk, bpk) = x_keygen(dir.path(), "bob", Some(BOB));
    #[cfg(unix)]
    assert_eq!(mode(&ask), 0o600);
    let pk = |p: &Path| {
        let k = pqkit::ec::x25519::X25519PublicKey::from_public_key_pem(&fs::read_to_string(p).unwrap()).unwrap();
        hex::encode(k.as_bytes())
    };
    assert_eq!(pk(&apk), ALICE_PUB);
    assert_eq!(pk(&bpk), BOB_PUB);
    let derive = |sk: &Path, peer: &Path| {
        out_str(&pqkit().args(["ecdh", "derive", "--sk"]).arg(sk).arg("--peer").arg(peer).assert().success())
    };
    assert_eq!(derive(&ask, &bpk), SHARED);
    assert_eq!(derive(&bsk, &apk), SHARED);
    let a = pqkit().args(["ecdh", "derive", "--alg", "x25519", "--sk"]).arg(&ask).arg("--peer").arg(&bpk).assert();
    assert_eq!(out_str(&a.success()), SHARED);

    // Random keys agree with each other and differ from the seeded ones.
    let (csk, cpk) = x_keygen(dir.path(), "c", None);
    let (dsk, dpk) = x_keygen(dir.path(), "d", None);
    let s1 = derive(&csk, &dpk);
    assert_eq!(s1, derive(&dsk, &cpk));
    assert_eq!(s1.len(), 64);
    assert_ne!(s1, SHARED);
}

#[test]
fn x25519_malformed_input_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (ask, apk) = x_keygen(dir.path(), "alice", Some(ALICE));
    let derive =
        |sk: &Path, peer: &Path| pqkit().args(["ecdh", "derive", "--sk"]).arg(sk).arg("--peer").arg(peer).assert();
    // A peer key of small order (u = 0): all-zero secret refused.
    let mut zero = hex::decode("302a300506032b656e032100").unwrap();
    zero.extend_from_slice(&[0; 32]);
    let zp = dir.path().join("zero.der");
    fs::write(&zp, &zero).unwrap();
    derive(&ask, &zp).code(2).stderr(predicate::str::contains("zero.der").and(predicate::str::contains("small order")));
    // Keys swapped, an Ed25519 key, garbage.
    derive(&apk, &apk).code(2).stderr(predicate::str::contains("a private key is needed"));
    derive(&ask, &ask).code(2).stderr(predicate::str::contains("a public key is needed"));
    let (esk, epk) = ed_keygen(dir.path(), "ed", Some(T1_SEED));
    derive(&esk, &apk).code(2).stderr(predicate::str::contains("the key is Ed25519"));
    derive(&ask, &epk).code(2).stderr(predicate::str::contains("the key is Ed25519; this needs an X25519 key"));
    let g = dir.path().join("g");
    fs::write(&g, [0x30, 0x03, 0x02, 0x01]).unwrap();
    derive(&ask, &g).code(2).stderr(predicate::str::contains("g: not a key file"));
    // Bad seed; existing file kept.
    pqkit()
        .args(["ecdh", "keygen", "--alg", "x25519", "--seed", "0011"])
        .arg("--sk")
        .arg(dir.path().join("n.pem"))
        .arg("--pk")
        .arg(dir.path().join("n.pub"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--seed: expected 32 bytes"));
    pqkit()
        .args(["ecdh", "keygen", "--alg", "x25519"])
        .arg("--sk")
        .arg(&ask)
        .arg("--pk")
        .arg(dir.path().join("n.pub"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    // --alg is required on keygen and only x25519 exists.
    pqkit()
        .args(["ecdh", "keygen", "--alg", "x448", "--sk", "a", "--pk", "b"])
        .current_dir(dir.path())
        .assert()
        .code(2);
}

// ---- OpenSSL interoperability of the files the CLI writes ----

fn have_openssl() -> bool {
    let ok = std::process::Command::new("openssl").arg("version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        // In CI (.ci/run installs it) a missing command is a failure, never a silent pass.
        assert!(std::env::var_os("CI").is_none(), "CI: the `openssl` command is missing (apt-get install openssl)");
        eprintln!("WARNING: the `openssl` command is not installed: OpenSSL interoperability checks SKIPPED");
    }
    ok
}

fn openssl(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let o = std::process::Command::new("openssl").args(args).output().unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

macro_rules! os {
    ($($a:expr),* $(,)?) => { &[$(std::ffi::OsStr::new($a)),*] };
}

#[test]
fn openssl_reads_and_writes_ed25519_files() {
    if !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let msg = dir.path().join("msg");
    fs::write(&msg, b"signed by one, verified by the other").unwrap();

    // CLI-written keys: OpenSSL derives the same public key and verifies the CLI's signature.
    let (sk, vk) = ed_keygen(dir.path(), "cli", None);
    let derived = openssl(os!["pkey", "-in", &sk, "-pubout"]);
    assert_eq!(derived, fs::read(&vk).unwrap());
    let sig = dir.path().join("cli.sig");
    pqkit()
        .args(["sign", "sign", "--alg", "ed25519", "--sk"])
        .arg(&sk)
        .arg("-o")
        .arg(&sig)
        .arg(&msg)
        .assert()
        .success();
    let out = openssl(os!["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", &vk, "-in", &msg, "-sigfile", &sig]);
    assert!(String::from_utf8_lossy(&out).contains("Signature Verified Successfully"));

    // OpenSSL's key: the CLI signs with it (same signature as OpenSSL, Ed25519 being deterministic) and
    // verifies OpenSSL's signature with the CLI-readable public key.
    let osk = dir.path().join("openssl.pem");
    let ovk = dir.path().join("openssl.pub.pem");
    openssl(os!["genpkey", "-algorithm", "ed25519", "-out", &osk]);
    openssl(os!["pkey", "-in", &osk, "-pubout", "-out", &ovk]);
    let osig = dir.path().join("openssl.sig");
    openssl(os!["pkeyutl", "-sign", "-rawin", "-inkey", &osk, "-in", &msg, "-out", &osig]);
    verify(&ovk, &osig, &msg).success().stdout("OK\n");
    assert_eq!(sign(&osk, &msg), hex::encode(fs::read(&osig).unwrap()));
    // DER key files too.
    let oder = dir.path().join("openssl.pub.der");
    openssl(os!["pkey", "-in", &osk, "-pubout", "-outform", "DER", "-out", &oder]);
    verify(&oder, &osig, &msg).success();
    verify(&vk, &osig, &msg).code(1);
}

#[test]
fn openssl_x25519_derive_matches_cli() {
    if !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (sk, pk) = x_keygen(dir.path(), "cli", None);
    let osk = dir.path().join("openssl.pem");
    let opk = dir.path().join("openssl.pub.pem");
    openssl(os!["genpkey", "-algorithm", "x25519", "-out", &osk]);
    openssl(os!["pkey", "-in", &osk, "-pubout", "-out", &opk]);
    assert_eq!(openssl(os!["pkey", "-in", &sk, "-pubout"]), fs::read(&pk).unwrap());

    let cli = out_str(&pqkit().args(["ecdh", "derive", "--sk"]).arg(&sk).arg("--peer").arg(&opk).assert().success());
    let cli2 = out_str(&pqkit().args(["ecdh", "derive", "--sk"]).arg(&osk).arg("--peer").arg(&pk).assert().success());
    assert_eq!(cli, cli2);
    for (key, peer) in [(&osk, &pk), (&sk, &opk)] {
        assert_eq!(hex::encode(openssl(os!["pkeyutl", "-derive", "-inkey", key, "-peerkey", peer])), cli);
    }
}

// ---- ECDSA and ECDH on P-256 and secp256k1 ----

// RFC 6979 §A.2.5: the P-256 key and its SHA-256 signature of "sample".
const P256_X: &str = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721";
const P256_SAMPLE_R: &str = "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716";
const P256_SAMPLE_S: &str = "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8";
// The P-256 group order n, and n itself is not a valid private key.
const P256_N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
const K256_N: &str = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";

fn ws_keygen(cmd: &str, alg: &str, dir: &Path, name: &str, seed: Option<&str>) -> (PathBuf, PathBuf) {
    let (sk, pk) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.pub.pem")));
    let mut c = pqkit();
    c.args([cmd, "keygen", "--alg", alg])
        .arg("--sk")
        .arg(&sk)
        .arg(if cmd == "sign" { "--vk" } else { "--pk" })
        .arg(&pk);
    if let Some(s) = seed {
        c.args(["--seed", s]);
    }
    c.assert().success();
    (sk, pk)
}

fn ecdsa_sign(alg: &str, sk: &Path, msg: &Path, extra: &[&str]) -> String {
    out_str(&pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(sk).args(extra).arg(msg).assert().success())
}

fn ecdsa_verify(alg: &str, vk: &Path, sig: &Path, msg: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    pqkit().args(["sign", "verify", "--alg", alg, "--vk"]).arg(vk).arg("--sig").arg(sig).args(extra).arg(msg).assert()
}

/// DER of an ECDSA signature with these 32-byte big-endian r and s (tests only: minimal integers).
fn der_sig(r: &str, s: &str) -> String {
    fn int(h: &str) -> Vec<u8> {
        let mut v = hex::decode(h).unwrap();
        while v.len() > 1 && v[0] == 0 && v[1] < 0x80 {
            v.remove(0);
        }
        if v[0] >= 0x80 {
            v.insert(0, 0);
        }
        let mut out = vec![0x02, v.len() as u8];
        out.extend(v);
        out
    }
    let body = [int(r), int(s)].concat();
    let mut out = vec![0x30, body.len() as u8];
    out.extend(body);
    hex::encode(out)
}

#[test]
fn p256_rfc6979_sample_via_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (sk, vk) = ws_keygen("sign", "p256", dir.path(), "k", Some(P256_X));
    let msg = dir.path().join("msg");
    fs::write(&msg, b"sample").unwrap();
    let sig = ecdsa_sign("p256", &sk, &msg, &[]);
    assert_eq!(sig, der_sig(P256_SAMPLE_R, P256_SAMPLE_S));
    // The public key file holds the RFC's point (uncompressed, at the end of the SubjectPublicKeyInfo).
    let pem = fs::read_to_string(&vk).unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
    let sig_file = dir.path().join("sig.hex");
    fs::write(&sig_file, &sig).unwrap();
    ecdsa_verify("p256", &vk, &sig_file, &msg, &[]).success().stdout("OK\n");
    // The same signature in P1363 form (r || s), raw or hex, verifies too.
    let p1363 = dir.path().join("sig.p1363");
    fs::write(&p1363, hex::decode(format!("{P256_SAMPLE_R}{P256_SAMPLE_S}")).unwrap()).unwrap();
    ecdsa_verify("p256", &vk, &p1363, &msg, &[]).success();
    fs::write(&p1363, format!("{P256_SAMPLE_R}{P256_SAMPLE_S}\n")).unwrap();
    ecdsa_verify("p256", &vk, &p1363, &msg, &[]).success();
    // Another message fails with exit 1.
    fs::write(&msg, b"test").unwrap();
    ecdsa_verify("p256", &vk, &sig_file, &msg, &[]).code(1).stderr(predicate::str::contains("verification failed"));
}

#[test]
fn ecdsa_round_trips_hedged_low_s_and_failures() {
    for alg in ["p256", "secp256k1"] {
        let dir = tempfile::tempdir().unwrap();
        let (sk, vk) = ws_keygen("sign", alg, dir.path(), "a", None);
        let (_, other_vk) = ws_keygen("sign", alg, dir.path(), "b", None);
        assert_eq!(mode(&sk) & 0o777, 0o600, "{alg}");
        let msg = dir.path().join("msg");
        fs::write(&msg, b"a message").unwrap();
        // Deterministic by default: the same signature twice; hedged: different each time, both valid.
        let d1 = ecdsa_sign(alg, &sk, &msg, &[]);
        assert_eq!(d1, ecdsa_sign(alg, &sk, &msg, &[]), "{alg}");
        let h1 = ecdsa_sign(alg, &sk, &msg, &["--hedged"]);
        let h2 = ecdsa_sign(alg, &sk, &msg, &["--hedged"]);
        assert_ne!(h1, h2, "{alg}");
        for (i, s) in [&d1, &h1, &h2].into_iter().enumerate() {
            let f = dir.path().join(format!("s{i}"));
            fs::write(&f, s).unwrap();
            ecdsa_verify(alg, &vk, &f, &msg, &[]).success();
            ecdsa_verify(alg, &other_vk, &f, &msg, &[]).code(1);
        }
        // --out writes raw DER, and refuses to overwrite without --force.
        let raw = dir.path().join("sig.der");
        pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(&sk).arg("-o").arg(&raw).arg(&msg).assert().success();
        assert_eq!(hex::encode(fs::read(&raw).unwrap()), d1);
        pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(&sk).arg("-o").arg(&raw).arg(&msg).assert().code(2);
        if alg == "secp256k1" {
            // secp256k1 signs in low-S form (P-256 signatures are as computed, high S half the time).
            ecdsa_verify(alg, &vk, &raw, &msg, &["--low-s"]).success();
        }

        // A high-S twin of the signature (s -> n - s) is valid ECDSA but refused under --low-s.
        let der = hex::decode(&d1).unwrap();
        let (r, s) = parse_der(&der);
        let n = num_bigint::BigUint::parse_bytes(if alg == "p256" { P256_N } else { K256_N }.as_bytes(), 16).unwrap();
        let s_big = num_bigint::BigUint::from_bytes_be(&s);
        let twin = &n - &s_big;
        let (lo, hi) = if twin > s_big { (s_big, twin) } else { (twin, s_big) };
        let r_hex = hex::encode(r);
        let pad = |b: num_bigint::BigUint| format!("{:0>64}", hex::encode(b.to_bytes_be()));
        let low = dir.path().join("low");
        let high = dir.path().join("high");
        fs::write(&low, der_sig(&r_hex, &pad(lo))).unwrap();
        fs::write(&high, der_sig(&r_hex, &pad(hi))).unwrap();
        ecdsa_verify(alg, &vk, &low, &msg, &["--low-s"]).success();
        ecdsa_verify(alg, &vk, &high, &msg, &[]).success();
        ecdsa_verify(alg, &vk, &high, &msg, &["--low-s"]).code(1).stderr(predicate::str::contains("low-S"));
        if alg == "secp256k1" {
            // secp256k1 signatures come out low-S.
            assert_eq!(hex::decode(&d1).unwrap(), hex::decode(fs::read_to_string(&low).unwrap()).unwrap());
        }
    }
}

/// (r, s) of a short-form DER signature, as 32-byte arrays (tests only).
fn parse_der(der: &[u8]) -> ([u8; 32], [u8; 32]) {
    assert_eq!(der[0], 0x30);
    let mut i = 2;
    let mut out = [[0u8; 32]; 2];
    for o in &mut out {
        assert_eq!(der[i], 0x02);
        let len = der[i + 1] as usize;
        let v = &der[i + 2..i + 2 + len];
        let v = if v.len() == 33 { &v[1..] } else { v };
        o[32 - v.len()..].copy_from_slice(v);
        i += 2 + len;
    }
    (out[0], out[1])
}

#[test]
fn ecdsa_and_ecdh_malformed_input_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let msg = dir.path().join("msg");
    fs::write(&msg, b"m").unwrap();
    for (alg, n) in [("p256", P256_N), ("secp256k1", K256_N)] {
        // Seeds of 0 and n are not private keys; a short seed is not 32 bytes.
        for bad in ["00".repeat(32), n.to_string(), "01".repeat(31)] {
            let sk = dir.path().join("bad.pem");
            let vk = dir.path().join("bad.pub.pem");
            pqkit()
                .args(["sign", "keygen", "--alg", alg, "--seed", &bad])
                .arg("--sk")
                .arg(&sk)
                .arg("--vk")
                .arg(&vk)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("--seed"));
            assert!(!sk.exists() && !vk.exists());
        }
        let (sk, vk) = ws_keygen("sign", alg, dir.path(), alg, None);
        // Bad signatures: garbage, truncated DER, r = 0, wrong length raw.
        let sig = dir.path().join("sig");
        let good = hex::decode(ecdsa_sign(alg, &sk, &msg, &[])).unwrap();
        for bad in [
            b"garbage".to_vec(),
            good[..good.len() - 1].to_vec(),
            hex::decode(der_sig(&"00".repeat(32), &"01".repeat(32))).unwrap(),
            vec![0u8; 63],
        ] {
            fs::write(&sig, &bad).unwrap();
            ecdsa_verify(alg, &vk, &sig, &msg, &[]).code(1).stderr(predicate::str::contains("sig"));
        }
        // A context is refused; keys of the wrong kind or curve are refused.
        pqkit().args(["sign", "sign", "--alg", alg, "--ctx", "00", "--sk"]).arg(&sk).arg(&msg).assert().code(2);
        pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(&vk).arg(&msg).assert().code(2);
        let (ed_sk, ed_vk) = ed_keygen(dir.path(), &format!("ed-{alg}"), None);
        pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(&ed_sk).arg(&msg).assert().code(2);
        fs::write(&sig, &good).unwrap();
        ecdsa_verify(alg, &ed_vk, &sig, &msg, &[]).code(2);
        // ECDH: a peer key file that is not a public key of this curve.
        let (xsk, xpk) = ws_keygen("ecdh", alg, dir.path(), &format!("x-{alg}"), None);
        pqkit().args(["ecdh", "derive", "--alg", alg, "--sk"]).arg(&xsk).arg("--peer").arg(&ed_vk).assert().code(2);
        pqkit().args(["ecdh", "derive", "--alg", alg, "--sk"]).arg(&xpk).arg("--peer").arg(&xpk).assert().code(2);
    }
    // A key of the other curve.
    let (p_sk, p_vk) = ws_keygen("sign", "p256", dir.path(), "pp", None);
    let (k_sk, _) = ws_keygen("sign", "secp256k1", dir.path(), "kk", None);
    pqkit().args(["sign", "sign", "--alg", "p256", "--sk"]).arg(&k_sk).arg(&msg).assert().code(2);
    pqkit().args(["sign", "sign", "--alg", "secp256k1", "--sk"]).arg(&p_sk).arg(&msg).assert().code(2);
    let sig = dir.path().join("psig");
    fs::write(&sig, ecdsa_sign("p256", &p_sk, &msg, &[])).unwrap();
    ecdsa_verify("secp256k1", &p_vk, &sig, &msg, &[]).code(2);
    // --hedged and --low-s belong to ECDSA.
    let (ed_sk, ed_vk) = ed_keygen(dir.path(), "ed", None);
    pqkit().args(["sign", "sign", "--alg", "ed25519", "--hedged", "--sk"]).arg(&ed_sk).arg(&msg).assert().code(2);
    ecdsa_verify("ed25519", &ed_vk, &sig, &msg, &["--low-s"]).code(2);
}

#[test]
fn ecdh_both_sides_agree() {
    for alg in ["p256", "secp256k1"] {
        let dir = tempfile::tempdir().unwrap();
        let (a_sk, a_pk) = ws_keygen("ecdh", alg, dir.path(), "a", None);
        let (b_sk, b_pk) = ws_keygen("ecdh", alg, dir.path(), "b", None);
        let ab = out_str(
            &pqkit()
                .args(["ecdh", "derive", "--alg", alg, "--sk"])
                .arg(&a_sk)
                .arg("--peer")
                .arg(&b_pk)
                .assert()
                .success(),
        );
        let ba = out_str(
            &pqkit()
                .args(["ecdh", "derive", "--alg", alg, "--sk"])
                .arg(&b_sk)
                .arg("--peer")
                .arg(&a_pk)
                .assert()
                .success(),
        );
        assert_eq!(ab, ba, "{alg}");
        assert_eq!(ab.len(), 64, "{alg}");
    }
}

fn ec_curve_name(alg: &str) -> &'static str {
    if alg == "p256" { "prime256v1" } else { "secp256k1" }
}

#[test]
fn openssl_reads_and_writes_ecdsa_files() {
    if !have_openssl() {
        return;
    }
    for alg in ["p256", "secp256k1"] {
        let dir = tempfile::tempdir().unwrap();
        let msg = dir.path().join("msg");
        fs::write(&msg, b"signed by one, verified by the other").unwrap();

        // CLI-written keys: OpenSSL derives the same public key and verifies the CLI's DER signature.
        let (sk, vk) = ws_keygen("sign", alg, dir.path(), "cli", None);
        assert_eq!(openssl(os!["pkey", "-in", &sk, "-pubout"]), fs::read(&vk).unwrap(), "{alg}");
        let sig = dir.path().join("cli.sig");
        pqkit().args(["sign", "sign", "--alg", alg, "--sk"]).arg(&sk).arg("-o").arg(&sig).arg(&msg).assert().success();
        let out = openssl(os!["dgst", "-sha256", "-verify", &vk, "-signature", &sig, &msg]);
        assert!(String::from_utf8_lossy(&out).contains("Verified OK"), "{alg}");

        // OpenSSL's keys, PKCS#8 (genpkey) and SEC1 (ecparam -genkey): the CLI verifies OpenSSL's signatures
        // and OpenSSL verifies the CLI's.
        let curve = format!("ec_paramgen_curve:{}", ec_curve_name(alg));
        let p8 = dir.path().join("openssl.p8.pem");
        openssl(os!["genpkey", "-algorithm", "EC", "-pkeyopt", &curve, "-out", &p8]);
        let sec1 = dir.path().join("openssl.sec1.pem");
        openssl(os!["ecparam", "-name", ec_curve_name(alg), "-genkey", "-noout", "-out", &sec1]);
        assert!(fs::read_to_string(&sec1).unwrap().contains("BEGIN EC PRIVATE KEY"));
        for (i, osk) in [&p8, &sec1].into_iter().enumerate() {
            let ovk = dir.path().join(format!("o{i}.pub.pem"));
            openssl(os!["pkey", "-in", osk, "-pubout", "-out", &ovk]);
            let osig = dir.path().join(format!("o{i}.sig"));
            openssl(os!["dgst", "-sha256", "-sign", osk, "-out", &osig, &msg]);
            ecdsa_verify(alg, &ovk, &osig, &msg, &[]).success().stdout("OK\n");
            ecdsa_verify(alg, &vk, &osig, &msg, &[]).code(1);
            let csig = dir.path().join(format!("c{i}.sig"));
            pqkit()
                .args(["sign", "sign", "--alg", alg, "--sk"])
                .arg(osk)
                .arg("-o")
                .arg(&csig)
                .arg(&msg)
                .assert()
                .success();
            let out = openssl(os!["dgst", "-sha256", "-verify", &ovk, "-signature", &csig, &msg]);
            assert!(String::from_utf8_lossy(&out).contains("Verified OK"), "{alg}");
            // DER public key files too.
            let oder = dir.path().join(format!("o{i}.pub.der"));
            openssl(os!["pkey", "-in", osk, "-pubout", "-outform", "DER", "-out", &oder]);
            ecdsa_verify(alg, &oder, &osig, &msg, &[]).success();
        }
    }
}

#[test]
fn openssl_ecdh_derive_matches_cli() {
    if !have_openssl() {
        return;
    }
    for alg in ["p256", "secp256k1"] {
        let dir = tempfile::tempdir().unwrap();
        let (sk, pk) = ws_keygen("ecdh", alg, dir.path(), "cli", None);
        let osk = dir.path().join("openssl.pem");
        let opk = dir.path().join("openssl.pub.pem");
        let curve = format!("ec_paramgen_curve:{}", ec_curve_name(alg));
        openssl(os!["genpkey", "-algorithm", "EC", "-pkeyopt", &curve, "-out", &osk]);
        openssl(os!["pkey", "-in", &osk, "-pubout", "-out", &opk]);
        let cli = out_str(
            &pqkit().args(["ecdh", "derive", "--alg", alg, "--sk"]).arg(&sk).arg("--peer").arg(&opk).assert().success(),
        );
        let cli2 = out_str(
            &pqkit().args(["ecdh", "derive", "--alg", alg, "--sk"]).arg(&osk).arg("--peer").arg(&pk).assert().success(),
        );
        assert_eq!(cli, cli2, "{alg}");
        for (key, peer) in [(&osk, &pk), (&sk, &opk)] {
            assert_eq!(hex::encode(openssl(os!["pkeyutl", "-derive", "-inkey", key, "-peerkey", peer])), cli, "{alg}");
        }
    }
}
