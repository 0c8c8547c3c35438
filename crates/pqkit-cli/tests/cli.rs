//! End-to-end tests of the `pqkit` binary: file encryption round trips and tampering, atomic output,
//! parallel = sequential, hashing, and the known-answer commands against RFC and arx512 vectors.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

const SEG: usize = 65536;
const SEG_CT: usize = SEG + 16;
const ALGS: [&str; 3] = ["xchacha20-poly1305", "kusumi512-poly1305", "aes-256-gcm"];

fn pqkit() -> Command {
    let mut c = Command::cargo_bin("pqkit").unwrap();
    c.env_remove("PQKIT_TEST_FIXED_RANDOM");
    c
}

fn header_len(alg: &str) -> usize {
    if alg == "xchacha20-poly1305" { 56 + 19 } else { 56 + 7 }
}

/// Deterministic pseudo-random bytes (no dependency on an RNG crate).
fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

struct Env {
    dir: tempfile::TempDir,
    key: PathBuf,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key");
        pqkit().arg("keygen").arg("--out").arg(&key).assert().success();
        Env { dir, key }
    }
    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn write(&self, name: &str, d: &[u8]) -> PathBuf {
        let p = self.p(name);
        fs::write(&p, d).unwrap();
        p
    }
    fn encrypt(&self, alg: &str, input: &Path, out: &Path) {
        pqkit()
            .arg("encrypt")
            .arg("--alg")
            .arg(alg)
            .arg("--key")
            .arg(&self.key)
            .arg(input)
            .arg("-o")
            .arg(out)
            .assert()
            .success();
    }
    fn decrypt(&self, input: &Path, out: &Path) -> assert_cmd::assert::Assert {
        pqkit().arg("decrypt").arg("--key").arg(&self.key).arg(input).arg("-o").arg(out).assert()
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

#[test]
fn keygen_is_private_and_not_overwritten() {
    let env = Env::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&env.key).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let before = fs::read(&env.key).unwrap();
    pqkit().arg("keygen").arg("--out").arg(&env.key).assert().code(2).stderr(predicate::str::contains("exists"));
    assert_eq!(fs::read(&env.key).unwrap(), before);
    pqkit().arg("keygen").arg("--force").arg("--out").arg(&env.key).assert().success();
    assert_ne!(fs::read(&env.key).unwrap(), before);
}

#[test]
fn round_trips_every_algorithm_and_size() {
    let env = Env::new();
    for (ai, alg) in ALGS.iter().enumerate() {
        for (si, &n) in [0usize, 1, SEG - 1, SEG, SEG + 1, 10 << 20].iter().enumerate() {
            let pt = data(n, (ai * 10 + si) as u64);
            let input = env.write("pt", &pt);
            let (ct, back) = (env.p("ct.pqk"), env.p("back"));
            let _ = fs::remove_file(&ct);
            let _ = fs::remove_file(&back);
            env.encrypt(alg, &input, &ct);
            let segs = n.div_ceil(SEG).max(1);
            assert_eq!(fs::metadata(&ct).unwrap().len() as usize, header_len(alg) + n + 16 * segs, "{alg} {n}");
            env.decrypt(&ct, &back).success();
            assert!(fs::read(&back).unwrap() == pt, "{alg} size {n}");
        }
    }
}

