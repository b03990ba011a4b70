"""Which of the package's functions and classes a set of names reaches: a closure over its source.

What this adds over ``guard.resolve`` (one dotted path to one function):
the whole set a notebook's names can get to, read from the package's
source with ``ast``, never imported, so that ``kernel_package`` can write
a package in which everything else has no body. ``reached(roots, stop)``:

- a function reaches every package name its body mentions (module-level
  names, imported names, ``module.attr`` chains, imports inside it, and
  what module-level values it mentions hold: ``_TABLE = {"a": f}``);
- a class reaches what each of its methods mentions (a kept class keeps
  every method: an instance can call any of them);
- code run at import (module-level statements, decorators, default
  values, base classes, class bodies) reaches what it *calls*; annotations
  reach nothing (the package postpones them), nor ``if __name__ ==
  "__main__"`` blocks;
- only the kernel's side of the package counts (``kernel_side``): the
  instructor's modules are absent from a kernel, so nothing there runs;
- ``stop``: functions (dotted paths, methods too) that are not entered.

It is conservative: a name mentioned counts as called. What it cannot
see (``getattr(module, "na" + "me")``) it does not keep, and a body that is
not kept raises ``Delegated`` naming itself.

>>> kept = reached({("bpe_lab", "merge_symbols")})
>>> ("bpe_lab.core.words", "merge_symbols") in kept, ("bpe_lab.core.encode", "dropout_symbols") in kept
(True, False)
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bpe_lab.grading.parsing import parse
from bpe_lab.grading.run.stubs import package_dir

__all__ = [
    "Name",
    "WHOLE",
    "KERNEL_PACKAGES",
    "KERNEL_MODULES",
    "Module",
    "kernel_side",
    "aliases",
    "index",
    "resolve",
    "chain",
    "methods",
    "split_path",
    "reached",
]

#: ``(module, top-level name)``: a function or class of the package.
Name = tuple[str, str]


#: Modules a kernel runs as they are: its launcher, the grader's calls in it, the guard, the probe's writer.
WHOLE = (
    "bpe_lab.grading.run.launch",
    "bpe_lab.grading.run.in_kernel",
    "bpe_lab.grading.check.guard",
    "bpe_lab.grading.check.hidden",
)
_CHECK = "bpe_lab.grading.check"

#: Modules a kernel never needs (the instructor's side, the command line, the
#: benchmarks): absent from the view, importing one raises ImportError.
KERNEL_PACKAGES = ("bpe_lab.core", "bpe_lab.bytelevel", "bpe_lab.variants", "bpe_lab.ui", _CHECK)
#: Beside them, the packages above the whole modules (``run``: its launcher's,
#: as ``bpe_lab.grading`` was when the launcher sat there), and ``check``'s
#: ``answers`` is kernel side with the rest of ``check``.
KERNEL_MODULES = ("bpe_lab", "bpe_lab.grading", "bpe_lab.grading.run", *WHOLE)


def kernel_side(module: str) -> bool:
    """Whether ``module`` is part of what a grading kernel may import."""
    return module in KERNEL_MODULES or any(module == m or module.startswith(m + ".") for m in KERNEL_PACKAGES)


@dataclass
class Module:
    """One module's source as the closure reads it."""

    name: str
    path: Path
    tree: ast.Module
    defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = field(default_factory=dict)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, attr or "")


def aliases(nodes: Iterable[ast.AST]) -> dict[str, tuple[str, str]]:
    """The names that ``import`` statements among ``nodes`` bind."""
    found: dict[str, tuple[str, str]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = (alias.name, "")
                else:
                    top = alias.name.split(".")[0]
                    found[top] = (top, "")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


@functools.cache
def index(root: Path) -> dict[str, Module]:
    """Every module of the package at ``root``, parsed once."""
    modules: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        source = path.read_text(encoding="utf-8")
        try:
            tree = parse(source, str(path))
        except SyntaxError as err:
            raise ValueError(f"{path}, line {err.lineno}: cannot parse the package: {err.msg}") from None
        module = Module(name, path, tree)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                module.defs[node.name] = node
        module.aliases = aliases(top_level_statements(tree))  # under ``if`` and ``try`` too
        modules[name] = module
    return modules


def top_level_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Statements that run at import, inside ``if``/``try`` blocks too."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            continue  # runs only as a script
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)


def resolve(modules: dict[str, Module], module: str, attr: str, depth: int = 0) -> Name | str | None:
    """What ``module.attr`` is: a package def ``(module, name)``, a package
    module's name, or None (a constant, or not the package's)."""
    if depth > 20 or module not in modules:
        return None
    if attr == "":
        return module
    if f"{module}.{attr}" in modules:
        return f"{module}.{attr}"
    found = modules[module]
    if attr in found.defs:
        return (module, attr)
    if attr in found.aliases:
        target, name = found.aliases[attr]
        return resolve(modules, target, name, depth + 1)
    return None


def chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _without_annotations(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that skips annotations (never evaluated: postponed)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child_field, value in ast.iter_fields(current):
            if child_field in ("annotation", "returns"):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(c for c in children if isinstance(c, ast.AST))


def _mentions(
    modules: dict[str, Module], module: Module, nodes: Iterable[ast.AST], local: dict[str, tuple[str, str]]
) -> set[Name]:
    """The package defs that ``nodes`` (code of ``module``) mention."""
    bound = {**module.aliases, **local}
    found: set[Name] = set()

    def add(target: Name | str | None, rest: list[str]) -> None:
        for attr in rest:
            if not isinstance(target, str):
                break
            target = resolve(modules, target, attr)
        if isinstance(target, tuple):
            found.add(target)

    for top in nodes:
        for node in _without_annotations(top):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    add(resolve(modules, node.module, alias.name), [])
            elif isinstance(node, ast.Attribute):
                parts = chain(node)
                if parts and parts[0] in bound:
                    target, attr = bound[parts[0]]
                    add(resolve(modules, target, attr), parts[1:])
            elif isinstance(node, ast.Name):
                if node.id in module.defs:
                    found.add((module.name, node.id))
                elif node.id in bound:
                    target, attr = bound[node.id]
                    add(resolve(modules, target, attr), [])
    return found


def _at_import(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """The parts of a def that run when the module is imported: its
    decorators are calls, written as one (``@functools.wraps(f)``) or not
    (``@_fonts``)."""
    parts: list[ast.AST] = [d if isinstance(d, ast.Call) else ast.Call(d, [], []) for d in node.decorator_list]
    if isinstance(node, ast.ClassDef):
        parts += node.bases + [k.value for k in node.keywords]
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts += _at_import(item)
            else:
                parts.append(item)
    else:
        parts += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
    return parts


def methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _body_mentions(
    modules: dict[str, Module], module: Module, node: ast.AST, values: dict[str, list[ast.AST]]
) -> set[Name]:
    """What a function's body mentions, and what the module-level values it
    mentions do (``_TABLE = {"a": f}`` reaches ``f``)."""
    found = _mentions(modules, module, [node], aliases(ast.walk(node)))
    names = {n.id for n in _without_annotations(node) if isinstance(n, ast.Name) and n.id in values}
    done: set[str] = set()
    while names:
        name = names.pop()
        done.add(name)
        found |= _mentions(modules, module, values[name], {})
        names |= {n.id for v in values[name] for n in ast.walk(v) if isinstance(n, ast.Name) and n.id in values} - done
    return found


def split_path(path: str, modules: dict[str, Module]) -> tuple[str, str]:
    """``bpe_lab.core.train_fast._Trainer.merge`` -> (module, qualified name)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:cut]) in modules:
            return ".".join(parts[:cut]), ".".join(parts[cut:])
    raise ValueError(f"{path!r}: no module of the package holds it")


def _calls(nodes: Iterable[ast.AST]) -> list[ast.AST]:
    """The calls among ``nodes`` (code that runs at import): what they call
    and what they are handed (``map(f, ...)`` calls ``f``)."""
    return [node for top in nodes for node in _without_annotations(top) if isinstance(node, ast.Call)]


def _assigned(module: Module) -> dict[str, list[ast.AST]]:
    """Module-level names bound by assignments, and the values bound."""
    found: dict[str, list[ast.AST]] = defaultdict(list)
    for node in top_level_statements(module.tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        value = getattr(node, "value", None)
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and value is not None:
                    found[name.id].append(value)
    return found


@functools.cache
def _run_at_import(root: Path) -> frozenset[Name]:
    """What code run at import (``_at_import``, module-level statements) of
    the kernel's side of the package at ``root`` calls: reached by any view."""
    modules = index(root)
    found: set[Name] = set()
    for module in modules.values():
        if not kernel_side(module.name):
            continue
        run: list[ast.AST] = [n for n in top_level_statements(module.tree) if n not in module.defs.values()]
        for node in module.defs.values():
            run += _at_import(node)
        found |= _mentions(modules, module, _calls(run), {})
    return frozenset(found)


@functools.cache
def _edges(root: Path, name: Name) -> tuple[frozenset[Name], tuple[tuple[str, frozenset[Name]], ...]]:
    """What the def ``name`` mentions, read once per process: a function's
    body (and the module-level values it mentions), or a class's bases and,
    by method name, each method's body (a method in ``stop`` is not entered)."""
    modules = index(root)
    module = modules[name[0]]
    node = module.defs[name[1]]
    values = _values(root, name[0])
    if isinstance(node, ast.ClassDef):  # its bases too: a subclass runs their methods (super().__init__)
        bases = _mentions(modules, module, [*node.bases, *(k.value for k in node.keywords)], {})
        by_method = tuple((m.name, frozenset(_body_mentions(modules, module, m, values))) for m in methods(node))
        return frozenset(bases), by_method
    return frozenset(_body_mentions(modules, module, node, values)), ()


@functools.cache
def _values(root: Path, module: str) -> dict[str, list[ast.AST]]:
    """``_assigned`` for one module of the package at ``root``, once."""
    return _assigned(index(root)[module])


def reached(roots: Iterable[Name], stop: Iterable[str] = (), root: Path | None = None) -> set[Name]:
    """The package's defs that ``roots`` reach, and those that code run at
    import calls, not going through the functions in ``stop`` (dotted paths).
    What each def mentions is read once per process (``_edges``): each view
    only walks them."""
    root = root or package_dir()
    modules = index(root)
    stopped = {split_path(p, modules) for p in stop}
    todo: list[Name] = []
    for name in roots:
        target = resolve(modules, *name)
        if isinstance(target, tuple):
            todo.append(target)
        elif target is None:
            raise ValueError(f"{name[0]}.{name[1]}: the package defines no such function or class")
    todo += _run_at_import(root)
    seen: set[Name] = set()
    while todo:
        name = todo.pop()
        if name in seen or name in stopped or not kernel_side(name[0]):
            continue
        seen.add(name)
        mentioned, by_method = _edges(root, name)
        todo += mentioned
        for method, inside in by_method:
            if (name[0], f"{name[1]}.{method}") not in stopped:
                todo += inside
    return seen
