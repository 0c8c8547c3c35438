//! Every bad input to the `pqkit` command gets a clear error and the right exit code (0 success,
//! 1 verification or decryption failed, 2 usage), and decryption refuses costs above its limits before any
//! work. Each test here failed before the fix it covers.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::Path;

fn pqkit() -> Command {
    let mut c = Command::cargo_bin("pqkit").unwrap();
    c.env_remove("PQKIT_TEST_FIXED_RANDOM");
    c
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

// ---- panics ----

#[test]
fn hash_huge_len_is_a_usage_error_not_a_panic() {
    for alg in ["shake128", "shake256", "skein512"] {
        for len in ["18446744073709551615", "4294967296", "16777217"] {
            pqkit()
                .args(["hash", "--alg", alg, "--len", len])
                .write_stdin("x")
                .assert()
                .code(2)
                .stderr(predicate::str::contains("--len"));
        }
    }
    // The cap itself is accepted.
    let out = pqkit().args(["hash", "--alg", "shake256", "--len", "16777216"]).write_stdin("x").assert().success();
    assert_eq!(out.get_output().stdout.len(), 2 * 16777216 + 4);
}

// ---- data loss ----

#[test]
fn kem_keygen_same_path_twice_writes_nothing() {
    let d = dir();
    let x = d.path().join("X");
    for sub in [["kem", "keygen", "--alg", "ml-kem-768"], ["sign", "keygen", "--alg", "ml-dsa-44"]] {
        let (a, b) = if sub[0] == "kem" { ("--dk", "--ek") } else { ("--sk", "--vk") };
        pqkit().args(sub).arg(a).arg(&x).arg(b).arg(&x).assert().code(2).stderr(predicate::str::contains("same file"));
        assert!(!x.exists(), "{sub:?} wrote {x:?}");
        // The same file by two spellings.
        let dotted = d.path().join(".").join("X");
        pqkit().args(sub).arg(a).arg(&x).arg(b).arg(&dotted).assert().code(2);
        assert!(!x.exists());
    }
    for alg in ["ed25519", "p256"] {
        pqkit().args(["sign", "keygen", "--alg", alg, "--sk"]).arg(&x).arg("--vk").arg(&x).assert().code(2);
        assert!(!x.exists());
    }
    pqkit().args(["ecdh", "keygen", "--alg", "x25519", "--sk"]).arg(&x).arg("--pk").arg(&x).assert().code(2);
    assert!(!x.exists());
}

#[test]
fn key_pair_is_never_half_written() {
    let d = dir();
    let dk = d.path().join("dk");
    let ek = d.path().join("missing-dir").join("ek");
    pqkit().args(["kem", "keygen", "--alg", "ml-kem-512", "--dk"]).arg(&dk).arg("--ek").arg(&ek).assert().code(2);
    assert!(!dk.exists(), "the private half was left behind");
    let sk = d.path().join("sk");
    pqkit().args(["sign", "keygen", "--alg", "ed25519", "--sk"]).arg(&sk).arg("--vk").arg(&ek).assert().code(2);
    assert!(!sk.exists(), "the private half was left behind");
}

#[test]
fn encrypt_never_overwrites_the_key_file() {
    let d = dir();
    let key = d.path().join("key");
    let input = d.path().join("in");
    fs::write(&input, b"hello").unwrap();
    pqkit().args(["keygen", "-o"]).arg(&key).assert().success();
    let before = fs::read(&key).unwrap();
    let ct = d.path().join("in.pqk");
    pqkit().args(["encrypt", "-k"]).arg(&key).arg(&input).assert().success();
    for (cmd, inp) in [("encrypt", &input), ("decrypt", &ct)] {
        pqkit()
            .args([cmd, "--force", "-k"])
            .arg(&key)
            .arg(inp)
            .arg("-o")
            .arg(&key)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("key"));
        assert_eq!(fs::read(&key).unwrap(), before, "{cmd} destroyed the key");
    }
    let pw = d.path().join("pw");
    fs::write(&pw, b"a passphrase\n").unwrap();
    pqkit().args(["encrypt", "--force", "--passphrase-file"]).arg(&pw).arg(&input).arg("-o").arg(&pw).assert().code(2);
    assert_eq!(fs::read(&pw).unwrap(), b"a passphrase\n");
}

