"""Inputs of every buffer type, hash names, a Hash shared between threads, HKDF's zero length, the GIL."""

import array
import hashlib
import random
import threading
import time

import pytest

import pqkit
from cryptography.hazmat.primitives.ciphers import aead as c_aead

RNG = random.Random(37)


def rand(n: int) -> bytes:
    return RNG.randbytes(n)


def views(b: bytes):
    """The same bytes as every common buffer type (a non-contiguous memoryview included)."""
    doubled = bytearray(len(b) * 2)
    doubled[::2] = b
    return [
        ("bytes", b),
        ("bytearray", bytearray(b)),
        ("memoryview", memoryview(b)),
        ("memoryview-slice", memoryview(b"xx" + b + b"yy")[2 : 2 + len(b)]),
        ("memoryview-strided", memoryview(doubled)[::2]),
        ("array", array.array("B", b)),
    ]


@pytest.mark.parametrize("kind", [k for k, _ in views(b"")])
def test_every_input_takes_any_buffer(kind):
    def conv(b: bytes):
        return dict(views(b))[kind]

    key, nonce, pt, aad = rand(32), rand(12), rand(5000), rand(20)
    want = c_aead.ChaCha20Poly1305(key).encrypt(nonce, pt, aad)
    a = pqkit.ChaCha20Poly1305(conv(key))
    assert a.encrypt(conv(nonce), conv(pt), conv(aad)) == want
    assert a.decrypt(conv(nonce), conv(want), conv(aad)) == pt
    g = pqkit.Aes256Gcm(conv(key))
    assert g.decrypt(conv(nonce), g.encrypt(conv(nonce), conv(pt)), None) == pt
    assert pqkit.digest("sha256", conv(pt)) == hashlib.sha256(pt).digest()
    h = pqkit.Hash("sha3_256", conv(pt[:10]))
    h.update(conv(pt[10:]))
    assert h.digest() == hashlib.sha3_256(pt).digest()
    assert pqkit.shake256(conv(pt), 50) == hashlib.shake_256(pt).digest(50)
    tag = pqkit.hmac("sha256", conv(key), conv(pt))
    assert tag == pqkit.hmac("sha256", key, pt)
    pqkit.hmac_verify("sha256", conv(key), conv(pt), conv(tag))
    okm = pqkit.hkdf("sha256", conv(key), 40, salt=conv(aad), info=conv(nonce))
    assert okm == pqkit.hkdf("sha256", key, 40, salt=aad, info=nonce)
    prk = pqkit.hkdf_extract("sha256", conv(aad), conv(key))
    assert pqkit.hkdf_expand("sha256", conv(prk), conv(nonce), 40) == okm
    ek, dk = pqkit.mlkem_keygen_from_seed("ML-KEM-768", conv(rand(64)))
    ct, ss = pqkit.mlkem_encapsulate("ML-KEM-768", conv(ek))
    assert pqkit.mlkem_decapsulate("ML-KEM-768", conv(dk), conv(ct)) == ss
    pk, sk = pqkit.mldsa_keygen_from_seed("ML-DSA-44", conv(rand(32)))
    sig = pqkit.mldsa_sign("ML-DSA-44", conv(sk), conv(pt), context=conv(aad))
    pqkit.mldsa_verify("ML-DSA-44", conv(pk), conv(pt), conv(sig), context=conv(aad))


def test_non_buffers_are_refused():
    a = pqkit.ChaCha20Poly1305(bytes(32))
    for bad in ("text", 12, [1, 2, 3], None):
        with pytest.raises(TypeError, match="data"):
            a.encrypt(bytes(12), bad)
    with pytest.raises(TypeError):
        pqkit.digest("sha256", "text")


HASH_NAMES = ["sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256",
              "sha3_224", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"]


@pytest.mark.parametrize("name", HASH_NAMES)
def test_hash_accepts_the_name_it_returns(name):
    data = rand(300)
    std = pqkit.Hash(name).name
    assert std != name  # the standard spelling ("SHA-256"), not hashlib's
    h = pqkit.Hash(std, data)
    assert h.name == std
    assert h.digest() == pqkit.digest(name, data) == pqkit.digest(std, data)
    assert pqkit.hmac(std, b"k", data) == pqkit.hmac(name, b"k", data)
    if name in hashlib.algorithms_available:
        assert h.digest() == hashlib.new(name, data).digest()


def test_unknown_hash_names_stay_unknown():
    for bad in ("md5", "sha1", "sha-3", "sha2", ""):
        with pytest.raises(pqkit.UnknownAlgorithm):
            pqkit.Hash(bad)


@pytest.mark.parametrize("sizes", [[1, 7, 100], [5000, 70000], [3, 9000, 64, 4096]], ids=["small", "large", "mixed"])
def test_one_hash_shared_between_threads(sizes):
    """Concurrent updates are serialised, as hashlib does: no 'Already borrowed', and no update lost.

    All the data is zero bytes, so the digest does not depend on the order the threads win the lock in.
    """
    h = pqkit.Hash("sha256")
    errors = []
    per_thread = 150
    n_threads = 6

    def worker(i):
        try:
            for j in range(per_thread):
                h.update(bytes(sizes[(i + j) % len(sizes)]))
                if j % 50 == 0:
                    h.digest()
                    h.copy()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    total = sum(sizes[(i + j) % len(sizes)] for i in range(n_threads) for j in range(per_thread))
    assert h.digest() == hashlib.sha256(bytes(total)).digest()


def test_hkdf_zero_length_is_a_value_error():
    with pytest.raises(ValueError, match="length must be at least 1, got 0"):
        pqkit.hkdf("sha256", b"ikm", 0)
    with pytest.raises(ValueError, match="length"):
        pqkit.hkdf_expand("sha256", bytes(32), b"", 0)
    assert len(pqkit.hkdf("sha256", b"ikm", 1)) == 1


def _main_thread_keeps_running(call):
    t0 = time.perf_counter()
    call()
    one_call = time.perf_counter() - t0
    max_gap = 0.0
    for _attempt in range(3):
        done = threading.Event()

        def worker():
            for _ in range(3):
                call()
            done.set()

        th = threading.Thread(target=worker)
        last = time.perf_counter()
        max_gap = 0.0
        th.start()
        while not done.is_set():
            now = time.perf_counter()
            max_gap = max(max_gap, now - last)
            last = now
        th.join()
        if max_gap < one_call / 2:
            return
    pytest.fail(f"main thread stalled {max_gap * 1e3:.1f} ms during a {one_call * 1e3:.1f} ms call: GIL held?")


def test_gil_released_for_large_aead_and_shake():
    data = bytes(96 << 20)
    a = pqkit.ChaCha20Poly1305(bytes(32))
    _main_thread_keeps_running(lambda: a.encrypt(bytes(12), data))
    g = pqkit.Aes256Gcm(bytes(32))
    sealed = g.encrypt(bytes(12), data)
    _main_thread_keeps_running(lambda: g.decrypt(bytes(12), sealed))
    _main_thread_keeps_running(lambda: pqkit.shake128(b"x", 32 << 20))
    h = pqkit.Hash("sha512")
    _main_thread_keeps_running(lambda: h.update(data))
