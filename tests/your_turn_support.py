"""The audit of a notebook's "your turn" cell, shared by test_your_turn
(chapters 01-04, 07, 08) and test_depth_sections (the depth sections of 05
and 06): the committed cell is a checkpoint that says "not written yet";
with a model answer in place of its stub, the same cell passes its check;
and the chapter's exercise defines no function of that name."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def audit_your_turn(
    chapter: str, name: str, model: Callable[..., Any], capsys: Any, namespace: dict[str, Any] | None = None
) -> None:
    """Assert the three facts above for the cell that defines ``name`` in
    notebook ``chapter``; ``model`` (renamed to ``name``) replaces the stub,
    and the cell runs in ``namespace`` (what its notebook imported before)."""
    (notebook,) = ROOT.glob(f"notebooks/{chapter}_*.ipynb")
    (cell,) = [c for c in code_cells(notebook) if f"def {name}(" in "".join(c["source"])]
    source = "".join(cell["source"])
    assert "checkpoint" in cell["metadata"]["tags"]
    said = "".join(text for out in cell["outputs"] for text in out.get("text", []))
    assert said.startswith(f"Not yet: {name} is not written yet")
    stub = re.search(rf"^def {name}\(.*?raise NotImplementedError\(\)[^\n]*\n", source, re.S | re.M)
    assert stub is not None
    answer = inspect.getsource(model).replace(f"def {model.__name__}(", f"def {name}(")
    exec(compile(source.replace(stub.group(0), answer), str(notebook), "exec"), dict(namespace or {}))
    assert capsys.readouterr().out.startswith(f"✔ {name} agrees with bpe_lab on")
    (solution,) = ROOT.glob(f"solutions/{chapter}_*.ipynb")
    tasks = {f for c in code_cells(solution) for f in re.findall(r"^def (\w+)\(", "".join(c["source"]), re.M)}
    assert tasks and name not in tasks
