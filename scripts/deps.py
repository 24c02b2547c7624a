"""Print the pinned requirements from pyproject.toml, one per line, for `pip install -r /dev/stdin`.

Keeping the pins in pyproject.toml alone means there is one list to update.
"""

import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
groups = sys.argv[1:]
lines = list(project["dependencies"])
for group in groups:
    lines += project["optional-dependencies"][group]
print("\n".join(lines))
