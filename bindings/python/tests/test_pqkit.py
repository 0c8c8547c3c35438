"""pqkit's Python package: known answers, interop with pyca/cryptography (OpenSSL), round trips, errors."""

import hashlib
import random
import threading
import time

import pytest

import pqkit

try:
    from cryptography.hazmat.primitives import hashes as c_hashes
    from cryptography.hazmat.primitives import hmac as c_hmac
    from cryptography.hazmat.primitives.asymmetric import mldsa as c_mldsa
    from cryptography.hazmat.primitives.asymmetric import mlkem as c_mlkem
    from cryptography.hazmat.primitives.ciphers import aead as c_aead
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF as C_HKDF
    from cryptography.exceptions import InvalidSignature, InvalidTag
except ImportError as e:  # not a skip: CI must have it
    raise ImportError("these tests need pyca cryptography: pip install cryptography") from e

RNG = random.Random(20260521)


def rand(n: int) -> bytes:
    return RNG.randbytes(n)


SIZES = [0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 1000, 1024, 4095, 4096, 4097, 65536 + 3, 1 << 20]

# ---------------------------------------------------------------------------------------------- known answers


def test_chacha20poly1305_rfc8439():
    key = bytes(range(0x80, 0xA0))
    nonce = bytes.fromhex("070000004041424344454647")
    aad = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
    pt = (
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
        b"sunscreen would be it."
    )
    want = bytes.fromhex(
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
        "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
        "3ff4def08e4b7a9de576d26586cec64b6116"
        "1ae10b594f09e26a7e902ecbd0600691"
    )
    a = pqkit.ChaCha20Poly1305(key)
    assert a.encrypt(nonce, pt, aad) == want
    assert a.decrypt(nonce, want, aad) == pt


def test_aes_gcm_known_answers():
    a = pqkit.Aes128Gcm(bytes(16))
    assert a.encrypt(bytes(12), b"") == bytes.fromhex("58e2fccefa7e3061367f1d57a4e7455a")
    assert a.encrypt(bytes(12), bytes(16)) == bytes.fromhex(
        "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf"
    )


def test_hash_known_answers():
    assert pqkit.digest("sha256", b"abc").hex() == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert pqkit.digest("sha3_256", b"abc").hex() == (
        "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
    )
    assert pqkit.shake128(b"", 32).hex() == "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"
    h = pqkit.Hash("sha256")
    for chunk in (b"abcdbcdecdefdefgefgh", b"fghighijhijkijkljklmklmnlmnomnopnopq"):
        h.update(chunk)
    assert h.hexdigest() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    assert h.digest_size == 32 and h.block_size == 64 and h.name == "SHA-256"


def test_hmac_rfc4231_and_hkdf_rfc5869():
    assert pqkit.hmac("sha256", b"Jefe", b"what do ya want for nothing?").hex() == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    ikm = bytes([0x0B] * 22)
    salt = bytes(range(13))
    info = bytes(range(0xF0, 0xFA))
    prk = pqkit.hkdf_extract("sha256", salt, ikm)
    assert prk.hex() == "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"
    okm = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
    assert pqkit.hkdf_expand("sha256", prk, info, 42).hex() == okm
    assert pqkit.hkdf("sha256", ikm, 42, salt=salt, info=info).hex() == okm


# ---------------------------------------------------------------------------------------------- interop


AEAD_PAIRS = [
    (pqkit.ChaCha20Poly1305, c_aead.ChaCha20Poly1305, 32, 12),
    (pqkit.Aes128Gcm, c_aead.AESGCM, 16, 12),
    (pqkit.Aes256Gcm, c_aead.AESGCM, 32, 12),
]


@pytest.mark.parametrize("ours,theirs,klen,nlen", AEAD_PAIRS, ids=["chacha20poly1305", "aes128gcm", "aes256gcm"])
@pytest.mark.parametrize("size", SIZES)
def test_aead_interop_with_cryptography(ours, theirs, klen, nlen, size):
    key, nonce, pt, aad = rand(klen), rand(nlen), rand(size), rand(size % 50)
    a, b = ours(key), theirs(key)
    sealed = a.encrypt(nonce, pt, aad)
    assert sealed == b.encrypt(nonce, pt, aad)
    assert b.decrypt(nonce, sealed, aad) == pt
    assert a.decrypt(nonce, b.encrypt(nonce, pt, aad or None), aad) == pt


