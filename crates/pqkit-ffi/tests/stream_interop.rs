//! The C streaming API writes and reads exactly the pqkit file format: a stream sealed through the C ABI opens
//! with the library's `Decryptor` (what `pqkit decrypt` uses), and a file written by the library's `Encryptor`
//! opens through the C ABI, for every algorithm and lengths around the segment size.

use pqkit::aead::stream::{Algorithm, Decryptor, Encryptor, SEGMENT_LEN};
use pqkit_ffi::*;
use std::io::{Read, Write};

const KEY: [u8; 32] = [0x5a; 32];

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 131 + 7) as u8).collect()
}

fn ffi_encrypt(alg: PqkitStreamAlg, pt: &[u8], piece: usize) -> Vec<u8> {
    let mut enc: *mut PqkitStreamEncryptor = core::ptr::null_mut();
    // SAFETY: KEY is 32 readable bytes and enc a valid out-pointer.
    assert_eq!(unsafe { pqkit_stream_encryptor_new(alg as u32, KEY.as_ptr(), 32, &mut enc) }, PqkitStatus::Ok);
    let mut out = Vec::new();
    let mut buf = vec![0u8; piece + 2 * PQKIT_STREAM_SEGMENT_CT_LEN + PQKIT_STREAM_MAX_HEADER_LEN];
    let mut n = 0usize;
    for chunk in pt.chunks(piece) {
        // SAFETY: enc is live; chunk and buf are valid for their lengths and do not overlap.
        let st = unsafe {
            pqkit_stream_encryptor_update(enc, chunk.as_ptr(), chunk.len(), buf.as_mut_ptr(), buf.len(), &mut n)
        };
        assert_eq!(st, PqkitStatus::Ok);
        out.extend_from_slice(&buf[..n]);
    }
    // SAFETY: as above.
    assert_eq!(unsafe { pqkit_stream_encryptor_finish(enc, buf.as_mut_ptr(), buf.len(), &mut n) }, PqkitStatus::Ok);
    out.extend_from_slice(&buf[..n]);
    // SAFETY: enc is live and freed once.
    unsafe { pqkit_stream_encryptor_free(enc) };
    out
}

fn ffi_decrypt(ct: &[u8], piece: usize) -> Result<Vec<u8>, PqkitStatus> {
    let mut dec: *mut PqkitStreamDecryptor = core::ptr::null_mut();
    // SAFETY: KEY is 32 readable bytes and dec a valid out-pointer.
    assert_eq!(unsafe { pqkit_stream_decryptor_new(KEY.as_ptr(), 32, &mut dec) }, PqkitStatus::Ok);
    let mut out = Vec::new();
    let mut buf = vec![0u8; piece + SEGMENT_LEN];
    let mut n = 0usize;
    let mut result = Ok(());
    for chunk in ct.chunks(piece) {
        // SAFETY: dec is live; chunk and buf are valid for their lengths and do not overlap.
        let st = unsafe {
            pqkit_stream_decryptor_update(dec, chunk.as_ptr(), chunk.len(), buf.as_mut_ptr(), buf.len(), &mut n)
        };
        if st != PqkitStatus::Ok {
            result = Err(st);
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    if result.is_ok() {
        // SAFETY: as above.
        let st = unsafe { pqkit_stream_decryptor_finish(dec, buf.as_mut_ptr(), buf.len(), &mut n) };
        if st == PqkitStatus::Ok {
            out.extend_from_slice(&buf[..n]);
        } else {
            result = Err(st);
        }
    }
    // SAFETY: dec is live and freed once.
    unsafe { pqkit_stream_decryptor_free(dec) };
    result.map(|()| out)
}

const ALGS: [(PqkitStreamAlg, Algorithm); 3] = [
    (PqkitStreamAlg::XChacha20Poly1305, Algorithm::XChaCha20Poly1305),
    (PqkitStreamAlg::Kusumi512Poly1305, Algorithm::Kusumi512Poly1305),
    (PqkitStreamAlg::Aes256Gcm, Algorithm::Aes256Gcm),
];
const LENS: [usize; 7] = [0, 1, SEGMENT_LEN - 1, SEGMENT_LEN, SEGMENT_LEN + 1, 2 * SEGMENT_LEN, 2 * SEGMENT_LEN + 999];

#[test]
fn ffi_streams_open_with_the_library_decryptor() {
    for (ffi_alg, alg) in ALGS {
        for len in LENS {
            let pt = data(len);
            let ct = ffi_encrypt(ffi_alg, &pt, 10_000);
            let mut dec = Decryptor::with_key(&KEY, &ct[..]).unwrap();
            assert_eq!(dec.header().algorithm(), alg);
            let mut back = Vec::new();
            dec.read_to_end(&mut back).unwrap();
            assert_eq!(back, pt, "{alg:?} {len}");
        }
    }
}

#[test]
fn library_files_open_through_the_ffi_decryptor() {
    for (_, alg) in ALGS {
        for len in LENS {
            let pt = data(len);
            let mut enc = Encryptor::with_key(alg, &KEY, Vec::new()).unwrap();
            enc.write_all(&pt).unwrap();
            let ct = enc.finish().unwrap();
            for piece in [1, 4096, 1 << 20] {
                if piece == 1 && len > SEGMENT_LEN {
                    continue; // byte by byte is slow; the small lengths cover it
                }
                assert_eq!(ffi_decrypt(&ct, piece).unwrap(), pt, "{alg:?} {len} {piece}");
            }
            // Dropping the last segment is truncation, caught at finish.
            if len > SEGMENT_LEN {
                let cut = alg.header_len() + (len.div_ceil(SEGMENT_LEN) - 1) * PQKIT_STREAM_SEGMENT_CT_LEN;
                assert_eq!(ffi_decrypt(&ct[..cut], 4096), Err(PqkitStatus::InvalidEncoding));
            }
        }
    }
}
