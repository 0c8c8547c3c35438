//! End-to-end tests of the RSA commands: `pqkit rsa public|private` (raw RSA with hex components) against an
//! independent big-integer computation (num-bigint) and against the system `openssl` command (raw, unpadded
//! `pkeyutl` with a key `openssl genpkey` made), both ways; and every error path (bad hex, wrong lengths, an
//! input ≥ n, an inconsistent key, missing options) with its exit code.

use assert_cmd::Command;
use num_bigint::BigUint;
use std::path::Path;
use std::process::Command as Sys;

fn pqkit() -> Command {
    Command::cargo_bin("pqkit").unwrap()
}

fn out_str(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap().trim().to_string()
}

fn have_openssl() -> bool {
    let ok = Sys::new("openssl").arg("version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        eprintln!("!!! the `openssl` command is not on PATH: RSA interop tests SKIPPED (.ci/run installs it) !!!");
    }
    ok
}

/// The components of an RSA key, as hex of minimal big-endian bytes.
struct Components {
    n: String,
    e: String,
    d: String,
    p: String,
    q: String,
}

fn big(h: &str) -> BigUint {
    BigUint::parse_bytes(h.as_bytes(), 16).unwrap()
}

/// `v` as exactly `len` big-endian bytes, in hex.
fn hex_len(v: &BigUint, len: usize) -> String {
    let b = v.to_bytes_be();
    assert!(b.len() <= len);
    let mut out = vec![0u8; len - b.len()];
    out.extend_from_slice(&b);
    hex::encode(out)
}

/// Minimal hex of a big integer (no leading zero bytes).
fn min_hex(v: &BigUint) -> String {
    hex::encode(v.to_bytes_be())
}

/// Parses `openssl rsa -text -noout`: the modulus, exponents and primes.
fn components(pem: &Path) -> Components {
    let o = Sys::new("openssl").args(["rsa", "-text", "-noout", "-in"]).arg(pem).output().unwrap();
    assert!(o.status.success(), "openssl rsa -text: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("publicExponent: ") {
            let dec: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
            fields.push(("publicExponent".into(), format!("{dec:x}")));
        } else if !line.starts_with(' ') && line.ends_with(':') {
            fields.push((line.trim_end_matches(':').to_string(), String::new()));
        } else if line.starts_with(' ')
            && let Some(last) = fields.last_mut()
        {
            last.1.extend(line.trim().split(':').filter(|s| !s.is_empty()));
        }
    }
    let get = |k: &str| {
        let h = &fields.iter().find(|(name, _)| name == k).unwrap_or_else(|| panic!("no {k} in {text}")).1;
        min_hex(&big(h))
    };
    Components {
        n: get("modulus"),
        e: get("publicExponent"),
        d: get("privateExponent"),
        p: get("prime1"),
        q: get("prime2"),
    }
}

fn openssl_key(dir: &Path, bits: u32) -> (std::path::PathBuf, Components) {
    let pem = dir.join(format!("rsa{bits}.pem"));
    let st = Sys::new("openssl")
        .args(["genpkey", "-algorithm", "RSA", "-pkeyopt"])
        .arg(format!("rsa_keygen_bits:{bits}"))
        .arg("-out")
        .arg(&pem)
        .output()
        .unwrap();
    assert!(st.status.success());
    let c = components(&pem);
    (pem, c)
}

fn public(c: &Components, input: &str) -> assert_cmd::assert::Assert {
    pqkit().args(["rsa", "public", "--n", &c.n, "--e", &c.e, "--input", input]).assert()
}

fn private(c: &Components, input: &str) -> assert_cmd::assert::Assert {
    pqkit()
        .args(["rsa", "private", "--n", &c.n, "--e", &c.e, "--d", &c.d, "--p", &c.p, "--q", &c.q, "--input", input])
        .assert()
}

/// A deterministic pseudo-random integer below n, as `k` bytes of hex.
fn below_n(n: &BigUint, k: usize, salt: u8) -> (BigUint, String) {
    let bytes: Vec<u8> = (0..k).map(|i| (i as u8).wrapping_mul(151).wrapping_add(salt)).collect();
    let m = BigUint::from_bytes_be(&bytes) % n;
    let h = hex_len(&m, k);
    (m, h)
}