HASH_PAIRS = [
    ("sha224", c_hashes.SHA224()),
    ("sha256", c_hashes.SHA256()),
    ("sha384", c_hashes.SHA384()),
    ("sha512", c_hashes.SHA512()),
    ("sha512_224", c_hashes.SHA512_224()),
    ("sha512_256", c_hashes.SHA512_256()),
    ("sha3_224", c_hashes.SHA3_224()),
    ("sha3_256", c_hashes.SHA3_256()),
    ("sha3_384", c_hashes.SHA3_384()),
    ("sha3_512", c_hashes.SHA3_512()),
    ("blake2b", c_hashes.BLAKE2b(64)),
    ("blake2s", c_hashes.BLAKE2s(32)),
]


def c_digest(alg, data):
    h = c_hashes.Hash(alg)
    h.update(data)
    return h.finalize()


@pytest.mark.parametrize("name,alg", HASH_PAIRS, ids=[n for n, _ in HASH_PAIRS])
def test_hash_interop_with_cryptography(name, alg):
    for size in SIZES:
        data = rand(size)
        want = c_digest(alg, data)
        assert pqkit.digest(name, data) == want, size
        h = pqkit.Hash(name)
        cut = size // 3
        h.update(data[:cut])
        c = h.copy()
        h.update(data[cut:])
        assert h.digest() == want
        c.update(data[cut:])
        assert c.digest() == want
        if name in hashlib.algorithms_available:
            assert h.hexdigest() == hashlib.new(name, data).hexdigest()


@pytest.mark.parametrize("name,alg", HASH_PAIRS, ids=[n for n, _ in HASH_PAIRS])
def test_hmac_and_hkdf_interop_with_cryptography(name, alg):
    for klen in (0, 1, 31, 32, 64, 65, 128, 129, 200):
        key, msg = rand(klen), rand(RNG.randrange(0, 3000))
        m = c_hmac.HMAC(key, alg)
        m.update(msg)
        tag = m.finalize()
        assert pqkit.hmac(name, key, msg) == tag
        pqkit.hmac_verify(name, key, msg, tag)
    for length in (1, 16, 32, 42, 100, 255 * alg.digest_size):
        ikm, salt, info = rand(40), rand(RNG.randrange(0, 80)), rand(RNG.randrange(0, 30))
        want = C_HKDF(algorithm=alg, length=length, salt=salt or None, info=info).derive(ikm)
        assert pqkit.hkdf(name, ikm, length, salt=salt, info=info) == want


def test_shake_matches_hashlib():
    for size in (0, 1, 167, 168, 169, 5000):
        data = rand(size)
        for n in (1, 32, 200, 1000):
            assert pqkit.shake128(data, n) == hashlib.shake_128(data).digest(n)
            assert pqkit.shake256(data, n) == hashlib.shake_256(data).digest(n)


def _c_mlkem(params):
    return {"ML-KEM-768": c_mlkem.MLKEM768PrivateKey, "ML-KEM-1024": c_mlkem.MLKEM1024PrivateKey}.get(params)


