"""The course copied out of the package: from a clone, and from a wheel a
learner would pip-install (bpe-lab lab)."""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bpe_lab.cli import main
from bpe_lab.course import MANIFEST, START_PAGE, copy_course, course_files, course_root, lab_command, update_course

ROOT = Path(__file__).resolve().parents[1]


def test_a_clone_reads_the_course_from_the_repository():
    assert course_root() == ROOT
    names = [p.name for p in course_files("notebooks")]
    assert names[0] == "00_why_subwords.ipynb" and "README.md" in names
    assert {p.name for p in course_files("exercises")} >= {"01_compression.ipynb", "README.md"}
    with pytest.raises(ValueError, match="unknown course folder 'solutions'"):
        course_files("solutions")  # the instructor's files are never handed out


def test_copy_never_overwrites_the_learners_work(tmp_path):
    first = copy_course(tmp_path / "course")
    notebooks = sorted(p.name for p in (tmp_path / "course" / "notebooks").iterdir())
    assert notebooks == sorted(p.name for p in course_files("notebooks")) and first.kept == []
    mine = tmp_path / "course" / "exercises" / "02_training.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    again = copy_course(tmp_path / "course")
    assert again.copied == [] and mine in again.kept and len(again.kept) == len(first.copied)
    assert again.edited == [mine]
    assert mine.read_text(encoding="utf-8") == "my answers"


def _fake_course(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def versions(tmp_path, monkeypatch):
    """Two versions of a course, and a switch between them (course_root)."""
    old = _fake_course(
        tmp_path / "v1",
        {
            "notebooks/00_a.ipynb": "a1",
            "notebooks/01_b.ipynb": "b1",
            "notebooks/02_c.ipynb": "c1",
            "notebooks/03_d.ipynb": "d1",
            "notebooks/README.md": "map1",
            "exercises/01_b.ipynb": "xb1",
        },
    )
    new = _fake_course(
        tmp_path / "v2",
        {
            "notebooks/00_a.ipynb": "a2",  # fixed: the learner never touched it
            "notebooks/01_b.ipynb": "b2",  # fixed: the learner edited it
            "notebooks/02_c.ipynb": "c2",  # fixed: the learner deleted it
            "notebooks/03_d.ipynb": "d1",  # unchanged: the learner deleted it
            "notebooks/04_e.ipynb": "e2",  # new
            "notebooks/README.md": "map1",
            "exercises/01_b.ipynb": "xb1",
        },
    )
    which = {"root": old}
    monkeypatch.setattr("bpe_lab.course.course_root", lambda: which["root"])
    return which, old, new


def test_update_replaces_untouched_files_keeps_edited_ones_and_restores_only_changed_deletions(tmp_path, versions):
    which, _old, new = versions
    folder = tmp_path / "learner"
    assert len(copy_course(folder).copied) == 6
    (folder / "notebooks/01_b.ipynb").write_text("my notes", encoding="utf-8")
    (folder / "notebooks/02_c.ipynb").unlink()
    (folder / "notebooks/03_d.ipynb").unlink()
    which["root"] = new

    plain = copy_course(folder)  # without --update nothing is replaced, and deleted stays deleted
    assert [p.name for p in plain.copied] == ["04_e.ipynb"]
    assert (folder / "notebooks/00_a.ipynb").read_text(encoding="utf-8") == "a1"
    assert sorted(p.name for p in plain.deleted) == ["02_c.ipynb", "03_d.ipynb"]

    done = update_course(folder)
    text = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in folder.rglob("*.ipynb")}
    assert text == {
        "notebooks/00_a.ipynb": "a2",
        "notebooks/01_b.ipynb": "my notes",
        "notebooks/02_c.ipynb": "c2",
        "notebooks/04_e.ipynb": "e2",
        "exercises/01_b.ipynb": "xb1",
    }
    assert [p.name for p in done.updated] == ["00_a.ipynb"]
    assert [p.name for p in done.edited] == ["01_b.ipynb"] and [p.name for p in done.restored] == ["02_c.ipynb"]
    assert [p.name for p in done.deleted] == ["03_d.ipynb"] and done.copied == []
    again = update_course(folder)  # nothing left to do; the edit is still named
    assert again.updated == again.copied == again.restored == [] and [p.name for p in again.edited] == ["01_b.ipynb"]


