//! Files encrypted to recipients through the C entry points and the `pqkit` command line, both ways: an
//! identity made by `pqkit keygen --alg xwing` loads here and opens what `pqkit encrypt -r` wrote; a file
//! written here to that identity's recipient string (and to a second recipient) is opened by
//! `pqkit decrypt -i`; an identity made here decrypts with the CLI.
//!
//! Needs the `pqkit` binary of this build (`target/<profile>/pqkit`, built by `cargo build -p pqkit-cli` or by
//! the workspace's test run): under CI (`CI` set) a missing binary fails the test; elsewhere it says loudly
//! that it skipped.

use pqkit_ffi::*;
use std::path::PathBuf;
use std::process::Command;

fn cli() -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).map(|p| p.join("pqkit"));
    match bin {
        Some(b) if b.exists() => Some(b),
        _ => {
            assert!(std::env::var_os("CI").is_none(), "CI: the pqkit binary is missing: cargo build -p pqkit-cli");
            eprintln!(
                "WARNING: the pqkit binary is not built (cargo build -p pqkit-cli): the CLI interop checks are SKIPPED"
            );
            None
        }
    }
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("run pqkit");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

struct Id(*mut PqkitIdentity);
impl Drop for Id {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { pqkit_identity_free(self.0) }
    }
}

fn identity_from(text: &[u8]) -> Id {
    let mut h = core::ptr::null_mut();
    // SAFETY: a live slice and an out-pointer.
    assert_eq!(unsafe { pqkit_identity_from_text(text.as_ptr(), text.len(), &mut h) }, PqkitStatus::Ok);
    Id(h)
}

fn read_out(f: impl Fn(*mut u8, usize, *mut usize) -> PqkitStatus) -> Vec<u8> {
    let mut n = 0usize;
    assert_eq!(f(core::ptr::null_mut(), 0, &mut n), PqkitStatus::BufferTooSmall);
    let mut buf = vec![0u8; n];
    let mut m = 0usize;
    assert_eq!(f(buf.as_mut_ptr(), n, &mut m), PqkitStatus::Ok);
    assert_eq!(m, n);
    buf
}

fn recipient_of(id: &Id) -> Vec<u8> {
    // SAFETY: a live handle; the closure's buffers come from read_out.
    read_out(|o, c, l| unsafe { pqkit_identity_recipient(id.0, o, c, l) })
}

fn decrypt(ids: &[&Id], ct: &[u8]) -> Result<Vec<u8>, PqkitStatus> {
    let ptrs: Vec<*const PqkitIdentity> = ids.iter().map(|i| i.0 as *const _).collect();
    let mut out = vec![0u8; ct.len()];
    let mut n = 0usize;
    // SAFETY: live handles and slices.
    let st = unsafe {
        pqkit_recipients_decrypt(ptrs.as_ptr(), ptrs.len(), ct.as_ptr(), ct.len(), out.as_mut_ptr(), out.len(), &mut n)
    };
    if st != PqkitStatus::Ok {
        return Err(st);
    }
    out.truncate(n);
    Ok(out)
}

fn encrypt(alg: PqkitStreamAlg, recipients: &[u8], pt: &[u8]) -> Vec<u8> {
    // SAFETY: live slices; the closure's buffers come from read_out.
    read_out(|o, c, l| unsafe {
        pqkit_recipients_encrypt(alg as u32, recipients.as_ptr(), recipients.len(), pt.as_ptr(), pt.len(), o, c, l)
    })
}

