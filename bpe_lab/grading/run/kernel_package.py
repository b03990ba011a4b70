"""The ``bpe_lab`` a grading kernel imports: an allow-list, not a copy.

What this adds over ``reach`` (which defs a set of names reaches) and
``stubs`` (blanking a function's body): the package folder a kernel gets,
built from what its notebook needs. ``view(roots, target, stop)`` writes
a copy of the package in which

- a top-level function or class keeps its code only if the *roots* reach
  it (``reach.reached``); every other body is ``raise Delegated(PATH)``
  (PATH: where it is defined), so a learner's function that goes through
  it fails with the name of what it reached. Nothing is deleted: every
  import of the kernel's side still works;
- ``stop`` (a task's ``forbid``: its answers) keep no body even where a
  root reaches them, and what only they reach goes too;
- the instructor's modules (the grader, its cases, the command line, the
  benchmarks) raise ``ImportError`` when imported;
- ``grading.run.launch``, ``grading.run.in_kernel``, ``grading.check.guard``
  and ``grading.check.hidden`` (the kernel's launcher, what it runs for
  the grader, the probe's guard and writer) stay whole (``reach.WHOLE``);
- ``bpe_lab.grading.check`` is ``KERNEL_CHECK``, names only: ``check_*``
  that decide nothing (``in_kernel.no_check``: the grader runs their cases
  itself, ``visible``), an inert ``HiddenCases`` (``in_kernel``'s), and
  the chapter modules' helpers (kept if reached;
  ``HELPERS`` roots the ones the grader's calls use: 08's, 09's and 10's
  results helpers, which call the learner's streaming encoder, pipeline,
  processor or class and send back plain data). Should a check some of
  whose cases cannot be sent come back (none does now), ``real_checks``
  makes it the package's own, in the first run only, with what it
  reaches: its failure in the kernel costs the task (the kernel's word,
  believed since it only costs points), its success counts for nothing the
  grader did not see.

The roots (``notebook_roots``) are what the solution's locked and demo
cells name from ``bpe_lab`` (``from bpe_lab import train_bpe``,
``bpe_lab.X``, ``check.text_file``), what its test cells' metadata
``allow``, and ``HELPERS``, which generated cases call. The granularity is
the top-level def and the class: a kept class keeps all its methods
(but a stopped method, such as ``_Trainer.merge``, has no body).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import marshal
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.parsing import parse
from bpe_lab.grading.run.reach import (
    WHOLE,
    Name,
    aliases,
    chain,
    index,
    kernel_side,
    methods,
    reached,
    resolve,
    split_path,
)
from bpe_lab.grading.run.stubs import package_dir, stub_source

__all__ = ["KERNEL_CHECK", "HELPERS", "bodies", "notebook_roots", "stubbed", "view"]

_CHECK = "bpe_lab.grading.check"

_ABSENT = '''"""Not in a grading kernel's bpe_lab: {name} is the instructor's."""

raise ImportError({message!r})
'''

#: Learner-side helpers that generated hidden calls use (``cases.bytelevel``), and the visible
#: checks' calls (``visible``: chapter 04's traced words are built in the kernel, and 09's and 10's
#: results helpers call the learner's pipeline, processor or class there and send back plain data).
#: 08's ``stream_results`` is its test cell's ``allow`` instead: it reaches ``MeteredText`` and with
#: it the ``Tokenizer``, which only 08's kernel may keep (its hidden cases use them already).
HELPERS: tuple[Name, ...] = (
    ("bpe_lab.grading.check", "text_file"),
    ("bpe_lab.grading.check", "TracedWords"),
    ("bpe_lab.grading.check", "traced_corpus"),
    ("bpe_lab.grading.check", "pipeline_results"),
    ("bpe_lab.grading.check", "pair_results"),
    ("bpe_lab.grading.check", "my_tokenizer_results"),
)

#: What ``from bpe_lab.grading import check`` gives a grading kernel: names only (imports and
#: aliases); what they name is module code (``in_kernel.no_check``, ``in_kernel.InertHiddenCases``).
KERNEL_CHECK = '''"""The self-checks as a grading kernel sees them: they decide nothing.

