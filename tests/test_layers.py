"""The package's shape, read from its source with ``ast``: layers that import
only downward, no import cycle, no reaching into another module's private
names, and modules that each say what they are for (CONTRIBUTING.md).
There is no line cap: a module is one idea, and one idea stays whole even at
500 lines; a module with two ideas splits, whatever its length."""

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bpe_lab"

#: Lowest first; a module may import its own layer and the ones before it.
LAYERS = ["core", "bytelevel", "variants", "ui", "grading", "top"]
#: What core may import at module level besides the standard library.
CORE_THIRD_PARTY = {"regex"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
_PACKAGES = {f"{_module_name(p)}.__init__" for p in PACKAGE.rglob("__init__.py")}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "top"


#: Inside grading, lowest first: a module may import its own stage and the
#: ones before it. ``check`` is the learner's side (exercises, learners'
#: notebooks and grading kernels import it), so it comes first and imports
#: no stage; ``""`` is the modules of ``grading/`` itself (``parsing``).
STAGES = ["check", "", "authoring", "intake", "cases", "run", "score", "commands"]


def stage(module: str) -> str:
    """The stage of a module of ``bpe_lab.grading`` (``""``: grading/ itself)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 or (len(parts) == 3 and f"{module}.__init__" in _PACKAGES) else ""


def _imports(path: Path) -> Iterator[tuple[int, str, list[str], bool]]:
    """(line, imported module, names taken from it, at module level?) for
    every import in the file, those inside functions and TYPE_CHECKING too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, [], id(node) in top_level
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = _module_name(path).split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target, [a.name for a in node.names], id(node) in top_level


def _internal(target: str, names: list[str]) -> list[str]:
    """The bpe_lab modules an import statement loads."""
    if target != "bpe_lab" and not target.startswith("bpe_lab."):
        return []
    found = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
    return found or ([target] if target in MODULES else [])


GRAPH = {
    module: {dep for _, target, names, _ in _imports(path) for dep in _internal(target, names) if dep != module}
    for module, path in MODULES.items()
}


def test_every_module_is_in_a_layer():
    for module in MODULES:
        assert layer(module) in LAYERS, module
    assert {layer(m) for m in MODULES} == set(LAYERS)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} imports {dep} ({layer(dep)}, above {layer(module)})"
        for module, deps in sorted(graph.items())
        for dep in sorted(deps)
        if LAYERS.index(layer(dep)) > LAYERS.index(layer(module))
    ]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        for dep in sorted(graph.get(module, ())):
            cycle = visit(dep, path + [module])
            if cycle:
                return cycle
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle:
            return cycle
    return None


def test_imports_point_down():
    assert upward_imports(GRAPH) == []


def backward_stage_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside grading from a later stage (CONTRIBUTING.md draws them in order)."""
    return [
        f"{module} imports {dep} ({stage(dep) or 'grading/'}, after {stage(module) or 'grading/'})"
        for module, deps in sorted(graph.items())
        if layer(module) == "grading"
        for dep in sorted(deps)
        if layer(dep) == "grading" and STAGES.index(stage(dep)) > STAGES.index(stage(module))
    ]


def test_grading_stages_import_only_earlier_stages():
    assert {stage(m) for m in MODULES if layer(m) == "grading"} == set(STAGES)
    assert backward_stage_imports(GRAPH) == []


def test_check_imports_nothing_of_the_instructors_side():
    """The learner's side imports only the lower layers and itself, not even
    lazily: released exercises import it, and so does a grading kernel, in
    which the instructor's modules are absent (``run/kernel_package``)."""
    allowed = {"core", "bytelevel", "variants", "ui"}
    found = sorted(
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if module.startswith("bpe_lab.grading.check")
        for dep in deps
        if layer(dep) not in allowed and not dep.startswith("bpe_lab.grading.check")
    )
    assert found == []