@pytest.mark.parametrize("params", ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"])
def test_mlkem_round_trip_and_interop(params):
    ek, dk = pqkit.mlkem_keygen(params)
    ct, ss = pqkit.mlkem_encapsulate(params, ek)
    assert len(ss) == 32
    assert pqkit.mlkem_decapsulate(params, dk, ct) == ss
    # Implicit rejection: a modified ciphertext gives another secret, not an exception.
    bad = bytearray(ct)
    bad[3] ^= 1
    assert pqkit.mlkem_decapsulate(params, dk, bytes(bad)) != ss
    with pytest.raises(pqkit.InvalidLength, match="ciphertext"):
        pqkit.mlkem_decapsulate(params, dk, ct[:-1])
    with pytest.raises(pqkit.InvalidLength):
        pqkit.mlkem_encapsulate(params, ek + b"\0")
    cls = _c_mlkem(params)
    if cls is None:  # cryptography has no ML-KEM-512
        return
    seed = rand(64)
    ek, dk = pqkit.mlkem_keygen_from_seed(params, seed)
    theirs = cls.from_seed_bytes(seed)
    assert theirs.public_key().public_bytes_raw() == ek
    ss_c, ct_c = theirs.public_key().encapsulate()
    assert pqkit.mlkem_decapsulate(params, dk, ct_c) == ss_c
    ct, ss = pqkit.mlkem_encapsulate(params, ek)
    assert theirs.decapsulate(ct) == ss


C_MLDSA = {"ML-DSA-44": c_mldsa.MLDSA44PrivateKey, "ML-DSA-65": c_mldsa.MLDSA65PrivateKey,
           "ML-DSA-87": c_mldsa.MLDSA87PrivateKey}


@pytest.mark.parametrize("params", ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"])
def test_mldsa_round_trip_and_interop(params):
    pk, sk = pqkit.mldsa_keygen(params)
    msg = rand(1000)
    sig = pqkit.mldsa_sign(params, sk, msg, context=b"ctx")
    pqkit.mldsa_verify(params, pk, msg, sig, context=b"ctx")
    with pytest.raises(pqkit.AuthenticationFailed, match=params):
        pqkit.mldsa_verify(params, pk, msg, sig)  # other context
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.mldsa_verify(params, pk, msg + b"x", sig, context=b"ctx")
    with pytest.raises(pqkit.InvalidLength):
        pqkit.mldsa_verify(params, pk, msg, sig[:-1], context=b"ctx")
    with pytest.raises(pqkit.InvalidLength, match="context"):
        pqkit.mldsa_sign(params, sk, msg, context=bytes(256))
    d1 = pqkit.mldsa_sign(params, sk, msg, deterministic=True)
    assert d1 == pqkit.mldsa_sign(params, sk, msg, deterministic=True)
    seed = rand(32)
    pk, sk = pqkit.mldsa_keygen_from_seed(params, seed)
    theirs = C_MLDSA[params].from_seed_bytes(seed)
    assert theirs.public_key().public_bytes_raw() == pk
    theirs.public_key().verify(pqkit.mldsa_sign(params, sk, msg, context=b"c"), msg, b"c")
    pqkit.mldsa_verify(params, pk, msg, theirs.sign(msg, b"c"), context=b"c")
    with pytest.raises(InvalidSignature):
        theirs.public_key().verify(pqkit.mldsa_sign(params, sk, msg, context=b"c"), msg, b"d")


# ---------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "cls", [pqkit.ChaCha20Poly1305, pqkit.XChaCha20Poly1305, pqkit.Aes128Gcm, pqkit.Aes256Gcm, pqkit.Kusumi512Poly1305]
)
def test_aead_errors(cls):
    key, nonce = rand(cls.KEY_SIZE), rand(cls.NONCE_SIZE)
    a = cls(key)
    assert "key hidden" in repr(a) and key.hex() not in repr(a)
    sealed = a.encrypt(nonce, b"secret message", b"aad")
    assert len(sealed) == 14 + cls.TAG_SIZE
    assert a.decrypt(nonce, sealed, b"aad") == b"secret message"
    for i in range(len(sealed)):
        bad = bytearray(sealed)
        bad[i] ^= 0x40
        with pytest.raises(pqkit.AuthenticationFailed, match="authentication failed"):
            a.decrypt(nonce, bytes(bad), b"aad")
    with pytest.raises(pqkit.AuthenticationFailed):
        a.decrypt(nonce, sealed, b"aaD")
    with pytest.raises(pqkit.AuthenticationFailed):
        a.decrypt(nonce, sealed)
    with pytest.raises(pqkit.InvalidLength, match=f"must be {cls.KEY_SIZE} bytes, got {cls.KEY_SIZE - 1}"):
        cls(key[:-1])
    with pytest.raises(pqkit.InvalidLength, match="nonce"):
        a.encrypt(nonce + b"\0", b"x")
    with pytest.raises(pqkit.InvalidLength, match="at least 16 bytes"):
        a.decrypt(nonce, sealed[:15])
    with pytest.raises(TypeError):
        a.encrypt(nonce, "not bytes")
    assert issubclass(pqkit.AuthenticationFailed, pqkit.PqkitError)


def test_other_errors():
    with pytest.raises(pqkit.UnknownAlgorithm, match="md5"):
        pqkit.digest("md5", b"")
    with pytest.raises(pqkit.UnknownAlgorithm):
        pqkit.Hash("sha1")
    with pytest.raises(pqkit.UnknownAlgorithm, match="ML-KEM"):
        pqkit.mlkem_keygen("ML-KEM-999")
    with pytest.raises(pqkit.InvalidLength):
        pqkit.hmac_verify("sha256", b"k", b"m", bytes(31))
    tag = pqkit.hmac("sha256", b"k", b"m")
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.hmac_verify("sha256", b"k", b"m", tag[:-1] + bytes([tag[-1] ^ 1]))
    with pytest.raises(pqkit.PqkitError):
        pqkit.hkdf("sha256", b"ikm", 255 * 32 + 1)
    with pytest.raises(pqkit.InvalidLength):
        pqkit.hkdf_expand("sha256", bytes(31), b"", 10)
    with pytest.raises(pqkit.InvalidLength):
        pqkit.mlkem_keygen_from_seed("ML-KEM-768", bytes(63))
    assert len(pqkit.random_bytes(40)) == 40 and pqkit.random_bytes(32) != pqkit.random_bytes(32)


def test_xchacha_and_kusumi_round_trip_large():
    for cls in (pqkit.XChaCha20Poly1305, pqkit.Kusumi512Poly1305):
        a = cls(rand(cls.KEY_SIZE))
        for size in SIZES:
            nonce, pt = rand(cls.NONCE_SIZE), rand(size)
            assert a.decrypt(nonce, a.encrypt(nonce, pt)) == pt


def test_gil_is_released_during_bulk_work():
    """While one thread hashes a large buffer, another must keep running (the GIL is released)."""
    data = bytes(32 << 20)
    t0 = time.perf_counter()
    pqkit.digest("sha3_512", data)
    one_call = time.perf_counter() - t0
    for _attempt in range(3):
        done = threading.Event()

        def worker():
            for _ in range(3):
                pqkit.digest("sha3_512", data)
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
        # Holding the GIL, the main thread would stall for a whole call at least once.
        if max_gap < one_call / 2:
            return
    pytest.fail(f"main thread stalled {max_gap * 1e3:.1f} ms during a {one_call * 1e3:.1f} ms call: GIL held?")


def test_stubs_cover_the_module():
    """Every public name of the extension has a stub in _pqkit.pyi, and the stubs name nothing that is missing."""
    import ast
    import pathlib

    import pqkit._pqkit as ext

    stub = pathlib.Path(pqkit.__file__).with_name("_pqkit.pyi")
    assert pathlib.Path(pqkit.__file__).with_name("py.typed").exists()
    tree = ast.parse(stub.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    public = {n for n in dir(ext) if not n.startswith("_") or n == "__version__"}
    names.discard("_Aead")
    # The private classes that pqkit.bus wraps, and its runtime's exit function, have stubs too.
    private = {n for n in dir(ext) if n.startswith(("_Bus", "_bus"))}
    assert private and private == {n for n in names if n.startswith(("_Bus", "_bus"))}
    assert public == names - private
    assert set(pqkit.__all__) == public


def test_readme_python_example_runs():
    """The Python example in the repository's README runs as written."""
    import pathlib
    import re

    readme = pathlib.Path(__file__).resolve().parents[3] / "README.md"
    block = re.search(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert block, "README has no python example"
    exec(compile(block.group(1), "README.md", "exec"), {})
