"""Run every notebook of a course copied by ``bpe-lab lab DIR --no-open``.

Usage: ``VENV/bin/python .ci/course-from-wheel.py DIR`` (``.ci/course-from-wheel``
calls it once per Python, in a fresh virtual environment holding only the
wheel and its runtime dependencies). Each notebook of ``DIR/notebooks`` runs
top to bottom in a kernel of this interpreter with nbclient, in its own
folder; a cell that raises fails the run, reported with the notebook, the
cell's index and the error. One more cell then runs in the same kernel: it
checks that the kernel is this interpreter and ``bpe_lab`` comes from its
site-packages (the wheel, not a checkout), and lists the checkpoints the
notebook made with ``bpe_lab.ui.checkpoints.audit_made()``: any problem
fails the run, and so does a course whose checkpoints all put the answer at
the same position. Exit 0 when everything passed, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

CELL_TIMEOUT = 900  # seconds for one cell: notebook 08's at-scale cells on a busy 2-core machine

AUDIT = r"""
import json as _json, sys as _sys
import bpe_lab as _bpe_lab
from bpe_lab.ui.checkpoints import audit_made as _audit_made
_made = _audit_made()
print("BPE-LAB-AUDIT " + _json.dumps({"prefix": _sys.prefix, "bpe_lab": _bpe_lab.__file__, "made": _made}, default=str))
"""


def _audit_result(cell: Any) -> dict[str, Any]:
    for output in cell.get("outputs", []):
        for line in str(output.get("text", "")).splitlines():
            if line.startswith("BPE-LAB-AUDIT "):
                result: dict[str, Any] = json.loads(line.removeprefix("BPE-LAB-AUDIT "))
                return result
    raise RuntimeError(f"the audit cell printed no result: {cell.get('outputs')}")


def run_notebook(path: Path) -> tuple[list[str], list[Any] | None]:
    """The failures of one notebook, and the checkpoints it made (None when
    the notebook stopped before the audit cell)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    failures: list[str] = []
    index = -1
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            audit = nbformat.v4.new_code_cell(AUDIT)
            nb.cells.append(audit)
            index = len(nb.cells) - 1
            client.execute_cell(audit, index)
    except CellExecutionError as err:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(err))  # the traceback's terminal colours
        where = "the audit cell" if index == len(nb.cells) - 1 else f"cell {index}"
        summary = f"{err.ename}: {err.evalue}" if err.ename else text[-2000:]
        return [f"{path.name}: {where}: {summary}\n{text[-3000:]}"], None
    except (CellTimeoutError, DeadKernelError) as err:
        return [f"{path.name}: cell {index}: {type(err).__name__}: {err}"], None
    result = _audit_result(nb.cells[-1])
    prefix = Path(sys.prefix).resolve()
    if Path(result["prefix"]).resolve() != prefix:
        failures.append(f"{path.name}: the kernel ran {result['prefix']}, not this environment {prefix}")
    if not Path(result["bpe_lab"]).resolve().is_relative_to(prefix):
        failures.append(f"{path.name}: bpe_lab was imported from {result['bpe_lab']}, not from the wheel in {prefix}")
    made = result["made"]
    for number, checkpoint in enumerate(made or []):
        if checkpoint.get("problems"):
            failures.append(
                f"{path.name}: checkpoint {number} ({checkpoint.get('question')!r}): {checkpoint['problems']}"
            )
    return failures, made


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ.setdefault("BPE_LAB_MAX_REPEAT", "1")
    notebooks = sorted((Path(argv[0]) / "notebooks").glob("*.ipynb"))
    if not notebooks:
        print(f"no notebooks in {Path(argv[0]) / 'notebooks'}", file=sys.stderr)
        return 1
    version = ".".join(map(str, sys.version_info[:3]))
    failures: list[str] = []
    positions: list[Any] = []
    failed = 0
    for path in notebooks:
        start = time.monotonic()
        found, made = run_notebook(path)
        failures += found
        failed += bool(found)
        positions += [c["answer_position"] for c in made or [] if c.get("answer_position") is not None]
        status = "FAILED" if found else "ok"
        print(f"Python {version}: {path.name}: {status} ({time.monotonic() - start:.0f} s)", flush=True)
    if len(positions) > 1 and len(set(map(str, positions))) == 1:
        failures.append(f"every one of the course's {len(positions)} checkpoints has its answer at {positions[0]}")
    for failure in failures:
        print(f"Python {version}: FAILED: {failure}", flush=True)
    print(f"Python {version}: {len(notebooks) - failed} of {len(notebooks)} notebooks ran without an error")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