#[cfg(unix)]
#[test]
fn force_never_follows_a_symlink_nor_writes_a_fifo() {
    let d = dir();
    let key = d.path().join("key");
    let input = d.path().join("in");
    fs::write(&input, b"hello").unwrap();
    pqkit().args(["keygen", "-o"]).arg(&key).assert().success();
    let target = d.path().join("target");
    fs::write(&target, b"precious").unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    pqkit()
        .args(["encrypt", "--force", "-k"])
        .arg(&key)
        .arg(&input)
        .arg("-o")
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(fs::read(&target).unwrap(), b"precious");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());

    let fifo = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    pqkit()
        .args(["encrypt", "--force", "-k"])
        .arg(&key)
        .arg(&input)
        .arg("-o")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    // Key writing too.
    pqkit()
        .args(["kem", "keygen", "--alg", "ml-kem-512", "--force", "--dk"])
        .arg(d.path().join("dk"))
        .arg("--ek")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!d.path().join("dk").exists());
    pqkit().args(["keygen", "--force", "-o"]).arg(&link).assert().code(2);
    assert_eq!(fs::read(&target).unwrap(), b"precious");
}

// ---- forged verification ----

fn check(list: &[u8], extra: &[&str], cwd: &Path) -> assert_cmd::assert::Assert {
    let l = cwd.join("list");
    fs::write(&l, list).unwrap();
    pqkit().current_dir(cwd).args(["hash", "--check"]).args(extra).arg(&l).assert()
}

#[test]
fn check_an_empty_list_fails() {
    let d = dir();
    check(b"", &[], d.path()).code(1).stderr(predicate::str::contains("no properly formatted"));
    check(b"\n\n", &[], d.path()).code(1);
}

#[test]
fn check_refuses_a_short_digest_even_for_a_xof() {
    let d = dir();
    fs::write(d.path().join("f"), b"forged").unwrap();
    let full = pqkit().args(["hash", "--alg", "shake256"]).arg(d.path().join("f")).assert().success();
    let hexd = String::from_utf8(full.get_output().stdout.clone()).unwrap()[..128].to_string();
    // A 1-byte prefix of the right digest "verified" the forged file before.
    check(format!("{}  f\n", &hexd[..2]).as_bytes(), &["--alg", "shake256"], d.path())
        .code(1)
        .stdout(predicate::str::contains("OK").not());
    check(format!("{}  f\n", &hexd[..126]).as_bytes(), &["--alg", "shake256"], d.path()).code(1);
    check(format!("{hexd}  f\n").as_bytes(), &["--alg", "shake256"], d.path()).success().stdout("f: OK\n");
    // With --len the listed length must be that length.
    check(format!("{}  f\n", &hexd[..64]).as_bytes(), &["--alg", "shake256", "--len", "32"], d.path()).success();
    check(format!("{}  f\n", &hexd[..64]).as_bytes(), &["--alg", "shake256"], d.path()).code(1);
    // Fixed-length hashes too.
    check(b"00  f\n", &[], d.path()).code(1);
}

#[test]
fn check_keeps_going_past_a_missing_list() {
    let d = dir();
    fs::write(d.path().join("f"), b"data").unwrap();
    let line = pqkit().current_dir(d.path()).args(["hash", "f"]).assert().success().get_output().stdout.clone();
    fs::write(d.path().join("good"), &line).unwrap();
    pqkit()
        .current_dir(d.path())
        .args(["hash", "-c", "missing", "good"])
        .assert()
        .code(1)
        .stdout("f: OK\n")
        .stderr(predicate::str::contains("missing"));
    // A list that is not UTF-8 is read as bytes.
    let mut bad = b"# \xff\xfe comment\n".to_vec();
    bad.extend_from_slice(&line);
    fs::write(d.path().join("bytes"), &bad).unwrap();
    pqkit().current_dir(d.path()).args(["hash", "-c", "bytes"]).assert().success().stdout("f: OK\n");
}

#[cfg(unix)]
#[test]
fn non_utf8_and_escaped_names_round_trip() {
    use std::os::unix::ffi::OsStrExt;
    let d = dir();
    let names: [&[u8]; 3] = [b"caf\xe9", b"back\\slash", b"new\nline"];
    for n in names {
        fs::write(d.path().join(std::ffi::OsStr::from_bytes(n)), n).unwrap();
    }
    let mut cmd = pqkit();
    cmd.current_dir(d.path()).arg("hash");
    for n in names {
        cmd.arg(std::ffi::OsStr::from_bytes(n));
    }
    let out = cmd.assert().success().get_output().stdout.clone();
    let lines: Vec<&[u8]> = out.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{:?}", String::from_utf8_lossy(&out));
    assert!(lines[0].ends_with(b"  caf\xe9") && !lines[0].starts_with(b"\\"));
    assert!(lines[1].starts_with(b"\\") && lines[1].ends_with(b"  back\\\\slash"));
    assert!(lines[2].starts_with(b"\\") && lines[2].ends_with(b"  new\\nline"));
    fs::write(d.path().join("list"), &out).unwrap();
    let ok = pqkit().current_dir(d.path()).args(["hash", "-c", "list"]).assert().success().get_output().stdout.clone();
    assert_eq!(ok, b"caf\xe9: OK\n\\back\\\\slash: OK\n\\new\\nline: OK\n".to_vec());
}

