"""Running a notebook's class again in a fresh interpreter: what a saved file alone must carry.

What this adds over ``runner``: a way to load what a learner's class saved
where nothing the saving process held in memory can answer. A ``load``
that returns the object it kept under a key written into the file (a
module-level dict) passes any check made in the same process; in a fresh
interpreter that dict is empty.

``fresh_ids(kind, path, text)`` starts ``sys.executable`` (a process of the
same sandbox, when run in a grading kernel), which runs again the cells the
class was defined in, and the cells of the notebook functions and classes
they name (found through their code's file, the cell IPython keeps in
``linecache``), after importing the modules and the names from modules
they use and copying the constants they name that are immutable (a
string, a number, bytes, tuples of them); nothing else of the learner's
process crosses. There it calls ``kind.load(path).encode(text)`` and
sends the ids back as JSON.

What it cannot see: a class whose cells are not in ``linecache`` (defined
by ``exec`` in a script or a test): ``fresh_source`` returns None, and
``in_a_notebook`` tells whether that should be so (outside IPython, the
caller loads in its own process). A learner's kernel can replace this
module's functions, as any of ``check``'s (the kernel's word).
"""

from __future__ import annotations

import ast
import json
import linecache
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["fresh_source", "fresh_ids", "in_a_notebook", "FRESH_TIMEOUT"]

#: Seconds the fresh interpreter may take to define the class, load the file and encode.
FRESH_TIMEOUT = 120

_PLAIN = (str, bytes, int, float, bool, type(None))

_RUN = """
import json as __bpe_lab_json, sys as __bpe_lab_sys
for __bpe_lab_cell in __bpe_lab_cells:
    try:
        exec(compile(__bpe_lab_cell, "<cell>", "exec"), globals())
    except Exception as __bpe_lab_error:
        print("failed again:", type(__bpe_lab_error).__name__, __bpe_lab_error, file=__bpe_lab_sys.stderr)
__bpe_lab_args = __bpe_lab_json.loads(__bpe_lab_sys.stdin.read())
__bpe_lab_ids = {name}.load(__bpe_lab_args["path"]).encode(__bpe_lab_args["text"])
print(__bpe_lab_json.dumps([int(i) for i in __bpe_lab_ids]))
"""


def in_a_notebook() -> bool:
    """Whether this process is an IPython kernel or shell (where every cell is in ``linecache``)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    return callable(get) and get() is not None


def _functions(kind: type) -> list[types.FunctionType]:
    """The functions a class's body defined: methods, class and static methods, properties' parts."""
    found = []
    for value in vars(kind).values():
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        if isinstance(value, property):
            found += [f for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)]
        elif isinstance(value, types.FunctionType):
            found.append(value)
    return found


def _cell(code: types.CodeType) -> str | None:
    """The source of the cell ``code`` was compiled from, if IPython keeps it (no file behind it)."""
    entry = linecache.cache.get(code.co_filename)
    if not (isinstance(entry, tuple) and len(entry) == 4 and entry[1] is None):
        return None
    return "".join(entry[2])


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell reads, and those its top level binds (none for a cell that is not Python)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), set()
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return read, bound


def _constant(value: Any) -> bool:
    """Immutable plain data: a string, a number, bytes, None, or tuples of them."""
    return isinstance(value, _PLAIN) or (isinstance(value, tuple) and all(_constant(v) for v in value))


def fresh_source(kind: type) -> str | None:
    """A program that defines ``kind`` again from its notebook cells and
    prints the ids of ``kind.load(PATH).encode(TEXT)`` (``PATH`` and
    ``TEXT`` read as JSON from its input); None when a cell is not found."""
    if not isinstance(kind, type):
        raise TypeError(f"fresh_source: kind must be a class, not {type(kind).__name__}")
    functions = _functions(kind)
    if not functions or "<locals>" in kind.__qualname__:
        return None
    space = functions[0].__globals__
    cells: list[str] = []
    preamble: dict[str, str] = {}
    visited: set[str] = set()

    def visit(value: Any) -> bool:
        """Add the cells ``value`` (a notebook class or function) was defined in, what they name first."""
        parts = _functions(value) if isinstance(value, type) else [value]
        for code in {f.__code__.co_filename: f.__code__ for f in parts}.values():
            source = _cell(code)
            if source is None:
                return False
            if code.co_filename in visited:
                continue
            visited.add(code.co_filename)
            read, bound = _names(source)
            if not all(name not in space or resolve(name, space[name]) for name in sorted(read - bound)):
                return False
            cells.append(source)
        return True

    def resolve(name: str, value: Any) -> bool:
        """Say in the preamble how ``name`` is had again, if it can be; False if its cells are not found."""
        module = getattr(value, "__module__", None)
        if isinstance(value, types.ModuleType):
            preamble[name] = f"import {value.__name__}\n{name} = __import__('sys').modules[{value.__name__!r}]"
        elif isinstance(value, (type, types.FunctionType)) and module == kind.__module__:
            return visit(value)
        elif isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) and isinstance(module, str):
            qualname = getattr(value, "__qualname__", "<")
            if "<" not in qualname and module in sys.modules:
                preamble[name] = f"import {module}\n{name} = __import__('sys').modules[{module!r}].{qualname}"
        elif _constant(value):
            preamble[name] = f"{name} = {value!r}"
        return True

    if not visit(kind):
        return None
    return f"__bpe_lab_cells = {[*preamble.values(), *cells]!r}\n" + _RUN.format(name=kind.__name__)


def fresh_ids(kind: type, path: Path, text: str) -> list[int]:
    """The ids of ``kind.load(path).encode(text)`` computed in a fresh
    interpreter (``fresh_source``); a ``RuntimeError`` naming the last line
    of its errors when it failed, a ``LookupError`` when the class's cells
    cannot be found."""
    program = fresh_source(kind)
    if program is None:
        raise LookupError(
            f"{kind.__name__}'s cells were not found, so it cannot be loaded again in a fresh interpreter: "
            "define the class in a notebook cell"
        )
    try:
        done = subprocess.run(
            [sys.executable, "-c", program],
            input=json.dumps({"path": str(path), "text": text}),
            capture_output=True,
            text=True,
            timeout=FRESH_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"loading in a fresh interpreter took more than {FRESH_TIMEOUT} s") from None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if done.returncode != 0:
        why = lines[-1] if lines else f"exit status {done.returncode}"
        raise RuntimeError(f"{kind.__name__}.load in a fresh interpreter (the saved file alone) failed: {why}")
    try:
        ids = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(f"{kind.__name__}.load in a fresh interpreter sent back no ids") from None
    if not (isinstance(ids, list) and all(isinstance(i, int) for i in ids)):
        raise RuntimeError(f"{kind.__name__}.load in a fresh interpreter sent back no ids")
    return ids
