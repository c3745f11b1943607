"""The Markdown export (and so ``show``) carries each protocol's findings as its definition
presents them, and untrusted text in them stays text."""

from __future__ import annotations

import re
from typing import Any

import pytest

from outputs.export import to_markdown
from outputs.markdown_sections import sections_markdown
from protocols.core.present import BarChart, Bullets, DefList, Figures, LineChart, Para, Section, Table
from protocols.registry import BY_NAME
from tests.helpers.report_debates import every_protocol


@pytest.fixture(scope="module")
def debates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return every_protocol(tmp_path_factory.mktemp("export-sections"))


def test_every_protocols_findings_are_in_its_markdown_export(debates: dict[str, dict[str, Any]]) -> None:
    for name, debate in debates.items():
        definition = BY_NAME[debate["protocol"]]
        assert definition.present is not None, name
        exported = to_markdown(debate)
        for section in definition.present(debate["outcome"], debate):
            assert f"### {section.title}" in exported.replace("\\", ""), (name, section.title)


def test_untrusted_text_in_a_section_is_shown_as_written() -> None:
    hostile = "# forged heading\n[a link](http://example.com) | cell ![img](http://x/y.png)"
    lines = sections_markdown([Section("s", "Found", [
        Para(hostile), DefList([("k", hostile)]), Bullets([hostile]), Table(["h"], [[hostile], [0.5]]),
        Figures([LineChart("t", {hostile: [(1.0, 0.25)]}), BarChart("b", {"g": {hostile: 0.5}})])])])
    text = "\n".join(lines)
    assert "\n# forged" not in text and "[a link](" not in text and "![img]" not in text
    assert "| 0.5 |" in text and "| 1 | 0.25 |" in text and "50%" in text  # figures stay readable
    widths = {len(re.findall(r"(?<!\\)\|", line)) for line in lines if line.startswith("|")}
    assert widths == {2, 3}  # one- and two-column tables: no cell split by a pipe it holds
