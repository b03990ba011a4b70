"""Blanking a function's body: what a kernel's package view is made of.

What this adds over ``guard`` (which takes the answers away for a moment,
inside the learner's kernel, where the learner could put them back): source
in which a function's code was never there. ``stub_source(source, stubs)``
replaces the body of each named function by ``raise Delegated(path)``;
``kernel_package`` writes the ``bpe_lab`` a grading kernel imports with it,
so no saved ``__code__``, ``importlib.reload``, ``inspect.getsource`` or
file read can bring a blanked body back.

Only the lines of each body change (docstrings stay), so line numbers and
everything else in the copy are the original's.

>>> source = 'def f(x):\\n    "Doc."\\n    return x + 1\\n\\ndef g():\\n    return 2\\n'
>>> print(stub_source(source, {"f": "pkg.f"}))
def f(x):
    "Doc."
    raise __import__('bpe_lab.grading.check.guard', fromlist=['Delegated']).Delegated('pkg.f')
<BLANKLINE>
def g():
    return 2
<BLANKLINE>

A body that begins with a decorated function loses its decorators too:

>>> source = 'def outer(f):\\n    "Doc."\\n    @wraps(f)\\n    def inner():\\n        return f()\\n    return inner\\n'
>>> print(stub_source(source, {"outer": "pkg.outer"}))
def outer(f):
    "Doc."
    raise __import__('bpe_lab.grading.check.guard', fromlist=['Delegated']).Delegated('pkg.outer')
<BLANKLINE>
"""

from __future__ import annotations

import ast
from pathlib import Path

from bpe_lab.grading.parsing import parse

__all__ = ["package_dir", "stub_source"]


def package_dir() -> Path:
    """The folder of the installed ``bpe_lab`` package."""
    return Path(__file__).resolve().parents[2]


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods by qualified name (``Tokenizer.encode``)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def stub_source(source: str, stubs: dict[str, str], *, own: bool = True) -> str:
    """``source`` with the body of each function ``stubs`` names (qualified
    name -> the path its ``Delegated`` carries) replaced by a raise;
    ``own``: the function answers the task (else it is only absent from
    the kernel's package view, ``kernel_package``)."""
    lines = source.splitlines(keepends=True)
    functions = _functions(parse(source))
    missing = sorted(set(stubs) - set(functions))
    if missing:
        raise ValueError(f"no function {', '.join(missing)} to stub")
    # from the bottom up, so earlier line numbers stay right
    for qualname in sorted(stubs, key=lambda q: -functions[q].lineno):
        node = functions[qualname]
        body = node.body
        has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
        first = body[1] if has_doc and len(body) > 1 else body[0]
        if has_doc and len(body) == 1:
            raise ValueError(f"{qualname}: cannot stub a function whose body is only a docstring")
        # a decorated statement begins at its first decorator (``first.lineno`` is its ``def``'s)
        top = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
        start, end = top - 1, body[-1].end_lineno or first.lineno
        path = stubs[qualname]
        guard = "__import__('bpe_lab.grading.check.guard', fromlist=['Delegated'])"
        trap = f"raise {guard}.Delegated({path!r}{'' if own else ', False'})"
        if first.lineno == node.lineno:  # def f(): return 1
            head = lines[start].encode()[: first.col_offset].decode()
            lines[start:end] = [f"{head}{trap}\n"]
            continue
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        lines[start:end] = [f"{indent}{trap}\n"]
    return "".join(lines)
