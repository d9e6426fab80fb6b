"""Integrity records for the files dpreg writes and later trusts: SSCP release files and ledgers.

Everything here is Python's standard library (:mod:`hashlib`, :mod:`hmac`, :mod:`secrets`); no
primitive is home-made.

Definitions (docs/threat-model.md, "Integrity of release and ledger files", says what they
protect against and what not):

* **Key file**: exactly 32 bytes from :func:`secrets.token_bytes`, created by
  :func:`create_key_file` with mode 0600 (``dpreg key init PATH``; ``dpreg ledger init`` makes
  one beside the ledger).  The key is never written anywhere else, never printed and never
  stored in a release file or a ledger database.
* **Key id**: the first 16 hex digits of ``SHA-256(b"dpreg-key-id\\x00" || key)``; names a key
  without revealing it.
* **Canonical form** of a JSON document: ``json.dumps(doc, sort_keys=True,
  separators=(",", ":"), ensure_ascii=True, allow_nan=False)`` encoded as ASCII.  Key order,
  white space and escapes of the file do not matter; every value does (``400`` and ``400.0``
  differ).
* **Digest**: SHA-256 of the canonical form.  **MAC**: HMAC-SHA256 with the key over a domain
  prefix and the canonical form (the prefix keeps a MAC made for one kind of file from being
  valid for another).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpreg.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["KEY_BYTES", "CANONICAL", "STATUSES", "Integrity", "create_key_file",
           "read_key_file", "resolve_key", "key_id", "canonical_json", "digest", "mac",
           "check_hex_digest"]

#: Length of a dpreg key in bytes (256 bits).
KEY_BYTES = 32
#: Name of the canonical serialisation (stored in release files' integrity records).
CANONICAL = "dpreg-canonical-json-1"
#: Verification outcomes, strongest first.
STATUSES = ("verified-hmac", "verified-pinned", "verified-digest", "unverified", "no-record")

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Integrity:
    """The outcome of checking a file's integrity record.

    ``status`` is one of

    * ``"verified-hmac"``: the MAC made with the given key matches (the file was not altered by
      anyone without the key);
    * ``"verified-pinned"``: the content's SHA-256 digest equals the one the reader expected
      (``expect_digest=``, obtained out of band);
    * ``"verified-digest"``: the stored unkeyed digest matches (no accidental or naive edit;
      anyone can recompute such a digest after an edit);
    * ``"unverified"``: not verified -- altered and read anyway (``verify=False``), or keyed and
      read without the key; ``detail`` says which;
    * ``"no-record"``: the file carries no integrity record (written by an older dpreg).

    ``digest`` is the content's SHA-256 (release files) or the chain head (ledgers);
    ``key_id`` names the key of a keyed file.  Neither reveals the key.
    """

    status: str
    detail: str
    digest: str | None = None
    key_id: str | None = None

    @property
    def verified(self) -> bool:
        return self.status.startswith("verified")

    @property
    def label(self) -> str:
        """Short words for summaries: ``verified (HMAC-SHA256)``, ``UNVERIFIED``, ..."""
        return {"verified-hmac": "verified (HMAC-SHA256)",
                "verified-pinned": "verified (matches the expected SHA-256 digest)",
                "verified-digest": "digest matches (unkeyed SHA-256)",
                "unverified": "UNVERIFIED",
                "no-record": "UNVERIFIED: no integrity record"}[self.status]

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "verified": self.verified, "detail": self.detail,
                "digest": self.digest, "key_id": self.key_id}

    def __str__(self) -> str:
        return f"{self.label}: {self.detail}"


# ------------------------------------------------------------------ keys
def key_id(key: bytes) -> str:
    """The public name of a key: 16 hex digits of SHA-256 over a prefix and the key."""
    return hashlib.sha256(b"dpreg-key-id\x00" + key).hexdigest()[:16]


def create_key_file(path: str | Path) -> str:
    """Create a key file: 32 bytes from :func:`secrets.token_bytes`, mode 0600, never
    overwriting an existing file (the key appears at ``path`` complete or not at all, also when
    two processes create it at once: it is written to a temporary file and hard-linked into
    place).  Returns the key id.

    Raises :class:`~dpreg.exceptions.InvalidInputError` if ``path`` exists or cannot be
    written.
    """
    p = Path(path)
    if p.exists() or p.is_symlink():
        raise InvalidInputError(f"key file {p} already exists; not overwritten")
    key = secrets.token_bytes(KEY_BYTES)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(8)}.tmp")
    try:
        _write_new(tmp, key)
        try:
            os.link(tmp, p)  # atomic, and fails if p appeared meanwhile
        except FileExistsError:
            raise InvalidInputError(f"key file {p} already exists; not overwritten") from None
        except OSError:  # a file system without hard links: create it in place
            _write_new(p, key)
        _sync_dir(p.parent)
    except FileExistsError:
        raise InvalidInputError(f"key file {p} already exists; not overwritten") from None
    except OSError as exc:
        raise InvalidInputError(f"key file {p} cannot be created: "
                                f"{exc.strerror or type(exc).__name__}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return key_id(key)


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (mode 0600, failing if it exists) holding ``data``, flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(folder: Path) -> None:
    """Make a new directory entry durable (POSIX; a no-op where directories cannot be
    opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_key_file(path: str | Path) -> bytes:
    """The key in a key file (exactly 32 bytes), or an :class:`InvalidInputError` naming the
    file -- never showing its content."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InvalidInputError(f"key file {p} is a directory")
        with p.open("rb") as fh:
            key = fh.read(KEY_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInputError(f"key file {p} does not exist (create one with: dpreg key init "
                                f"{p})") from None
    except OSError as exc:
        raise InvalidInputError(f"key file {p} cannot be read: "
                                f"{exc.strerror or type(exc).__name__}") from None
    if len(key) != KEY_BYTES:
        raise InvalidInputError(f"key file {p} is not a dpreg key file (a key file holds "
                                f"exactly {KEY_BYTES} bytes)")
    return key


def resolve_key(key: Any, name: str = "key") -> bytes | None:
    """``None``, a key file path (str or Path) or the 32 key bytes -> the key bytes (or None).
    Errors never show the key."""
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
        if len(raw) != KEY_BYTES:
            raise InvalidParameterError(f"{name} must be a key file path or exactly {KEY_BYTES} "
                                        "key bytes; got bytes of another length")
        return raw
    if isinstance(key, (str, os.PathLike)):
        return read_key_file(Path(os.fspath(key)))
    raise InvalidParameterError(f"{name} must be a key file path or {KEY_BYTES} key bytes; got "
                                f"{type(key).__name__}")


def check_hex_digest(value: Any, name: str = "expect_digest") -> str | None:
    """A SHA-256 digest given by the caller: 64 hex digits (case ignored), or None."""
    if value is None:
        return None
    text = value.strip().lower() if isinstance(value, str) else None
    if text is None or not _HEX64.fullmatch(text):
        shown = repr(value) if isinstance(value, str) and len(value) <= 80 else \
            type(value).__name__
        raise InvalidParameterError(f"{name} must be a SHA-256 digest (64 hex digits); got "
                                    f"{shown}")
    return text


# ------------------------------------------------------------------ digests
def canonical_json(doc: Any) -> bytes:
    """The canonical form (module docstring); raises ValueError/TypeError for a document that
    has none (NaN, infinities, non-JSON types)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def digest(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 hex digits."""
    return hashlib.sha256(data).hexdigest()


def mac(key: bytes, domain: bytes, data: bytes) -> str:
    """HMAC-SHA256 of ``domain || data`` under ``key`` as 64 hex digits."""
    return hmac.new(key, domain + data, hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two hex strings."""
    return hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))
