"""pqkit: fast, constant-time, post-quantum-ready cryptography, from Python.

Everything takes and returns ``bytes``. Errors are exceptions named after what went wrong
(``InvalidLength``, ``AuthenticationFailed``, ``InvalidEncoding``, ...), all subclasses of ``PqkitError``.
A failed decryption or verification releases nothing. The GIL is released during bulk work.

    >>> import pqkit
    >>> key = pqkit.random_bytes(32)
    >>> aead = pqkit.XChaCha20Poly1305(key)
    >>> nonce = pqkit.random_bytes(24)
    >>> aead.decrypt(nonce, aead.encrypt(nonce, b"attack at dawn", b"header"), b"header")
    b'attack at dawn'
"""

from ._pqkit import (
    GIL_RELEASE_MIN,
    Aes128Gcm,
    Aes256Gcm,
    AuthenticationFailed,
    ChaCha20Poly1305,
    CounterExhausted,
    Hash,
    InvalidEncoding,
    InvalidLength,
    InvalidParameter,
    Kusumi512Poly1305,
    MessageTooLong,
    PqkitError,
    RngFailure,
    UnknownAlgorithm,
    XChaCha20Poly1305,
    __version__,
    digest,
    hkdf,
    hkdf_expand,
    hkdf_extract,
    hmac,
    hmac_verify,
    mldsa_keygen,
    mldsa_keygen_from_seed,
    mldsa_sign,
    mldsa_verify,
    mlkem_decapsulate,
    mlkem_encapsulate,
    mlkem_keygen,
    mlkem_keygen_from_seed,
    random_bytes,
    shake128,
    shake256,
)

__all__ = [
    "GIL_RELEASE_MIN",
    "Aes128Gcm",
    "Aes256Gcm",
    "AuthenticationFailed",
    "ChaCha20Poly1305",
    "CounterExhausted",
    "Hash",
    "InvalidEncoding",
    "InvalidLength",
    "InvalidParameter",
    "Kusumi512Poly1305",
    "MessageTooLong",
    "PqkitError",
    "RngFailure",
    "UnknownAlgorithm",
    "XChaCha20Poly1305",
    "__version__",
    "digest",
    "hkdf",
    "hkdf_expand",
    "hkdf_extract",
    "hmac",
    "hmac_verify",
    "mldsa_keygen",
    "mldsa_keygen_from_seed",
    "mldsa_sign",
    "mldsa_verify",
    "mlkem_decapsulate",
    "mlkem_encapsulate",
    "mlkem_keygen",
    "mlkem_keygen_from_seed",
    "random_bytes",
    "shake128",
    "shake256",
]
