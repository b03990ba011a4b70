"""The Chinese edition: catalogs complete and current, code unchanged,
terms consistent, checkpoints judging as their English twins.

nbval runs the Chinese notebooks themselves (``notebooks/zh/`` is under the
``notebooks`` test path)."""

import ast
import copy
import json
import re
from pathlib import Path

import matplotlib
import polib
import pytest

from bpe_lab.grading.authoring.release import stale_chinese
from bpe_lab.grading.authoring.translation import (
    CATALOG,
    EDITIONS,
    EXERCISE_EDITIONS,
    LANG_CELL_ID,
    catalog_name,
    catalog_problems,
    code_segments,
    extract,
    glossary_problems,
    paragraphs,
    read_exceptions,
    read_glossary,
    translate_notebook,
    update_catalog,
)
from bpe_lab.grading.commands.grader import grade_notebook
from bpe_lab.ui.labels import current_language, set_language

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
SOURCES = [ROOT / path for path in EDITIONS]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _catalog() -> polib.POFile:
    return polib.pofile(str(CATALOG), wrapwidth=0)


def _zh(path: Path) -> Path:
    return path.parent / "zh" / path.name


@pytest.mark.parametrize("path", [*EDITIONS, *EXERCISE_EDITIONS])
def test_every_text_of_a_notebook_with_a_chinese_edition_is_translated(path):
    entries = extract(_load(ROOT / path), catalog_name(path))
    assert len(entries) == {"notebooks/02_training.ipynb": 100, "exercises/02_training.ipynb": 13}.get(
        path, len(entries)
    )
    assert catalog_problems(_catalog(), entries) == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_the_committed_chinese_notebook_is_what_the_catalog_makes(source):
    wanted = translate_notebook(_load(source), source.stem, _catalog())
    committed = _load(_zh(source))
    assert [(c["id"], c["source"]) for c in committed["cells"]] == [(c["id"], c["source"]) for c in wanted["cells"]]
    assert committed["metadata"]["bpe_lab"]["lang"] == "zh"


def test_a_changed_paragraph_is_fuzzy_a_new_one_untranslated_a_gone_one_obsolete():
    source = SOURCES[0]
    notebook = _load(source)
    catalog = _catalog()
    old = extract(notebook, source.stem)
    edited = copy.deepcopy(notebook)
    summary = next(c for c in edited["cells"] if "".join(c["source"]).startswith("## Summary"))
    text = "".join(summary["source"])
    changed = text.replace("The ordered merge list is the whole model.", "The ordered merge list is all of the model.")
    summary["source"] = changed + "\n\nA brand new closing remark."
    first = edited["cells"][0]
    first["source"] = "".join(first["source"]).replace("You will see\n\n", "")
    entries = extract(edited, source.stem)
    merged = update_catalog(catalog, entries, [source.stem])

    context = f"{source.stem}#{summary['id']}"
    new_summary = next(e for e in paragraphs(changed) if "all of the model" in e)
    fuzzy = merged.find(new_summary, msgctxt=context)
    old_summary = next(e.text for e in old if e.context == context and "whole model" in e.text)
    assert fuzzy.flags == ["fuzzy"] and fuzzy.previous_msgid == old_summary
    assert fuzzy.msgstr == catalog.find(old_summary, msgctxt=context).msgstr
    assert merged.find("A brand new closing remark.", msgctxt=context).msgstr == ""
    gone = merged.find("You will see", msgctxt=f"{source.stem}#{first['id']}", include_obsolete_entries=True)
    assert gone.obsolete and gone.msgstr == "你将看到"
    assert catalog_problems(merged, entries) == [
        f"{context}: fuzzy (the English changed) {new_summary[:60]!r}",
        f"{context}: untranslated 'A brand new closing remark.'",
    ]
    # untouched entries keep their translations
    kept = [e for e in merged if not e.obsolete and e.msgctxt.startswith(f"{source.stem}#")]
    assert len(kept) == len(old)  # one paragraph came, one went


