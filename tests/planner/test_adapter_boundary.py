"""Django reaches the engine through one door, the planner/adapter package (issue 12).

Every module of the Django side is parsed (not imported) and its imports of `engine` or `calibration` listed, at
any depth (inside functions too); only the adapter may have any. The pricing app hands over its own plain records
(`pricing/records.py`), which the adapter turns into the costing's input types.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DJANGO_SIDE = ("planner", "pricing", "config")
DOOR = "planner/adapter"  # the package: the door itself, its pricing half and its what-if half


def _engine_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in ("engine", "calibration")]
    return found


def test_only_the_adapter_imports_the_engine():
    offenders = {}
    for folder in DJANGO_SIDE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(DOOR + "/") or "/migrations/" in relative:
                continue
            imports = _engine_imports(path)
            if imports:
                offenders[relative] = imports
    assert offenders == {}


def test_the_adapter_is_the_door():
    # each of its modules does import the engine (the check above is not vacuous, and skips nothing else)
    modules = sorted((ROOT / DOOR).glob("*.py"))
    assert modules and all(_engine_imports(m) for m in modules)


def test_the_check_sees_an_engine_import(tmp_path):
    """The parser finds both import forms (so the test above cannot pass by not looking)."""
    sample = tmp_path / "m.py"
    sample.write_text("import engine.chain\nfrom engine.result import PlanResult\nfrom .engine import x\n")
    assert _engine_imports(sample) == ["engine.chain", "engine.result"]
