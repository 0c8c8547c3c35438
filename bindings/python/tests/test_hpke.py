"""HPKE against pyca/cryptography's HPKE (OpenSSL); X-Wing and X25519MLKEM768 against pyca's ML-KEM and X25519."""

import hashlib
import os

import pytest

import pqkit
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519
from cryptography.hazmat.primitives import hpke as c_hpke

XWING_LABEL = b"\\.//^\\"


def xwing_parts(seed: bytes):
    """X-Wing's private key expansion (draft-connolly-cfrg-xwing-kem), done with hashlib and pyca."""
    expanded = hashlib.shake_256(seed).digest(96)
    return mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64]), x25519.X25519PrivateKey.from_private_bytes(expanded[64:])


def pyca_private(kem: str, sk: bytes):
    if kem == "X25519":
        return x25519.X25519PrivateKey.from_private_bytes(sk)
    if kem == "ML-KEM-768":
        return mlkem.MLKEM768PrivateKey.from_seed_bytes(sk)
    if kem == "ML-KEM-1024":
        return mlkem.MLKEM1024PrivateKey.from_seed_bytes(sk)
    return c_hpke.MLKEM768X25519PrivateKey(*xwing_parts(sk))


KEMS = [("X25519", c_hpke.KEM.X25519), ("ML-KEM-768", c_hpke.KEM.MLKEM768), ("ML-KEM-1024", c_hpke.KEM.MLKEM1024),
        ("X-Wing", c_hpke.KEM.MLKEM768_X25519)]
KDFS = [("HKDF-SHA256", c_hpke.KDF.HKDF_SHA256), ("HKDF-SHA512", c_hpke.KDF.HKDF_SHA512),
        ("SHAKE256", c_hpke.KDF.SHAKE256)]
AEADS = [("AES-128-GCM", c_hpke.AEAD.AES_128_GCM), ("ChaCha20Poly1305", c_hpke.AEAD.CHACHA20_POLY1305)]


@pytest.mark.parametrize("kem,c_kem", KEMS, ids=[k for k, _ in KEMS])
@pytest.mark.parametrize("kdf,c_kdf", KDFS, ids=[k for k, _ in KDFS])
@pytest.mark.parametrize("aead,c_aead", AEADS, ids=[a for a, _ in AEADS])
def test_hpke_against_pyca(kem, c_kem, kdf, c_kdf, aead, c_aead):
    ours = pqkit.HpkeSuite(kem, kdf, aead)
    theirs = c_hpke.Suite(c_kem, c_kdf, c_aead)
    sk, pk = ours.generate_key_pair()
    c_sk = pyca_private(kem, sk)
    pt, info = os.urandom(300), b"app info"
    assert theirs.decrypt(ours.encrypt(pt, pk, info), c_sk, info) == pt
    assert ours.decrypt(theirs.encrypt(pt, c_sk.public_key(), info), sk, info) == pt
    with pytest.raises(pqkit.PqkitError):
        ours.decrypt(theirs.encrypt(pt, c_sk.public_key(), info), sk, b"other info")


