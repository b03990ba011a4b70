"""The grader uses jupyter_client, nbclient and pyzmq through their public
API only (issue 30, point 3): a release of either library that renames a
private method must not break grading for every instructor.

The package's source is read with ``ast``; what is looked for:

- an override: a method ``_x`` of a class of ours that has a class of those
  libraries among its bases (directly, or through a mixin of ours), where
  that library class defines ``_x``;
- a use: ``something._x`` (read, called or passed) where ``_x`` is a
  private attribute of one of those libraries' classes and no class or
  function of ours defines a ``_x`` (so it can only be theirs).

What is found and not in ``ALLOWED`` fails the test, listed. ``ALLOWED``
may only shrink: each entry says why it is still there.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import bpe_lab

PACKAGE = Path(bpe_lab.__file__).resolve().parent
LIBRARIES = ("jupyter_client", "nbclient", "zmq")

#: The library classes whose private names a use may not touch (besides every library class we subclass).
WATCHED = (
    "jupyter_client.manager.KernelManager",
    "jupyter_client.manager.AsyncKernelManager",
    "jupyter_client.client.KernelClient",
    "jupyter_client.asynchronous.client.AsyncKernelClient",
    "jupyter_client.channels.ZMQSocketChannel",
    "jupyter_client.channels.AsyncZMQSocketChannel",
    "jupyter_client.session.Session",
    "jupyter_client.kernelspec.KernelSpecManager",
    "jupyter_client.kernelspec.KernelSpec",
    "nbclient.client.NotebookClient",
    "zmq.Context",
    "zmq.Socket",
    "zmq.Frame",
    "zmq.Poller",
    "zmq.asyncio.Context",
    "zmq.asyncio.Socket",
    "zmq.asyncio.Poller",
)

#: Overrides and uses still there, as "file:Class.method" or "file:.attribute"
#: (a use), with why. Only ever shrinks.
ALLOWED: dict[str, str] = {
    # The manager's own control socket (jupyter_client connects it at start and
    # sends shutdown_request on it) must reach the kernel through the relay, like
    # the client's: connected to the kernel directly, a kernel could send a
    # message of very many frames into the grader's memory (zmq assembles a
    # message whole; MAXMSGSIZE bounds one frame). jupyter_client has no public
    # setting for where the manager connects. Goes with the relay, once each
    # submission is graded in a worker process of bounded memory.
    "grading/run/wire.py:Manager._make_url": "the manager's control socket goes through the relay",
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted path it was imported as, for names from the watched libraries."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in LIBRARIES:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    names[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
    return names


def _resolve(path: str) -> type | None:
    """The library class at dotted ``path`` (None: not one)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part, None)
        return found if isinstance(found, type) else None
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _sources() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(PACKAGE)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _hierarchy(
    node: ast.ClassDef, classes: dict[str, ast.ClassDef], imported: dict[str, str], seen: frozenset[str] = frozenset()
) -> tuple[list[ast.ClassDef], list[type]]:
    """Our classes in ``node``'s bases (itself included) and the library classes among them."""
    local, library = [node], []
    for base in node.bases:
        name = _dotted(base)
        if name in classes and name not in seen:
            more_local, more_library = _hierarchy(classes[name], classes, imported, seen | {node.name})
            local += more_local
            library += more_library
        elif name.split(".")[0] in imported:
            head, _, rest = name.partition(".")
            cls = _resolve(imported[head] + (f".{rest}" if rest else ""))
            if cls is not None:
                library.append(cls)
    return local, library


def _findings(sources: dict[str, ast.Module]) -> set[str]:
    found: set[str] = set()
    ours: set[str] = set()  # private names our own code defines
    watched = [cls for cls in map(_resolve, WATCHED) if cls is not None]
    for tree in sources.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
                ours.add(node.name)
    for file, tree in sources.items():
        imported = _imports(tree)
        classes = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}

        for node in classes.values():
            local, library = _hierarchy(node, classes, imported)
            watched += library
            for cls in local:
                for item in cls.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                        if any(hasattr(base, item.name) for base in library):
                            found.add(f"{file}:{node.name}.{item.name}")
    theirs = {name for cls in watched for name in dir(cls) if _private(name)} - ours
    for file, tree in sources.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in theirs:
                found.add(f"{file}:.{node.attr}")
    return found


def test_the_scan_finds_an_override_and_a_use():
    """The scan itself: a private override of nbclient's and a call of jupyter_client's private method."""
    source = ast.parse(
        "from nbclient import NotebookClient\n"
        "class Mixin:\n"
        "    def _async_poll_kernel_alive(self): ...\n"
        "class Quiet(Mixin, NotebookClient):\n"
        "    def _mine(self): ...\n"
        "async def stop(client):\n"
        "    await client._async_cleanup_kernel()\n"
        "    client.km._connect_control_socket()\n"
    )
    assert _findings({"x.py": source}) == {
        "x.py:Quiet._async_poll_kernel_alive",
        "x.py:._async_cleanup_kernel",
        "x.py:._connect_control_socket",
    }


def test_no_private_api_of_jupyter_client_nbclient_or_pyzmq_is_used():
    found = _findings(_sources())
    assert sorted(found - set(ALLOWED)) == []
    assert sorted(set(ALLOWED) - found) == [], "no longer there: take it out of ALLOWED"
