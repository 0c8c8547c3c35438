"""Type stubs of the pqkit extension module (see pqkit/__init__.py)."""

from typing import ClassVar, Optional, Tuple, Union

# Every input takes any object with the buffer protocol; these are the common ones.
_Buffer = Union[bytes, bytearray, memoryview]

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
    def __init__(self, key: _Buffer) -> None: ...
    def encrypt(self, nonce: _Buffer, data: _Buffer, associated_data: Optional[_Buffer] = None) -> bytes:
        """Returns ciphertext || tag. Never encrypt two messages under one (key, nonce)."""
    def decrypt(self, nonce: _Buffer, data: _Buffer, associated_data: Optional[_Buffer] = None) -> bytes:
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
    def __init__(self, algorithm: str, data: Optional[_Buffer] = None) -> None: ...
    def update(self, data: _Buffer) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> "Hash": ...
    @property
    def digest_size(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    @property
    def name(self) -> str: ...

def digest(algorithm: str, data: _Buffer) -> bytes:
    """One-shot digest; algorithm is a hashlib name: sha224 ... sha512_256, sha3_224 ... sha3_512, blake2b, blake2s."""

def shake128(data: _Buffer, length: int) -> bytes: ...
def shake256(data: _Buffer, length: int) -> bytes: ...
def hmac(algorithm: str, key: _Buffer, msg: _Buffer) -> bytes: ...
def hmac_verify(algorithm: str, key: _Buffer, msg: _Buffer, tag: _Buffer) -> None:
    """Raises AuthenticationFailed if tag is wrong (constant-time comparison)."""

def hkdf(algorithm: str, ikm: _Buffer, length: int, salt: Optional[_Buffer] = None, info: Optional[_Buffer] = None) -> bytes: ...
def hkdf_extract(algorithm: str, salt: _Buffer, ikm: _Buffer) -> bytes: ...
def hkdf_expand(algorithm: str, prk: _Buffer, info: _Buffer, length: int) -> bytes: ...
def mlkem_keygen(params: str = "ML-KEM-768") -> Tuple[bytes, bytes]:
    """Returns (encapsulation_key, decapsulation_key)."""

def mlkem_keygen_from_seed(params: str, seed: _Buffer) -> Tuple[bytes, bytes]: ...
def mlkem_encapsulate(params: str, encapsulation_key: _Buffer) -> Tuple[bytes, bytes]:
    """Returns (ciphertext, shared_secret)."""

def mlkem_decapsulate(params: str, decapsulation_key: _Buffer, ciphertext: _Buffer) -> bytes: ...
def mldsa_keygen(params: str = "ML-DSA-65") -> Tuple[bytes, bytes]:
    """Returns (public_key, secret_key)."""

def mldsa_keygen_from_seed(params: str, seed: _Buffer) -> Tuple[bytes, bytes]: ...
def mldsa_sign(
    params: str, secret_key: _Buffer, message: _Buffer, context: Optional[_Buffer] = None, deterministic: bool = False
) -> bytes: ...
def mldsa_verify(
    params: str, public_key: _Buffer, message: _Buffer, signature: _Buffer, context: Optional[_Buffer] = None
) -> None:
    """Raises AuthenticationFailed if the signature is not valid."""

def random_bytes(length: int) -> bytes: ...
