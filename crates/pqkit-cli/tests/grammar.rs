//! The one grammar (docs/cli.md) and the output-safety rules: every rule here has a test that fails when the
//! rule is removed, and every example in docs/cli.md runs.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn pqkit() -> Command {
    let mut c = Command::cargo_bin("pqkit").unwrap();
    c.env_remove("PQKIT_TEST_FIXED_RANDOM");
    c
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn have_openssl() -> bool {
    let ok = std::process::Command::new("openssl").arg("version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI: the `openssl` command is missing (apt-get install openssl)");
        eprintln!("WARNING: the `openssl` command is not installed: OpenSSL interoperability checks SKIPPED");
    }
    ok
}

fn openssl(cwd: &Path, args: &[&str]) -> Vec<u8> {
    let o = std::process::Command::new("openssl").args(args).current_dir(cwd).output().unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

fn keygen(d: &Path, alg: &str, sk: &str, pk: Option<&str>) {
    let mut c = pqkit();
    c.current_dir(d).args(["keygen", "--alg", alg, "-o", sk]);
    if let Some(pk) = pk {
        c.args(["--pub", pk]);
    }
    c.assert().success();
}

// ---- output safety: never onto an input or a key, even with --force ----

#[test]
fn sign_never_overwrites_its_key_or_message() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"message").unwrap();
    for (alg, extra) in [("ed25519", None), ("ml-dsa-44", None), ("rsa2048", Some("rsa-pss"))] {
        keygen(p, alg, "sk", Some("vk"));
        let before = fs::read(p.join("sk")).unwrap();
        let mut c = pqkit();
        c.current_dir(p).args(["sign", "-k", "sk", "-o", "sk", "--force", "msg"]);
        if let Some(a) = extra {
            c.args(["--alg", a]);
        }
        c.assert().code(2).stderr(predicate::str::contains("this is the key file"));
        assert_eq!(fs::read(p.join("sk")).unwrap(), before, "{alg}: the key was replaced");
        // The message, by the old spelling too.
        let mut c = pqkit();
        c.current_dir(p).args(["sign", "sign", "--sk", "sk", "-o", "msg", "--force", "msg"]);
        if let Some(a) = extra {
            c.args(["--alg", a]);
        }
        c.assert().code(2);
        assert_eq!(fs::read(p.join("msg")).unwrap(), b"message", "{alg}: the message was replaced");
        fs::remove_file(p.join("sk")).unwrap();
        fs::remove_file(p.join("vk")).unwrap();
    }
}

#[test]
fn outputs_are_compared_by_inode_not_by_name() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"m").unwrap();
    keygen(p, "ed25519", "sk", None);
    fs::create_dir(p.join("sub")).unwrap();
    let before = fs::read(p.join("sk")).unwrap();
    // Another spelling, a hard link and a symbolic link to the key: all refused with --force.
    fs::hard_link(p.join("sk"), p.join("hard")).unwrap();
    std::os::unix::fs::symlink(p.join("sk"), p.join("soft")).unwrap();
    for out in ["sub/../sk", "./sk", "hard", "soft"] {
        pqkit().current_dir(p).args(["sign", "-k", "sk", "-o", out, "-f", "msg"]).assert().code(2);
        assert_eq!(fs::read(p.join("sk")).unwrap(), before, "-o {out} replaced the key");
    }
    // A pair to one file by two spellings.
    for (a, b) in [("a.pem", "sub/../a.pem"), ("a.pem", "./a.pem")] {
        pqkit()
            .current_dir(p)
            .args(["keygen", "--alg", "ed25519", "-o", a, "--pub", b, "--force"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("same file"));
        assert!(!p.join("a.pem").exists());
    }
    // Old spellings of the pair commands go through the same check.
    pqkit()
        .current_dir(p)
        .args(["ecdh", "keygen", "--alg", "x25519", "--sk", "a.pem", "--pk", "sub/../a.pem", "--force"])
        .assert()
        .code(2);
    pqkit()
        .current_dir(p)
        .args(["kem", "keygen", "--alg", "ml-kem-512", "--dk", "a.pem", "--ek", "sub/../a.pem", "--force"])
        .assert()
        .code(2);
    assert!(!p.join("a.pem").exists());
}

