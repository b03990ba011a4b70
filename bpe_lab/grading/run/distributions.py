"""What of site-packages a grading kernel may import: an allow-list.

What this adds over ``jail`` (the walls: which folders a kernel sees): the
contents of the folders Python imports third-party code from. ``jail``
covers every site-packages folder with an empty one and binds back only
what ``allowed`` lists, so a library that would answer a task (tiktoken,
tokenizers, sentencepiece, subword-nmt, nbgrader) is not there to import,
whatever the notebook does to ``sys.path``.

What a kernel may import is computed, not written down by hand:

- ipykernel, which runs the kernel, and the libraries the course's
  notebooks import (``NOTEBOOKS_USE``);
- every distribution the package folder imports at module level (a
  function's own ``import tiktoken``, in the benchmarks, is what that
  function needs when it is called, not what the package needs to load);
- what one exercise's solution declares its kernel needs beside them
  (``needs``: ``"bpe_lab": {"kernel_needs": ["tokenizers"]}`` in the
  notebook's metadata, exercise 09's), for that exercise's kernels only;
- and the closure of their requirements, read from each distribution's
  metadata (``Requires-Dist``, markers evaluated here, extras left out),
  less ``NOT_RUN``: ipykernel requires debugpy for its debugger, which no
  grading kernel runs. Without it ipykernel starts with its debugger off,
  and in two fifths less CPU time (debugpy's import was 0.08 of 0.20
  core-seconds of ipykernel's start, measured here), paid by every
  kernel of every submission.

Each allowed distribution is bound back by the entries it installed at the
top of its site-packages folder (its ``RECORD``: ``numpy/``, ``numpy.libs/``,
``numpy-2.0.dist-info/``, ``six.py``), its ``.pth`` files included; an
editable install's ``.pth`` is bpe_lab's own and is never among them.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata as metadata
import site
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from bpe_lab.grading.parsing import parse

__all__ = [
    "KERNEL_NEEDS",
    "NOTEBOOKS_USE",
    "NOT_RUN",
    "needs",
    "imported_by",
    "closure",
    "site_dirs",
    "entries",
    "allowed",
]

#: What runs the kernel itself.
KERNEL_NEEDS = ("ipykernel",)
#: What the course's notebooks import (``solutions/*.ipynb``).
NOTEBOOKS_USE = ("numpy", "regex", "pandas", "matplotlib")
#: Required by the above but never run in a grading kernel: ipykernel's debugger.
NOT_RUN = ("debugpy",)


def needs(metadata: object) -> tuple[str, ...]:
    """The distributions a solution notebook's metadata says its kernel
    needs besides the package's (``"bpe_lab": {"kernel_needs": [...]}``).

    >>> needs({"bpe_lab": {"assignment": "09_production", "kernel_needs": ["tokenizers"]}}), needs({})
    (('tokenizers',), ())
    """
    meta = metadata.get("bpe_lab", {}) if isinstance(metadata, dict) else {}
    found = meta.get("kernel_needs", []) if isinstance(meta, dict) else []
    return tuple(sorted(str(name) for name in found)) if isinstance(found, list) else ()


def _module_level(tree: ast.Module) -> list[str]:
    """The top-level names of the modules a module imports when it loads:
    statements at module level, also inside ``if``/``try``/``with``, not
    inside functions or classes."""
    names: list[str] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names += [alias.name.partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.partition(".")[0])
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return names


#: Module-level imports by the SHA-256 of a file's bytes: a grading makes a view of
#: the package per notebook and forbidden set, nearly all of whose files are the
#: package's own, unchanged, so each text is parsed once per process.
_PARSED: dict[bytes, frozenset[str]] = {}


def _imports_of(path: Path) -> frozenset[str]:
    """The top-level names ``path`` imports at module level (none where it
    does not parse, or cannot be read: it cannot import)."""
    try:
        source = path.read_bytes()
    except OSError:
        return frozenset()
    key = hashlib.sha256(source).digest()
    if key not in _PARSED:
        try:
            _PARSED[key] = frozenset(_module_level(parse(source, str(path))))
        except (SyntaxError, ValueError):
            _PARSED[key] = frozenset()
    return _PARSED[key]


def _installed_state() -> tuple[tuple[str, int], ...]:
    """The site-packages folders and when each last changed: an install or
    an uninstall changes its folder, and what was read of the installed
    distributions before it is read again."""
    state = []
    for folder in site_dirs():
        try:
            state.append((str(folder), folder.stat().st_mtime_ns))
        except OSError:
            continue
    return tuple(state)


@functools.lru_cache(maxsize=4)
def _providers(state: tuple[tuple[str, int], ...]) -> Mapping[str, list[str]]:
    """``importlib.metadata.packages_distributions()``, read once per ``state``."""
    return metadata.packages_distributions()


def imported_by(package: Path) -> frozenset[str]:
    """The distributions whose modules the ``.py`` files under ``package``
    import at module level (the standard library and the package itself
    left out); a file that does not parse is skipped (it cannot import)."""
    modules: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        modules.update(_imports_of(path))
    providers = _providers(_installed_state())
    ours = {package.name, "bpe_lab"}  # its own distribution would bring all of bpe-lab's requirements
    found = {d for m in modules - set(sys.stdlib_module_names) - ours for d in providers.get(m, [])}
    return frozenset(canonicalize_name(d) for d in found) - {"bpe-lab"}


def _installed(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def closure(roots: tuple[str, ...]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``roots`` need, and what those need in
    turn, by canonical name (a root that is not installed is left out: a
    notebook that imports it fails as it would anywhere), never ``NOT_RUN``."""
    found: dict[str, metadata.Distribution] = {}
    todo = [canonicalize_name(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in found or name in NOT_RUN or (dist := _installed(name)) is None:
            continue
        found[name] = dist
        for text in dist.requires or []:
            try:
                requirement = Requirement(text)
                if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                    todo.append(canonicalize_name(requirement.name))
            except (InvalidRequirement, UndefinedEnvironmentName):
                continue
    return found


def site_dirs() -> list[Path]:
    """Every folder an interpreter here may import third-party code from:
    this one's site-packages, its base installation's, and the system's
    (Debian's ``dist-packages``), whether on ``sys.path`` or not."""
    found = [*site.getsitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        found += [str(p) for p in Path(prefix).glob("lib*/python3*/site-packages")]
    found += [str(p) for p in Path("/usr").glob("lib*/python3*/*-packages")]
    found += [str(p) for p in Path("/usr/local").glob("lib*/python3*/*-packages")]
    return sorted({Path(p).resolve() for p in found if Path(p).is_dir()})


def entries(dist: metadata.Distribution) -> tuple[Path, set[Path]]:
    """Where ``dist`` is installed, and what it put at the top of that
    folder (modules, packages, its ``.dist-info``, ``.pth`` files); its
    shared ``__pycache__`` and what it put elsewhere (scripts) left out."""
    home = Path(str(dist.locate_file(""))).resolve()
    tops: set[Path] = set()
    for file in dist.files or []:
        first = file.parts[0] if file.parts else ""
        if first and first not in ("..", "__pycache__") and not Path(first).is_absolute():
            tops.add(home / first)
    info = getattr(dist, "_path", None)  # the .dist-info folder, also where RECORD is missing
    if isinstance(info, Path):
        tops.add(info.resolve())
    return home, {t for t in tops if t.exists() and t.parent == home}


def allowed(package: Path, extra: tuple[str, ...] = ()) -> dict[Path, frozenset[Path]]:
    """What a kernel that imports ``package`` may import: site-packages
    folder -> the entries bound back into it. ``extra``: what its exercise
    needs besides (``needs``)."""
    return _bound((*KERNEL_NEEDS, *NOTEBOOKS_USE, *sorted(imported_by(package)), *extra), _installed_state())


@functools.lru_cache(maxsize=16)
def _bound(roots: tuple[str, ...], state: tuple[tuple[str, int], ...]) -> dict[Path, frozenset[Path]]:
    """``allowed`` for the distributions ``roots``, read once per ``state``
    (every view of one package imports the same few)."""
    found: dict[Path, set[Path]] = {}
    for dist in closure(roots).values():
        home, tops = entries(dist)
        found.setdefault(home, set()).update(tops)
    return {home: frozenset(tops) for home, tops in found.items()}
