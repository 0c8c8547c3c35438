//! HPKE and X-Wing through the C entry points against published vectors: RFC 9180's DHKEM(X25519) vectors
//! (all four modes, every AEAD, export-only) and draft-ietf-hpke-pq's ML-KEM and X-Wing vectors (the files the
//! library's own tests use), and draft-connolly-cfrg-xwing-kem's X-Wing vectors. The recipient side is
//! checked against the vectors; the sender side, which takes fresh randomness, by a round trip.

use pqkit_ffi::*;
use serde_json::Value;

fn h(v: &Value, k: &str) -> Vec<u8> {
    v.get(k).map(|x| hex::decode(x.as_str().unwrap()).unwrap()).unwrap_or_default()
}

fn lengths(kem: u32) -> (usize, usize, usize) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    assert_eq!(unsafe { pqkit_hpke_kem_lengths(kem, &mut a, &mut b, &mut c) }, PqkitStatus::Ok);
    (a, b, c)
}

fn mode_of(v: &Value, psk: &[u8], psk_id: &[u8], auth: &[u8]) -> PqkitHpkeMode {
    let p = |b: &[u8]| if b.is_empty() { core::ptr::null() } else { b.as_ptr() };
    PqkitHpkeMode {
        mode: v["mode"].as_u64().unwrap() as u32,
        psk: p(psk),
        psk_len: psk.len(),
        psk_id: p(psk_id),
        psk_id_len: psk_id.len(),
        auth_key: p(auth),
        auth_key_len: auth.len(),
    }
}

fn check_vector(v: &Value) {
    let (kem, kdf, aead) = (
        v["kem_id"].as_u64().unwrap() as u32,
        v["kdf_id"].as_u64().unwrap() as u32,
        v["aead_id"].as_u64().unwrap() as u32,
    );
    let what = format!("mode {} suite {kem:#x}/{kdf}/{aead}", v["mode"]);
    let (skl, pkl, encl) = lengths(kem);
    let ikm = h(v, "ikmR");
    let (mut sk, mut pk) = (vec![0u8; skl], vec![0u8; pkl]);
    // SAFETY: live slices of their lengths.
    let st =
        unsafe { pqkit_hpke_derive_key_pair(kem, ikm.as_ptr(), ikm.len(), sk.as_mut_ptr(), skl, pk.as_mut_ptr(), pkl) };
    assert_eq!(st, PqkitStatus::Ok, "{what}");
    assert_eq!(sk, h(v, "skRm"), "{what}: skRm");
    assert_eq!(pk, h(v, "pkRm"), "{what}: pkRm");
    let enc = h(v, "enc");
    assert_eq!(enc.len(), encl, "{what}");
    let info = h(v, "info");
    let (psk, psk_id, pk_s) = (h(v, "psk"), h(v, "psk_id"), h(v, "pkSm"));
    let mode = mode_of(v, &psk, &psk_id, &pk_s);
    let mut ctx = core::ptr::null_mut();
    // SAFETY: live slices, a valid mode whose buffers outlive the call, an out-pointer.
    let st = unsafe {
        pqkit_hpke_recipient_new(
            kem,
            kdf,
            aead,
            enc.as_ptr(),
            enc.len(),
            sk.as_ptr(),
            skl,
            info.as_ptr(),
            info.len(),
            &mode,
            &mut ctx,
        )
    };
    assert_eq!(st, PqkitStatus::Ok, "{what}");
    let mut opened = 0;
    for (i, e) in v["encryptions"].as_array().unwrap().iter().enumerate() {
        if e.get("seq").is_some_and(|s| s.as_u64() != Some(i as u64)) {
            break; // the C API opens in order; the vectors' last entries jump ahead
        }
        let (aad, ct, pt) = (h(e, "aad"), h(e, "ct"), h(e, "pt"));
        let mut out = vec![0u8; ct.len()];
        let mut n = 0;
        // SAFETY: a live context and slices.
        let st = unsafe {
            pqkit_hpke_open(ctx, aad.as_ptr(), aad.len(), ct.as_ptr(), ct.len(), out.as_mut_ptr(), out.len(), &mut n)
        };
        assert_eq!(st, PqkitStatus::Ok, "{what}: encryption {i}");
        assert_eq!(&out[..n], &pt[..], "{what}: encryption {i}");
        opened += 1;
    }
    assert!(opened >= 10 || aead == 0xffff, "{what}: {opened} opened");
    for x in v["exports"].as_array().unwrap() {
        let ec = h(x, "exporter_context");
        let want = h(x, "exported_value");
        let mut got = vec![0u8; x["L"].as_u64().unwrap() as usize];
        // SAFETY: a live context and slices.
        let st = unsafe { pqkit_hpke_export(ctx, ec.as_ptr(), ec.len(), got.as_mut_ptr(), got.len()) };
        assert_eq!(st, PqkitStatus::Ok, "{what}");
        assert_eq!(got, want, "{what}: export");
    }
    // SAFETY: a live context, freed once.
    unsafe { pqkit_hpke_context_free(ctx) };

    // The sender side: a fresh context to the same key, opened by a recipient context; both export alike.
    let sk_s = h(v, "skSm");
    let smode = mode_of(v, &psk, &psk_id, &sk_s);
    let mut enc2 = vec![0u8; encl];
    let (mut n, mut tx, mut rx) = (0usize, core::ptr::null_mut(), core::ptr::null_mut());
    // SAFETY: live slices, a valid mode, out-pointers.
    unsafe {
        let st = pqkit_hpke_sender_new(
            kem,
            kdf,
            aead,
            pk.as_ptr(),
            pkl,
            info.as_ptr(),
            info.len(),
            &smode,
            enc2.as_mut_ptr(),
            encl,
            &mut n,
            &mut tx,
        );
        assert_eq!(st, PqkitStatus::Ok, "{what}: sender");
        assert_eq!(n, encl);
        let st = pqkit_hpke_recipient_new(
            kem,
            kdf,
            aead,
            enc2.as_ptr(),
            encl,
            sk.as_ptr(),
            skl,
            info.as_ptr(),
            info.len(),
            &mode,
            &mut rx,
        );
        assert_eq!(st, PqkitStatus::Ok, "{what}: recipient");
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        assert_eq!(pqkit_hpke_export(tx, b"ctx".as_ptr(), 3, a.as_mut_ptr(), 32), PqkitStatus::Ok);
        assert_eq!(pqkit_hpke_export(rx, b"ctx".as_ptr(), 3, b.as_mut_ptr(), 32), PqkitStatus::Ok);
        assert_eq!(a, b, "{what}: exports agree");
        if aead != 0xffff {
            let mut ct = [0u8; 21];
            let mut pt = [0u8; 5];
            assert_eq!(
                pqkit_hpke_seal(tx, b"ad".as_ptr(), 2, b"hello".as_ptr(), 5, ct.as_mut_ptr(), 21, &mut n),
                PqkitStatus::Ok
            );
            assert_eq!(
                pqkit_hpke_open(rx, b"ad".as_ptr(), 2, ct.as_ptr(), 21, pt.as_mut_ptr(), 5, &mut n),
                PqkitStatus::Ok
            );
            assert_eq!(&pt, b"hello");
        }
        pqkit_hpke_context_free(tx);
        pqkit_hpke_context_free(rx);
    }
}