In a grading kernel the ``check_*`` functions do nothing: bpe-lab's grader
runs their cases itself, calling the learner's function in this kernel
with plain arguments and judging the values in its own process.
``HiddenCases`` is inert for the same reason: the grader reads hidden
tests from the solution and never runs them as written.
"""

from __future__ import annotations

from bpe_lab.grading.check.runner import CheckFailed
from bpe_lab.grading.run.in_kernel import InertHiddenCases as HiddenCases
from bpe_lab.grading.run.in_kernel import no_check as _no_check

{imports}

{checks}
'''


def stubbed(keep: set[Name], stop: Iterable[str] = (), root: Path | None = None) -> dict[Path, dict[str, str]]:
    """For each file, the functions (qualified names) that get no body, and
    the path each one's ``Delegated`` names."""
    modules = index(root or package_dir())
    stopped = {split_path(p, modules) for p in stop}
    found: dict[Path, dict[str, str]] = defaultdict(dict)
    for module in modules.values():
        if module.name in WHOLE or not kernel_side(module.name):
            continue
        for name, node in module.defs.items():
            kept = (module.name, name) in keep
            if isinstance(node, ast.ClassDef):
                functions = [(f"{name}.{m.name}", m) for m in methods(node)]
            else:
                functions = [(name, node)]
            for qualname, item in functions:
                if (not kept or (module.name, qualname) in stopped) and _has_body(item):
                    found[module.path][qualname] = f"{module.name}.{qualname}"
    return found


