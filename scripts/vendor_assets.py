"""Copy browser assets shipped inside Python packages into var/vendor/ (served as static/vendor/).

plotly.min.js comes from the pinned plotly package, so the chart library in the page always
matches the one that built the figures and the page needs no CDN (the library's own map-tile and
topojson URLs are never used: the planner draws no maps). Run by `make install`; generated, so it
lives with the other runtime files under var/ and is not committed.
"""

from pathlib import Path

from plotly.offline import get_plotlyjs

VENDOR = Path(__file__).resolve().parent.parent / "var" / "vendor"  # settings.VENDOR_DIR


def main() -> None:
    VENDOR.mkdir(parents=True, exist_ok=True)
    target = VENDOR / "plotly.min.js"
    source = get_plotlyjs()
    if not target.exists() or target.read_text(encoding="utf-8") != source:
        target.write_text(source, encoding="utf-8")


if __name__ == "__main__":
    main()
