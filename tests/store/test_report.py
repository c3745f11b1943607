"""The HTML report's structure, without a browser (tests/guarantees/test_report_browser.py opens it
in one): self-contained, every protocol's sections, model text escaped, redaction counted."""

from __future__ import annotations

import base64
import hashlib
import re
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from outputs.report import CSP, report_html
from outputs.report.render import STYLE
from outputs.report.safe import Markup, tag, text
from store.journal import Journal
from tests.helpers.paths import REPO
from tests.helpers.report_debates import SCRIPT, every_protocol, hostile_debate
from tests.helpers.sample_debate import record_sample


class Page(HTMLParser):
    """Every start tag with its attributes, the text, and whether the tags nest properly."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "circle", "line", "path", "polyline"}

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.in_style = False
        self.style = ""
        self.feed(html)
        self.close()
        if self.stack:
            self.problems.append(f"unclosed: {self.stack}")

    def handle_starttag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((name, dict(attrs)))
        if name not in self.VOID:
            self.stack.append(name)
        self.in_style = name == "style"

    def handle_startendtag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((name, dict(attrs)))

    def handle_endtag(self, name: str) -> None:
        if name in self.VOID:
            return
        if not self.stack or self.stack[-1] != name:
            self.problems.append(f"</{name}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        self.in_style = False

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.style += data
        else:
            self.text.append(data)

    def names(self) -> list[str]:
        return [name for name, _ in self.tags]

    def ids(self) -> set[str]:
        return {str(a["id"]) for _, a in self.tags if a.get("id")}

    def all_text(self) -> str:
        return "".join(self.text)


@pytest.fixture(scope="module")
def debates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return every_protocol(tmp_path_factory.mktemp("reports"))


#: The sections each protocol's report must have besides the ones every report has.
OWN_SECTIONS = {"evince": {"evince", "metrics", "distributions", "judgements"},
                "socrasynth": {"socrasynth", "judges", "joint", "metrics", "judgements"},
                "agreement": {"stages", "judgements"},
                "deliberation": {"analysis", "judgements"},
                "humanloop": {"stances", "judgements"},
                "d3": {"d3", "judgements"}}


@pytest.mark.parametrize("protocol", sorted(OWN_SECTIONS))
def test_every_protocol_has_its_report(debates: dict[str, dict[str, Any]], protocol: str) -> None:
    page, masked = report_html(debates[protocol])
    parsed = Page(page)
    assert masked is None
    assert not parsed.problems, parsed.problems[:5]
    assert {"summary", "transcript", "provenance", "seal"} | OWN_SECTIONS[protocol] <= parsed.ids()
    # every turn is there, as an article, with its role
    turns = debates[protocol]["turns"]
    assert parsed.names().count("article") == len(turns)
    # self-contained: nothing that loads or runs
    assert "script" not in parsed.names() and "img" not in parsed.names() and "link" not in parsed.names()
    for _, attrs in parsed.tags:
        for key in ("src", "href", "srcset", "action", "data"):
            value = attrs.get(key)
            assert value is None or value.startswith("#"), (key, value)
        assert not any(k.startswith("on") for k in attrs), attrs
    if protocol in ("evince", "socrasynth", "humanloop", "d3"):
        assert parsed.names().count("svg") >= (2 if protocol in ("evince", "socrasynth") else 1) and "polyline" in parsed.names()


def test_socrasynth_report_shows_each_judges_table_and_gamma_per_subtopic(debates: dict[str, dict[str, Any]]) -> None:
    debate = debates["socrasynth"]
    evaluation = debate["outcome"]["evaluation"]
    page = Page(report_html(debate)[0])
    judges = list(evaluation["judges"])
    # one table per alignment laid out as Tables 6.5 and 6.6 (a column pair per judge), and one
    # Γ-per-subtopic chart per judge and alignment
    captions = [t for t in page.text if t.startswith(("Agent A argues, Agent B counters (as Table 6.5)",
                                                      "Agent B argues, Agent A counters (as Table 6.6)"))]
    assert len(set(captions)) == 2 and all(j in c for c in captions for j in judges)
    assert sum(1 for t in page.text if t.startswith("Γ per subtopic: ")) >= 2 * len(judges)
    score = evaluation["alignments"]["a_argues"][judges[0]]
    first = next(iter(score.values()))
    assert f"{first['agent-a']:.3f}".rstrip("0").rstrip(".") in page.text


def test_d3_and_humanloop_reports_show_their_analyses(debates: dict[str, dict[str, Any]]) -> None:
    d3 = Page(report_html(debates["d3"])[0])
    votes = debates["d3"]["outcome"]["passes"][0]["votes"]
    assert "The jury" in d3.text and all(v["persona"] in d3.text for v in votes)
    assert "Position-swap audit" in d3.text
    loop = Page(report_html(debates["humanloop"])[0])
    table = debates["humanloop"]["outcome"]["analysis"]["table"]
    assert "Each seat's stance per round (stated confidence)" in loop.text
    assert all(role in loop.text for role in table)
    assert any("Triem" in t for t in loop.text)
    assert "Stance change rate per seat" in loop.text  # Triem's figure: change rates by seat, both measures


def test_the_style_sheet_is_the_only_one_the_policy_allows() -> None:
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in CSP
    for directive in ("default-src 'none'", "script-src 'none'", "img-src 'none'", "connect-src 'none'", "base-uri 'none'",
                      "form-action 'none'"):
        assert directive in CSP


def test_the_page_declares_its_policy_and_a_print_style(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal)
        from store.queries import Queries

        debate = Queries(journal).debate("sample0001ab")
    assert debate is not None
    page = Page(report_html(debate)[0])
    metas = [a for name, a in page.tags if name == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [m["content"] for m in metas] == [CSP]
    assert page.style == STYLE and "@media print" in page.style and "@page" in page.style
    assert page.names().index("meta") < page.names().index("style")  # the policy comes before anything it governs


def test_model_text_is_text_never_markup(tmp_path: Path) -> None:
    """Script, markup, a remote image, a style, bidi overrides and ANSI escapes in a title, the
    case, a turn, a parse note and a label all reach the page as text."""
    debate = hostile_debate(tmp_path / "j.db", port=9)
    html, _ = report_html(debate)
    page = Page(html)
    assert not page.problems, page.problems[:5]
    names = page.names()
    assert "script" not in names and "img" not in names
    assert names.count("style") == 1 and names.count("b") == 0 and names.count("i") == 0
    assert not [a for n, a in page.tags if n == "a" and not str(a.get("href", "")).startswith("#")]
    shown = page.all_text()
    assert SCRIPT in shown and "<img src=http://127.0.0.1:9/leak.png onerror=alert(1)>" in shown
    assert "<b>bold</b>" in shown and "<i>Hepatitis</i>" in shown and "<style>body{display:none}</style>" in shown
    assert f"note {SCRIPT}" in shown
    for bidi in "\u202e\u202c\u2066\u2069\x1b":
        assert bidi not in html
        assert f"⟨U+{ord(bidi):04X}⟩" in shown


def test_markup_adds_only_escaped_text() -> None:
    built = tag("p", "a") + "<b>"
    assert isinstance(built, Markup) and built == "<p>a</p>&lt;b&gt;"
    assert "<x>" + tag("i", "y") == "&lt;x&gt;<i>y</i>"
    assert text('"\'&') == "&quot;&#x27;&amp;"
    assert tag("td", "x", class_='n" onclick="alert(1)') == '<td class="n&quot; onclick=&quot;alert(1)">x</td>'


def test_provenance_and_seal_render_whatever_keys_they_carry(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal)
        from store.queries import Queries

        debate = Queries(journal).debate("sample0001ab")
    assert debate is not None
    debate["provenance"] = {"symposium": "0.9.0", "host": {"os": "Linux", "python": "3.11.9"},
                            "participants": [{"role": "agent-a", "model": "smollm2-135m", "sha256": "ab" * 32,
                                              "quantization": "Q4_1", "backend": "llama-cpp-python 0.3.16",
                                              "context": 8192, "seed": 1}],
                            "a key added next year": "<shown as text>",
                            "reproducibility": "Same model files, sampling and seeds give the same replies."}
    debate["seal"] = {"head": "f" * 64, "rows": 23, "sealed_on_migration_at": None, "chain": []}
    page = Page(report_html(debate)[0])
    shown = page.text
    for value in ("0.9.0", "Linux", "ab" * 32, "Q4_1", "llama-cpp-python 0.3.16", "a key added next year", "<shown as text>",
                  "f" * 64, "23"):
        assert value in shown, value
    assert "This journal keeps no hash chain" not in page.all_text()


def test_redact_masks_as_the_export_does_and_counts_each_kind(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal)
        from store.queries import Queries

        debate = Queries(journal).debate("sample0001ab")
    assert debate is not None
    debate["turns"][0]["text"] = "Write to ana.ruiz@example.org or call +1 555 123 4567; seen by Dr. Ana Ruiz."
    debate["turns"][1]["text"] += " Also bob@example.com."
    html, masked = report_html(debate, redact=True)
    assert masked is not None and masked["EMAIL"] == 2 and masked["PHONE"] == 1 and masked["NAME"] >= 1
    assert "ana.ruiz@example.org" not in html and "bob@example.com" not in html and "Ana Ruiz" not in html
    assert re.search(r"Redacted copy: masked [^<]*2 email", html)
    # the journal seals every debate (store/seal.py): the redacted copy carries none of the seal's hashes, and says why
    assert "This copy is redacted, so it carries no seal" in html
    assert debate["seal"]["head"] not in html and debate["seal"]["signature"] not in html
    assert debate["seal"]["head"] in report_html(debate)[0]  # (a hash is not a phone number to the redactor)
    unsealed = {k: v for k, v in debate.items() if k != "seal"}  # a dict without a seal says so
    assert "This journal keeps no hash chain" in report_html(unsealed)[0]
    assert "This copy is redacted" not in report_html(debate)[0]
    # the same code as `export --redact`: what it masks, the report masks
    from outputs.redact import redact_debate

    assert redact_debate(debate)["turns"][0]["text"] in Page(html).text


def test_cli_writes_the_report_0600_and_prints_its_path(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with Journal(db) as journal:
        record_sample(journal)
    out = tmp_path / "reports" / "case-redacted.html"
    done = subprocess.run([sys.executable, "-m", "tui.cli", "--db", str(db), "report", "sample0", "--redact", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out.resolve())
    assert "redacted:" in done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert Page(out.read_text(encoding="utf-8")).ids() >= {"summary", "transcript", "metrics", "seal"}
    missing = subprocess.run([sys.executable, "-m", "tui.cli", "--db", str(db), "report", "nosuch"], cwd=REPO,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "no debate 'nosuch'" in missing.stderr and "symposium history" in missing.stderr


def test_a_debate_cut_off_before_its_first_turn_still_has_a_report(tmp_path: Path) -> None:
    """A running, interrupted or failed debate is a record too: the report says what there is."""
    from store.queries import Queries
    from tests.helpers.sample_debate import sample_events

    with Journal(tmp_path / "j.db") as journal:
        journal.record(sample_events("early0001")[0])
        debate = Queries(journal).debate("early0001")
    assert debate is not None
    page = Page(report_html(debate)[0])
    assert not page.problems
    assert "No turn was journalled." in page.text
    assert "Still running." in page.text  # protocols.core.outcome: how it stands, when it concluded nothing
    assert "metrics" not in page.ids() and "judgements" not in page.ids()
