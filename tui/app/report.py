"""The report key (Home and Review): the debate as an HTML report in the export folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from outputs.export import write_private
from outputs.report import report_html


def save_report(folder: Path, debate: dict[str, Any]) -> Path:
    """Write ``debate``'s report (the same page as ``symposium report``) to ``folder``, 0600;
    returns its path, which the screen shows so the person can find the file."""
    page, _ = report_html(debate)
    path = folder / f"symposium-{debate['id']}.html"
    write_private(path, page)
    return path
