//! Public-key file encryption: `pqkit keygen --alg xwing`, `pqkit encrypt -r/-R`, `pqkit decrypt -i`.
//! Round trips with one and several recipients, old (version-1) files still decrypting, and every rejection:
//! wrong identity, tampered stanza, unknown KEM, bad recipient strings — each exit 1 (or 2 for usage) with
//! nothing written.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn pqkit() -> Command {
    let mut c = Command::cargo_bin("pqkit").unwrap();
    c.env_remove("PQKIT_TEST_FIXED_RANDOM");
    c
}

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

/// Makes an identity; returns its path and the printed recipient string.
fn identity(dir: &Path, name: &str) -> (PathBuf, String) {
    let p = dir.join(name);
    let out = pqkit().args(["keygen", "--alg", "xwing", "-o"]).arg(&p).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(r.starts_with("pqkit-xwing1"), "{r}");
    (p, r)
}

fn encrypt_to(recipients: &[&str], input: &Path, out: &Path) {
    let mut c = pqkit();
    c.arg("encrypt").arg(input).arg("-o").arg(out).arg("-q");
    for r in recipients {
        c.arg("-r").arg(r);
    }
    c.assert().success();
}

#[test]
fn round_trip_one_and_many_recipients() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (alice, ra) = identity(d, "alice.id");
    let (bob, rb) = identity(d, "bob.id");
    let (carol, _) = identity(d, "carol.id");
    // The identity file is private and names its recipient.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&alice).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert!(fs::read_to_string(&alice).unwrap().contains(&ra));
    assert_eq!(ra.len(), "pqkit-xwing1".len() + (1216 + 4usize).div_ceil(3) * 4 - 1);

    for (len, seed) in [(0usize, 1u64), (1000, 2), (65536 * 2 + 7, 3)] {
        let plain = data(len, seed);
        let input = d.join("in");
        fs::write(&input, &plain).unwrap();
        let ct = d.join("in.pqk");
        let _ = fs::remove_file(&ct);
        encrypt_to(&[&ra, &rb], &input, &ct);
        let bytes = fs::read(&ct).unwrap();
        assert_eq!(&bytes[..9], b"PQKITENC\x02");
        // The recipient section: 2 stanzas of 8 + 1120 + 2 + 48 bytes, then the version-1 header.
        assert_eq!(u16::from_be_bytes([bytes[9], bytes[10]]), 2);
        let inner = 11 + 2 * (8 + 1120 + 2 + 48);
        assert_eq!(&bytes[inner..inner + 9], b"PQKITENC\x01");
        for id in [&alice, &bob] {
            let out = d.join("out");
            let _ = fs::remove_file(&out);
            pqkit().arg("decrypt").arg(&ct).arg("-i").arg(id).arg("-o").arg(&out).assert().success();
            assert_eq!(fs::read(&out).unwrap(), plain);
        }
        // Several identities: the right one is found.
        let out = d.join("out2");
        let _ = fs::remove_file(&out);
        pqkit()
            .arg("decrypt")
            .arg(&ct)
            .args(["-i"])
            .arg(&carol)
            .arg("-i")
            .arg(&bob)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        assert_eq!(fs::read(&out).unwrap(), plain);
        // The wrong identity: exit 1, nothing written.
        let out = d.join("out3");
        pqkit()
            .arg("decrypt")
            .arg(&ct)
            .arg("-i")
            .arg(&carol)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("no recipient stanza opens with this identity"));
        assert!(!out.exists());
    }
}

#[test]
fn recipients_file_and_stdin_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (alice, ra) = identity(d, "alice.id");
    let (bob, rb) = identity(d, "bob.id");
    let list = d.join("friends.txt");
    fs::write(&list, format!("# my friends\n\n{ra}\n  {rb}  \n")).unwrap();
    let plain = data(5000, 9);
    let enc = pqkit().args(["encrypt", "-R"]).arg(&list).write_stdin(plain.clone()).output().unwrap();
    assert!(enc.status.success());
    for id in [&alice, &bob] {
        let dec = pqkit().args(["decrypt", "-i"]).arg(id).write_stdin(enc.stdout.clone()).output().unwrap();
        assert!(dec.status.success(), "{}", String::from_utf8_lossy(&dec.stderr));
        assert_eq!(dec.stdout, plain);
    }
    // An empty list, a bad line (named by line number).
    let empty = d.join("empty.txt");
    fs::write(&empty, "# nobody\n").unwrap();
    pqkit()
        .args(["encrypt", "-R"])
        .arg(&empty)
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no recipients"));
    let bad = d.join("bad.txt");
    fs::write(&bad, format!("{ra}\nage1qqqq\n")).unwrap();
    pqkit()
        .args(["encrypt", "-R"])
        .arg(&bad)
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.txt:2: not a pqkit recipient"));
}

