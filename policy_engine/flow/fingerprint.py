"""Keyed fingerprints of values, so neither memory nor the store holds a secret.

HMAC-SHA256 with a key the store never sees: a dump of Redis or of the
process gives fingerprints that cannot be reversed or tested against a
guess without the key. Replicas sharing a store must share the key.
"""

from __future__ import annotations

import hashlib
import hmac
import os

KEY_BYTES = 32
DIGEST_CHARS = 32  # 128 bits: collisions are not a practical concern for one session


class Fingerprinter:
    def __init__(self, key: bytes | None = None) -> None:
        if key is not None and len(key) < 16:
            raise ValueError("a fingerprint key needs at least 16 bytes")
        self._key = key if key is not None else os.urandom(KEY_BYTES)

    @classmethod
    def from_text(cls, text: str) -> Fingerprinter:
        """A key given by the operator (an environment variable), as text."""
        return cls(text.encode("utf-8"))

    def of(self, value: str) -> str:
        return hmac.new(
            self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()[:DIGEST_CHARS]

    def session_key(self, session_id: str) -> str:
        """A bounded, opaque name for a session in a store (no client text in key names)."""
        return self.of("session\x00" + session_id)