#[test]
fn raw_operations_match_num_bigint_and_openssl_both_ways() {
    if !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for bits in [2048u32, 3072] {
        let (pem, c) = openssl_key(dir.path(), bits);
        let (n, e, d) = (big(&c.n), big(&c.e), big(&c.d));
        let k = (bits / 8) as usize;
        for salt in [1u8, 77] {
            let (m, m_hex) = below_n(&n, k, salt);
            // Public operation: num-bigint, then openssl (raw RSA, no padding).
            let y = out_str(&public(&c, &m_hex).success());
            assert_eq!(y, hex_len(&m.modpow(&e, &n), k), "{bits}-bit public operation");
            let m_file = dir.path().join("m.bin");
            std::fs::write(&m_file, hex::decode(&m_hex).unwrap()).unwrap();
            let o = Sys::new("openssl")
                .args(["pkeyutl", "-encrypt", "-pkeyopt", "rsa_padding_mode:none", "-inkey"])
                .arg(&pem)
                .arg("-in")
                .arg(&m_file)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(hex::encode(&o.stdout), y, "pqkit's public operation differs from openssl's");
            // Private operation on openssl's output gives the input back; openssl agrees on pqkit's.
            let back = out_str(&private(&c, &y).success());
            assert_eq!(back, m_hex, "{bits}-bit private operation");
            let (x, x_hex) = below_n(&n, k, salt.wrapping_add(9));
            let z = out_str(&private(&c, &x_hex).success());
            assert_eq!(z, hex_len(&x.modpow(&d, &n), k));
            let z_file = dir.path().join("x.bin");
            std::fs::write(&z_file, hex::decode(&x_hex).unwrap()).unwrap();
            let o = Sys::new("openssl")
                .args(["pkeyutl", "-decrypt", "-pkeyopt", "rsa_padding_mode:none", "-inkey"])
                .arg(&pem)
                .arg("-in")
                .arg(&z_file)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(hex::encode(&o.stdout), z, "pqkit's private operation differs from openssl's");
        }
    }
}

/// A fixed 2048-bit key for the error paths (made once by `openssl genpkey`).
fn fixed() -> Components {
    let dir = tempfile::tempdir().unwrap();
    openssl_key(dir.path(), 2048).1
}

fn fails(a: assert_cmd::assert::Assert, code: i32, needle: &str) {
    let a = a.failure().code(code);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
    assert!(a.get_output().stdout.is_empty(), "no output on failure");
}

#[test]
fn error_paths_exit_2_with_a_message_naming_the_option() {
    if !have_openssl() {
        return;
    }
    let c = fixed();
    let n = big(&c.n);
    let k = 256;
    let (_, good) = below_n(&n, k, 3);
    // Bad hex in each option.
    fails(public(&Components { n: "zz".into(), ..fixed_clone(&c) }, &good), 2, "--n: not valid hex");
    fails(public(&c, "0x12"), 2, "--input: not valid hex");
    fails(private(&Components { d: "q1".into(), ..fixed_clone(&c) }, &good), 2, "--d: not valid hex");
    // Input of the wrong length (one byte short, one byte long) and an input ≥ n.
    fails(public(&c, &good[2..]), 2, "--input");
    fails(public(&c, &format!("00{good}")), 2, "--input");
    fails(public(&c, &hex_len(&n, k)), 2, "--input");
    fails(private(&c, &hex_len(&n, k)), 2, "--input");
    // Keys: an even modulus, e = 1, a wrong d, p and q that do not multiply to n.
    let even = min_hex(&(&n - 1u32));
    fails(public(&Components { n: even, ..fixed_clone(&c) }, &good), 2, "--n/--e");
    fails(public(&Components { e: "01".into(), ..fixed_clone(&c) }, &good), 2, "--n/--e");
    let bad_d = min_hex(&(big(&c.d) + 2u32));
    fails(private(&Components { d: bad_d, ..fixed_clone(&c) }, &good), 2, "--n/--e/--d/--p/--q");
    fails(private(&Components { p: c.q.clone(), ..fixed_clone(&c) }, &good), 2, "--n/--e/--d/--p/--q");
    // Usage: a missing option, an unknown subcommand (clap's exit code 2).
    pqkit().args(["rsa", "public", "--n", &c.n, "--input", &good]).assert().failure().code(2);
    pqkit().args(["rsa", "frobnicate"]).assert().failure().code(2);
}