#[test]
fn stdin_to_stdout_round_trip_and_passphrase() {
    let env = Env::new();
    let pt = data(200_000, 7);
    let ct = pqkit()
        .args(["encrypt", "--alg", "kusumi512-poly1305", "--key"])
        .arg(&env.key)
        .write_stdin(pt.clone())
        .output()
        .unwrap();
    assert!(ct.status.success());
    let back = pqkit().args(["decrypt", "--key"]).arg(&env.key).write_stdin(ct.stdout).output().unwrap();
    assert!(back.status.success());
    assert!(back.stdout == pt);

    let pw = env.write("pw", b"correct horse battery staple\n");
    let wrong = env.write("pw2", b"correct horse battery stapler\n");
    let out = env.p("pt.pqk");
    let input = env.write("pt", &pt);
    pqkit()
        .args(["encrypt", "--argon2-memory", "256", "--argon2-passes", "2", "--argon2-lanes", "2", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .success();
    // The costs are in the header, so decrypt needs no cost options.
    let dec = pqkit().args(["decrypt", "--passphrase-file"]).arg(&pw).arg(&out).arg("-o").arg("-").output().unwrap();
    assert!(dec.status.success());
    assert!(dec.stdout == pt);
    let bad = env.p("bad");
    pqkit()
        .args(["decrypt", "--passphrase-file"])
        .arg(&wrong)
        .arg(&out)
        .arg("-o")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("wrong passphrase or corrupted header"))
        .stderr(predicate::str::contains("stapler").not());
    assert!(!bad.exists());
    // A key file cannot open a passphrase file, and vice versa.
    pqkit().args(["decrypt", "--key"]).arg(&env.key).arg(&out).arg("-o").arg(&bad).assert().code(2);
    assert!(!bad.exists());
}

/// Encrypts `n` bytes and returns (env, ciphertext bytes, header length).
fn sample(alg: &str, n: usize) -> (Env, Vec<u8>, usize, Vec<u8>) {
    let env = Env::new();
    let pt = data(n, 99);
    let input = env.write("pt", &pt);
    let ct = env.p("orig.pqk");
    env.encrypt(alg, &input, &ct);
    let bytes = fs::read(&ct).unwrap();
    fs::remove_file(&ct).unwrap();
    fs::remove_file(&input).unwrap();
    (env, bytes, header_len(alg), pt)
}

/// Decrypting `ct` must fail with exit 1, print `msg`, and leave no file behind.
fn assert_rejected(env: &Env, ct: &[u8], msg: &str) {
    let input = env.write("t.pqk", ct);
    let out = env.p("out");
    let before = env.names();
    env.decrypt(&input, &out).code(1).stderr(predicate::str::contains(msg));
    assert!(!out.exists(), "{msg}: output created");
    assert_eq!(env.names(), before, "{msg}: files left behind");
    fs::remove_file(&input).unwrap();
}

#[test]
fn tampering_is_detected_and_leaves_nothing() {
    for alg in ALGS {
        // Four segments: three full, one of 1000 bytes.
        let (env, ct, h, _) = sample(alg, 3 * SEG + 1000);
        let seg = |i: usize| &ct[h + i * SEG_CT..(h + (i + 1) * SEG_CT).min(ct.len())];

        // Truncation: the final segment dropped.
        assert_rejected(&env, &ct[..h + 3 * SEG_CT], "ciphertext truncated after segment 2");
        // Truncation inside a segment, and down to the header.
        assert_rejected(&env, &ct[..ct.len() - 1], "segment 3");
        assert_rejected(&env, &ct[..h], "truncated after the header");
        assert_rejected(&env, &ct[..h - 1], "truncated inside the header");
        // Reorder: segments 1 and 2 swapped.
        let mut r = ct[..h].to_vec();
        r.extend_from_slice(seg(0));
        r.extend_from_slice(seg(2));
        r.extend_from_slice(seg(1));
        r.extend_from_slice(seg(3));
        assert_rejected(&env, &r, "segment 1 failed to authenticate");
        // Drop: segment 1 removed.
        let mut d = ct[..h].to_vec();
        d.extend_from_slice(seg(0));
        d.extend_from_slice(seg(2));
        d.extend_from_slice(seg(3));
        assert_rejected(&env, &d, "segment 1 failed to authenticate");
        // Append to a short final segment.
        let mut a = ct.clone();
        a.extend_from_slice(b"extra");
        assert_rejected(&env, &a, "segment 3");
        // Corrupted header: salt byte, algorithm-independent field, nonce prefix, magic.
        for (pos, msg) in
            [(30, "wrong key or corrupted header"), (h - 1, "wrong key or corrupted header"), (0, "not a pqkit")]
        {
            let mut c = ct.clone();
            c[pos] ^= 1;
            assert_rejected(&env, &c, msg);
        }
        let mut c = ct.clone();
        c[9] = 77;
        assert_rejected(&env, &c, "unknown algorithm");
        // A corrupted body byte in the middle.
        let mut c = ct.clone();
        c[h + SEG_CT + 5] ^= 0x80;
        assert_rejected(&env, &c, "segment 1 failed to authenticate");
        // Wrong key.
        let other = env.p("other-key");
        pqkit().arg("keygen").arg("--out").arg(&other).assert().success();
        let input = env.write("t.pqk", &ct);
        let out = env.p("out");
        pqkit()
            .args(["decrypt", "--key"])
            .arg(&other)
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("wrong key or corrupted header"));
        assert!(!out.exists());
    }
}

