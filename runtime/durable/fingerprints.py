"""What a continuation is bound to: hashes of the tool catalog, the approval
configuration and the injected identity."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def _sha(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def catalog_sha256(described: Any) -> str:
    """Hash of the tool catalog as the sandbox sees it (names, schemas, marks)."""
    return _sha(described)


def approval_sha256(hook: Any) -> str:
    """Hash of the approval configuration: ``"default"`` without a hook; a hook's own
    ``fingerprint()`` (rule files can hash their rules); else its qualified name."""
    if hook is None:
        return _sha("default")
    own = getattr(hook, "fingerprint", None)
    if callable(own):
        return _sha(["fingerprint", own()])
    target = hook if hasattr(hook, "__qualname__") else type(hook)
    return _sha([getattr(target, "__module__", ""), getattr(target, "__qualname__", repr(target))])


def identity_sha256(context: Mapping[str, Any]) -> str:
    """Hash of the values the host injects (user ids, tenants...): a continuation
    resumes only under the same identity."""
    return _sha(dict(context))
