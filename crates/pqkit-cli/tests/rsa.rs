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