def test_hpke_modes_and_export():
    for kem in ("X25519", "X-Wing", "ML-KEM-512"):
        s = pqkit.HpkeSuite(kem, "HKDF-SHA256", "AES-256-GCM")
        sk, pk = s.generate_key_pair()
        assert s.public_key(sk) == pk
        enc, ct = s.seal(pk, b"msg", b"info", b"aad")
        assert s.open(enc, sk, ct, b"info", b"aad") == b"msg"
        with pytest.raises(pqkit.AuthenticationFailed):
            s.open(enc, sk, ct, b"info", b"aaD")
        psk, psk_id = os.urandom(32), b"id"
        enc, ct = s.seal(pk, b"msg", psk=psk, psk_id=psk_id)
        assert s.open(enc, sk, ct, psk=psk, psk_id=psk_id) == b"msg"
        with pytest.raises(pqkit.AuthenticationFailed):
            s.open(enc, sk, ct, psk=os.urandom(32), psk_id=psk_id)
        with pytest.raises(ValueError):
            s.seal(pk, b"msg", psk=psk)
        enc, secret = s.send_export(pk, b"ctx", 48)
        assert len(secret) == 48 and s.receive_export(enc, sk, b"ctx", 48) == secret
        assert s.receive_export(enc, sk, b"ctx2", 48) != secret
    s = pqkit.HpkeSuite(0x0020, 0x0001, 0x0003)  # code points
    sk_s, pk_s = s.generate_key_pair()
    sk, pk = s.derive_key_pair(b"\x01" * 32)
    assert s.derive_key_pair(b"\x01" * 32) == (sk, pk)
    enc, ct = s.seal(pk, b"authenticated", sender_private_key=sk_s)
    assert s.open(enc, sk, ct, sender_public_key=pk_s) == b"authenticated"
    with pytest.raises(pqkit.AuthenticationFailed):
        s.open(enc, sk, ct, sender_public_key=s.generate_key_pair()[1])
    with pytest.raises(pqkit.UnknownAlgorithm):
        pqkit.HpkeSuite("P-1", "HKDF-SHA256", "AES-128-GCM")


def test_rfc9180_derive_key_pair_vectors():
    """RFC 9180 appendix A (the library's copy of the vectors): DeriveKeyPair(ikmR) gives skRm and pkRm."""
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "crates/pqkit/tests/data/hpke-rfc9180-x25519.json"
    vectors = json.loads(path.read_text())
    assert len(vectors) >= 4
    for v in vectors:
        s = pqkit.HpkeSuite(v["kem_id"], v["kdf_id"], v["aead_id"])
        sk, pk = s.derive_key_pair(bytes.fromhex(v["ikmR"]))
        assert (sk.hex(), pk.hex()) == (v["skRm"], v["pkRm"])


def test_xwing_against_pyca_components():
    pk, seed = pqkit.xwing_keygen()
    assert pqkit.xwing_public_key(seed) == pk
    c_m, c_x = xwing_parts(seed)
    assert pk == c_m.public_key().public_bytes_raw() + c_x.public_key().public_bytes_raw()
    ct, ss = pqkit.xwing_encapsulate(pk)
    ss_m = c_m.decapsulate(ct[:1088])
    ss_x = c_x.exchange(x25519.X25519PublicKey.from_public_bytes(ct[1088:]))
    want = hashlib.sha3_256(ss_m + ss_x + ct[1088:] + pk[1184:] + XWING_LABEL).digest()
    assert ss == want
    assert pqkit.xwing_decapsulate(seed, ct) == ss
    bad = bytearray(ct)
    bad[5] ^= 1
    assert pqkit.xwing_decapsulate(seed, bytes(bad)) != ss
    with pytest.raises(pqkit.InvalidLength):
        pqkit.xwing_decapsulate(seed, ct[:-1])


def test_x25519mlkem768_against_pyca_components():
    seed = os.urandom(96)
    c_m = mlkem.MLKEM768PrivateKey.from_seed_bytes(seed[:64])
    c_x = x25519.X25519PrivateKey.from_private_bytes(seed[64:])
    pk = pqkit.x25519mlkem768_public_key(seed)
    assert pk == c_m.public_key().public_bytes_raw() + c_x.public_key().public_bytes_raw()
    ct, ss = pqkit.x25519mlkem768_encapsulate(pk)
    assert ss == c_m.decapsulate(ct[:1088]) + c_x.exchange(x25519.X25519PublicKey.from_public_bytes(ct[1088:]))
    assert pqkit.x25519mlkem768_decapsulate(seed, ct) == ss
    # pyca's side of the exchange, opened by pqkit.
    ss_m, ct_m = c_m.public_key().encapsulate()
    eph = x25519.X25519PrivateKey.generate()
    theirs = ct_m + eph.public_key().public_bytes_raw()
    assert pqkit.x25519mlkem768_decapsulate(seed, theirs) == ss_m + eph.exchange(c_x.public_key())