fn fixed_clone(c: &Components) -> Components {
    Components { n: c.n.clone(), e: c.e.clone(), d: c.d.clone(), p: c.p.clone(), q: c.q.clone() }
}

// ---- pqkit keygen --alg rsaNNNN, pqkit sign sign|verify --alg rsa-pss|rsa-pkcs1 ----

fn ossl(args: &[&str], paths: &[&Path]) -> std::process::Output {
    let mut c = Sys::new("openssl");
    c.args(args);
    for p in paths {
        c.arg(p);
    }
    c.output().unwrap()
}

fn rsa_keygen(dir: &Path, name: &str, alg: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (sk, pk) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.pub.pem")));
    pqkit().args(["keygen", "--alg", alg, "-o"]).arg(&sk).arg("--pub").arg(&pk).assert().success();
    (sk, pk)
}

fn rsa_sign(alg: &str, hash: &str, sk: &Path, msg: &Path, out: &Path) {
    pqkit()
        .args(["sign", "sign", "--alg", alg, "--hash", hash, "--sk"])
        .arg(sk)
        .arg("-o")
        .arg(out)
        .arg(msg)
        .assert()
        .success();
}

fn rsa_verify(alg: &str, hash: &str, vk: &Path, sig: &Path, msg: &Path) -> assert_cmd::assert::Assert {
    pqkit()
        .args(["sign", "verify", "--alg", alg, "--hash", hash, "--vk"])
        .arg(vk)
        .arg("--sig")
        .arg(sig)
        .arg(msg)
        .assert()
}

/// openssl dgst options for a scheme (PSS: salt length = digest length, MGF1 with the same hash).
fn dgst_opts(alg: &str) -> Vec<&'static str> {
    if alg == "rsa-pss" {
        vec!["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest", "-sigopt", "rsa_mgf1_md:"]
    } else {
        vec![]
    }
}

fn ossl_dgst(alg: &str, hash: &str, action: &str, key: &Path, sig: &Path, msg: &Path) -> std::process::Output {
    let mut args: Vec<String> = vec!["dgst".into(), format!("-{hash}")];
    for o in dgst_opts(alg) {
        if o == "rsa_mgf1_md:" {
            args.push(format!("rsa_mgf1_md:{hash}"));
        } else {
            args.push(o.into());
        }
    }
    let mut c = Sys::new("openssl");
    c.args(&args);
    if action == "sign" {
        c.arg("-sign").arg(key).arg("-out").arg(sig);
    } else {
        c.arg("-verify").arg(key).arg("-signature").arg(sig);
    }
    c.arg(msg).output().unwrap()
}

