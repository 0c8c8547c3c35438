"""Public-key file encryption (file format version 2): round trips, refusals, the documented worked example,
and interop with the `pqkit` command-line tool both ways."""

import io
import os
import pathlib
import re
import subprocess

import pytest

import pqkit

REPO = pathlib.Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "file-format.md"


def test_round_trip_bytes_and_several_recipients():
    a, b, c = pqkit.Identity.generate(), pqkit.Identity.generate(), pqkit.Identity.generate()
    for alg in ("XChaCha20Poly1305", "Aes256Gcm", "Kusumi512Poly1305"):
        for size in (0, 1, 65535, 65536, 65537, 200_000):
            pt = os.urandom(size)
            f = pqkit.encrypt_to_recipients([a.recipient(), str(b.recipient())], pt, algorithm=alg)
            assert pqkit.decrypt_with_identities(a, f) == pt
            assert pqkit.decrypt_with_identities([c, b], bytearray(f)) == pt
            with pytest.raises(pqkit.AuthenticationFailed):
                pqkit.decrypt_with_identities([c], f)
    f = pqkit.encrypt_to_recipients([a.recipient()], b"attack at dawn\n")
    for i in (0, 9, 20, len(f) - 40, len(f) - 1):
        bad = bytearray(f)
        bad[i] ^= 1
        with pytest.raises(pqkit.PqkitError):
            pqkit.decrypt_with_identities(a, bytes(bad))
    with pytest.raises(pqkit.PqkitError):
        pqkit.decrypt_with_identities(a, f[:-1])
    with pytest.raises(pqkit.InvalidParameter):
        pqkit.encrypt_to_recipients([], b"x")
    with pytest.raises(pqkit.UnknownAlgorithm):
        pqkit.encrypt_to_recipients([a.recipient()], b"x", algorithm="rot13")


def test_recipient_and_identity_text():
    ident = pqkit.Identity.generate()
    r = ident.recipient()
    s = str(r)
    assert s.startswith("pqkit-xwing1") and pqkit.Recipient(s) == r and pqkit.Recipient(f"  {s}\n") == r
    assert pqkit.Identity.from_text(ident.to_text()).recipient() == r
    assert "key hidden" in repr(ident) and ident.to_text().split(":")[-1].strip() not in repr(ident)
    typo = s[:100] + ("A" if s[100] != "A" else "B") + s[101:]
    with pytest.raises(pqkit.InvalidEncoding):
        pqkit.Recipient(typo)
    with pytest.raises(pqkit.InvalidEncoding):
        pqkit.Recipient("age1qqqq")


def test_file_like_objects_stream():
    ident = pqkit.Identity.generate()
    pt = os.urandom(300_000)
    enc = io.BytesIO()
    pqkit.encrypt_file([ident.recipient()], io.BytesIO(pt), enc)
    assert pqkit.decrypt_with_identities(ident, enc.getvalue()) == pt
    out = io.BytesIO()
    pqkit.decrypt_file([ident], io.BytesIO(enc.getvalue()), out)
    assert out.getvalue() == pt
    # A cut file raises (after the segments before the cut were written).
    with pytest.raises(pqkit.PqkitError):
        pqkit.decrypt_file(ident, io.BytesIO(enc.getvalue()[:-5]), io.BytesIO())

    class Broken(io.RawIOBase):
        def write(self, b):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        pqkit.decrypt_file(ident, io.BytesIO(enc.getvalue()), Broken())


def _worked_example():
    text = DOC.read_text()
    section = text[text.index("### Worked example") :]
    section = section[: section.index("\n## ")]
    identity = re.search(r"`(PQKIT-XWING-IDENTITY-1:[0-9a-f]{64})`", section).group(1)
    prefix = re.search(r"prints (pqkit-xwing1[A-Za-z0-9_-]+)\.\.\.", section).group(1)
    total = int(re.search(r"`msg.pqk` is (\d+) bytes", section).group(1))
    rows = re.findall(r"^\| (\d+) \| (\d+) \| ([^|]+) \| `([0-9a-f]+)` \|$", section, re.M)
    return identity, prefix, total, [(int(o), int(n), f.strip(), bytes.fromhex(h)) for o, n, f, h in rows]


def test_documented_worked_example():
    """The identity, recipient and layout in docs/file-format.md (a real CLI run) match what Python makes."""
    identity, prefix, total, rows = _worked_example()
    ident = pqkit.Identity.from_text(identity)
    assert str(ident.recipient()).startswith(prefix)
    f = pqkit.encrypt_to_recipients([ident.recipient()], b"attack at dawn\n")
    assert len(f) == total
    random_fields = ("enc", "wrapped file key", "salt", "nonce prefix", "segment 0", "tag")
    checked = 0
    for off, size, field, want in rows:
        if any(field.startswith(r) for r in random_fields):
            continue
        assert len(want) == size and f[off : off + size] == want, field
        checked += 1
    assert checked >= 9
    assert pqkit.decrypt_with_identities(ident, f) == b"attack at dawn\n"