def test_a_source_paragraph_without_an_entry_fails():
    source = SOURCES[0]
    entries = extract(_load(source), source.stem)
    catalog = _catalog()
    catalog.remove(catalog.find("## Summary", msgctxt=next(e.context for e in entries if e.text == "## Summary")))
    assert catalog_problems(catalog, entries) == [f"{source.stem}#c46: no entry for '## Summary'"]


def _blanked(source: str) -> str:
    """The code's AST with every string constant emptied (comments are not in an AST)."""
    tree = ast.parse("\n".join("" if re.match(r"\s*[%!]", line) else line for line in source.split("\n")))
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # an f-string: its fields, in order, without the text between
            node.values = [v for v in node.values if not isinstance(v, ast.Constant)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_chinese_code_cells_differ_only_in_string_literals_and_comments(source):
    english = {c["id"]: c for c in _load(source)["cells"]}
    chinese = [c for c in _load(_zh(source))["cells"] if c["id"] != LANG_CELL_ID]
    assert [c["id"] for c in chinese] == list(english)
    changed = 0
    for cell in chinese:
        twin = english[cell["id"]]
        assert cell["cell_type"] == twin["cell_type"]
        if cell["cell_type"] != "code":
            continue
        zh, en = "".join(cell["source"]), "".join(twin["source"])
        assert _blanked(zh) == _blanked(en), f"cell {cell['id']} changed more than strings and comments"
        changed += zh != en
    assert changed == 13 if source.stem == "02_training" else changed


def test_code_segments_keep_placeholders_and_skip_answers():
    cell = 'Predict("Which pair?", f"({a}, {b})", options=["(l, o)"], why=f"{n} times")  # note'
    assert [text for _, _, text in code_segments(cell)] == ["Which pair?", "{n} times", "note"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_translations_keep_code_spans_placeholders_and_links(source):
    """A code span, an f-string field or a link target in the English is in the Chinese too."""
    for entry in _catalog():
        if entry.obsolete or not entry.msgctxt.startswith(source.stem):
            continue
        for pattern in (r"`[^`]+`", r"\{[^{}]*\}", r"\]\([^)]*\)"):
            missing = set(re.findall(pattern, entry.msgid)) - set(re.findall(pattern, entry.msgstr))
            assert not missing, f"{entry.msgctxt}: {missing} missing in {entry.msgstr!r}"


def test_the_glossary_terms_are_used_in_every_translation():
    glossary = read_glossary()
    assert glossary["vocabulary"] == ("词表",) and glossary["token"] == ("词元",)
    assert glossary_problems(_catalog(), glossary, read_exceptions()) == []


def test_a_translation_using_another_term_breaks_the_glossary_check():
    catalog = polib.POFile()
    english = "The `vocabulary` grows: a bigger Vocabulary."
    catalog.append(polib.POEntry(msgctxt="x#1", msgid=english, msgstr="词汇表变大了。"))
    catalog.append(polib.POEntry(msgctxt="x#2", msgid="Two tokens.", msgstr="两个词元。"))
    catalog.append(polib.POEntry(msgctxt="x#3", msgid="Merges win ties.", msgstr="合并赢得平局。"))
    assert glossary_problems(catalog, read_glossary()) == ["x#1: 'vocabulary' is not 词表 in '词汇表变大了。'"]
    assert glossary_problems(catalog, read_glossary(), {("x#1", "vocabulary")}) == []


def _checkpoints(notebook: Path) -> dict[str, object]:
    """Run a notebook's code cells up to its last checkpoint in one namespace;
    cell id -> the checkpoint each checkpoint cell shows."""
    cells = _load(notebook)["cells"]
    last = max(i for i, c in enumerate(cells) if "checkpoint" in c["metadata"].get("tags", []))
    namespace: dict = {}
    found = {}
    for cell in cells[: last + 1]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join("" if re.match(r"\s*[%!]", line) else line for line in "".join(cell["source"]).split("\n"))
        tree = ast.parse(source)
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            shown = ast.Assign([ast.Name("_shown", ast.Store())], tree.body[-1].value)
            tree.body[-1] = ast.fix_missing_locations(ast.copy_location(shown, tree.body[-1]))
        namespace.pop("_shown", None)
        exec(compile(tree, f"{notebook.name}:{cell['id']}", "exec"), namespace)
        if "checkpoint" in cell["metadata"].get("tags", []) and "_shown" in namespace:
            found[cell["id"]] = namespace["_shown"]
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_each_chinese_checkpoint_judges_every_answer_as_its_english_twin(source, capsys):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        with matplotlib.rc_context():  # the notebooks' use_fonts() and figure size stay in them
            english = _checkpoints(source)
            chinese = _checkpoints(_zh(source))
        assert current_language() == "zh"  # the Chinese notebook's first code cell chose it
    finally:
        set_language("en")
        plt.close("all")
    assert list(chinese) == list(english) and len(english) == 3
    for cell, en in english.items():
        zh = chinese[cell]
        assert type(zh) is type(en) and zh.question != en.question
        assert sorted(zh.options) == sorted(en.options) and zh.right == en.right
        tried = {*en.options, en.right, *getattr(en, "accept", ()), *getattr(en, "raw_notes", {})}
        tried |= {*getattr(en, "mistakes", {}), "", "nonsense", "0", "7", "9", "(w, e)"}
        for value in sorted(tried, key=str):
            en.answer(value)
            zh.answer(value)
            assert zh.correct is en.correct, f"{cell}: {value!r} judged otherwise in Chinese"
        assert re.search("[\u4e00-\u9fff]", zh.feedback) and not re.search("[\u4e00-\u9fff]", en.feedback)


EXERCISES = ROOT / "exercises"


def test_the_chinese_exercises_are_what_release_writes():
    assert [p.name for p in (EXERCISES / "zh").glob("*.ipynb")] == ["02_training.ipynb"]
    assert stale_chinese(EXERCISES) == []


def test_the_chinese_exercise_keeps_the_tasks_and_code_of_the_english_one():
    english = _load(EXERCISES / "02_training.ipynb")
    chinese = _load(EXERCISES / "zh" / "02_training.ipynb")
    assert chinese["metadata"]["bpe_lab"] == {"assignment": "02_training", "lang": "zh"}
    assert [(c["id"], c["cell_type"], c["metadata"]) for c in chinese["cells"]] == [
        (c["id"], c["cell_type"], c["metadata"]) for c in english["cells"]
    ]
    grade_ids = [c["metadata"]["nbgrader"]["grade_id"] for c in chinese["cells"] if "nbgrader" in c["metadata"]]
    assert len(grade_ids) == 10 and "02_training_train" in grade_ids
    for zh, en in zip(chinese["cells"], english["cells"]):
        if zh["cell_type"] == "code" or "".join(en["source"]) == "YOUR ANSWER HERE":
            assert zh["source"] == en["source"]
        else:
            assert re.search("[\u4e00-\u9fff]", "".join(zh["source"])), f"cell {zh['id']} is not in Chinese"


def test_the_english_solution_grades_a_solved_chinese_exercise(tmp_path):
    """The Chinese copy, its task cells filled with the solution's code, scores full marks."""
    solution = {
        c["metadata"]["nbgrader"]["grade_id"]: c
        for c in _load(ROOT / "solutions" / "02_training.ipynb")["cells"]
        if "nbgrader" in c["metadata"]
    }
    submission = _load(EXERCISES / "zh" / "02_training.ipynb")
    for cell in submission["cells"]:
        task = cell["metadata"].get("nbgrader", {})
        if task.get("solution") and cell["cell_type"] == "code":
            lines = "".join(solution[task["grade_id"]]["source"]).split("\n")
            cell["source"] = "\n".join(line for line in lines if line.strip() not in (BEGIN, END))
    path = tmp_path / "02_training.ipynb"
    path.write_text(json.dumps(submission, ensure_ascii=False), encoding="utf-8")
    report = grade_notebook(path, solutions_dir=ROOT / "solutions", assignment="02_training")
    scores = {task.grade_id: (task.points, task.max_points) for task in report.tasks}
    assert scores == {
        "02_training_count_pairs": (2, 2),
        "02_training_merge_pair": (2, 2),
        "02_training_train": (3, 3),
        "02_training_first_mistake": (2, 2),
        "02_written_tie_rule": (0, 1),  # a written answer: pending manual grading
    }