#[test]
fn check_status_strict_quiet_ignore_missing() {
    let d = dir();
    fs::write(d.path().join("f"), b"data").unwrap();
    let line = pqkit().current_dir(d.path()).args(["hash", "f"]).assert().success().get_output().stdout.clone();
    let line = String::from_utf8(line).unwrap();
    let wrong = line.replacen(&line[..1], if &line[..1] == "0" { "1" } else { "0" }, 1);
    check(line.as_bytes(), &["--status"], d.path()).success().stdout("").stderr("");
    check(wrong.as_bytes(), &["--status"], d.path()).code(1).stdout("").stderr("");
    check(line.as_bytes(), &["--quiet"], d.path()).success().stdout("");
    check(wrong.as_bytes(), &["--quiet"], d.path()).code(1).stdout("f: FAILED\n");
    let with_junk = format!("{line}not a digest line\n");
    check(with_junk.as_bytes(), &[], d.path()).success().stderr(predicate::str::contains("improperly formatted"));
    check(with_junk.as_bytes(), &["--strict"], d.path()).code(1);
    let with_missing = format!("{line}{}  gone\n", &line[..64]);
    check(with_missing.as_bytes(), &[], d.path()).code(1).stdout(predicate::str::contains("gone: FAILED open or read"));
    check(with_missing.as_bytes(), &["--ignore-missing"], d.path()).success().stdout("f: OK\n");
    let only_missing = format!("{}  gone\n", &line[..64]);
    check(only_missing.as_bytes(), &["--ignore-missing"], d.path())
        .code(1)
        .stderr(predicate::str::contains("no file was verified"));
    // The check-only flags are refused without --check.
    pqkit().args(["hash", "--status"]).write_stdin("x").assert().code(2);
}

#[test]
fn malformed_signature_fails_verification_with_exit_1() {
    let d = dir();
    let msg = d.path().join("msg");
    fs::write(&msg, b"message").unwrap();
    for alg in ["ml-dsa-44", "ed25519", "p256"] {
        let (sk, vk) = (d.path().join(format!("{alg}.sk")), d.path().join(format!("{alg}.vk")));
        pqkit().args(["sign", "keygen", "--alg", alg, "--sk"]).arg(&sk).arg("--vk").arg(&vk).assert().success();
        let sig = d.path().join(format!("{alg}.sig"));
        for bad in [&b"00"[..], b"not hex at all", &[0x30, 0x03, 0x02, 0x01][..], &[0xffu8; 64][..]] {
            fs::write(&sig, bad).unwrap();
            pqkit()
                .args(["sign", "verify", "--alg", alg, "--vk"])
                .arg(&vk)
                .arg("--sig")
                .arg(&sig)
                .arg(&msg)
                .assert()
                .code(1)
                .stderr(predicate::str::contains("verification failed"));
        }
        // A missing signature file is still an input error.
        pqkit()
            .args(["sign", "verify", "--alg", alg, "--vk"])
            .arg(&vk)
            .arg("--sig")
            .arg(d.path().join("none"))
            .arg(&msg)
            .assert()
            .code(2);
    }
}

// ---- limits ----

fn pass(d: &Path) -> std::path::PathBuf {
    let p = d.join("pw");
    fs::write(&p, b"correct horse\n").unwrap();
    p
}