def test_update_of_a_folder_copied_before_manifests_keeps_what_differs(tmp_path, versions):
    which, _old, new = versions
    folder = tmp_path / "learner"
    copy_course(folder)
    (folder / MANIFEST).unlink()
    which["root"] = new
    done = update_course(folder)
    assert sorted(p.name for p in done.unrecorded) == ["00_a.ipynb", "01_b.ipynb", "02_c.ipynb"]
    assert (folder / "notebooks/00_a.ipynb").read_text(encoding="utf-8") == "a1"
    recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert "notebooks/03_d.ipynb" in recorded and "notebooks/00_a.ipynb" not in recorded


def test_lab_update_says_which_files_it_kept_by_name(tmp_path, versions, capsys):
    which, _old, new = versions
    folder = tmp_path / "learner"
    assert main(["lab", str(folder), "--no-open"]) == 0
    assert "6 new" in capsys.readouterr().out
    (folder / "notebooks/01_b.ipynb").write_text("my notes", encoding="utf-8")
    (folder / "notebooks/03_d.ipynb").unlink()
    which["root"] = new
    assert main(["lab", str(folder), "--no-open", "--update"]) == 0
    out = capsys.readouterr().out
    assert "1 new, 2 updated, 0 restored" in out
    assert "kept, as you edited them: notebooks/01_b.ipynb" in out
    assert "left deleted, as you deleted them: notebooks/03_d.ipynb" in out


@pytest.mark.parametrize(
    "manifest, message",
    [
        ("{not json", "cannot read the course manifest"),
        ('["a list"]', "not a course manifest of format 1"),
        ('{"format": 2, "folders": [], "files": {}}', "not a course manifest of format 1"),
        ('{"format": 1, "folders": ["notebooks"], "files": {}}', "a manifest of another course layout"),
        (
            '{"format": 1, "folders": ["notebooks", "exercises"], "files": {"notebooks/README.md": "0"}}',
            "entry 'notebooks/README.md'",
        ),
    ],
)
def test_a_bad_manifest_is_an_error_naming_it(tmp_path, capsys, manifest, message):
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / MANIFEST).write_text(manifest, encoding="utf-8")
    assert main(["lab", str(folder), "--no-open", "--update"]) == 2
    err = capsys.readouterr().err
    assert f"{folder / MANIFEST}: " in err and message in err


def test_lab_command_copies_and_refuses_a_file(tmp_path, capsys):
    assert main(["lab", str(tmp_path / "c"), "--no-open"]) == 0
    assert "copied the course in" in capsys.readouterr().out
    (tmp_path / "f").write_text("x")
    assert main(["lab", str(tmp_path / "f"), "--no-open"]) == 2
    assert f"{tmp_path / 'f'} is a file" in capsys.readouterr().err
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "notebooks").write_text("x")
    assert main(["lab", str(tmp_path / "g"), "--update", "--no-open"]) == 2
    assert f"{tmp_path / 'g' / 'notebooks'} is a file" in capsys.readouterr().err