#[test]
fn encaps_never_overwrites_the_key() {
    let d = dir();
    let p = d.path();
    keygen(p, "ml-kem-768", "dk", Some("ek"));
    let before = fs::read(p.join("ek")).unwrap();
    pqkit().current_dir(p).args(["encaps", "-k", "ek", "-o", "ek", "--force"]).assert().code(2);
    pqkit()
        .current_dir(p)
        .args(["kem", "encaps", "--alg", "ml-kem-768", "--ek", "ek", "--ct", "ek", "--force"])
        .assert()
        .code(2);
    assert_eq!(fs::read(p.join("ek")).unwrap(), before);
}

#[test]
fn key_pairs_are_whole_or_nothing() {
    let d = dir();
    let p = d.path();
    // The same file for both halves, with and without --force: refused, and an existing file is untouched.
    fs::write(p.join("X"), b"precious").unwrap();
    for force in [false, true] {
        let mut c = pqkit();
        c.current_dir(p).args(["keygen", "--alg", "rsa2048", "-o", "X", "--pub", "X"]);
        if force {
            c.arg("--force");
        }
        c.assert().code(2);
        assert_eq!(fs::read(p.join("X")).unwrap(), b"precious");
    }
    // A missing directory for the public half: no private half is left behind.
    for alg in ["rsa2048", "ed25519", "ml-dsa-44", "xwing"] {
        pqkit().current_dir(p).args(["keygen", "--alg", alg, "-o", "sk.pem", "--pub", "nodir/pk.pem"]).assert().code(2);
        assert!(!p.join("sk.pem").exists(), "{alg}: half a pair left behind");
    }
    // Success writes both, the private one mode 0600, the public one 0644.
    keygen(p, "p256", "sk.pem", Some("pk.pem"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(p.join("sk.pem")).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(p.join("pk.pem")).unwrap().permissions().mode() & 0o777, 0o644);
    // Existing outputs need --force.
    pqkit().current_dir(p).args(["keygen", "--alg", "p256", "-o", "sk.pem", "--pub", "new.pem"]).assert().code(2);
    assert!(!p.join("new.pem").exists());
}

#[test]
fn encrypt_and_decrypt_never_overwrite_what_they_read() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"hello").unwrap();
    keygen(p, "symmetric", "k", None);
    keygen(p, "xwing", "me.id", Some("me.rcpt"));
    let k = fs::read(p.join("k")).unwrap();
    pqkit().current_dir(p).args(["encrypt", "-k", "k", "-o", "k", "-f", "msg"]).assert().code(2);
    pqkit().current_dir(p).args(["encrypt", "-R", "me.rcpt", "--out", "me.rcpt", "-f", "msg"]).assert().code(2);
    pqkit().current_dir(p).args(["encrypt", "-k", "k", "--output", "m.pqk", "msg"]).assert().success();
    pqkit().current_dir(p).args(["decrypt", "-k", "k", "-o", "k", "-f", "m.pqk"]).assert().code(2);
    pqkit().current_dir(p).args(["decrypt", "-k", "k", "-o", "m.pqk", "-f", "m.pqk"]).assert().code(2);
    assert_eq!(fs::read(p.join("k")).unwrap(), k);
    pqkit().current_dir(p).args(["encrypt", "-R", "me.rcpt", "-o", "r.pqk", "msg"]).assert().success();
    let id = fs::read(p.join("me.id")).unwrap();
    pqkit().current_dir(p).args(["decrypt", "-i", "me.id", "-o", "me.id", "-f", "r.pqk"]).assert().code(2);
    assert_eq!(fs::read(p.join("me.id")).unwrap(), id);
    pqkit().current_dir(p).args(["decrypt", "-i", "me.id", "-o", "-", "r.pqk"]).assert().success().stdout("hello");
}

// ---- no secret in a message ----

