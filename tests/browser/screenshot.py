"""Write the README's picture of the HTML report: ``docs/images/diff-report.png``, 1,600 px wide.

Run by ``make screenshot`` (needs Chromium: ``make browser-deps``).  It opens
the committed page of one release pair in headless Chromium (:mod:`.chromium`)
and saves the top of it as PNG.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.browser.chromium import Browser
from tests.support.releases import ROOT

PAIR = "2.0.0-alpha.7..2.0.0-alpha.8"
OUT = ROOT / "docs" / "images" / "diff-report.png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default=PAIR, help="the report to show, as reports/ names it (%(default)s)")
    parser.add_argument("--out", type=Path, default=OUT, help="the PNG to write (%(default)s)")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    with Browser(args.width, args.height) as browser:
        browser.open(ROOT / "reports" / f"{args.pair}.html")
        png = browser.screenshot()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(png)
    print(f"wrote {args.out} ({len(png)} bytes, {args.width}x{args.height})")


if __name__ == "__main__":
    main()
