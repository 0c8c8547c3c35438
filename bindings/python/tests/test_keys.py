"""Key classes against pyca/cryptography (OpenSSL): Ed25519, X25519, ECDSA/ECDH on P-256 and secp256k1, RSA."""

import random

import pytest

import pqkit
from cryptography.exceptions import InvalidSignature as CInvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, x25519

RNG = random.Random(2037)
E, PF, UF = serialization.Encoding, serialization.PrivateFormat, serialization.PublicFormat
NOENC = serialization.NoEncryption()


def rand(n: int) -> bytes:
    return RNG.randbytes(n)


def c_priv(key, enc, fmt):
    return key.private_bytes(enc, fmt, NOENC)


# ---------------------------------------------------------------------------------------------- Ed25519


def test_ed25519_against_pyca():
    for _ in range(5):
        seed, msg = rand(32), rand(RNG.randrange(0, 3000))
        ours = pqkit.Ed25519PrivateKey.from_private_bytes(seed)
        theirs = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        # Ed25519 is deterministic: the same signature, byte for byte.
        sig = ours.sign(msg)
        assert sig == theirs.sign(msg)
        assert ours.public_key().public_bytes_raw() == theirs.public_key().public_bytes_raw()
        theirs.public_key().verify(sig, msg)
        ours.public_key().verify(theirs.sign(msg), msg)
        with pytest.raises(pqkit.InvalidSignature):
            ours.public_key().verify(sig, msg + b"x")
        bad = bytearray(sig)
        bad[5] ^= 1
        with pytest.raises(pqkit.InvalidSignature):
            ours.public_key().verify(bytes(bad), msg)
        with pytest.raises(CInvalidSignature):
            theirs.public_key().verify(bytes(bad), msg)


def test_ed25519_key_files_against_pyca():
    theirs = ed25519.Ed25519PrivateKey.generate()
    for enc in (E.PEM, E.DER):
        blob = c_priv(theirs, enc, PF.PKCS8)
        ours = pqkit.load_pem_private_key(blob) if enc == E.PEM else pqkit.load_der_private_key(blob)
        assert isinstance(ours, pqkit.Ed25519PrivateKey)
        assert ours.private_bytes(enc, PF.PKCS8, NOENC) == blob
        assert ours.private_bytes(str(enc).split(".")[-1], "PKCS8") == blob  # names as strings
        pub = theirs.public_key().public_bytes(enc, UF.SubjectPublicKeyInfo)
        ours_pub = pqkit.load_pem_public_key(pub) if enc == E.PEM else pqkit.load_der_public_key(pub)
        assert isinstance(ours_pub, pqkit.Ed25519PublicKey)
        assert ours_pub == ours.public_key()
        assert ours.public_key().public_bytes(enc, UF.SubjectPublicKeyInfo) == pub
    generated = pqkit.Ed25519PrivateKey.generate()
    back = serialization.load_pem_private_key(generated.private_bytes(E.PEM, PF.PKCS8, NOENC), None)
    back.public_key().verify(generated.sign(b"m"), b"m")
    assert generated.private_bytes(E.Raw, PF.Raw) == generated.private_bytes_raw()
    assert "key hidden" in repr(generated)
    with pytest.raises(ValueError, match="encrypted"):
        generated.private_bytes(E.PEM, PF.PKCS8, serialization.BestAvailableEncryption(b"pw"))
    with pytest.raises(TypeError):
        pqkit.load_pem_private_key(c_priv(theirs, E.PEM, PF.PKCS8), b"password")
    with pytest.raises(pqkit.InvalidLength):
        pqkit.Ed25519PrivateKey.from_private_bytes(bytes(31))


# ---------------------------------------------------------------------------------------------- X25519


def test_x25519_against_pyca():
    for _ in range(5):
        a_seed, b_seed = rand(32), rand(32)
        ours = pqkit.X25519PrivateKey.from_private_bytes(a_seed)
        theirs = x25519.X25519PrivateKey.from_private_bytes(b_seed)
        their_pub = pqkit.X25519PublicKey.from_public_bytes(theirs.public_key().public_bytes_raw())
        ours_pub_c = x25519.X25519PublicKey.from_public_bytes(ours.public_key().public_bytes_raw())
        assert ours.exchange(their_pub) == theirs.exchange(ours_pub_c)
        assert ours.public_key().public_bytes_raw() == (
            x25519.X25519PrivateKey.from_private_bytes(a_seed).public_key().public_bytes_raw()
        )
    k = x25519.X25519PrivateKey.generate()
    pem = c_priv(k, E.PEM, PF.PKCS8)
    ours = pqkit.load_pem_private_key(pem)
    assert isinstance(ours, pqkit.X25519PrivateKey)
    assert ours.private_bytes(E.PEM, PF.PKCS8) == pem
    spki = k.public_key().public_bytes(E.DER, UF.SubjectPublicKeyInfo)
    assert pqkit.X25519PublicKey.from_der(spki).public_bytes(E.DER, UF.SubjectPublicKeyInfo) == spki
    with pytest.raises(pqkit.PqkitError):  # a small-order peer key gives an all-zero secret
        ours.exchange(pqkit.X25519PublicKey.from_public_bytes(bytes(32)))


