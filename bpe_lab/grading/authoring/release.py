"""Student notebooks from solution notebooks: ``solutions/`` -> ``exercises/``.

The solutions are the single source (nbgrader's convention, without nbgrader):

- a region between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` becomes
  ``# YOUR CODE HERE`` + ``raise NotImplementedError()`` (``YOUR ANSWER HERE``
  in a markdown cell), at the indentation of the ``BEGIN`` line;
- a region between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` is
  removed; the grader puts it back from the solution;
- a solution cell without those markers (a written answer in markdown) is
  replaced whole by the stub, as nbgrader does;
- outputs and execution counts are cleared, and locked cells are marked
  read-only for JupyterLab.

The output is a pure function of the solutions (no timestamps, no machine
details such as the Python version), so ``release_check`` can compare the
committed ``exercises/`` with a fresh release.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import polib

from bpe_lab.grading.authoring.translation import CATALOG, EXERCISE_EDITIONS, catalog_name, translate_notebook
from bpe_lab.grading.notebook_format import nbformat

__all__ = [
    "BEGIN_SOLUTION",
    "END_SOLUTION",
    "BEGIN_HIDDEN",
    "END_HIDDEN",
    "strip_regions",
    "released_source",
    "release_notebook",
    "render",
    "release",
    "stale",
]

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

_CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
_MARKDOWN_STUB = ("YOUR ANSWER HERE",)
_KEPT_CELL_METADATA = ("nbgrader", "tags")
_NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"


def strip_regions(source: str, begin: str, end: str, stub: tuple[str, ...] = ()) -> str:
    r"""Replace every ``begin``..``end`` region (markers included) by ``stub``,
    indented like the ``begin`` line. Raises ValueError on unbalanced markers,
    because a half-open region would leak a solution or hide a test.

    >>> print(strip_regions("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
    ...                     BEGIN_SOLUTION, END_SOLUTION, ("# YOUR CODE HERE", "raise NotImplementedError()")))
    def f():
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    out: list[str] = []
    inside = False
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == begin:
            if inside:
                raise ValueError(f"line {number}: {begin!r} inside another region")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in stub)
        elif marker == end:
            if not inside:
                raise ValueError(f"line {number}: {end!r} without {begin!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{begin!r} is never closed by {end!r}")
    return "\n".join(out).rstrip()


def released_source(cell: nbformat.NotebookNode) -> str:
    """What the learner's copy of ``cell`` says. A solution cell without
    ``BEGIN SOLUTION`` markers (a written answer, usually) is replaced
    whole, as nbgrader does, so its model answer never reaches exercises/.

    >>> from nbformat.v4 import new_markdown_cell
    >>> released_source(new_markdown_cell("BPE merges by frequency.", metadata={"nbgrader": {"solution": True}}))
    'YOUR ANSWER HERE'
    """
    stub = _CODE_STUB if cell.cell_type == "code" else _MARKDOWN_STUB
    source = str(cell.source)
    solution = cell.get("metadata", {}).get("nbgrader", {})
    if isinstance(solution, dict) and solution.get("solution") and BEGIN_SOLUTION not in source:
        return "\n".join(stub)
    source = strip_regions(source, BEGIN_SOLUTION, END_SOLUTION, stub)
    return strip_regions(source, BEGIN_HIDDEN, END_HIDDEN)


def _release_cell(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cell = copy.deepcopy(cell)
    cell.source = released_source(cell)
    cell.metadata = {k: cell.metadata[k] for k in _KEPT_CELL_METADATA if k in cell.metadata}
    if cell.metadata.get("nbgrader", {}).get("locked"):
        cell.metadata.update(editable=False, deletable=False)
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    cell.pop("attachments", None)
    return cell


def release_notebook(solution: nbformat.NotebookNode, assignment: str) -> nbformat.NotebookNode:
    """The student copy of one solution notebook."""
    student: nbformat.NotebookNode = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call, unused-ignore]
    student.nbformat, student.nbformat_minor = solution.nbformat, solution.nbformat_minor
    student.metadata = {
        "kernelspec": solution.metadata.get("kernelspec", {}),
        "bpe_lab": {"assignment": assignment},
    }
    student.cells = [_release_cell(cell) for cell in solution.cells]
    return student


