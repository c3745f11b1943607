"""``symposium report``: one debate as a self-contained HTML document to keep, print and show.

:func:`report_html` is the whole path from a journalled debate (the export dict) to the page:
optionally redacted with the export's own code (:func:`outputs.redact.redact_debate`), built as a
document (:mod:`.document`), rendered (:mod:`.render`). The app's key and the command line both
call it, so they cannot differ.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from outputs.redact import redact_debate
from outputs.report.document import Document, build
from outputs.report.render import CSP, render

#: What the redaction puts in place of what it masked: ``[NAME]``, ``[EMAIL]`` … (any kind the
#: redaction code has or gains).
_PLACEHOLDER = re.compile(r"\[([A-Z][A-Z0-9_ -]{1,30})\]")


def _placeholders(value: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    if isinstance(value, str):
        found.update(_PLACEHOLDER.findall(value))
    elif isinstance(value, Mapping):
        for v in value.values():
            found += _placeholders(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found += _placeholders(v)
    return found


def redacted(debate: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """``debate`` masked exactly as ``symposium export --redact`` masks it, and how many items of
    each kind were masked (placeholders in the copy less those the original already held)."""
    masked = redact_debate(dict(debate))
    counts = _placeholders(masked)
    counts.subtract(_placeholders(debate))
    return masked, {kind: n for kind, n in sorted(counts.items()) if n > 0}


def report_html(debate: Mapping[str, Any], *, redact: bool = False) -> tuple[str, dict[str, int] | None]:
    """The report page for ``debate`` and, when ``redact``, the items masked per kind."""
    counts: dict[str, int] | None = None
    if redact:
        debate, counts = redacted(debate)
    return render(build(debate, redaction=counts)), counts


__all__ = ["CSP", "Document", "build", "redacted", "render", "report_html"]