# ---------------------------------------------------------------------------------------------- ECDSA, ECDH

CURVES = [("secp256r1", ec.SECP256R1()), ("secp256k1", ec.SECP256K1())]


@pytest.mark.parametrize("name,curve", CURVES, ids=[n for n, _ in CURVES])
def test_ecdsa_against_pyca(name, curve):
    theirs = ec.generate_private_key(curve)
    for fmt in (PF.PKCS8, PF.TraditionalOpenSSL):
        for enc in (E.PEM, E.DER):
            blob = c_priv(theirs, enc, fmt)
            ours = pqkit.load_pem_private_key(blob) if enc == E.PEM else pqkit.load_der_private_key(blob)
            assert isinstance(ours, pqkit.EllipticCurvePrivateKey) and ours.curve_name == name
            assert ours.private_bytes(enc, fmt, NOENC) == blob
    pub = pqkit.EllipticCurvePublicKey.from_pem(theirs.public_key().public_bytes(E.PEM, UF.SubjectPublicKeyInfo))
    assert pub == ours.public_key()
    for _ in range(4):
        msg = rand(RNG.randrange(0, 2000))
        sig = ours.sign(msg, ec.ECDSA(hashes.SHA256()))
        theirs.public_key().verify(sig, msg, ec.ECDSA(hashes.SHA256()))
        pub.verify(theirs.sign(msg, ec.ECDSA(hashes.SHA256())), msg, ec.ECDSA(hashes.SHA256()))
        pub.verify(theirs.sign(msg, ec.ECDSA(hashes.SHA256())), msg)
        assert ours.sign(msg) == sig  # RFC 6979: deterministic
        with pytest.raises(pqkit.InvalidSignature):
            pub.verify(sig, msg + b"x")
        with pytest.raises(pqkit.InvalidSignature):
            pub.verify(sig[:-1], msg)
    with pytest.raises(pqkit.UnknownAlgorithm, match="SHA-256"):
        ours.sign(b"m", ec.ECDSA(hashes.SHA384()))
    for fmt in (UF.UncompressedPoint, UF.CompressedPoint):
        point = theirs.public_key().public_bytes(E.X962, fmt)
        assert pqkit.EllipticCurvePublicKey.from_encoded_point(curve, point).public_bytes(E.X962, fmt) == point
        assert pqkit.EllipticCurvePublicKey.from_encoded_point(name, point) == pub
    mine = pqkit.EllipticCurvePrivateKey.generate(curve)
    c_mine = serialization.load_der_private_key(mine.private_bytes(E.DER, PF.PKCS8), None)
    assert c_mine.private_numbers().private_value == int.from_bytes(mine.private_bytes_raw(), "big")


@pytest.mark.parametrize("name,curve", CURVES, ids=[n for n, _ in CURVES])
def test_ecdh_against_pyca(name, curve):
    for _ in range(3):
        ours = pqkit.EllipticCurvePrivateKey.generate(name)
        theirs = ec.generate_private_key(curve)
        their_pub = pqkit.EllipticCurvePublicKey.from_der(theirs.public_key().public_bytes(E.DER, UF.SubjectPublicKeyInfo))
        our_pub_c = serialization.load_der_public_key(ours.public_key().public_bytes(E.DER, UF.SubjectPublicKeyInfo))
        want = theirs.exchange(ec.ECDH(), our_pub_c)
        assert ours.exchange(their_pub) == want
        assert ours.exchange(ec.ECDH(), their_pub) == want
    other = pqkit.EllipticCurvePrivateKey.generate("secp256k1" if name == "secp256r1" else "P-256")
    with pytest.raises(ValueError, match="peer key is on"):
        ours.exchange(other.public_key())


# ---------------------------------------------------------------------------------------------- RSA


@pytest.fixture(scope="module")
def rsa_pair():
    theirs = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ours = pqkit.load_pem_private_key(c_priv(theirs, E.PEM, PF.PKCS8))
    assert isinstance(ours, pqkit.RSAPrivateKey)
    return theirs, ours