#[test]
fn appended_after_full_final_segment_is_named() {
    let (env, mut ct, h, _) = sample("xchacha20-poly1305", 2 * SEG);
    assert_eq!(ct.len(), h + 2 * SEG_CT);
    let extra = ct[h..h + SEG_CT].to_vec();
    ct.extend_from_slice(&extra);
    assert_rejected(&env, &ct, "data appended after the final segment 1");
}

#[test]
fn truncated_stream_to_stdout_says_what_was_written() {
    let (env, ct, h, pt) = sample("aes-256-gcm", 20 * SEG);
    let cut = &ct[..h + 17 * SEG_CT];
    let out =
        pqkit().args(["decrypt", "--threads", "1", "--key"]).arg(&env.key).write_stdin(cut.to_vec()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ciphertext truncated after segment 16"), "{err}");
    assert!(err.contains("already written to stdout"), "{err}");
    // Only authenticated segments were released, and they are a prefix of the plaintext.
    assert!(out.stdout.len() < 17 * SEG && pt.starts_with(&out.stdout));
}

#[test]
fn output_is_never_overwritten_without_force() {
    let env = Env::new();
    let pt = data(1000, 3);
    let input = env.write("pt", &pt);
    let ct = env.p("pt.pqk");
    env.encrypt("xchacha20-poly1305", &input, &ct);
    let out = env.write("out", b"precious");
    env.decrypt(&ct, &out).code(2).stderr(predicate::str::contains("exists"));
    assert_eq!(fs::read(&out).unwrap(), b"precious");
    // A failed decrypt with --force keeps the old file too.
    let mut bad = fs::read(&ct).unwrap();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let badp = env.write("bad.pqk", &bad);
    pqkit().args(["decrypt", "--force", "--key"]).arg(&env.key).arg(&badp).arg("-o").arg(&out).assert().code(1);
    assert_eq!(fs::read(&out).unwrap(), b"precious");
    pqkit().args(["decrypt", "--force", "--key"]).arg(&env.key).arg(&ct).arg("-o").arg(&out).assert().success();
    assert_eq!(fs::read(&out).unwrap(), pt);
    // Encrypt also refuses to overwrite.
    pqkit().args(["encrypt", "--key"]).arg(&env.key).arg(&input).assert().code(2);
    // Default names: x.pqk -> x.
    fs::remove_file(&input).unwrap();
    env.decrypt(&ct, &input).success();
    pqkit().args(["decrypt", "--key"]).arg(&env.key).arg(&ct).assert().code(2);
}

#[test]
fn interrupted_decrypt_leaves_nothing() {
    use std::io::Write;
    use std::process::{Command as Std, Stdio};
    let (env, ct, _, _) = sample("xchacha20-poly1305", 5 * SEG);
    let out = env.p("out");
    let before = env.names();
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("pqkit"))
        .args(["decrypt", "--threads", "1", "--key"])
        .arg(&env.key)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Half the ciphertext, then the process is killed while waiting for the rest.
    stdin.write_all(&ct[..ct.len() / 2]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert!(!out.exists());
    assert_eq!(env.names(), before);
}

#[test]
fn parallel_output_equals_sequential() {
    let env = Env::new();
    let pt = data(3 * 1024 * 1024 + 12345, 5);
    let input = env.write("pt", &pt);
    for alg in ALGS {
        let mut outs = Vec::new();
        for threads in ["1", "2", "3"] {
            let out = env.p(&format!("ct{threads}"));
            let _ = fs::remove_file(&out);
            pqkit()
                .env("PQKIT_TEST_FIXED_RANDOM", "fixed")
                .args(["encrypt", "--alg", alg, "--threads", threads, "--key"])
                .arg(&env.key)
                .arg(&input)
                .arg("-o")
                .arg(&out)
                .assert()
                .success();
            outs.push(fs::read(&out).unwrap());
            let back = env.p("back");
            let _ = fs::remove_file(&back);
            pqkit()
                .args(["decrypt", "--threads", threads, "--key"])
                .arg(&env.key)
                .arg(&out)
                .arg("-o")
                .arg(&back)
                .assert()
                .success();
            assert!(fs::read(&back).unwrap() == pt);
        }
        assert!(outs[0] == outs[1] && outs[1] == outs[2], "{alg}: thread count changed the output");
    }
}

#[test]
fn hash_prints_and_checks_sums() {
    let env = Env::new();
    pqkit()
        .args(["hash", "--alg", "sha256"])
        .write_stdin("abc")
        .assert()
        .success()
        .stdout("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n");
    pqkit()
        .args(["hash", "--alg", "sha3-256"])
        .write_stdin("abc")
        .assert()
        .success()
        .stdout("3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532  -\n");
    pqkit().args(["hash", "--alg", "blake2b"]).write_stdin("abc").assert().success().stdout(predicate::str::starts_with(
        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923  -",
    ));
    // SHAKE128("") with a 32-byte output (FIPS 202 example value).
    pqkit()
        .args(["hash", "--alg", "shake128", "--len", "32"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26  -\n");
    pqkit().args(["hash", "--alg", "sha256", "--len", "5"]).write_stdin("").assert().code(2);

    let a = env.write("a", b"hello");
    let b = env.write("b", &data(100_000, 1));
    for alg in ["sha512", "shake256", "skein512", "blake2s"] {
        let sums = pqkit().args(["hash", "--alg", alg]).arg(&a).arg(&b).output().unwrap();
        assert!(sums.status.success());
        let list = env.write("sums", &sums.stdout);
        pqkit()
            .args(["hash", "--check", "--alg", alg])
            .arg(&list)
            .assert()
            .success()
            .stdout(predicate::str::contains(": OK"));
        fs::write(&a, b"hellO").unwrap();
        pqkit()
            .args(["hash", "--check", "--alg", alg])
            .arg(&list)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("FAILED"));
        fs::write(&a, b"hello").unwrap();
    }
    pqkit().args(["hash"]).arg(env.p("missing")).assert().code(2).stderr(predicate::str::contains("missing"));
}

const KEY_00_1F: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const SUNSCREEN: &str = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";

#[test]
fn rfc8439_vectors() {
    // §2.4.2: ChaCha20 encryption, counter 1.
    pqkit()
        .args(["cipher", "--alg", "chacha20", "--key", KEY_00_1F, "--nonce", "000000000000004a00000000", "--counter", "1", "--hex"])
        .write_stdin(hex::encode(SUNSCREEN))
        .assert()
        .success()
        .stdout(
            "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab\
             8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d\n",
        );
    // §2.8.2: AEAD.
    let key = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f";
    let sealed = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b61161ae10b594f09e26a7e902ecbd0600691";
    let args = [
        "--alg",
        "chacha20-poly1305",
        "--key",
        key,
        "--nonce",
        "070000004041424344454647",
        "--aad",
        "50515253c0c1c2c3c4c5c6c7",
    ];
    pqkit()
        .args(["aead", "seal"])
        .args(args)
        .arg("--hex")
        .write_stdin(hex::encode(SUNSCREEN))
        .assert()
        .success()
        .stdout(format!("{sealed}\n"));
    pqkit()
        .args(["aead", "open"])
        .args(args)
        .arg("--hex")
        .write_stdin(sealed)
        .assert()
        .success()
        .stdout(format!("{}\n", hex::encode(SUNSCREEN)));
    // Raw (non-hex) form.
    pqkit()
        .args(["aead", "open"])
        .args(args)
        .write_stdin(hex::decode(sealed).unwrap())
        .assert()
        .success()
        .stdout(SUNSCREEN);
    // A flipped tag bit: exit 1, no output.
    let mut bad = hex::decode(sealed).unwrap();
    *bad.last_mut().unwrap() ^= 1;
    pqkit().args(["aead", "open"]).args(args).write_stdin(bad).assert().code(1).stdout("");
}

#[test]
fn arx512_vectors() {
    let v: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/kusumi512-vectors.json")).unwrap(),
    )
    .unwrap();
    // Counters are JSON numbers, everything else hex strings.
    let s = |c: &serde_json::Value, k: &str| match &c[k] {
        serde_json::Value::String(x) => x.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        other => panic!("{k}: unexpected {other}"),
    };
    for c in v["kusumi512_stream"].as_array().unwrap() {
        pqkit()
            .args([
                "cipher",
                "--alg",
                "kusumi512",
                "--hex",
                "--key",
                &s(c, "key"),
                "--nonce",
                &s(c, "nonce"),
                "--counter",
                &s(c, "counter"),
            ])
            .write_stdin(s(c, "plaintext"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "ciphertext")));
    }
    for c in v["threefish512_ctr"].as_array().unwrap() {
        pqkit()
            .args([
                "cipher",
                "--alg",
                "threefish512-ctr",
                "--hex",
                "--key",
                &s(c, "key"),
                "--nonce",
                &s(c, "nonce"),
                "--counter",
                &s(c, "counter"),
            ])
            .write_stdin(s(c, "plaintext"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "ciphertext")));
    }
    for c in v["kusumi512_poly1305"].as_array().unwrap() {
        let args = [
            "--alg",
            "kusumi512-poly1305",
            "--hex",
            "--key",
            &s(c, "key"),
            "--nonce",
            &s(c, "nonce"),
            "--aad",
            &s(c, "aad"),
        ];
        pqkit()
            .args(["aead", "seal"])
            .args(args)
            .write_stdin(s(c, "plaintext"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "sealed")));
        pqkit()
            .args(["aead", "open"])
            .args(args)
            .write_stdin(s(c, "sealed"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "plaintext")));
    }
    for c in v["greenfield_legacy_aead"].as_array().unwrap() {
        let args =
            ["--alg", "greenfield-kusumi512-poly1305", "--hex", "--key", &s(c, "key"), "--nonce", &s(c, "nonce")];
        pqkit()
            .args(["aead", "seal"])
            .args(args)
            .write_stdin(s(c, "plaintext"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "sealed")));
        pqkit()
            .args(["aead", "open"])
            .args(args)
            .write_stdin(s(c, "sealed"))
            .assert()
            .success()
            .stdout(format!("{}\n", s(c, "plaintext")));
    }
}