def _has_body(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Whether a function does anything besides its docstring."""
    body = node.body
    return not (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant))


def _kernel_check(root: Path, real: Iterable[str] = ()) -> str:
    """The view's ``bpe_lab/grading/check/__init__.py``; the self-checks in
    ``real`` are the package's own."""
    modules = index(root)
    package = modules[_CHECK]
    imports, checks = [], []
    real = set(real)
    for alias, (module, attr) in sorted(package.aliases.items()):
        if alias.startswith("check_") and alias in real:
            imports.append(f"from {module} import {attr} as {alias}")
        elif alias.startswith("check_"):
            checks.append(f"{alias} = _no_check")
        elif alias not in ("CheckFailed", "HiddenCases", "annotations") and attr:
            imports.append(f"from {module} import {attr} as {alias}")
    return KERNEL_CHECK.format(imports="\n".join(imports), checks="\n".join(checks))


def view(
    roots: Iterable[Name],
    target: Path,
    stop: Iterable[str] = (),
    answers: Iterable[str] = (),
    real_checks: Iterable[str] = (),
    source_dir: Path | None = None,
) -> tuple[Path, set[Name]]:
    """Write the kernel's ``bpe_lab`` into ``target/bpe_lab``: the package with
    only what ``roots`` reach (not through ``stop``) keeping a body, and the
    inert ``check``; return its folder and the defs kept. A stub of ``stop``
    or of ``answers`` (the notebook's answers) says it is the task's to
    write (``Delegated.own``), the others that the kernel does not have it.
    ``real_checks``: self-checks (``check_X``) the kernel runs for real, with
    what they reach: those whose cases the grader cannot send (``visible``)."""
    source_dir = source_dir or package_dir()
    keep, texts = _plan(roots, stop, answers, real_checks, source_dir)
    copy = target / "bpe_lab"
    shutil.copytree(source_dir, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for relative, text in texts:
        (copy / relative).write_text(text, encoding="utf-8")
    for path in copy.rglob("*.py"):
        _write_bytecode(path)
    return copy, set(keep)


def _write_bytecode(path: Path) -> None:
    """``path`` compiled where an import looks for it (``__pycache__``), as
    a pyc checked against its source's hash (PEP 552): a kernel imports
    the view without compiling it (it writes no bytecode, and each view
    is new: every kernel compiled the package again, about a third of its
    import), and a pyc that is not its source's is never used."""
    source = path.read_bytes()
    compiled = _bytecode(source)
    if compiled is None:  # the kernel meets the SyntaxError an import of it raises anywhere
        return
    cached = Path(importlib.util.cache_from_source(str(path)))
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(compiled)


#: A pyc's flags for "hash-based, checked against the source at each import" (PEP 552).
_CHECKED_HASH = 0b11


@functools.lru_cache(maxsize=1024)
def _bytecode(source: bytes) -> bytes | None:
    """A checked-hash pyc of ``source`` (None if it does not compile),
    compiled as an import compiles it without ``-O``, as a kernel runs (the
    file name in it is set to the source's when imported); once per
    process for each text: most of a view's files are the package's own in
    every view."""
    try:
        code = compile(source, "<bpe_lab view>", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little") + importlib.util.source_hash(source)
    return header + marshal.dumps(code)


def bodies(
    roots: Iterable[Name],
    stop: Iterable[str] = (),
    answers: Iterable[str] = (),
    real_checks: Iterable[str] = (),
    source_dir: Path | None = None,
) -> frozenset[Name]:
    """The defs that keep their code in ``view(roots, ..., stop, answers,
    real_checks)``, without writing it: two views with the same bodies
    differ only in what their stubs say."""
    return _plan(roots, stop, answers, real_checks, source_dir or package_dir())[0]


def _plan(
    roots: Iterable[Name], stop: Iterable[str], answers: Iterable[str], real_checks: Iterable[str], source_dir: Path
) -> tuple[frozenset[Name], tuple[tuple[Path, str], ...]]:
    """``_planned`` for arguments of any iterable kind. A forbidden function
    of another library (exercise 09's ByteLevelBPETokenizer) has no stub:
    a view is of bpe_lab only, so only the first run's trap in the kernel
    takes that one away."""
    stop = tuple(p for p in stop if p.split(".")[0] == "bpe_lab")
    return _planned(frozenset(roots), stop, frozenset(answers), tuple(real_checks), source_dir)


@functools.lru_cache(maxsize=128)
def _planned(
    roots: frozenset[Name],
    stop: tuple[str, ...],
    answers: frozenset[str],
    real_checks: tuple[str, ...],
    source_dir: Path,
) -> tuple[frozenset[Name], tuple[tuple[Path, str], ...]]:
    """What ``view`` keeps, and each file it writes over the copy (its path
    under the package, its text): worked out once per process for each
    view asked for (a grading asks for the same few again and again, and
    ``reach.index`` reads the package once per process too)."""
    keep = reached({*roots, *((_CHECK, name) for name in real_checks)}, stop, source_dir)
    own = set(stop) | set(answers)
    texts: dict[Path, str] = {}
    for file, stubs in stubbed(keep, stop, source_dir).items():
        theirs = tuple(sorted((q, p) for q, p in stubs.items() if p in own))
        rest = tuple(sorted((q, p) for q, p in stubs.items() if p not in own))
        texts[file.relative_to(source_dir)] = _stubbed_text(file, theirs, rest)
    for module in index(source_dir).values():
        if not kernel_side(module.name):
            message = f"{module.name} is not available in a grading kernel"
            texts[module.path.relative_to(source_dir)] = _ABSENT.format(name=module.name, message=message)
    texts[Path("grading", "check", "__init__.py")] = _kernel_check(source_dir, real_checks)
    return frozenset(keep), tuple(texts.items())


@functools.lru_cache(maxsize=1024)
def _stubbed_text(file: Path, theirs: tuple[tuple[str, str], ...], rest: tuple[tuple[str, str], ...]) -> str:
    """``file`` with ``theirs`` stubbed as the task's to write and ``rest``
    as absent from the kernel (qualified name, path): most files are
    stubbed alike in every view, and written out once per process."""
    text = file.read_text(encoding="utf-8")
    text = stub_source(text, dict(theirs)) if theirs else text
    return stub_source(text, dict(rest), own=False) if rest else text


def notebook_roots(solution: nbformat.NotebookNode) -> set[Name]:
    """What a solution's cells name from ``bpe_lab`` outside its answer cells
    (where the learner writes), its test cells' ``allow`` lists, and
    ``HELPERS``; not the self-checks, which ``KERNEL_CHECK`` replaces."""
    found: set[Name] = set(HELPERS)
    trees = []
    for cell in solution.cells:
        meta = cell.get("metadata", {})
        grading = meta.get("nbgrader", {}) if isinstance(meta.get("nbgrader", {}), dict) else {}
        allowed = meta.get("bpe_lab", {}).get("allow", []) if isinstance(meta.get("bpe_lab", {}), dict) else []
        for path in allowed:
            found.add(_allowed(str(path)))
        if cell.get("cell_type") != "code" or grading.get("solution"):
            continue
        try:
            trees.append(parse(cell.source))
        except SyntaxError:
            continue
    bound = {k: v for tree in trees for k, v in aliases(ast.walk(tree)).items() if v[0].split(".")[0] == "bpe_lab"}
    for tree in trees:  # a name bound in one cell (``check``, in the setup) is used in the next ones
        found |= _cell_names(tree, bound)
    return {name for name in found if not _inert(name)}


def _inert(name: Name) -> bool:
    """Whether ``KERNEL_CHECK`` defines ``name`` itself (the self-checks)."""
    return name[0] == _CHECK and (name[1].startswith("check_") or name[1] in ("HiddenCases", "CheckFailed"))


def _allowed(path: str) -> Name:
    """A metadata ``allow`` entry (``count_pairs`` or a dotted path) as a root."""
    if "." not in path:
        return ("bpe_lab", path)
    module, qualname = split_path(path, index(package_dir()))
    return (module, qualname.split(".")[0])


def _cell_names(tree: ast.Module, bound: dict[str, tuple[str, str]]) -> set[Name]:
    """``from bpe_lab.X import a`` and ``alias.attr`` chains (``bound``: the
    notebook's names for modules of the package) of a cell."""
    modules = index(package_dir())
    found: set[Name] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bpe_lab":
            for alias in node.names:
                if isinstance(resolve(modules, node.module, alias.name), tuple):
                    found.add((node.module, alias.name))
        elif isinstance(node, ast.Attribute) and (parts := chain(node)) and parts[0] in bound:
            target: Name | str | None = resolve(modules, *bound[parts[0]])
            for attr in parts[1:]:
                if not isinstance(target, str):
                    break
                module, target = target, resolve(modules, target, attr)
                if isinstance(target, tuple):
                    found.add((module, attr))
    return found