def test_lab_passes_port_no_browser_and_everything_after_the_dashes_to_jupyterlab(tmp_path, monkeypatch, capsys):
    calls = []

    def call(args, cwd, env):
        settings = (
            Path(env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0]) / "labconfig" / "default_setting_overrides.json"
        )
        calls.append((args, cwd, env["JUPYTER_CONFIG_PATH"], json.loads(settings.read_text(encoding="utf-8"))))
        return 0

    monkeypatch.setattr("bpe_lab.course.subprocess.call", call)
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/etc/mine")
    argv = ["lab", str(tmp_path / "c"), "--port", "9999", "--no-browser", "--", "--ServerApp.token=s", "--debug"]
    assert main(argv) == 0
    ((args, cwd, config_path, settings),) = calls
    root = (tmp_path / "c").resolve()
    assert cwd == root and args[:4] == [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}"]
    tail = [
        "--ServerApp.port=9999",
        "--no-browser",
        "--LabApp.default_url=/lab/tree/notebooks/00_why_subwords.ipynb",  # what JupyterLab prints and opens
        "--ServerApp.token=s",
        "--debug",
    ]
    assert args[-5:] == tail
    assert settings == {"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}}}
    assert config_path.endswith(os.pathsep + "/etc/mine") and not Path(config_path.split(os.pathsep)[0]).exists()
    assert "--no-browser" not in lab_command(root)
    assert main(["lab", str(tmp_path / "c"), "--no-open", "--", "--debug"]) == 2
    assert "--no-open only copies" in capsys.readouterr().err
    assert main(["encode", "--merges-file", str(tmp_path / "none"), "--", "-x"]) == 2  # its -- is its own
    assert "none" in capsys.readouterr().err


def _first_heading(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    first = next(c for c in cells if c["cell_type"] == "markdown")
    line = "".join(first["source"]).splitlines()[0]
    assert line.startswith("# "), f"{notebook.name}: its first markdown cell starts {line!r}, not a '# ' title"
    return line.removeprefix("# ")


def test_the_start_page_maps_every_notebook_by_its_title_in_order_with_its_exercise():
    page = ROOT / START_PAGE
    text = page.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) \| \[([^\]]+)\]\(([^)]+)\) \| [^|]+ \| ([^|]+) \|$", text, re.M)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert [r[2] for r in rows] == [p.name for p in notebooks], f"{page}: the course map's rows are not the notebooks"
    exercises = {p.name[:2]: p for p in (ROOT / "exercises").glob("*.ipynb")}
    for number, title, target, exercise in rows:
        notebook = ROOT / "notebooks" / target
        assert number == target[:2] and title == _first_heading(notebook), f"{page}: row {number}: {title!r}"
        if number in exercises:
            assert exercise == f"[{exercises[number].stem}](../exercises/{exercises[number].name})", (page, number)
        else:
            assert exercise.strip() == "—", f"{page}: row {number} links an exercise that does not exist"
    for number in sorted(set(exercises) - {r[0] for r in rows}):  # the capstone: no chapter, linked from the page
        linked = f"](../exercises/{exercises[number].name})" in text
        assert linked, f"{page}: the exercise {exercises[number].name} has no notebook's row and no link"
    for target in re.findall(r"\]\(([^)]+)\)", text):  # every relative link resolves, here and in a copy
        assert (page.parent / target).is_file(), f"{page}: the link {target} leads nowhere"


def test_the_start_page_is_copied_and_its_links_resolve_in_the_copy(tmp_path):
    copy_course(tmp_path / "c")
    page = tmp_path / "c" / START_PAGE
    for target in re.findall(r"\]\(([^)]+)\)", page.read_text(encoding="utf-8")):
        assert (page.parent / target).is_file(), f"{page}: {target}"


def test_a_wheel_carries_the_course_and_its_notebooks_run(tmp_path):
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels)]
    subprocess.run([*build, str(ROOT)], check=True, capture_output=True)
    (wheel,) = wheels.glob("bpe_lab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert "bpe_lab/course/notebooks/00_why_subwords.ipynb" in names
        assert f"bpe_lab/course/{START_PAGE}" in names
        assert "bpe_lab/course/exercises/02_training.ipynb" in names
        assert not any(n.startswith(("solutions/", "tests/", "bpe_lab/course/solutions")) for n in names)
        archive.extractall(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    code = "import bpe_lab.course as c, sys; sys.exit(c.__file__.startswith(sys.argv[1]) and main(sys.argv[2:]))"
    code = "from bpe_lab.cli import main\n" + code
    where = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "site"), "lab", str(tmp_path / "learner"), "--no-open"],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    copied = tmp_path / "learner" / "notebooks" / "00_why_subwords.ipynb"
    assert copied.read_bytes() == (ROOT / "notebooks" / "00_why_subwords.ipynb").read_bytes()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env", str(copied)],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]


def test_the_exercises_page_tells_learners_to_write_in_them_and_only_instructors_not_to_edit():
    text = (ROOT / "exercises" / "README.md").read_text(encoding="utf-8")
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    mine = [p for p in paragraphs if "yours to fill in" in p]
    assert mine and "--update" in mine[0], "the page never tells a learner that the exercises are theirs to write in"
    for paragraph in paragraphs:
        if re.search(r"\b(do not|don't|never) edit|rather than the copy|generated from", paragraph):
            assert paragraph.startswith("*For instructors:*"), f"a learner reads it as meant for them: {paragraph!r}"