#[test]
fn mac_kdf_rand_and_argon2id() {
    // RFC 4231 test case 1.
    pqkit()
        .args(["mac", "hmac-sha256", "--key", &"0b".repeat(20)])
        .write_stdin("Hi There")
        .assert()
        .success()
        .stdout("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7\n");
    // RFC 5869 test case 1.
    pqkit()
        .args([
            "kdf",
            "hkdf-sha256",
            "--ikm",
            &"0b".repeat(22),
            "--salt",
            "000102030405060708090a0b0c",
            "--info",
            "f0f1f2f3f4f5f6f7f8f9",
            "--len",
            "42",
        ])
        .assert()
        .success()
        .stdout("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865\n");
    // RFC 9106 §5.3.
    pqkit()
        .args([
            "kdf",
            "argon2id",
            "-m",
            "32",
            "-t",
            "3",
            "-p",
            "4",
            "--password",
            &"01".repeat(32),
            "--salt",
            &"02".repeat(16),
        ])
        .args(["--secret", &"03".repeat(8), "--ad", &"04".repeat(12), "--len", "32"])
        .assert()
        .success()
        .stdout("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659\n");
    pqkit()
        .args(["kdf", "argon2id", "-m", "7", "-t", "1", "-p", "1", "--password", "00", "--salt", &"00".repeat(8)])
        .assert()
        .code(2);
    let r = pqkit().args(["rand", "16", "--hex"]).output().unwrap();
    assert!(r.status.success());
    assert_eq!(r.stdout.len(), 33);
    assert_eq!(pqkit().args(["rand", "1000"]).output().unwrap().stdout.len(), 1000);
}