/// Streaming encryption: the section, then the stream fed in pieces of `chunk` bytes.
fn encrypt_streaming(recipients: &[u8], pt: &[u8], chunk: usize) -> Vec<u8> {
    let mut file = vec![0u8; 4096];
    let (mut n, mut enc) = (0usize, core::ptr::null_mut());
    // SAFETY: live slices and out-pointers; each later call gets a live handle and a buffer of its capacity.
    unsafe {
        let st = pqkit_recipients_encryptor_new(
            1,
            recipients.as_ptr(),
            recipients.len(),
            file.as_mut_ptr(),
            4096,
            &mut n,
            &mut enc,
        );
        assert_eq!(st, PqkitStatus::Ok);
        file.truncate(n);
        let mut buf = vec![0u8; chunk + 2 * 65_536 + 200];
        for piece in pt.chunks(chunk) {
            let st =
                pqkit_stream_encryptor_update(enc, piece.as_ptr(), piece.len(), buf.as_mut_ptr(), buf.len(), &mut n);
            assert_eq!(st, PqkitStatus::Ok);
            file.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pqkit_stream_encryptor_finish(enc, buf.as_mut_ptr(), buf.len(), &mut n), PqkitStatus::Ok);
        file.extend_from_slice(&buf[..n]);
        pqkit_stream_encryptor_free(enc);
    }
    file
}

