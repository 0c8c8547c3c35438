"""Type stubs of the pqkit extension module (see pqkit/__init__.py)."""

from typing import ClassVar, Optional, Tuple

__version__: str
GIL_RELEASE_MIN: int

class PqkitError(Exception):
    """Base class of every pqkit error."""

class InvalidLength(PqkitError):
    """An input or output had the wrong length."""

class AuthenticationFailed(PqkitError):
    """A tag or signature did not verify. Nothing was released."""

class CounterExhausted(PqkitError): ...
class MessageTooLong(PqkitError): ...
class InvalidEncoding(PqkitError): ...
class InvalidParameter(PqkitError): ...
class RngFailure(PqkitError): ...
class UnknownAlgorithm(PqkitError): ...

class _Aead:
    KEY_SIZE: ClassVar[int]
    NONCE_SIZE: ClassVar[int]
    TAG_SIZE: ClassVar[int]
    def __init__(self, key: bytes) -> None: ...
    def encrypt(self, nonce: bytes, data: bytes, associated_data: Optional[bytes] = None) -> bytes:
        """Returns ciphertext || tag. Never encrypt two messages under one (key, nonce)."""
    def decrypt(self, nonce: bytes, data: bytes, associated_data: Optional[bytes] = None) -> bytes:
        """Verifies and decrypts; raises AuthenticationFailed (releasing nothing) on a bad tag."""

class ChaCha20Poly1305(_Aead):
    """ChaCha20-Poly1305 (RFC 8439): 32-byte key, 12-byte nonce."""

class XChaCha20Poly1305(_Aead):
    """XChaCha20-Poly1305: 32-byte key, 24-byte nonce (safe to draw at random)."""

class Aes128Gcm(_Aead):
    """AES-128-GCM: 16-byte key, 12-byte nonce."""

class Aes256Gcm(_Aead):
    """AES-256-GCM: 32-byte key, 12-byte nonce."""

class Kusumi512Poly1305(_Aead):
    """Kusumi512-Poly1305: 64-byte key."""

class Hash:
    """Incremental hash with hashlib's shape, e.g. Hash("sha256")."""
    def __init__(self, algorithm: str, data: Optional[bytes] = None) -> None: ...
    def update(self, data: bytes) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> "Hash": ...
    @property
    def digest_size(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    @property
    def name(self) -> str: ...

def digest(algorithm: str, data: bytes) -> bytes:
    """One-shot digest; algorithm is a hashlib name: sha224 ... sha512_256, sha3_224 ... sha3_512, blake2b, blake2s."""

def shake128(data: bytes, length: int) -> bytes: ...
def shake256(data: bytes, length: int) -> bytes: ...
def hmac(algorithm: str, key: bytes, msg: bytes) -> bytes: ...
def hmac_verify(algorithm: str, key: bytes, msg: bytes, tag: bytes) -> None:
    """Raises AuthenticationFailed if tag is wrong (constant-time comparison)."""

def hkdf(algorithm: str, ikm: bytes, length: int, salt: Optional[bytes] = None, info: Optional[bytes] = None) -> bytes: ...
def hkdf_extract(algorithm: str, salt: bytes, ikm: bytes) -> bytes: ...
def hkdf_expand(algorithm: str, prk: bytes, info: bytes, length: int) -> bytes: ...
def mlkem_keygen(params: str = "ML-KEM-768") -> Tuple[bytes, bytes]:
    """Returns (encapsulation_key, decapsulation_key)."""

def mlkem_keygen_from_seed(params: str, seed: bytes) -> Tuple[bytes, bytes]: ...
def mlkem_encapsulate(params: str, encapsulation_key: bytes) -> Tuple[bytes, bytes]:
    """Returns (ciphertext, shared_secret)."""

def mlkem_decapsulate(params: str, decapsulation_key: bytes, ciphertext: bytes) -> bytes: ...
def mldsa_keygen(params: str = "ML-DSA-65") -> Tuple[bytes, bytes]:
    """Returns (public_key, secret_key)."""

def mldsa_keygen_from_seed(params: str, seed: bytes) -> Tuple[bytes, bytes]: ...
def mldsa_sign(
    params: str, secret_key: bytes, message: bytes, context: Optional[bytes] = None, deterministic: bool = False
) -> bytes: ...
def mldsa_verify(
    params: str, public_key: bytes, message: bytes, signature: bytes, context: Optional[bytes] = None
) -> None:
    """Raises AuthenticationFailed if the signature is not valid."""

def random_bytes(length: int) -> bytes: ...