def _serialize(nb: nbformat.NotebookNode) -> str:
    text: str = nbformat.writes(nb)  # type: ignore[no-untyped-call, unused-ignore]
    return text.rstrip("\n") + "\n"


def render(solutions_dir: str | Path) -> dict[str, str]:
    """``{file name: notebook text}`` for every ``NN_*.ipynb`` in ``solutions_dir``."""
    paths = sorted(Path(solutions_dir).glob(_NOTEBOOK_GLOB))
    if not paths:
        raise ValueError(f"no solution notebooks (NN_name.ipynb) in {solutions_dir}")
    rendered = {}
    for path in paths:
        try:
            solution: nbformat.NotebookNode = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call, unused-ignore]
            nb = release_notebook(solution, path.stem)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
        rendered[path.name] = _serialize(nb)
    return rendered


def stale(solutions_dir: str | Path, exercises_dir: str | Path) -> list[str]:
    """Names of exercise notebooks that are missing, different or extra."""
    wanted = render(solutions_dir)
    have = {p.name: p.read_text(encoding="utf-8") for p in Path(exercises_dir).glob(_NOTEBOOK_GLOB)}
    return sorted(name for name in wanted.keys() | have.keys() if wanted.get(name) != have.get(name))


def release(solutions_dir: str | Path, exercises_dir: str | Path) -> list[str]:
    """Write ``exercises_dir`` from ``solutions_dir``; return the names changed.

    Exercise notebooks with no solution any more are deleted (they are
    generated, never edited by hand); other files there are left alone.
    """
    out = Path(exercises_dir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = render(solutions_dir)
    changed = stale(solutions_dir, out)
    for name in changed:
        target = out / name
        if name in wanted:
            target.write_text(wanted[name], encoding="utf-8")
        else:
            target.unlink()
    return changed


def render_chinese(exercises_dir: str | Path, catalog: polib.POFile | None = None) -> dict[str, str]:
    """``{"zh/NAME": notebook text}``: the Chinese copy of each English exercise
    in ``exercises_dir`` that has a Chinese edition, from the catalog (same
    cells and task ids; see ``translation``)."""
    catalog = catalog if catalog is not None else polib.pofile(str(CATALOG), wrapwidth=0)
    rendered = {}
    for path in EXERCISE_EDITIONS:
        name = path.rpartition("/")[2]
        english = json.loads((Path(exercises_dir) / name).read_text(encoding="utf-8"))
        chinese = translate_notebook(english, catalog_name(path), catalog, language_cell=False)
        rendered[f"zh/{name}"] = _serialize(nbformat.from_dict(chinese))  # type: ignore[no-untyped-call, unused-ignore]
    return rendered


def stale_chinese(exercises_dir: str | Path, catalog: polib.POFile | None = None) -> list[str]:
    """Names (``zh/NAME``) of Chinese exercises missing or different from what the catalog makes."""
    out = Path(exercises_dir)
    wanted = render_chinese(out, catalog)
    return sorted(n for n, text in wanted.items() if not (out / n).exists() or (out / n).read_text("utf-8") != text)


def release_chinese(exercises_dir: str | Path, catalog: polib.POFile | None = None) -> list[str]:
    """Write ``exercises_dir/zh/`` from the English exercises there; return the names changed."""
    out = Path(exercises_dir)
    wanted = render_chinese(out, catalog)
    changed = stale_chinese(out, catalog)
    for name in changed:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(wanted[name], encoding="utf-8")
    return changed


def _run(args: argparse.Namespace) -> None:
    if args.check:
        changed = stale(args.solutions, args.out) + stale_chinese(args.out)
        if changed:
            print(f"{args.out} is out of date ({', '.join(changed)}): run 'bpe-lab release'")
            raise SystemExit(1)
        print(f"{args.out} is up to date")
        return
    changed = release(args.solutions, args.out)
    changed += release_chinese(args.out)
    print(f"wrote {', '.join(changed)}" if changed else f"{args.out} was already up to date")


def add_release_command(subparsers: Any) -> None:
    """Register ``bpe-lab release`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("release", help="write the student notebooks in exercises/ from solutions/")
    parser.add_argument("--solutions", default="solutions", help="folder of solution notebooks (default: solutions)")
    parser.add_argument("--out", default="exercises", help="folder to write (default: exercises)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the folder is out of date")
    parser.set_defaults(run=_run)