# -- notebooks the learner only ran, and old manifests ----------------------------------------------------------------


def _notebook(*sources: str, outputs: str = "") -> str:
    """A notebook of code cells, as the course commits them (nbformat, indent 1)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title")]
    for source in sources:
        cell = nbformat.v4.new_code_cell(source)
        if outputs:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=outputs)]
            cell.execution_count = 1
        nb.cells.append(cell)
    for number, cell in enumerate(nb.cells):
        cell.id = f"cell-{number}"  # not nbformat's random ids: the same notebook twice is the same file
    return nbformat.writes(nb) + "\n"


def _run_as_jupyterlab_saves_it(path: Path) -> None:
    """What Run All and JupyterLab's autosave leave: outputs, execution
    counts and kernel metadata in the file; every cell's source as it was."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for count, cell in enumerate((c for c in nb["cells"] if c["cell_type"] == "code"), 1):
        cell["execution_count"] = count
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [f"ran {count}\n"]}]
        cell["metadata"]["execution"] = {"iopub.status.idle": "2026-12-03T10:00:00.000Z"}
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.2"}
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture
def notebook_versions(tmp_path, monkeypatch):
    """Two versions of a course of real notebooks, and a switch between them."""
    old = _fake_course(
        tmp_path / "v1",
        {
            "notebooks/00_a.ipynb": _notebook("x = 1"),  # fixed in v2; the learner ran it
            "notebooks/01_b.ipynb": _notebook("y = 1"),  # fixed in v2; the learner wrote in it
            "notebooks/02_c.ipynb": _notebook("z = 1"),  # only its outputs change in v2; the learner ran it
            "notebooks/03_d.ipynb": _notebook("w = 1"),  # the same in v2; the learner ran it
            "notebooks/README.md": "map1",
            "exercises/02_c.ipynb": _notebook("# YOUR CODE HERE"),  # fixed in v2; never opened
        },
    )
    new = _fake_course(
        tmp_path / "v2",
        {
            "notebooks/00_a.ipynb": _notebook("x = 2"),
            "notebooks/01_b.ipynb": _notebook("y = 2"),
            "notebooks/02_c.ipynb": _notebook("z = 1", outputs="new output\n"),
            "notebooks/03_d.ipynb": _notebook("w = 1"),
            "notebooks/README.md": "map1",
            "exercises/02_c.ipynb": _notebook("# YOUR CODE HERE\n# (hint: count pairs)"),
        },
    )
    which = {"root": old}
    monkeypatch.setattr("bpe_lab.course.course_root", lambda: which["root"])
    return which, new


def test_update_replaces_a_notebook_the_learner_only_ran_and_says_its_outputs_go(tmp_path, notebook_versions, capsys):
    which, new = notebook_versions
    folder = tmp_path / "learner"
    copy_course(folder)
    for name in ("00_a", "01_b", "02_c", "03_d"):
        _run_as_jupyterlab_saves_it(folder / "notebooks" / f"{name}.ipynb")
    mine = json.loads((folder / "notebooks/01_b.ipynb").read_text(encoding="utf-8"))
    mine["cells"][1]["source"] = "y = 1  # my note"
    (folder / "notebooks/01_b.ipynb").write_text(json.dumps(mine, indent=1), encoding="utf-8")
    ran = {n: (folder / "notebooks" / n).read_bytes() for n in ("02_c.ipynb", "03_d.ipynb")}
    which["root"] = new

    assert main(["lab", str(folder), "--no-open", "--update"]) == 0
    out = capsys.readouterr().out
    assert "0 new, 2 updated, 0 restored" in out
    assert "updated, your outputs in them gone (run them again): notebooks/00_a.ipynb" in out
    assert "kept, as you edited them: notebooks/01_b.ipynb\n" in out
    for name in ("00_a.ipynb", "exercises/02_c.ipynb"):
        path = folder / (name if "/" in name else f"notebooks/{name}")
        assert path.read_bytes() == (new / path.relative_to(folder)).read_bytes(), name
    assert "my note" in (folder / "notebooks/01_b.ipynb").read_text(encoding="utf-8")
    assert {n: (folder / "notebooks" / n).read_bytes() for n in ran} == ran  # nothing new to read: your outputs stay

    _run_as_jupyterlab_saves_it(folder / "notebooks/00_a.ipynb")
    again = update_course(folder)  # the new version, run: recorded by its sources, not named as edited
    assert again.updated == again.cleared == [] and [p.name for p in again.edited] == ["01_b.ipynb"]