#[test]
fn an_identity_given_as_recipient_is_not_echoed() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"hello").unwrap();
    keygen(p, "xwing", "friend.id", None);
    keygen(p, "symmetric", "k", None);
    let text = fs::read_to_string(p.join("friend.id")).unwrap();
    let seed = text.lines().find_map(|l| l.strip_prefix("PQKIT-XWING-IDENTITY-1:")).unwrap().to_string();
    let ktext = fs::read_to_string(p.join("k")).unwrap();
    let khex = ktext.trim().strip_prefix("PQKIT-KEY-V1:").unwrap().to_string();
    let line = text.lines().find(|l| l.starts_with("PQKIT-XWING-IDENTITY-1:")).unwrap().to_string();
    for args in [
        vec!["encrypt".to_string(), "-R".into(), "friend.id".into(), "-o".into(), "o.pqk".into(), "msg".into()],
        vec!["encrypt".to_string(), "-r".into(), line.clone(), "-o".into(), "o.pqk".into(), "msg".into()],
        vec!["encrypt".to_string(), "-R".into(), "k".into(), "-o".into(), "o.pqk".into(), "msg".into()],
        vec!["encrypt".to_string(), "-r".into(), ktext.trim().into(), "-o".into(), "o.pqk".into(), "msg".into()],
    ] {
        let out = pqkit().current_dir(p).args(&args).assert().code(2).get_output().clone();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        for secret in [&seed, &khex] {
            for start in 0..secret.len() - 3 {
                assert!(!err.contains(&secret[start..start + 4]), "{args:?}: a piece of the secret in {err:?}");
            }
        }
        assert!(!p.join("o.pqk").exists());
    }
}

// ---- a closed stdout ----