#[test]
fn hpke_rfc9180_x25519_vectors() {
    let data: Value = serde_json::from_str(include_str!("../../pqkit/tests/data/hpke-rfc9180-x25519.json")).unwrap();
    let vs = data.as_array().unwrap();
    assert_eq!(vs.len(), 32);
    vs.iter().for_each(check_vector);
}

#[test]
fn hpke_pq_vectors() {
    let data: Value = serde_json::from_str(include_str!("../../pqkit/tests/data/hpke-pq.json")).unwrap();
    let vs = data.as_array().unwrap();
    assert_eq!(vs.len(), 10);
    vs.iter().for_each(check_vector);
}

#[test]
fn xwing_draft_vectors() {
    let data: Value = serde_json::from_str(include_str!("../../pqkit/tests/data/xwing.json")).unwrap();
    let vs = data.as_array().unwrap();
    assert_eq!(vs.len(), 3);
    let k = PqkitHybridKem::Xwing as u32;
    for v in vs {
        let (seed, pk, ct, ss) = (h(v, "seed"), h(v, "pk"), h(v, "ct"), h(v, "ss"));
        let mut ek = vec![0u8; 1216];
        let mut got = [0u8; 32];
        // SAFETY: live slices of their lengths.
        unsafe {
            assert_eq!(
                pqkit_hybrid_kem_public_key(k, seed.as_ptr(), seed.len(), ek.as_mut_ptr(), ek.len()),
                PqkitStatus::Ok
            );
            assert_eq!(ek, pk);
            let st =
                pqkit_hybrid_kem_decapsulate(k, seed.as_ptr(), seed.len(), ct.as_ptr(), ct.len(), got.as_mut_ptr(), 32);
            assert_eq!(st, PqkitStatus::Ok);
        }
        assert_eq!(got[..], ss[..]);
    }
}