/// Streaming decryption: the section from a prefix of `prefix` bytes (asking for more while it is short),
/// then the rest in pieces of `chunk` bytes.
fn decrypt_streaming(id: &Id, file: &[u8], mut prefix: usize, chunk: usize) -> Result<Vec<u8>, PqkitStatus> {
    let ids = [id.0 as *const PqkitIdentity];
    let (mut consumed, mut dec) = (0usize, core::ptr::null_mut());
    loop {
        let p = prefix.min(file.len());
        // SAFETY: live handles and slices, out-pointers.
        let st = unsafe { pqkit_recipients_decryptor_new(ids.as_ptr(), 1, file.as_ptr(), p, &mut consumed, &mut dec) };
        match st {
            PqkitStatus::Ok => break,
            PqkitStatus::BufferTooSmall if consumed > p && p < file.len() => prefix = consumed,
            other => return Err(other),
        }
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk + 2 * 65_552];
    let mut n = 0usize;
    // SAFETY: a live handle and buffers of their capacities.
    let r = unsafe {
        let mut st = PqkitStatus::Ok;
        for piece in file[consumed..].chunks(chunk) {
            st = pqkit_stream_decryptor_update(dec, piece.as_ptr(), piece.len(), buf.as_mut_ptr(), buf.len(), &mut n);
            if st != PqkitStatus::Ok {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        if st == PqkitStatus::Ok {
            st = pqkit_stream_decryptor_finish(dec, buf.as_mut_ptr(), buf.len(), &mut n);
            out.extend_from_slice(&buf[..n.min(buf.len())]);
        }
        pqkit_stream_decryptor_free(dec);
        st
    };
    if r == PqkitStatus::Ok { Ok(out) } else { Err(r) }
}

#[test]
fn files_cross_between_the_c_api_and_the_cli() {
    let Some(pqkit) = cli() else { return };
    let d = std::env::temp_dir().join(format!("pqkit-ffi-recipients-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (id_file, rcpt_file) = (d.join("me.id"), d.join("me.recipient"));
    run(Command::new(&pqkit).args(["keygen", "--alg", "xwing", "-o"]).arg(&id_file));
    run(Command::new(&pqkit).arg("pubkey").arg(&id_file).arg("-o").arg(&rcpt_file));
    let cli_recipient = std::fs::read_to_string(&rcpt_file).unwrap();

    // The CLI's identity file loads, and gives the recipient string the CLI printed.
    let me = identity_from(&std::fs::read(&id_file).unwrap());
    assert_eq!(String::from_utf8(recipient_of(&me)).unwrap(), cli_recipient.trim());

    // The CLI encrypts (70 000 bytes: two segments), the C API decrypts.
    let msg: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let (msg_file, ct_file, back_file) = (d.join("msg"), d.join("msg.pqk"), d.join("msg.back"));
    std::fs::write(&msg_file, &msg).unwrap();
    run(Command::new(&pqkit).args(["encrypt", "-r", cli_recipient.trim(), "-o"]).arg(&ct_file).arg(&msg_file));
    assert_eq!(decrypt(&[&me], &std::fs::read(&ct_file).unwrap()).unwrap(), msg);

    // The C API encrypts to that recipient and one more (a comment and a blank line in the list), with each
    // segment algorithm; the CLI decrypts.
    let mut other = core::ptr::null_mut();
    // SAFETY: an out-pointer.
    assert_eq!(unsafe { pqkit_identity_generate(&mut other) }, PqkitStatus::Ok);
    let other = Id(other);
    let list =
        format!("# the team\n{}\n\n{}\n", cli_recipient.trim(), String::from_utf8(recipient_of(&other)).unwrap());
    for alg in [PqkitStreamAlg::XChacha20Poly1305, PqkitStreamAlg::Kusumi512Poly1305, PqkitStreamAlg::Aes256Gcm] {
        let file = encrypt(alg, list.as_bytes(), &msg);
        std::fs::write(&ct_file, &file).unwrap();
        let _ = std::fs::remove_file(&back_file);
        run(Command::new(&pqkit).args(["decrypt", "-i"]).arg(&id_file).arg("-o").arg(&back_file).arg(&ct_file));
        assert_eq!(std::fs::read(&back_file).unwrap(), msg, "{alg:?}");
        assert_eq!(decrypt(&[&other], &file).unwrap(), msg);
    }

    // Streaming both ways: written in 1000-byte pieces here, read by the CLI; the CLI's file read here from a
    // 20-byte prefix (too short: the section is 11 + 2 * 1178 bytes) in 7000-byte pieces.
    let file = encrypt_streaming(list.as_bytes(), &msg, 1000);
    std::fs::write(&ct_file, &file).unwrap();
    let _ = std::fs::remove_file(&back_file);
    run(Command::new(&pqkit).args(["decrypt", "-i"]).arg(&id_file).arg("-o").arg(&back_file).arg(&ct_file));
    assert_eq!(std::fs::read(&back_file).unwrap(), msg);
    assert_eq!(decrypt_streaming(&other, &file, 20, 7000).unwrap(), msg);
    let cli_file = d.join("cli.pqk");
    run(Command::new(&pqkit).args(["encrypt", "-r", cli_recipient.trim(), "-o"]).arg(&cli_file).arg(&msg_file));
    let cli_bytes = std::fs::read(&cli_file).unwrap();
    assert_eq!(decrypt_streaming(&me, &cli_bytes, 20, 7000).unwrap(), msg);
    assert_eq!(decrypt_streaming(&other, &cli_bytes, 4096, 7000), Err(PqkitStatus::AuthenticationFailed));
    let mut bad = cli_bytes.clone();
    bad[5000] ^= 1;
    assert!(decrypt_streaming(&me, &bad, 4096, 7000).is_err());

    // An identity made here, written as text, decrypts with the CLI.
    // SAFETY: a live handle; the closure's buffers come from read_out.
    let text = read_out(|o, c, l| unsafe { pqkit_identity_to_text(other.0, o, c, l) });
    let other_file = d.join("other.id");
    std::fs::write(&other_file, &text).unwrap();
    let _ = std::fs::remove_file(&back_file);
    run(Command::new(&pqkit).args(["decrypt", "-i"]).arg(&other_file).arg("-o").arg(&back_file).arg(&ct_file));
    assert_eq!(std::fs::read(&back_file).unwrap(), msg);

    // Refusals: an identity that is not a recipient, a modified file.
    let mut third = core::ptr::null_mut();
    // SAFETY: an out-pointer.
    assert_eq!(unsafe { pqkit_identity_generate(&mut third) }, PqkitStatus::Ok);
    let third = Id(third);
    let file = std::fs::read(&ct_file).unwrap();
    assert_eq!(decrypt(&[&third], &file), Err(PqkitStatus::AuthenticationFailed));
    let mut bad = file.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(decrypt(&[&me], &bad), Err(PqkitStatus::AuthenticationFailed));
    assert!(decrypt(&[&me], &file[..file.len() - 1]).is_err());
    let _ = std::fs::remove_dir_all(&d);
}