#[test]
fn encrypt_refuses_costs_decrypt_would_refuse() {
    let d = dir();
    let pw = pass(d.path());
    let input = d.path().join("in");
    fs::write(&input, b"hello").unwrap();
    for (flag, v, limit) in [("--argon2-passes", "65", "ceiling"), ("--argon2-lanes", "65", "ceiling")] {
        pqkit()
            .args(["encrypt", "--argon2-memory", "1024", flag, v, "--passphrase-file"])
            .arg(&pw)
            .arg(&input)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(limit));
        assert!(!d.path().join("in.pqk").exists());
    }
    pqkit()
        .args(["encrypt", "--argon2-memory", "64", "--argon2-lanes", "1", "--argon2-passes", "17", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-passes 17"));
    pqkit()
        .args(["encrypt", "--argon2-memory", "2097152", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-memory 2097152"));
    // Raised on both sides, it round-trips; decrypt without the raised limit fails fast naming the flag.
    pqkit()
        .args(["encrypt", "--argon2-memory", "64", "--argon2-lanes", "1", "--argon2-passes", "17"])
        .args(["--max-passes", "17", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .success();
    let ct = d.path().join("in.pqk");
    let out = d.path().join("out");
    pqkit()
        .args(["decrypt", "--passphrase-file"])
        .arg(&pw)
        .arg(&ct)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-passes 17"));
    assert!(!out.exists());
    pqkit()
        .args(["decrypt", "--max-passes", "17", "--passphrase-file"])
        .arg(&pw)
        .arg(&ct)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(fs::read(&out).unwrap(), b"hello");
}

#[test]
fn forged_maximum_costs_fail_fast() {
    let d = dir();
    let pw = pass(d.path());
    let input = d.path().join("in");
    fs::write(&input, b"hello").unwrap();
    pqkit()
        .args(["encrypt", "--argon2-memory", "64", "--argon2-passes", "1", "--argon2-lanes", "1", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .success();
    let ct = d.path().join("in.pqk");
    let mut bytes = fs::read(&ct).unwrap();
    // m, t, p at the format's ceilings (4 GiB, 64, 64): header bytes 12..24, big-endian.
    bytes[12..16].copy_from_slice(&(4u32 << 20).to_be_bytes());
    bytes[16..20].copy_from_slice(&64u32.to_be_bytes());
    bytes[20..24].copy_from_slice(&64u32.to_be_bytes());
    fs::write(&ct, &bytes).unwrap();
    let t = std::time::Instant::now();
    pqkit()
        .args(["decrypt", "--passphrase-file"])
        .arg(&pw)
        .arg(&ct)
        .arg("-o")
        .arg(d.path().join("out"))
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-memory 4194304"));
    assert!(t.elapsed() < std::time::Duration::from_secs(10), "took {:?}", t.elapsed());
    assert!(!d.path().join("out").exists());
    // The limits themselves cannot go past the format's ceiling.
    pqkit()
        .args(["encrypt", "--max-memory", "4194305", "--argon2-memory", "4194305", "--passphrase-file"])
        .arg(&pw)
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ceiling"));
}

#[test]
fn threads_are_bounded() {
    let d = dir();
    let key = d.path().join("key");
    pqkit().args(["keygen", "-o"]).arg(&key).assert().success();
    pqkit()
        .args(["encrypt", "-j", "1000", "-k"])
        .arg(&key)
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads 1000"));
    pqkit().args(["encrypt", "-j", "4", "-k"]).arg(&key).write_stdin("x").assert().success();
}

#[test]
fn help_documents_exit_codes() {
    pqkit().arg("--help").assert().success().stdout(predicate::str::contains("Exit codes: 0"));
}

// ---- conventions ----

/// Runs `pqkit ARGS` through a helper program (setsid, script) when the machine has it.
fn via(tool: &str) -> Option<Command> {
    let found = std::process::Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().ok()?;
    found.status.success().then(|| Command::new(tool))
}

#[test]
fn no_terminal_passphrase_error_names_the_flag() {
    let Some(mut c) = via("setsid") else { return };
    let d = dir();
    let input = d.path().join("in");
    fs::write(&input, b"x").unwrap();
    // setsid: no controlling terminal, as under cron or CI.
    c.arg("-w")
        .arg(assert_cmd::cargo::cargo_bin("pqkit"))
        .arg("encrypt")
        .arg(&input)
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--passphrase-file"));
    assert!(!d.path().join("in.pqk").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn encrypt_refuses_a_terminal_without_force() {
    let Some(mut c) = via("script") else { return };
    let d = dir();
    let key = d.path().join("key");
    pqkit().args(["keygen", "-o"]).arg(&key).assert().success();
    let input = d.path().join("in");
    fs::write(&input, b"x").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pqkit");
    // script gives pqkit a pseudo-terminal as stdout; its own exit status is pqkit's (-e).
    let cmd = format!("'{}' encrypt -k '{}' '{}' -o -", bin.display(), key.display(), input.display());
    c.args(["-qec", &cmd, "/dev/null"])
        .write_stdin("")
        .assert()
        .code(2)
        .stdout(predicate::str::contains("refusing to write binary ciphertext to a terminal"));
}
