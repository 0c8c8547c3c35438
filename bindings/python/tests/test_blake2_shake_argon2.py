"""Keyed/salted/personalised BLAKE2 and incremental SHAKE against hashlib; Argon2id against pyca and RFC 9106."""

import hashlib
import random
import threading

import pytest

import pqkit
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id as CArgon2id

RNG = random.Random(9106)


def rand(n: int) -> bytes:
    return RNG.randbytes(n)


@pytest.mark.parametrize("ours,theirs,maxlen,maxkey,maxsalt", [
    (pqkit.blake2b, hashlib.blake2b, 64, 64, 16),
    (pqkit.blake2s, hashlib.blake2s, 32, 32, 8),
], ids=["blake2b", "blake2s"])
def test_blake2_params_against_hashlib(ours, theirs, maxlen, maxkey, maxsalt):
    for _ in range(60):
        data = rand(RNG.choice([0, 1, 63, 64, 65, 128, 129, 5000]))
        size = RNG.randrange(1, maxlen + 1)
        key, salt, person = rand(RNG.randrange(0, maxkey + 1)), rand(RNG.randrange(0, maxsalt + 1)), rand(RNG.randrange(0, maxsalt + 1))
        want = theirs(data, digest_size=size, key=key, salt=salt, person=person).digest()
        assert ours(data, digest_size=size, key=key, salt=salt, person=person) == want
    assert ours(b"abc") == theirs(b"abc").digest()
    with pytest.raises(pqkit.PqkitError):
        ours(b"", key=bytes(maxkey + 1))
    with pytest.raises(pqkit.PqkitError):
        ours(b"", digest_size=maxlen + 1)
    with pytest.raises(pqkit.PqkitError):
        ours(b"", salt=bytes(maxsalt + 1))


@pytest.mark.parametrize("name,theirs", [("shake128", hashlib.shake_128), ("shake256", hashlib.shake_256)])
def test_incremental_shake_against_hashlib(name, theirs):
    data = rand(20000)
    s, h = pqkit.Shake(name), theirs()
    for cut in (0, 1, 167, 168, 169, 5000, 9000):
        s.update(data[:cut])
        h.update(data[:cut])
        c = s.copy()
        for n in (0, 1, 32, 200, 1000):
            assert s.digest(n) == h.digest(n)
            assert c.hexdigest(n) == h.hexdigest(n)
    assert s.name == h.name
    assert pqkit.Shake(name.upper().replace("SHAKE", "SHAKE-"), memoryview(data)).digest(64) == theirs(data).digest(64)
    shared = pqkit.Shake(name)
    threads = [threading.Thread(target=lambda: [shared.update(bytes(5000)) for _ in range(40)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.digest(32) == theirs(bytes(4 * 40 * 5000)).digest(32)


def test_argon2id_rfc9106_and_pyca():
    # RFC 9106 section 5.3 test vector.
    tag = pqkit.argon2id(bytes([1] * 32), salt=bytes([2] * 16), length=32, iterations=3, lanes=4, memory_cost=32,
                         secret=bytes([3] * 8), ad=bytes([4] * 12))
    assert tag.hex() == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
    for _ in range(4):
        pw, salt = rand(RNG.randrange(0, 40)), rand(RNG.randrange(8, 33))
        length, it, lanes = RNG.randrange(4, 80), RNG.randrange(1, 4), RNG.randrange(1, 5)
        mem = 8 * lanes * RNG.randrange(1, 16)
        want = CArgon2id(salt=salt, length=length, iterations=it, lanes=lanes, memory_cost=mem).derive(pw)
        assert pqkit.argon2id(bytearray(pw), salt=salt, length=length, iterations=it, lanes=lanes, memory_cost=mem) == want
    with pytest.raises(pqkit.PqkitError):
        pqkit.argon2id(b"pw", salt=b"short", memory_cost=64)
    with pytest.raises(ValueError, match="at least 4"):
        pqkit.argon2id(b"pw", salt=bytes(16), length=3, memory_cost=64)