#[test]
fn keygen_writes_pem_that_openssl_reads_and_signatures_interoperate_both_ways() {
    if !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (sk, pk) = rsa_keygen(d, "k", "rsa2048");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&sk).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let pem = std::fs::read_to_string(&sk).unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "PKCS#8 PEM");
    assert!(std::fs::read_to_string(&pk).unwrap().starts_with("-----BEGIN PUBLIC KEY-----"), "SPKI PEM");
    // OpenSSL reads both, checks the private key, and derives the same public key.
    let o = ossl(&["pkey", "-check", "-noout", "-in"], &[&sk]);
    assert!(o.status.success(), "openssl pkey -check: {}", String::from_utf8_lossy(&o.stderr));
    let o = ossl(&["pkey", "-pubout", "-in"], &[&sk]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8(o.stdout).unwrap(), std::fs::read_to_string(&pk).unwrap());
    let text = String::from_utf8(ossl(&["pkey", "-text", "-noout", "-in"], &[&sk]).stdout).unwrap();
    assert!(text.contains("2048 bit") && text.contains("publicExponent: 65537"), "{text}");
    // An OpenSSL key (PKCS#8 from genpkey, and the traditional PKCS#1 form) for the other direction.
    let (osk, oc) = openssl_key(d, 2048);
    let opk = d.join("o.pub.pem");
    assert!(ossl(&["pkey", "-pubout", "-in"], &[&osk]).status.success());
    std::fs::write(&opk, ossl(&["pkey", "-pubout", "-in"], &[&osk]).stdout).unwrap();
    let osk1 = d.join("o.pkcs1.pem");
    assert!(ossl(&["pkey", "-traditional", "-in"], &[&osk]).status.success());
    std::fs::write(&osk1, ossl(&["pkey", "-traditional", "-in"], &[&osk]).stdout).unwrap();
    assert!(std::fs::read_to_string(&osk1).unwrap().starts_with("-----BEGIN RSA PRIVATE KEY-----"));
    let _ = oc;
    let msg = d.join("msg");
    std::fs::write(&msg, b"RSA interop message: pqkit and openssl").unwrap();
    for alg in ["rsa-pss", "rsa-pkcs1"] {
        for hash in ["sha256", "sha384", "sha512"] {
            // pqkit signs, openssl verifies.
            let sig = d.join(format!("{alg}-{hash}.sig"));
            rsa_sign(alg, hash, &sk, &msg, &sig);
            assert_eq!(std::fs::read(&sig).unwrap().len(), 256);
            let o = ossl_dgst(alg, hash, "verify", &pk, &sig, &msg);
            assert!(o.status.success(), "openssl rejects pqkit's {alg}/{hash}: {}", String::from_utf8_lossy(&o.stderr));
            rsa_verify(alg, hash, &pk, &sig, &msg).success().stdout("OK\n");
            // openssl signs, pqkit verifies (the private key as PKCS#8 and as PKCS#1).
            let osig = d.join(format!("o-{alg}-{hash}.sig"));
            let o = ossl_dgst(alg, hash, "sign", &osk, &osig, &msg);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            rsa_verify(alg, hash, &opk, &osig, &msg).success().stdout("OK\n");
            // pqkit signs with openssl's key; PKCS#1 v1.5 is deterministic, so both signatures are equal.
            let psig = d.join(format!("p-{alg}-{hash}.sig"));
            rsa_sign(alg, hash, &osk1, &msg, &psig);
            let o = ossl_dgst(alg, hash, "verify", &opk, &psig, &msg);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            if alg == "rsa-pkcs1" {
                assert_eq!(std::fs::read(&psig).unwrap(), std::fs::read(&osig).unwrap());
            }
            // The wrong hash is a failed verification.
            let other = if hash == "sha256" { "sha512" } else { "sha256" };
            rsa_verify(alg, other, &opk, &osig, &msg).failure().code(1);
        }
    }
    // The hex form printed without --out verifies too.
    let hex_sig = d.join("sig.hex");
    let printed =
        out_str(&pqkit().args(["sign", "sign", "--alg", "rsa-pss", "--sk"]).arg(&sk).arg(&msg).assert().success());
    assert_eq!(printed.len(), 512);
    std::fs::write(&hex_sig, &printed).unwrap();
    rsa_verify("rsa-pss", "sha256", &pk, &hex_sig, &msg).success();
}

#[test]
fn keygen_3072_and_4096_have_the_requested_size() {
    if !have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (alg, bits) in [("rsa3072", "3072 bit"), ("rsa4096", "4096 bit")] {
        let (sk, _) = rsa_keygen(dir.path(), alg, alg);
        let text = String::from_utf8(ossl(&["pkey", "-text", "-noout", "-in"], &[&sk]).stdout).unwrap();
        assert!(text.contains(bits), "{alg}: {text}");
        assert!(ossl(&["pkey", "-check", "-noout", "-in"], &[&sk]).status.success());
    }
}