fn run_with_closed_stdout(p: &Path, args: &[&str]) -> std::process::Output {
    // A pipe whose reader is gone before pqkit starts.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    std::process::Command::new(assert_cmd::cargo::cargo_bin("pqkit"))
        .args(args)
        .current_dir(p)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn closed_stdout_ends_quietly_and_loses_nothing() {
    let d = dir();
    let p = d.path();
    let o = run_with_closed_stdout(p, &["cpu"]);
    assert_eq!(o.status.code(), Some(141), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    let o = run_with_closed_stdout(p, &["keygen", "--alg", "xwing", "-o", "me.id"]);
    assert_eq!(o.status.code(), Some(141), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    // The identity is there, and its recipient can be printed again; it matches the one written inside.
    let text = fs::read_to_string(p.join("me.id")).unwrap();
    let inside = text.lines().find_map(|l| l.strip_prefix("# recipient: ")).unwrap().to_string();
    let out = pqkit().current_dir(p).args(["pubkey", "me.id"]).assert().success().get_output().stdout.clone();
    assert_eq!(String::from_utf8(out).unwrap().trim(), inside);
}

// ---- reading keys: --alg from the file, lax PEM, SEC1, clear errors ----

#[test]
fn alg_is_read_from_the_key_and_checked_when_given() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"m").unwrap();
    keygen(p, "rsa2048", "rsa.pem", Some("rsa.pub"));
    pqkit()
        .current_dir(p)
        .args(["sign", "-k", "rsa.pem", "--alg", "ed25519", "msg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the key is RSA; --alg ed25519 needs an Ed25519 key"));
    pqkit()
        .current_dir(p)
        .args(["sign", "-k", "rsa.pem", "msg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("rsa-pss"));
    // P-256 ECDH without --alg (it used to default to x25519).
    keygen(p, "p256", "a.pem", Some("a.pub"));
    keygen(p, "p256", "b.pem", Some("b.pub"));
    let ab = pqkit()
        .current_dir(p)
        .args(["ecdh", "derive", "--sk", "a.pem", "--peer", "b.pub"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let ba = pqkit()
        .current_dir(p)
        .args(["derive", "-k", "b.pem", "--peer", "a.pub"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(ab, ba);
    // A public key where a private one is needed, and the other way round.
    pqkit()
        .current_dir(p)
        .args(["sign", "-k", "a.pub", "msg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("public"));
    pqkit()
        .current_dir(p)
        .args(["derive", "-k", "a.pem", "--peer", "rsa.pub"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the key is RSA"));
}

#[test]
fn pem_of_any_width_and_sec1_with_parameters() {
    if !have_openssl() {
        return;
    }
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"interop").unwrap();
    // openssl ecparam -genkey: an EC PARAMETERS block, then EC PRIVATE KEY.
    openssl(p, &["ecparam", "-name", "prime256v1", "-genkey", "-out", "ec.pem"]);
    assert!(fs::read_to_string(p.join("ec.pem")).unwrap().contains("EC PARAMETERS"));
    openssl(p, &["ec", "-in", "ec.pem", "-pubout", "-out", "ec.pub"]);
    pqkit().current_dir(p).args(["sign", "-k", "ec.pem", "-o", "sig", "msg"]).assert().success();
    openssl(p, &["dgst", "-sha256", "-verify", "ec.pub", "-signature", "sig", "msg"]);
    // 76-column base64 and text around the block.
    let pem = fs::read_to_string(p.join("ec.pub")).unwrap();
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let wrapped: Vec<String> = b64.as_bytes().chunks(76).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    fs::write(
        p.join("wide.pub"),
        format!("a comment\n-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\nmore\n", wrapped.join("\n")),
    )
    .unwrap();
    pqkit().current_dir(p).args(["verify", "-k", "wide.pub", "--sig", "sig", "msg"]).assert().success().stdout("OK\n");
    // A good RSA key given to an EC command is named as RSA, not called malformed.
    openssl(p, &["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "r.pem"]);
    pqkit()
        .current_dir(p)
        .args(["derive", "-k", "r.pem", "--peer", "ec.pub"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the key is RSA"));
}

#[test]
fn rsa_pss_any_salt_and_oaep_interop() {
    if !have_openssl() {
        return;
    }
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"pss message").unwrap();
    keygen(p, "rsa2048", "r.pem", Some("r.pub"));
    // OpenSSL 3's default PSS salt is the maximum: accepted by default, refused with --salt-len digest.
    openssl(p, &["dgst", "-sha256", "-sign", "r.pem", "-sigopt", "rsa_padding_mode:pss", "-out", "max.sig", "msg"]);
    pqkit()
        .current_dir(p)
        .args(["verify", "-k", "r.pub", "--alg", "rsa-pss", "--sig", "max.sig", "msg"])
        .assert()
        .success();
    pqkit()
        .current_dir(p)
        .args(["verify", "-k", "r.pub", "--alg", "rsa-pss", "--salt-len", "digest", "--sig", "max.sig", "msg"])
        .assert()
        .code(1);
    // pqkit signs with the digest length; OpenSSL verifies it with that salt length.
    pqkit()
        .current_dir(p)
        .args(["sign", "-k", "r.pem", "--alg", "rsa-pss", "-o", "mine.sig", "msg"])
        .assert()
        .success();
    openssl(
        p,
        &[
            "dgst",
            "-sha256",
            "-verify",
            "r.pub",
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sigopt",
            "rsa_pss_saltlen:32",
            "-signature",
            "mine.sig",
            "msg",
        ],
    );
    // OAEP both ways (SHA-256), and PKCS#1 v1.5.
    fs::write(p.join("secret"), b"a short secret").unwrap();
    pqkit().current_dir(p).args(["rsa", "encrypt", "-k", "r.pub", "-o", "c1", "secret"]).assert().success();
    let pt = openssl(
        p,
        &[
            "pkeyutl",
            "-decrypt",
            "-inkey",
            "r.pem",
            "-in",
            "c1",
            "-pkeyopt",
            "rsa_padding_mode:oaep",
            "-pkeyopt",
            "rsa_oaep_md:sha256",
            "-pkeyopt",
            "rsa_mgf1_md:sha256",
        ],
    );
    assert_eq!(pt, b"a short secret");
    openssl(
        p,
        &[
            "pkeyutl",
            "-encrypt",
            "-pubin",
            "-inkey",
            "r.pub",
            "-in",
            "secret",
            "-out",
            "c2",
            "-pkeyopt",
            "rsa_padding_mode:oaep",
        ],
    );
    pqkit()
        .current_dir(p)
        .args(["rsa", "decrypt", "-k", "r.pem", "--hash", "sha1", "c2"])
        .assert()
        .success()
        .stdout("a short secret");
    pqkit().current_dir(p).args(["rsa", "decrypt", "-k", "r.pem", "c2"]).assert().code(1);
    openssl(p, &["pkeyutl", "-encrypt", "-pubin", "-inkey", "r.pub", "-in", "secret", "-out", "c3"]);
    pqkit()
        .current_dir(p)
        .args(["rsa", "decrypt", "-k", "r.pem", "--padding", "pkcs1", "c3"])
        .assert()
        .success()
        .stdout("a short secret");
    // The private key for encryption, the public one for decryption: refused.
    pqkit().current_dir(p).args(["rsa", "decrypt", "-k", "r.pub", "c2"]).assert().code(2);
}

#[test]
fn exposed_private_key_gets_a_warning() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg"), b"m").unwrap();
    keygen(p, "ed25519", "sk", None);
    pqkit().current_dir(p).args(["sign", "-k", "sk", "msg"]).assert().success().stderr(predicate::str::is_empty());
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p.join("sk"), fs::Permissions::from_mode(0o644)).unwrap();
    pqkit()
        .current_dir(p)
        .args(["sign", "-k", "sk", "msg"])
        .assert()
        .success()
        .stderr(predicate::str::contains("accessible by others"));
}

#[test]
fn pubkey_matches_keygen_for_every_kind() {
    let d = dir();
    let p = d.path();
    for alg in
        ["x25519", "ed25519", "p256", "secp256k1", "ml-kem-512", "ml-kem-1024", "ml-dsa-44", "ml-dsa-87", "xwing"]
    {
        keygen(p, alg, "sk", Some("pk"));
        pqkit().current_dir(p).args(["pubkey", "sk", "-o", "pk2"]).assert().success();
        assert_eq!(fs::read(p.join("pk")).unwrap(), fs::read(p.join("pk2")).unwrap(), "{alg}");
        pqkit().current_dir(p).args(["pubkey", "pk"]).assert().code(2);
        for f in ["sk", "pk", "pk2"] {
            fs::remove_file(p.join(f)).unwrap();
        }
    }
    pqkit().current_dir(p).args(["keygen", "--alg", "agent", "--name", "w", "-o", "a"]).assert().success();
    let id = pqkit().current_dir(p).args(["agent", "id", "a"]).assert().success().get_output().stdout.clone();
    let id2 = pqkit().current_dir(p).args(["pubkey", "a"]).assert().success().get_output().stdout.clone();
    assert_eq!(id, id2);
    pqkit().current_dir(p).args(["keygen", "-o", "k"]).assert().success();
    pqkit().current_dir(p).args(["pubkey", "k"]).assert().code(2).stderr(predicate::str::contains("no public half"));
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        pqkit().args(["completions", shell]).assert().success().stdout(predicate::str::contains("keygen"));
    }
    pqkit().arg("man").assert().success().stdout(predicate::str::contains(".TH pqkit"));
}

// ---- every example in docs/cli.md ----

fn doc_examples() -> Vec<String> {
    let doc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let text = fs::read_to_string(doc).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if in_sh && !line.trim().is_empty() {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn every_example_in_the_cli_doc_runs() {
    let d = dir();
    let p = d.path();
    fs::write(p.join("msg.txt"), b"the message\n").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pqkit");
    let bindir = bin.parent().unwrap();
    let examples = doc_examples();
    assert!(examples.len() > 20, "docs/cli.md lost its examples");
    for line in &examples {
        let path = format!("{}:{}", bindir.display(), std::env::var("PATH").unwrap_or_default());
        let o = std::process::Command::new("sh").args(["-ec", line]).current_dir(p).env("PATH", path).output().unwrap();
        assert!(o.status.success(), "docs/cli.md example failed: {line}\n{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(fs::read(p.join("secret1.hex")).unwrap(), fs::read(p.join("secret2.hex")).unwrap());
    assert_eq!(fs::read(p.join("msg.back")).unwrap(), b"the message\n");
    assert_eq!(fs::read(p.join("from-me.txt")).unwrap(), b"the message\n");
    assert_eq!(fs::read(p.join("short.out")).unwrap(), b"a short secret");
}