#[test]
fn bad_recipient_strings() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = identity(dir.path(), "id");
    // One character changed: the checksum (or the key check) catches it.
    let mut chars: Vec<char> = r.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    let typo: String = chars.into_iter().collect();
    pqkit()
        .args(["encrypt", "-r", &typo])
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("checksum mismatch"));
    // Truncated.
    pqkit()
        .args(["encrypt", "-r", &r[..r.len() - 10]])
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad encoding or length"));
    // A recipient together with a key file is a usage error.
    pqkit().args(["encrypt", "-r", &r, "--key", "k"]).write_stdin("x").assert().code(2);
}

#[test]
fn tampering_and_unknown_kem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (alice, ra) = identity(d, "alice.id");
    let (_, rb) = identity(d, "bob.id");
    let input = d.join("in");
    fs::write(&input, data(3000, 4)).unwrap();
    let ct = d.join("in.pqk");
    encrypt_to(&[&ra, &rb], &input, &ct);
    let good = fs::read(&ct).unwrap();
    let stanza = 8 + 1120 + 2 + 48;
    let run = |bytes: &[u8], expect: &str| {
        let f = d.join("t.pqk");
        fs::write(&f, bytes).unwrap();
        let out = d.join("t.out");
        pqkit()
            .arg("decrypt")
            .arg(&f)
            .arg("-i")
            .arg(&alice)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(expect));
        assert!(!out.exists(), "nothing may be written ({expect})");
    };
    // Alice's own stanza tampered (its enc, its wrapped key): she cannot unwrap.
    for off in [11 + 8 + 100, 11 + 8 + 1120 + 2 + 5] {
        let mut b = good.clone();
        b[off] ^= 1;
        run(&b, "no recipient stanza opens with this identity");
    }
    // Bob's stanza tampered: Alice unwraps, but the section is bound into the file key, so segment 0 fails.
    let mut b = good.clone();
    b[11 + stanza + 8 + 500] ^= 1;
    run(&b, "wrong key or corrupted header");
    // Unknown KEM ids in every stanza.
    let mut b = good.clone();
    for k in 0..2 {
        b[11 + k * stanza] = 0x12;
        b[11 + k * stanza + 1] = 0x34;
    }
    run(&b, "unknown KEM/KDF/AEAD in the recipient stanzas");
    // A corrupted count and truncation inside the section.
    let mut b = good.clone();
    b[9] = 0;
    b[10] = 0;
    run(&b, "corrupted recipient section");
    run(&good[..11 + 500], "ciphertext truncated inside the recipient section");
    // No identity given: a usage error naming -i.
    pqkit()
        .arg("decrypt")
        .arg(&ct)
        .arg("-o")
        .arg(d.join("x"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pass -i IDENTITY"));
    // A key file's identity mismatch: an identity on a version-1 file.
    let key = d.join("key");
    pqkit().args(["keygen", "-o"]).arg(&key).assert().success();
    let v1 = d.join("v1.pqk");
    pqkit().arg("encrypt").arg(&input).arg("--key").arg(&key).arg("-o").arg(&v1).assert().success();
    pqkit()
        .arg("decrypt")
        .arg(&v1)
        .arg("-i")
        .arg(&alice)
        .arg("-o")
        .arg(d.join("y"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("drop -i"));
    // ... and the version-1 file still decrypts with its key.
    pqkit().arg("decrypt").arg(&v1).arg("--key").arg(&key).arg("-o").arg(d.join("z")).assert().success();
    assert_eq!(fs::read(d.join("z")).unwrap(), fs::read(&input).unwrap());
    // Not an identity file.
    pqkit()
        .arg("decrypt")
        .arg(&ct)
        .arg("-i")
        .arg(&key)
        .arg("-o")
        .arg(d.join("w"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a pqkit identity file"));
}

/// The worked example of docs/file-format.md, committed as data: this pqkit must keep decrypting it.
#[test]
fn documented_example_decrypts() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let out = dir.path().join("out.txt");
    pqkit()
        .arg("decrypt")
        .arg(data.join("recipient-example.pqk"))
        .arg("-i")
        .arg(data.join("recipient-example.id"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(fs::read(&out).unwrap(), b"attack at dawn\n");
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/file-format.md")).unwrap();
    let id = fs::read_to_string(data.join("recipient-example.id")).unwrap();
    let seed_line = id.lines().find(|l| l.starts_with("PQKIT-XWING-IDENTITY-1:")).unwrap();
    assert!(doc.contains(seed_line), "the documented identity is the committed one");
    let file = fs::read(data.join("recipient-example.pqk")).unwrap();
    assert!(doc.contains(&hex::encode(&file[1141..1189])), "the documented wrapped key is the committed file's");
}
