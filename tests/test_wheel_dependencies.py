"""What the course imports is what a wheel installed without extras brings."""

import ast
import json
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import bpe_lab
from bpe_lab.grading.run.distributions import imported_by

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11+")

ROOT = Path(__file__).resolve().parent.parent
COURSE = sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("exercises/*.ipynb")])
#: imported only under ``if TYPE_CHECKING:`` (mypy's, never at run time)
TYPING_ONLY = {"typing-extensions"}


def _runtime() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}


def _imports(notebook: Path) -> dict[str, int]:
    """The top-level modules a notebook's code cells import, each with the
    first cell index that does (IPython magics and shell lines left out)."""
    found: dict[str, int] = {}
    for index, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = "\n".join(line for line in source.splitlines() if not re.match(r"\s*[%!]", line))
        for node in ast.walk(ast.parse(source, f"{notebook.name} cell {index}")):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.partition(".")[0], index)
    return found


@pytest.mark.parametrize("notebook", COURSE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_module_a_course_notebook_imports_is_a_runtime_dependency(notebook):
    runtime, providers = _runtime(), metadata.packages_distributions()
    for module, index in _imports(notebook).items():
        if module in sys.stdlib_module_names or module == "bpe_lab":
            continue
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists, f"{notebook.name} cell {index} imports {module}, which no installed distribution provides"
        assert dists & runtime, (
            f"{notebook.name} cell {index} imports {module} (from {sorted(dists)}), which is not in pyproject.toml's "
            "dependencies: a learner who installed the wheel without extras cannot run it"
        )


def test_the_course_imports_tiktoken_and_tokenizers_so_they_are_runtime_dependencies():
    imported = set().union(*(_imports(nb) for nb in COURSE))
    assert {"tiktoken", "tokenizers"} <= imported  # notebooks 04 and 05 (the reason for this file)
    assert {"tiktoken", "tokenizers"} <= _runtime()


def test_every_distribution_the_package_imports_when_it_loads_is_a_runtime_dependency():
    loaded = imported_by(Path(bpe_lab.__file__).resolve().parent) - TYPING_ONLY
    assert sorted(loaded - _runtime()) == []
