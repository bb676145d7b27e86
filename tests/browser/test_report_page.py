"""The HTML report in a real browser: headless Chromium from Debian's packages (see :mod:`.chromium`).

Skipped, with the reason, only where Chromium is not installed; ``make test-all``
installs it first (``make browser-deps``).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import MISSING, Browser, find
from tests.support.releases import ROOT

pytestmark = [
    pytest.mark.skipif(find() is None, reason=MISSING),
    pytest.mark.xdist_group("chromium"),
]

PAIRS = ("2.0.0-alpha.7..2.0.0-alpha.8", "1.21.0..v1-sdk-2.3.0")
VISIBLE_ROWS = (
    "Array.from(document.querySelectorAll('tbody.change')).filter(r => r.getClientRects().length > 0)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser(1600, 1000) as found:
        yield found


def _report(pair: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((ROOT / "reports" / f"{pair}.json").read_text(encoding="utf-8"))
    return data


def _changes(pair: str) -> list[dict[str, object]]:
    found = _report(pair)["changes"]
    assert isinstance(found, list)
    return found


@pytest.mark.parametrize("pair", PAIRS)
def test_every_fingerprint_of_the_json_report_is_on_the_rendered_page(browser: Browser, pair: str) -> None:
    browser.open(ROOT / "reports" / f"{pair}.html")
    text = browser.evaluate("document.body.innerText")
    fingerprints = [str(c["fingerprint"]) for c in _changes(pair)]
    assert fingerprints and [f for f in fingerprints if f not in text] == []
    assert browser.evaluate(f"{VISIBLE_ROWS}.length") == len(fingerprints)


def test_the_severity_filter_hides_rows(browser: Browser) -> None:
    pair = PAIRS[0]
    browser.open(ROOT / "reports" / f"{pair}.html")
    changes = _changes(pair)
    browser.evaluate("document.querySelector('#filters input[name=severity][value=info]').click()")
    shown = browser.evaluate(f"{VISIBLE_ROWS}.map(r => r.id.replace('change-', ''))")
    expected = [c["fingerprint"] for c in changes if c["severity"] != "info"]
    assert shown == expected and 0 < len(shown) < len(changes)
    assert browser.evaluate("document.getElementById('shown').textContent") == str(len(expected))


def test_the_schema_and_breaks_filters_hide_rows(browser: Browser) -> None:
    pair = PAIRS[0]
    browser.open(ROOT / "reports" / f"{pair}.html")
    changes = _changes(pair)
    browser.evaluate("document.querySelector('#filters input[name=stability][value=unstable]').click()")
    shown = browser.evaluate(f"{VISIBLE_ROWS}.map(r => r.id.replace('change-', ''))")
    assert shown == [c["fingerprint"] for c in changes if "stable" in c["stabilities"]]  # type: ignore[operator]
    browser.evaluate("document.querySelector('#filters input[name=side][value=\"python callers\"]').click()")
    shown = browser.evaluate(f"{VISIBLE_ROWS}.map(r => r.id.replace('change-', ''))")
    expected = [
        c["fingerprint"]
        for c in changes
        if "stable" in c["stabilities"] and c["breaks"] != ["python callers"]  # type: ignore[operator]
    ]
    assert shown == expected and len(shown) < len(changes)


@pytest.mark.parametrize("width", [800, 1600])
def test_the_page_fits_the_window_without_scrolling_sideways(browser: Browser, width: int) -> None:
    browser.resize(width, 1000)
    try:
        browser.open(ROOT / "reports" / f"{PAIRS[1]}.html")
        assert browser.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        browser.resize(1600, 1000)


def test_each_location_links_to_its_json_pointer_in_a_schema_file(browser: Browser) -> None:
    page = ROOT / "reports" / f"{PAIRS[0]}.html"
    browser.open(page)
    links = browser.evaluate("Array.from(document.querySelectorAll('a.pointer')).map(a => a.href)")
    assert len(links) == len([c for c in _changes(PAIRS[0]) if c["pointer"]])
    for link in links:
        address = urllib.parse.urlsplit(link)
        assert address.scheme == "file" and address.fragment.startswith("/$defs/")
        assert Path(urllib.parse.unquote(address.path)).is_file(), link