def _reaches(graph: dict[str, set[str]], module: str) -> set[str]:
    """Every module that ``module`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


#: Inside core: the primitives, then the trainers and the encoders, which
#: build on the primitives and not on each other.
PRIMITIVES = ["bpe_lab.core.symbols", "bpe_lab.core.words", "bpe_lab.core.options", "bpe_lab.core.merge_update"]
TRAINERS = {"bpe_lab.core.train", "bpe_lab.core.train_fast"}
ENCODERS = {"bpe_lab.core.encode"}


def test_primitives_sit_below_trainers_and_encoders():
    for module in PRIMITIVES:
        assert _reaches(GRAPH, module) & (TRAINERS | ENCODERS) == set(), module
    for trainer in TRAINERS:
        assert _reaches(GRAPH, trainer) & ENCODERS == set(), f"{trainer} imports an encoder"
    for encoder in ENCODERS:
        assert _reaches(GRAPH, encoder) & TRAINERS == set(), f"{encoder} imports a trainer"
    assert _reaches({"a": {"b"}, "b": {"c"}}, "a") == {"b", "c"}  # the check itself can see through a chain


def test_no_import_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle)


def _private_imports(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        for line, target, names, _ in _imports(path):
            if not target.startswith("bpe_lab"):
                continue
            here = _module_name(path) if path.is_relative_to(PACKAGE) else None
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
            for name in names:
                if name.startswith("_") and target != here:
                    found.append(f"{shown}:{line}: from {target} import {name}")
            if any(part.startswith("_") and part != "__init__" for part in target.split(".")):
                found.append(f"{shown}:{line}: imports the private module {target}")
    return found


def test_no_module_imports_another_modules_private_names():
    assert _private_imports(list(MODULES.values())) == []


def test_no_test_imports_a_private_name_of_the_package():
    assert _private_imports(sorted((ROOT / "tests").glob("*.py"))) == []


def test_core_needs_only_regex():
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    extra = sorted(
        f"{MODULES[m].relative_to(ROOT)}:{line}: {target}"
        for m in MODULES
        if layer(m) == "core"
        for line, target, _, module_level in _imports(MODULES[m])
        if module_level and target.split(".")[0] not in stdlib | CORE_THIRD_PARTY | {"bpe_lab"}
    )
    assert extra == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_says_what_it_is_for(module):
    path = MODULES[module]
    source = path.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring and len(docstring.split()) >= 8, f"{path.relative_to(ROOT)} needs a docstring saying what it adds"


def test_the_checks_can_fail(tmp_path):
    """Each rule finds a violation planted on purpose."""
    graph = {"bpe_lab.core.a": {"bpe_lab.ui.b"}, "bpe_lab.ui.b": {"bpe_lab.core.a"}, "bpe_lab.ui.c": {"bpe_lab.core.a"}}
    assert upward_imports(graph) == ["bpe_lab.core.a imports bpe_lab.ui.b (ui, above core)"]
    assert find_cycle(graph) == ["bpe_lab.core.a", "bpe_lab.ui.b", "bpe_lab.core.a"]
    assert find_cycle({"bpe_lab.ui.c": {"bpe_lab.core.a"}, "bpe_lab.core.a": set()}) is None
    stages = {"bpe_lab.grading.run.sandbox": {"bpe_lab.grading.score.report", "bpe_lab.grading.authoring.tasks"}}
    assert backward_stage_imports(stages) == [
        "bpe_lab.grading.run.sandbox imports bpe_lab.grading.score.report (score, after run)"
    ]
    assert backward_stage_imports({"bpe_lab.grading.check.runner": {"bpe_lab.grading.parsing"}}) == [
        "bpe_lab.grading.check.runner imports bpe_lab.grading.parsing (grading/, after check)"
    ]
    bad = tmp_path / "bad.py"
    bad.write_text('"""x"""\ndef f():\n    from bpe_lab.core.words import _check_word, train_bpe\n')
    assert [(t, n, top) for _, t, n, top in _imports(bad)] == [
        ("bpe_lab.core.words", ["_check_word", "train_bpe"], False)
    ]
    assert _private_imports([bad]) == ["bad.py:3: from bpe_lab.core.words import _check_word"]


def drawn_stages(picture: str) -> dict[str, set[str]]:
    """The words of the grading rows of the layer picture, by the stage folder
    (``run/``) they are drawn under; ``""``: the words before any folder."""
    rows = picture[picture.index("│ grading/") :]
    rows = rows[: rows.index("├")]
    found: dict[str, set[str]] = {"": set()}
    current = ""
    for word in rows.split()[2:]:  # after "│ grading/"
        if word.endswith("/") and word[:-1].isidentifier():
            current = word[:-1]
            found.setdefault(current, set())
        elif word.strip("(),:/│"):
            found[current].add(word.strip("(),:/│"))
    return found


def test_contributing_draws_every_module():
    """CONTRIBUTING.md's layer picture names every module of core, bytelevel,
    variants, ui and grading (bench/ is drawn as a folder), and draws each
    module of a grading stage under its stage's folder: a new module, or a
    module moved to another stage, that the picture forgets fails here."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    picture = text[text.index("┌") : text.index("┘")]
    drawn = {word.strip("(),:/") for word in picture.split()}
    missing = sorted(
        module
        for module in MODULES
        if layer(module) in ("core", "bytelevel", "variants", "ui", "grading")
        and len(module.split(".")) == 3
        and module.split(".")[2] not in drawn
    )
    assert not missing, f"CONTRIBUTING.md's layer picture lacks {missing}"
    stages = drawn_stages(picture)
    elsewhere = sorted(
        f"{module} (under {stage(module)}/)"
        for module in MODULES
        if layer(module) == "grading"
        and len(module.split(".")) == 4
        and module.split(".")[3] not in stages.get(stage(module), set())
    )
    assert not elsewhere, f"CONTRIBUTING.md's grading rows lack {elsewhere}"
    assert drawn_stages("│ grading/ x\n│  run/ a b\n│  c\n│  score/ d\n├") == {
        "": {"x"},
        "run": {"a", "b", "c"},
        "score": {"d"},
    }