#[test]
fn usage_errors_exit_2_and_hide_secrets() {
    let secret = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeeZ";
    pqkit()
        .args(["cipher", "--alg", "chacha20", "--key", secret, "--nonce", "000000000000000000000000"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--key"))
        .stderr(predicate::str::contains("deadbeef").not());
    pqkit()
        .args(["cipher", "--alg", "chacha20", "--key", "00", "--nonce", "00"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("key must be 32 bytes"));
    pqkit().args(["encrypt", "--alg", "rot13"]).assert().code(2);
    pqkit().arg("cpu").env_remove("PQKIT_CPU").assert().success().stdout(
        predicate::str::contains("cap:             native (PQKIT_CPU unset)")
            .and(predicate::str::contains("features in use:"))
            .and(predicate::str::contains("ChaCha")),
    );
    pqkit()
        .args(["bench", "--seconds", "0.01", "--size", "1024"])
        .assert()
        .success()
        .stdout(predicate::str::contains("XChaCha20-Poly1305").and(predicate::str::contains("MiB/s")));
    let env = Env::new();
    let notkey = env.write("notkey", b"my secret passphrase\n");
    let input = env.write("x", b"data");
    pqkit()
        .args(["encrypt", "--key"])
        .arg(&notkey)
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a pqkit key file"))
        .stderr(predicate::str::contains("passphrase").not());
}

#[test]
fn cpu_cap_from_the_environment() {
    // Portable: no feature in use and every family on its portable backend.
    let out = pqkit().arg("cpu").env("PQKIT_CPU", "portable").assert().success().get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("cap:             portable (PQKIT_CPU=portable)"), "{out}");
    assert!(out.lines().next().unwrap().trim_end() == "features in use:", "{out}");
    for line in out.lines().skip_while(|l| *l != "backends:").skip(1) {
        assert!(line.trim_end().ends_with("Soft"), "not portable under PQKIT_CPU=portable: {line}");
    }
    // avx2: no AVX-512 feature in use, whatever the machine has.
    let out = pqkit().arg("cpu").env("PQKIT_CPU", "AVX2").assert().success().get_output().stdout.clone();
    let first = String::from_utf8(out).unwrap().lines().next().unwrap().to_string();
    assert!(!first.contains("avx512"), "{first}");
    // An unknown cap is refused with exit 2 by every command, naming the accepted values.
    pqkit()
        .args(["rand", "4"])
        .env("PQKIT_CPU", "avx")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("portable, avx2, avx512 or native").and(predicate::str::contains("\"avx\"")));
}
