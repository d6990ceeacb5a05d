"""scripts/asp-page.py, the one script that regenerates docs/results-asp.md: it finds the page's command blocks in
the page's order, keeps the testbed's apart, and what they call exists; every committed per-run table of the page is
named there with the sha256 it has."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("asp_page", ROOT / "scripts" / "asp-page.py")
page_script = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(page_script)
PAGE = ROOT / "docs" / "results-asp.md"


def test_the_blocks_are_the_pages_in_its_order_and_the_testbed_ones_are_marked():
    found = page_script.blocks()
    lines = [line for _, _, _, line in found]
    assert lines == sorted(lines) and len(found) >= 7
    text = PAGE.read_text().splitlines()
    for heading, note, body, line in found:
        assert text[line - 2].strip() == "```sh" and body.strip(), (heading, line)
    testbed = [h for h, note, _, _ in found if page_script.needs_testbed(note)]
    assert len(testbed) == 2 and all("testbed" in h.lower() for h in testbed)
    assert any("(b) continued" in h for h, _, _, _ in found)


def test_what_the_blocks_call_exists():
    for heading, _, body, line in page_script.blocks():
        for path in re.findall(r"\b((?:scripts|scenarios)/[\w./-]+\.(?:py|sh|yaml))", body):
            assert (ROOT / path).exists(), f"docs/results-asp.md:{line} ({heading}) calls {path}, which is not there"


def test_every_committed_per_run_table_is_on_the_page_with_its_sha256():
    page = PAGE.read_text()
    tables = sorted((ROOT / "docs" / "data").glob("asp-*.csv"))
    assert tables
    for table in tables:
        digest = hashlib.sha256(table.read_bytes()).hexdigest()
        assert table.name in page, f"{table.name} is not named on the page"
        assert digest in page, f"{table.name}: the page does not give its sha256 {digest}"


def test_a_section_that_matches_nothing_is_refused_with_the_list(capsys):
    assert page_script.main(["--section", "no such section", "--dry-run"]) == 2
    assert "the sections:" in capsys.readouterr().err
