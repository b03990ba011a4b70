"""environment.yml (conda) must list exactly the dependencies of pyproject.toml."""

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11+")

ROOT = Path(__file__).resolve().parent.parent


def _name_and_spec(requirement: str) -> tuple[str, str]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", requirement)
    assert match, f"cannot parse requirement {requirement!r}"
    return match.group(1).lower().replace("_", "-"), match.group(2).replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(map(_name_and_spec, project["dependencies"] + project["optional-dependencies"]["test"]))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    listed = dict(
        _name_and_spec(d) for d in env["dependencies"] if isinstance(d, str) and not d.startswith(("python", "pip"))
    )
    assert listed == wanted, "environment.yml and pyproject.toml list different dependencies"
    pip_section = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_section == [{"pip": ["-e ."]}]
    python_spec = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python_spec == "python" + project["requires-python"]