def _cli():
    """The pqkit binary: $PQKIT_CLI, else the debug build in the cargo target directory (.ci/run builds it)."""
    cands = [os.environ.get("PQKIT_CLI")]
    tgt = os.environ.get("CARGO_TARGET_DIR")
    cands += [os.path.join(tgt, p, "pqkit") for p in ("debug", "release")] if tgt else []
    cands += [str(REPO / "target" / p / "pqkit") for p in ("debug", "release")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    pytest.fail("the pqkit CLI is needed: cargo build -p pqkit-cli (or set PQKIT_CLI to the binary)")


def test_cli_interop_both_ways(tmp_path):
    cli = _cli()
    msg = os.urandom(150_000)
    (tmp_path / "msg").write_bytes(msg)
    # CLI keys, Python encrypts, CLI decrypts.
    rec = subprocess.run([cli, "keygen", "--alg", "xwing", "-o", str(tmp_path / "cli.id")],
                         check=True, capture_output=True, text=True).stdout.strip()
    f = pqkit.encrypt_to_recipients([rec], msg)
    (tmp_path / "py.pqk").write_bytes(f)
    subprocess.run([cli, "decrypt", "-i", str(tmp_path / "cli.id"), "-o", str(tmp_path / "out1"),
                    str(tmp_path / "py.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out1").read_bytes() == msg
    # Python reads the CLI's identity file.
    assert str(pqkit.Identity.from_text((tmp_path / "cli.id").read_text()).recipient()) == rec
    # Python keys, CLI encrypts (-R recipients file), Python decrypts (bytes and streaming).
    ident = pqkit.Identity.generate()
    (tmp_path / "py.recipient").write_text(str(ident.recipient()) + "\n")
    subprocess.run([cli, "encrypt", "-R", str(tmp_path / "py.recipient"), "-o", str(tmp_path / "cli.pqk"),
                    str(tmp_path / "msg")], check=True, capture_output=True)
    data = (tmp_path / "cli.pqk").read_bytes()
    assert pqkit.decrypt_with_identities(ident, data) == msg
    with open(tmp_path / "cli.pqk", "rb") as src, open(tmp_path / "out2", "wb") as dst:
        pqkit.decrypt_file([ident], src, dst)
    assert (tmp_path / "out2").read_bytes() == msg
    # And an identity file written by Python is read by the CLI.
    (tmp_path / "py.id").write_text(ident.to_text())
    subprocess.run([cli, "decrypt", "-i", str(tmp_path / "py.id"), "-o", str(tmp_path / "out3"),
                    str(tmp_path / "cli.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out3").read_bytes() == msg


def test_key_file_and_passphrase_round_trips():
    keyfile = pqkit.generate_key_file()
    assert re.fullmatch(r"PQKIT-KEY-V1:[0-9a-f]{64}\n", keyfile)
    raw = bytes.fromhex(keyfile.strip().split(":")[1])
    for alg in ("XChaCha20Poly1305", "Aes256Gcm", "Kusumi512Poly1305"):
        pt = os.urandom(70_000)
        f = pqkit.encrypt_with_key(keyfile, pt, alg)
        assert f[9] == {"XChaCha20Poly1305": 1, "Kusumi512Poly1305": 2, "Aes256Gcm": 3}[alg]
        assert pqkit.decrypt_with_key(raw, f) == pt
        with pytest.raises(pqkit.AuthenticationFailed):
            pqkit.decrypt_with_key(os.urandom(32), f)
    with pytest.raises(ValueError, match="PQKIT-KEY-V1"):
        pqkit.encrypt_with_key("PQKIT-KEY-V1:zz", b"x")
    with pytest.raises(pqkit.InvalidLength):
        pqkit.encrypt_with_key(bytes(31), b"x")
    f = pqkit.encrypt_with_passphrase(b"correct horse", b"secret", memory_cost=64, iterations=1, lanes=1)
    assert f[12:24] == (64).to_bytes(4, "big") + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")
    assert pqkit.decrypt_with_passphrase(bytearray(b"correct horse"), f) == b"secret"
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.decrypt_with_passphrase(b"wrong horse", f)


def test_cli_key_file_and_passphrase_interop(tmp_path):
    cli = _cli()
    msg = os.urandom(100_000)
    (tmp_path / "msg").write_bytes(msg)
    subprocess.run([cli, "keygen", "-o", str(tmp_path / "cli.key")], check=True, capture_output=True)
    keyfile = (tmp_path / "cli.key").read_text()
    (tmp_path / "py.pqk").write_bytes(pqkit.encrypt_with_key(keyfile, msg))
    subprocess.run([cli, "decrypt", "-k", str(tmp_path / "cli.key"), "-o", str(tmp_path / "out1"),
                    str(tmp_path / "py.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out1").read_bytes() == msg
    (tmp_path / "py.key").write_text(pqkit.generate_key_file())
    subprocess.run([cli, "encrypt", "-k", str(tmp_path / "py.key"), "--alg", "aes-256-gcm", "-o",
                    str(tmp_path / "cli.pqk"), str(tmp_path / "msg")], check=True, capture_output=True)
    assert pqkit.decrypt_with_key((tmp_path / "py.key").read_text(), (tmp_path / "cli.pqk").read_bytes()) == msg
    (tmp_path / "pass").write_text("correct horse battery\n")
    subprocess.run([cli, "encrypt", "--passphrase-file", str(tmp_path / "pass"), "--argon2-memory", "256",
                    "--argon2-passes", "1", "-o", str(tmp_path / "pw.pqk"), str(tmp_path / "msg")],
                   check=True, capture_output=True)
    assert pqkit.decrypt_with_passphrase(b"correct horse battery", (tmp_path / "pw.pqk").read_bytes()) == msg
    f = pqkit.encrypt_with_passphrase(b"correct horse battery", msg, memory_cost=256, iterations=1, lanes=2)
    (tmp_path / "pypw.pqk").write_bytes(f)
    subprocess.run([cli, "decrypt", "--passphrase-file", str(tmp_path / "pass"), "-o", str(tmp_path / "out2"),
                    str(tmp_path / "pypw.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out2").read_bytes() == msg


def test_key_file_and_passphrase_over_file_like_objects(tmp_path):
    """The streaming key-file and passphrase functions, read and written by the CLI both ways."""
    cli = _cli()
    msg = os.urandom(200_000)
    (tmp_path / "msg").write_bytes(msg)
    subprocess.run([cli, "keygen", "-o", str(tmp_path / "cli.key")], check=True, capture_output=True)
    keyfile = (tmp_path / "cli.key").read_text()
    # Python streams from a file to a file; the CLI decrypts.
    with open(tmp_path / "msg", "rb") as src, open(tmp_path / "py.pqk", "wb") as dst:
        pqkit.encrypt_file_with_key(keyfile, src, dst, "Aes256Gcm")
    subprocess.run([cli, "decrypt", "-k", str(tmp_path / "cli.key"), "-o", str(tmp_path / "out1"),
                    str(tmp_path / "py.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out1").read_bytes() == msg
    # The CLI encrypts; Python streams it back out (raw key bytes this time).
    subprocess.run([cli, "encrypt", "-k", str(tmp_path / "cli.key"), "-o", str(tmp_path / "cli.pqk"),
                    str(tmp_path / "msg")], check=True, capture_output=True)
    out = io.BytesIO()
    with open(tmp_path / "cli.pqk", "rb") as src:
        pqkit.decrypt_file_with_key(bytes.fromhex(keyfile.strip().split(":")[1]), src, out)
    assert out.getvalue() == msg
    bad = bytearray((tmp_path / "cli.pqk").read_bytes())
    bad[-1] ^= 1
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.decrypt_file_with_key(keyfile, io.BytesIO(bad), io.BytesIO())
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.decrypt_file_with_key(os.urandom(32), io.BytesIO(bytes(bad)), io.BytesIO())

    # Passphrases, both ways.
    (tmp_path / "pass").write_text("correct horse battery\n")
    subprocess.run([cli, "encrypt", "--passphrase-file", str(tmp_path / "pass"), "--argon2-memory", "256",
                    "--argon2-passes", "1", "-o", str(tmp_path / "pw.pqk"), str(tmp_path / "msg")],
                   check=True, capture_output=True)
    out = io.BytesIO()
    with open(tmp_path / "pw.pqk", "rb") as src:
        pqkit.decrypt_file_with_passphrase(b"correct horse battery", src, out)
    assert out.getvalue() == msg
    with pytest.raises(pqkit.AuthenticationFailed):
        pqkit.decrypt_file_with_passphrase(b"wrong horse", io.BytesIO((tmp_path / "pw.pqk").read_bytes()),
                                           io.BytesIO())
    enc = io.BytesIO()
    pqkit.encrypt_file_with_passphrase(bytearray(b"correct horse battery"), io.BytesIO(msg), enc,
                                       "Kusumi512Poly1305", memory_cost=256, iterations=1, lanes=2)
    (tmp_path / "pypw.pqk").write_bytes(enc.getvalue())
    subprocess.run([cli, "decrypt", "--passphrase-file", str(tmp_path / "pass"), "-o", str(tmp_path / "out2"),
                    str(tmp_path / "pypw.pqk")], check=True, capture_output=True)
    assert (tmp_path / "out2").read_bytes() == msg

    # A source or destination that raises: its own exception comes out.
    class Broken(io.RawIOBase):
        def read(self, n=-1):
            raise OSError("disk on fire")

        def write(self, b):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk on fire"):
        pqkit.encrypt_file_with_key(keyfile, Broken(), io.BytesIO())
    with pytest.raises(OSError, match="disk full"):
        pqkit.encrypt_file_with_key(keyfile, io.BytesIO(msg), Broken())
    with pytest.raises(OSError, match="disk full"):
        pqkit.decrypt_file_with_key(keyfile, io.BytesIO((tmp_path / "cli.pqk").read_bytes()), Broken())