def test_an_old_manifest_without_sources_reads_them_from_the_course_or_jupyterlabs_checkpoint(
    tmp_path, notebook_versions
):
    which, new = notebook_versions
    folder = tmp_path / "learner"
    copy_course(folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest.pop("sources", None)  # as bpe-lab wrote it before it recorded sources
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    checkpoints = folder / "notebooks" / ".ipynb_checkpoints"
    checkpoints.mkdir()  # JupyterLab's checkpoint of 00_a, made when it was first opened: the copied file
    (checkpoints / "00_a-checkpoint.ipynb").write_bytes((folder / "notebooks/00_a.ipynb").read_bytes())
    for name in ("00_a", "01_b", "03_d"):
        _run_as_jupyterlab_saves_it(folder / "notebooks" / f"{name}.ipynb")
    which["root"] = new

    done = update_course(folder)
    updated = [p.relative_to(folder).as_posix() for p in done.updated]
    # 00_a's copied sources: from the checkpoint; 02_c never run: the course's new outputs replace its old ones
    assert updated == ["notebooks/00_a.ipynb", "notebooks/02_c.ipynb", "exercises/02_c.ipynb"]
    assert [p.name for p in done.cleared] == ["00_a.ipynb"]
    assert [p.name for p in done.edited] == ["01_b.ipynb"]  # no copy of its old version left: bytes decide
    assert "03_d.ipynb" not in [p.name for p in done.edited]  # unchanged course file: its sources are the course's
    recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["sources"]
    assert sorted(recorded) == [
        "exercises/02_c.ipynb",
        "notebooks/00_a.ipynb",
        "notebooks/02_c.ipynb",
        "notebooks/03_d.ipynb",
    ]


# -- a folder someone prepared --------------------------------------------------------------------------------------


def test_the_manifest_is_never_written_through_a_prepared_temporary_file(tmp_path):
    folder, victim = tmp_path / "learner", tmp_path / "bashrc"
    victim.write_text("export PS1='$ '\n", encoding="utf-8")
    copy_course(folder)
    (folder / (MANIFEST + ".tmp")).symlink_to(victim)
    assert main(["lab", str(folder), "--no-open", "--update"]) == 0
    assert victim.read_text(encoding="utf-8") == "export PS1='$ '\n"
    assert not (folder / MANIFEST).is_symlink() and json.loads((folder / MANIFEST).read_text())["format"] == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted([MANIFEST, MANIFEST + ".tmp", "exercises", "notebooks"])


def test_a_manifest_entry_naming_no_course_file_is_dropped_and_named(tmp_path, capsys):
    folder = tmp_path / "learner"
    copy_course(folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    evil = "notebooks/$(touch pwned)"
    manifest["files"][evil] = "0" * 64
    manifest["files"]["notebooks/99_gone.ipynb"] = "1" * 64  # a chapter of another version, or a planted name
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["lab", str(folder), "--no-open", "--update"]) == 0
    out = capsys.readouterr().out
    assert (
        f"warning: dropped from the course record, no files of this course: {evil!r}, 'notebooks/99_gone.ipynb'" in out
    )
    written = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    assert sorted(written["files"]) == sorted(
        f"{f}/{p.name}" for f in ("notebooks", "exercises") for p in course_files(f)
    )


@pytest.mark.parametrize("where", ["folder", "notebooks", "exercises/02_training.ipynb", MANIFEST])
def test_a_symbolic_link_in_the_course_folder_is_refused_by_name_before_anything_is_written(tmp_path, capsys, where):
    folder, outside = tmp_path / "learner", tmp_path / "outside"
    outside.mkdir()
    if where == "folder":
        folder.symlink_to(outside, target_is_directory=True)
        link = folder
    else:
        folder.mkdir()
        link = folder / where
        link.parent.mkdir(exist_ok=True)
        pointed = outside if where == "notebooks" else outside / "planted\x1b[2J"  # not there yet; an escape
        link.symlink_to(pointed, target_is_directory=where == "notebooks")
    assert main(["lab", str(folder), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert f"{link} is a symbolic link (to {os.readlink(link)!r}): bpe-lab lab writes the course only into real" in err
    assert "\x1b" not in err  # the link's text, someone else's, reaches the terminal escaped
    assert list(outside.iterdir()) == [] and not (folder / MANIFEST).is_file()


# -- through real wheels --------------------------------------------------------------------------------------------

_WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "bpe_lab", "notebooks", "exercises")
_NO_CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")


def _wheel_installed(source: Path, out: Path) -> Path:
    """Build ``source``'s wheel and pip-install it (no dependencies: the
    test's environment has them) into a folder of its own; that folder."""
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), "."]
    run = subprocess.run(build, cwd=source, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    (wheel,) = out.glob("bpe_lab-*.whl")
    site = out / "site"
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site)]
    run = subprocess.run([*install, str(wheel)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return site


def _bpe_lab(site: Path, *args: str) -> str:
    """``bpe-lab ARGS`` as the wheel installed in ``site`` runs it; its output."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run([str(site / "bin" / "bpe-lab"), *args], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _change_first_code_cell(path: Path, line: str) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["source"] = [*cell["source"][:-1], cell["source"][-1].rstrip("\n") + "\n", line]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_an_update_from_a_newer_wheel_replaces_every_notebook_the_learner_only_ran(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in _WHEEL_SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, repo / name, ignore=_NO_CACHES)
        else:
            shutil.copyfile(ROOT / name, repo / name)
    old = _wheel_installed(repo, tmp_path / "v1")
    folder = tmp_path / "my-course"
    assert "22 new" in _bpe_lab(old, "lab", str(folder), "--no-open")
    for notebook in sorted((folder / "notebooks").glob("*.ipynb")):  # Run All of every notebook, autosaved
        _run_as_jupyterlab_saves_it(notebook)
    _change_first_code_cell(folder / "notebooks/05_byte_level.ipynb", "# my note on byte-level BPE")  # the learner's
    _change_first_code_cell(folder / "exercises/01_compression.ipynb", "# my answer")
    before = {p: p.read_bytes() for p in folder.rglob("*.ipynb")}

    pyproject = repo / "pyproject.toml"  # a newer course: 0.1.1 changes the code of 03, 04, 05 and exercise 02
    text = pyproject.read_text(encoding="utf-8")
    assert 'version = "0.1.0"' in text
    pyproject.write_text(text.replace('version = "0.1.0"', 'version = "0.1.1"', 1), encoding="utf-8")
    changed = [
        "notebooks/03_encoding_decoding.ipynb",
        "notebooks/04_complexity.ipynb",
        "notebooks/05_byte_level.ipynb",
        "exercises/02_training.ipynb",
    ]
    for name in changed:
        _change_first_code_cell(repo / name, "# changed in 0.1.1")
    new = _wheel_installed(repo, tmp_path / "v2")
    assert [p.name for p in new.glob("bpe_lab-*.dist-info")] == ["bpe_lab-0.1.1.dist-info"]

    out = _bpe_lab(new, "lab", str(folder), "--update", "--no-open")
    assert out.splitlines()[:3] == [
        f"updated the course in {folder}: 0 new, 3 updated, 0 restored; kept your 9 existing ones",
        "kept, as you edited them: notebooks/05_byte_level.ipynb, exercises/01_compression.ipynb",
        "updated, your outputs in them gone (run them again): "
        "notebooks/03_encoding_decoding.ipynb, notebooks/04_complexity.ipynb",
    ]
    shipped = new / "bpe_lab" / "course"
    for name in (changed[0], changed[1], changed[3]):
        assert (folder / name).read_bytes() == (shipped / name).read_bytes(), name
    for path, data in before.items():
        if path.relative_to(folder).as_posix() not in (changed[0], changed[1], changed[3]):
            assert path.read_bytes() == data, f"{path} changed, though its sources are the learner's or unchanged"
    assert "# my note on byte-level BPE" in (folder / changed[2]).read_text(encoding="utf-8")