#[test]
fn signature_error_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (sk, pk) = rsa_keygen(d, "k", "rsa2048");
    let msg = d.join("msg");
    std::fs::write(&msg, b"message").unwrap();
    let sig = d.join("sig");
    rsa_sign("rsa-pss", "sha256", &sk, &msg, &sig);
    rsa_verify("rsa-pss", "sha256", &pk, &sig, &msg).success();
    let good = std::fs::read(&sig).unwrap();
    // Bad signatures: exit 1, "verification failed".
    let check1 = |bytes: &[u8], alg: &str, m: &Path| {
        let s = d.join("bad.sig");
        std::fs::write(&s, bytes).unwrap();
        fails(rsa_verify(alg, "sha256", &pk, &s, m), 1, "verification failed");
    };
    let mut flipped = good.clone();
    flipped[100] ^= 1;
    check1(&flipped, "rsa-pss", &msg);
    check1(&good[..255], "rsa-pss", &msg);
    check1(&[good.clone(), vec![0]].concat(), "rsa-pss", &msg);
    check1(&good, "rsa-pkcs1", &msg);
    check1(&[0xffu8; 256], "rsa-pss", &msg);
    let other = d.join("other");
    std::fs::write(&other, b"messagf").unwrap();
    check1(&good, "rsa-pss", &other);
    // Wrong key type and bad PEM: exit 2, naming the file.
    let (ed_sk, ed_pk) = (d.join("ed.pem"), d.join("ed.pub.pem"));
    pqkit().args(["sign", "keygen", "--alg", "ed25519", "--sk"]).arg(&ed_sk).arg("--vk").arg(&ed_pk).assert().success();
    fails(rsa_verify("rsa-pss", "sha256", &ed_pk, &sig, &msg), 2, "ed.pub.pem");
    fails(pqkit().args(["sign", "sign", "--alg", "rsa-pkcs1", "--sk"]).arg(&ed_sk).arg(&msg).assert(), 2, "ed.pem");
    let junk = d.join("junk.pem");
    std::fs::write(&junk, "-----BEGIN PUBLIC KEY-----\nnot base64!\n-----END PUBLIC KEY-----\n").unwrap();
    fails(rsa_verify("rsa-pss", "sha256", &junk, &sig, &msg), 2, "junk.pem");
    fails(pqkit().args(["sign", "sign", "--alg", "rsa-pss", "--sk"]).arg(&junk).arg(&msg).assert(), 2, "junk.pem");
    // A public key where a private key belongs.
    fails(pqkit().args(["sign", "sign", "--alg", "rsa-pss", "--sk"]).arg(&pk).arg(&msg).assert(), 2, "k.pub.pem");
    // Usage errors: exit 2.
    // Without --pub only the private key is written; `pqkit pubkey` derives the public one.
    pqkit().args(["keygen", "--alg", "rsa2048", "-o"]).arg(d.join("x.pem")).assert().success();
    let derived = pqkit().args(["pubkey"]).arg(d.join("x.pem")).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(derived).unwrap().starts_with("-----BEGIN PUBLIC KEY-----"));
    pqkit().args(["keygen", "--pub"]).arg(d.join("y.pem")).arg("-o").arg(d.join("z.pem")).assert().failure().code(2);
    pqkit()
        .args(["keygen", "--alg", "rsa1024", "-o"])
        .arg(d.join("x.pem"))
        .arg("--pub")
        .arg(d.join("y.pem"))
        .assert()
        .failure()
        .code(2);
    fails(
        pqkit().args(["keygen", "--alg", "rsa2048", "-o"]).arg(&sk).arg("--pub").arg(d.join("new.pub")).assert(),
        2,
        "already exists",
    );
    fails(
        pqkit()
            .args(["sign", "keygen", "--alg", "rsa-pss", "--sk"])
            .arg(d.join("a"))
            .arg("--vk")
            .arg(d.join("b"))
            .assert(),
        2,
        "pqkit keygen --alg",
    );
    fails(
        pqkit().args(["sign", "sign", "--alg", "ed25519", "--hash", "sha256", "--sk"]).arg(&ed_sk).arg(&msg).assert(),
        2,
        "--hash",
    );
    fails(
        pqkit().args(["sign", "sign", "--alg", "rsa-pss", "--ctx", "00", "--sk"]).arg(&sk).arg(&msg).assert(),
        2,
        "not for RSA",
    );
    fails(
        pqkit()
            .args(["sign", "verify", "--alg", "rsa-pss", "--ctx", "00", "--vk"])
            .arg(&pk)
            .arg("--sig")
            .arg(&sig)
            .arg(&msg)
            .assert(),
        2,
        "no context",
    );
    pqkit()
        .args(["sign", "verify", "--alg", "rsa-pss", "--hash", "md5", "--vk"])
        .arg(&pk)
        .arg("--sig")
        .arg(&sig)
        .arg(&msg)
        .assert()
        .failure()
        .code(2);
}
