"""``bpe-lab translate``: the Chinese edition regenerated from its catalog.

For the notebooks and exercises that have a Chinese edition
(``EDITIONS``, ``EXERCISE_EDITIONS`` of ``grading/authoring/translation.py``,
which holds the catalog logic), one command updates the catalog
``bpe_lab/locale/zh_CN/LC_MESSAGES/notebooks.po`` from the English, writes
``notebooks/zh/`` and ``exercises/zh/``, and executes the Chinese notebooks it
rewrote (they are committed with outputs, like the English ones). ``--check``
writes nothing and exits 1 if an entry is missing, untranslated or fuzzy, a
glossary term is translated otherwise, or a Chinese file is stale.
Also ``python -m bpe_lab.translate``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polib

from bpe_lab.grading.authoring.release import release_chinese, stale_chinese
from bpe_lab.grading.authoring.translation import (
    CATALOG,
    EDITIONS,
    EXCEPTIONS,
    EXERCISE_EDITIONS,
    GLOSSARY,
    LOCALE,
    catalog_name,
    catalog_problems,
    extract,
    glossary_problems,
    read_exceptions,
    read_glossary,
    translate_notebook,
    update_catalog,
)

__all__ = ["add_translate_command", "main"]

ROOT = Path(__file__).resolve().parent.parent


def _sources(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in notebook["cells"]]


def _zh_path(english: Path) -> Path:
    return english.parent / "zh" / english.name


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _run(args: argparse.Namespace) -> None:
    root = Path(args.root)
    sources = [(root / path, catalog_name(path)) for path in (*EDITIONS, *EXERCISE_EDITIONS)]
    catalog_path = root / CATALOG.relative_to(LOCALE.parent.parent)
    catalog = polib.pofile(str(catalog_path), wrapwidth=0) if catalog_path.exists() else polib.POFile(wrapwidth=0)
    entries = [e for path, name in sources for e in extract(_load(path), name)]
    glossary = read_glossary(root / GLOSSARY.relative_to(LOCALE.parent.parent))
    exceptions = read_exceptions(root / EXCEPTIONS.relative_to(LOCALE.parent.parent))
    if args.check:
        problems = catalog_problems(catalog, entries) + glossary_problems(catalog, glossary, exceptions)
        for path in (root / p for p in EDITIONS):
            wanted = translate_notebook(_load(path), catalog_name(path.relative_to(root).as_posix()), catalog)
            target = _zh_path(path)
            if not target.exists() or _sources(_load(target)) != _sources(wanted):
                problems.append(f"{target.relative_to(root)} is stale: run bpe-lab translate")
        problems += [f"exercises/{name} is stale: run bpe-lab translate" for name in stale_chinese(root / "exercises")]
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            raise SystemExit(1)
        print(f"{len(entries)} entries translated; the Chinese notebooks and exercises are up to date")
        return
    merged = update_catalog(catalog, entries, [name for _, name in sources])
    catalog_path.parent.mkdir(parents=True, exist_ok=True)
    merged.save(str(catalog_path))
    for path in (root / p for p in EDITIONS):
        target = _zh_path(path)
        wanted = translate_notebook(_load(path), catalog_name(path.relative_to(root).as_posix()), merged)
        if target.exists() and _sources(_load(target)) == _sources(wanted):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(wanted, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if args.execute:
            command = [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace", target.name]
            subprocess.run(command, cwd=target.parent, check=True)
        print(f"wrote {target.relative_to(root)}")
    for name in release_chinese(root / "exercises", merged):
        print(f"wrote exercises/{name}")
    left = catalog_problems(merged, entries) + glossary_problems(merged, glossary, exceptions)
    print(f"{len(entries)} entries, {len(left)} still to translate or review in {catalog_path.relative_to(root)}")
    for problem in left:
        print(problem)


def add_translate_command(subparsers: Any) -> None:
    """Register ``bpe-lab translate`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("translate", help="update the Chinese catalog and write the Chinese notebooks")
    _arguments(parser)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default=str(ROOT), help="the repository (default: the one of this package)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything is out of date")
    parser.add_argument("--no-execute", dest="execute", action="store_false", help="write the notebooks unexecuted")
    parser.set_defaults(run=_run)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bpe_lab.translate``: the same as ``bpe-lab translate``."""
    parser = argparse.ArgumentParser(prog="python -m bpe_lab.translate", description=__doc__.partition("\n")[0])
    _arguments(parser)
    args = parser.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