def test_rsa_key_files_against_pyca(rsa_pair):
    theirs, ours = rsa_pair
    for fmt in (PF.PKCS8, PF.TraditionalOpenSSL):
        for enc in (E.PEM, E.DER):
            blob = c_priv(theirs, enc, fmt)
            k = pqkit.RSAPrivateKey.from_pem(blob) if enc == E.PEM else pqkit.RSAPrivateKey.from_der(blob)
            assert k.private_bytes(enc, fmt, NOENC) == blob
    for fmt in (UF.SubjectPublicKeyInfo, UF.PKCS1):
        for enc in (E.PEM, E.DER):
            blob = theirs.public_key().public_bytes(enc, fmt)
            k = pqkit.load_pem_public_key(blob) if enc == E.PEM else pqkit.load_der_public_key(blob)
            assert isinstance(k, pqkit.RSAPublicKey) and k == ours.public_key()
            assert k.public_bytes(enc, fmt) == blob
    assert ours.key_size == 2048


@pytest.mark.parametrize("alg", [hashes.SHA256(), hashes.SHA384(), hashes.SHA512()], ids=lambda a: a.name)
def test_rsa_signatures_against_pyca(rsa_pair, alg):
    theirs, ours = rsa_pair
    pub = ours.public_key()
    msg = rand(700)
    pss = padding.PSS(mgf=padding.MGF1(alg), salt_length=padding.PSS.DIGEST_LENGTH)
    # PSS is randomised: each side verifies the other's.
    sig = ours.sign(msg, pss, alg)
    theirs.public_key().verify(sig, msg, pss, alg)
    pub.verify(theirs.sign(msg, padding.PSS(mgf=padding.MGF1(alg), salt_length=padding.PSS.MAX_LENGTH), alg), msg, "PSS", alg)
    with pytest.raises(pqkit.InvalidSignature):
        pub.verify(sig, msg + b"x", pss, alg)
    # PKCS#1 v1.5 is deterministic: the same bytes.
    sig = ours.sign(msg, padding.PKCS1v15(), alg)
    assert sig == theirs.sign(msg, padding.PKCS1v15(), alg)
    pub.verify(sig, msg, "PKCS1v15", alg.name)
    with pytest.raises(pqkit.InvalidSignature):
        pub.verify(sig, msg, "PKCS1v15", hashes.SHA256() if alg.name != "sha256" else hashes.SHA384())
    with pytest.raises(pqkit.InvalidSignature):
        pub.verify(sig[:-1] + bytes([sig[-1] ^ 1]), msg, padding.PKCS1v15(), alg)


@pytest.mark.parametrize("alg", [hashes.SHA256(), hashes.SHA512()], ids=lambda a: a.name)
def test_rsa_oaep_against_pyca(rsa_pair, alg):
    theirs, ours = rsa_pair
    for label in (None, b"label"):
        oaep = padding.OAEP(mgf=padding.MGF1(alg), algorithm=alg, label=label)
        msg = rand(40)
        ct = ours.public_key().encrypt(msg, oaep)  # the label read from the pyca object
        assert theirs.decrypt(ct, oaep) == msg
        assert ours.decrypt(theirs.public_key().encrypt(msg, oaep), oaep, label=label) == msg
        assert ours.decrypt(theirs.public_key().encrypt(msg, oaep), "OAEP", alg.name, label) == msg
    with pytest.raises(pqkit.PqkitError):
        bad = bytearray(ct)
        bad[10] ^= 1
        ours.decrypt(bytes(bad), oaep, label=b"label")


def test_rsa_generate_is_read_by_pyca():
    k = pqkit.RSAPrivateKey.generate(65537, 2048)
    c = serialization.load_pem_private_key(k.private_bytes(E.PEM, PF.TraditionalOpenSSL), None)
    assert c.key_size == 2048 and c.public_key().public_numbers().e == 65537
    sig = k.sign(b"hello", "PSS")
    c.public_key().verify(sig, b"hello", padding.PSS(padding.MGF1(hashes.SHA256()), padding.PSS.AUTO), hashes.SHA256())
    with pytest.raises(ValueError, match="65537"):
        pqkit.RSAPrivateKey.generate(3, 2048)
    with pytest.raises(pqkit.PqkitError, match="2048"):
        pqkit.RSAPrivateKey.generate(65537, 1024)


def test_loaders_refuse_what_they_do_not_know():
    with pytest.raises(ValueError, match="no supported private key"):
        pqkit.load_pem_private_key(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(ValueError, match="no supported public key"):
        pqkit.load_der_public_key(b"\x30\x00")
