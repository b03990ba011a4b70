"""The similarity report: winnowing worked by hand, copies flagged and
independent answers not, the package's own source recognised, the starter
code never, bad notebooks reported, and ``bpe-lab grade --similarity-only``
on a class folder (no kernel runs: it reads notebook JSON only)."""

from __future__ import annotations

import inspect
import json
import keyword
import random
import re
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.cli import main
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import load_tasks, nbgrader
from bpe_lab.grading.commands import grade_command
from bpe_lab.grading.intake.roster import collect
from bpe_lab.grading.intake.submissions import read_solutions
from bpe_lab.grading.score.similar_answers import (
    MAX_CELL_CHARS,
    Flag,
    Settings,
    Side,
    answer_cells,
    find_similar,
    similarity,
)
from bpe_lab.grading.score.similarity import Block, K, W, compare, fingerprint, kgram_hashes, normalise, winnow, words
from bpe_lab.grading.score.similarity_report import (
    format_similarity,
    side_by_side,
    similarity_html,
    similarity_markdown,
    write_similarity,
)

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
SOLVED = read_solutions(SOLUTIONS)
COUNT, MERGE, TRAIN = (f"02_training_{name}_answer" for name in ("count_pairs", "merge_pair", "train"))

COUNT_SIGNATURE = "def count_pairs(corpus: dict[tuple[str, ...], int]) -> dict[tuple[str, str], int]:\n"
MERGE_SIGNATURE = "def merge_pair(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:\n"
TRAIN_SIGNATURE = "def train(word_freq: dict[str, int], num_merges: int) -> list[tuple[str, str]]:\n"

# Two learners who never met: each task answered correctly, each their own way.
ALICE = {
    COUNT: COUNT_SIGNATURE
    + """    from collections import Counter
    result = Counter()
    for word, n in corpus.items():
        for i in range(len(word) - 1):
            result[(word[i], word[i + 1])] += n
    return dict(result)""",
    MERGE: MERGE_SIGNATURE
    + """    result = list(symbols)
    i = 0
    while i < len(result) - 1:
        if (result[i], result[i + 1]) == pair:
            result[i : i + 2] = [result[i] + result[i + 1]]
        i += 1
    return tuple(result)""",
    TRAIN: TRAIN_SIGNATURE
    + """    corpus = {}
    for word, freq in word_freq.items():
        corpus[tuple(word) + ("</w>",)] = freq
    merges = []
    while len(merges) < num_merges:
        counts = count_pairs(corpus)
        if not counts:
            break
        top = max(counts, key=counts.get)  # the first of the most frequent: the first met
        merges.append(top)
        new = {}
        for symbols, freq in corpus.items():
            new[merge_pair(symbols, top)] = freq
        corpus = new
    return merges""",
}
BOB = {
    COUNT: COUNT_SIGNATURE
    + """    pairs = {}
    for symbols in corpus:
        weight = corpus[symbols]
        left = symbols[0]
        for right in symbols[1:]:
            if (left, right) not in pairs:
                pairs[(left, right)] = 0
            pairs[(left, right)] += weight
            left = right
    return pairs""",
    MERGE: MERGE_SIGNATURE
    + """    if len(symbols) < 2:
        return tuple(symbols)
    if (symbols[0], symbols[1]) == pair:
        return (symbols[0] + symbols[1],) + merge_pair(symbols[2:], pair)
    return (symbols[0],) + merge_pair(symbols[1:], pair)""",
    TRAIN: TRAIN_SIGNATURE
    + """    state = [(list(w) + ["</w>"], c) for w, c in word_freq.items()]
    learned = []
    for _ in range(num_merges):
        tally = {}
        for syms, c in state:
            for a, b in zip(syms, syms[1:]):
                tally[a, b] = tally.get((a, b), 0) + c
        if not tally:
            break
        top = sorted(tally.items(), key=lambda kv: -kv[1])[0][0]
        learned.append(top)
        state = [(list(merge_pair(tuple(s), top)), c) for s, c in state]
    return learned""",
}
# Alice's count_pairs with every name changed, a comment added and a line wrapped: the same tokens.
CAROL_COUNT = (
    COUNT_SIGNATURE
    + """    # count them with a Counter
    from collections import Counter
    tally = Counter()
    for w, weight in corpus.items():
        for k in range(len(w)
                       - 1):
            tally[(w[k], w[k + 1])] += weight  # the pair at k
    return dict(tally)"""
)
# Bob's merge_pair's names and calls, another algorithm: the same words in another order.
DAVE_MERGE = (
    MERGE_SIGNATURE
    + """    out = []
    for piece in symbols:
        if out and (out[-1], piece) == pair and len(out[-1]) == len(pair[0]):
            out[-1] = out[-1] + piece
        else:
            out.append(piece)
    return tuple(out)"""
)
# The package's own merge_symbols pasted under the exercise's signature.
PASTED = MERGE_SIGNATURE + "".join(inspect.getsourcelines(merge_symbols)[0][1:])


def _notebook(answers: dict[str, str]) -> nbformat.NotebookNode:
    """Exercise 02 as released, with ``answers`` (by grade_id) written in."""
    nb = release_notebook(SOLVED["02_training"], "02_training")
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nb


def _class(root: Path, students: dict[str, dict[str, str] | str]) -> Path:
    """nbgrader's ``submitted/STUDENT/02_training/02_training.ipynb``; a str is the file's raw text."""
    for student, answers in students.items():
        path = root / "submitted" / student / "02_training" / "02_training.ipynb"
        path.parent.mkdir(parents=True)
        if isinstance(answers, str):
            path.write_text(answers, encoding="utf-8")
        else:
            nbformat.write(_notebook(answers), path)
    return root / "submitted"


def _flags(sim):
    return [(f.cell, f.against, f.left.name, f.right.name) for f in sim.flags]


# ------------------------------------------------------------ by hand


def test_normalise_keeps_keywords_and_operators_and_makes_names_strings_numbers_placeholders():
    source = "if n > 0:  # positive\n    name = f\"{n}!\" + 'x' * 2.5\n"
    assert [t.text for t in normalise(source)] == ["if", "V", ">", "N", ":", "V", "=", "S", "+", "S", "*", "N"]
    assert [t.line for t in normalise(source)] == [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2]
    # an f-string is one S whatever it holds (Python 3.12 cuts it into parts; 3.10 and 3.11 do not)
    nested = 'x = f"a{f\'{y!r:>{w}}\'}b" + rf"""\n{z}\n"""\nq = 1'
    assert [t.text for t in normalise(nested)] == ["V", "=", "S", "+", "S", "V", "=", "N"]
    assert [t.line for t in normalise(nested)][-3:] == [4, 4, 4]


def test_a_cell_tokenize_refuses_is_cut_roughly_not_an_error():
    assert [t.text for t in normalise("if (x:\n    y = 'open")] == ["if", "(", "V", ":", "V", "=", "S"]
    assert [t.text for t in normalise("  x = 1\n y == 2\n")] == ["V", "=", "N", "V", "==", "N"]
    with pytest.raises(TypeError, match="source must be str, got bytes"):
        normalise(b"x = 1")  # type: ignore[arg-type]


def test_winnowing_gives_the_papers_fingerprints():
    """Schleimer, Wilkerson and Aiken 2003, Figure 2: the hashes of the
    5-grams of "adorunrunrunadorunrun", windows of 4."""
    hashes = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    assert winnow(hashes, 4) == [(17, 3), (17, 6), (8, 8), (39, 11), (17, 15)]


def test_winnowing_takes_the_rightmost_minimum_once_and_one_window_when_short():
    # (2 1 1) picks the 1 at 2; (1 1 1) the one at 3; (1 1 3) that one again (the leftmost: 1, 1, 2)
    assert winnow([2, 1, 1, 1, 3], 3) == [(1, 2), (1, 3)]
    assert winnow([5, 2, 9], 4) == [(2, 1)]
    assert winnow([], 4) == []
    with pytest.raises(ValueError, match="w must be at least 1, got 0"):
        winnow([1], 0)
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        kgram_hashes(normalise("x"), 0)


@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 6))
def test_winnowing_selects_in_every_window_and_only_a_windows_rightmost_minimum(hashes, w):
    chosen = winnow(hashes, w)
    places = [place for _, place in chosen]
    assert places == sorted(set(places)) and all(hashes[p] == h for h, p in chosen)
    for start in range(max(1, len(hashes) - w + 1) if hashes else 0):  # density: each window holds a fingerprint
        assert any(start <= p < start + w for p in places)
    for p in places:  # each one is some window's rightmost minimum
        assert any(
            min(hashes[s : s + w]) == hashes[p] and hashes[p] not in hashes[p + 1 : s + w]
            for s in range(max(0, p - w + 1), p + 1)
        )


_TOKENS = st.lists(st.sampled_from(["+", "-", "*", "/", "%", "==", "<", ",", ":", "if", "for", "in", "x", "1", "'s'"]))


@given(_TOKENS, _TOKENS, _TOKENS, _TOKENS, st.lists(st.sampled_from(["+", "x", "1", "if", "=="]), min_size=K + W - 1))
def test_a_run_of_k_plus_w_minus_1_shared_tokens_always_shares_a_fingerprint(before, after, other, rest, common):
    """The winnowing guarantee: those tokens hold a whole window of k-grams, whose minimum both select."""
    match = compare(fingerprint(" ".join(before + common + after)), fingerprint(" ".join(other + common + rest)))
    assert match.shared >= 1 and match.blocks


_NEW_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,9}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))


@given(
    st.dictionaries(
        st.sampled_from(["corpus", "word", "freq", "merges", "counts", "top", "new", "symbols"]), _NEW_NAMES
    )
)
def test_renaming_variables_changes_no_fingerprint(names):
    source = ALICE[TRAIN]
    renamed = re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), source)
    assert fingerprint(renamed).places == fingerprint(source).places


def test_fingerprints_of_a_tiny_token_sequence_by_hand():
    """``a = b`` / ``c = d`` is V = V V = V; its 3-grams "V = V", "= V V",
    "V V =", "V = V": the first and last hash alike. The hashes are
    BLAKE2b's, the same on every run and machine (pinned)."""
    tokens = normalise("a = b\nc = d")
    h0, h1, h2, h3 = kgram_hashes(tokens, 3)
    assert (h0, h1, h2) == (14467722131633393487, 3218479270699090076, 7399501204097730792)
    assert h3 == h0 and h1 < h2 < h0
    # windows of 2: (h0 h1) -> h1 at 1; (h1 h2) -> h1 at 1 again; (h2 h0) -> h2 at 2
    prints = fingerprint("a = b\nc = d", k=3, w=2)
    assert prints.places == {h1: (1,), h2: (2,)}
    assert prints.span(1, 1) == (1, 2) and prints.span(2, 2) == (1, 2)
    # windows of 3: (h0 h1 h2) and (h1 h2 h0) both pick h1 at 1
    assert fingerprint("a = b\nc = d", k=3, w=3).places == {h1: (1,)}
    # the starter's k-grams are dropped: a base holding "V = V" leaves the rest
    assert fingerprint("a = b\nc = d", k=3, w=2, base=frozenset([h1])).places == {h2: (2,)}


def test_matched_lines_map_back_to_each_sources_own_lines():
    copied = "total = 0\nfor item in things:\n    if item > limit:\n        total += item * weight\nprint(total)\n"
    left = "import os\n" + copied
    right = "def f():\n    return 1\n\n\n" + copied.replace("total", "acc").replace("item", "x")
    match = compare(fingerprint(left), fingerprint(right))
    assert [(b.left, b.right) for b in match.blocks] == [((2, 6), (5, 9))]
    assert match.containment == 1.0 and match.shared == match.left_total < match.right_total  # right has f() too


# ------------------------------------------------------------ a class


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("similar")
    folder = _class(
        tmp,
        {
            "alice": ALICE,
            "bob": BOB,
            "carol": {COUNT: CAROL_COUNT},
            "dave": {MERGE: DAVE_MERGE},
            "erin": {MERGE: PASTED},
            "frank": {},  # the exercise as released
            "gina": {},
        },
    )
    return folder, similarity([folder], solutions_dir=SOLUTIONS)


def test_a_renamed_rewrapped_copy_is_flagged_with_its_lines_side_by_side(flagged):
    _, sim = flagged
    pair = [f for f in sim.flags if f.against == "submission" and f.cell == COUNT]
    assert [(f.left.name, f.right.name, f.measure, f.score) for f in pair] == [("alice", "carol", "jaccard", 1.0)]
    (block,) = pair[0].blocks
    assert block.right[1] == len(CAROL_COUNT.splitlines()) and block.left[1] == len(ALICE[COUNT].splitlines())
    text = side_by_side(pair[0].left, pair[0].right, block)
    assert "result[(word[i], word[i + 1])] += n" in text and "tally[(w[k], w[k + 1])] += weight" in text


def test_independent_answers_and_the_same_words_in_another_order_are_not_flagged(flagged):
    _, sim = flagged
    names = {name for _, _, left, right in _flags(sim) for name in (left, right)}
    assert "bob" not in names and "dave" not in names  # bob's three answers are his own; dave reuses bob's words
    assert ("alice", "carol") in {(f.left.name, f.right.name) for f in sim.flags}
    assert not [f for f in sim.flags if f.left.name == "alice" and f.cell != COUNT]
    # with a margin: under a tenth in common with each other, a fifth with the package or the model answer
    cells = {cell.grade_id: cell for cell in answer_cells("02_training", SOLVED["02_training"])}
    for gid in (COUNT, MERGE, TRAIN):
        mine, theirs = (fingerprint(a[gid], base=cells[gid].base) for a in (ALICE, BOB))
        assert compare(mine, theirs).jaccard < 0.1
        assert max(compare(p, ref).containment for p in (mine, theirs) for _, ref in cells[gid].references) < 0.2
    # and they do share something: the measure is not blind
    assert compare(*(fingerprint(a[TRAIN], base=cells[TRAIN].base) for a in (ALICE, BOB))).shared > 0


def test_statements_reordered_are_still_a_copy():
    lines = ALICE[TRAIN].splitlines()
    swapped = "\n".join([lines[0], lines[4], *lines[1:4], *lines[5:]])  # "merges = []" moved up
    assert compare(fingerprint(swapped), fingerprint(ALICE[TRAIN])).jaccard >= 0.7


def test_the_packages_own_merge_symbols_pasted_is_flagged_as_the_package(flagged):
    _, sim = flagged
    (flag,) = [f for f in sim.flags if f.left.name == "erin"]
    lines, first = inspect.getsourcelines(merge_symbols)
    assert (flag.cell, flag.against, flag.right.name) == (MERGE, "package", "bpe_lab.core.words.merge_symbols")
    assert (flag.right.path, flag.right.first_line, flag.measure) == ("bpe_lab/core/words.py", first, "containment")
    assert flag.score == 1.0
    data = flag.to_dict()["blocks"][-1]["right"]
    assert data["lines"][1] == first + len(lines) - 1 and data["text"][-1] == lines[-1].rstrip("\n")


def test_the_starter_code_alone_is_never_flagged_nor_compared(flagged):
    _, sim = flagged
    assert not [f for f in sim.flags if {"frank", "gina"} & {f.left.name, f.right.name}]
    # only the cells someone wrote in are compared (first_mistake: nobody's)
    written = {"alice": 3, "bob": 3, "carol": 1, "dave": 1, "erin": 1}
    assert sim.compared == sum(written.values())


def test_a_copy_of_the_model_answer_is_flagged_against_the_solution(tmp_path):
    model = next(c.source for c in SOLVED["02_training"].cells if nbgrader(c).get("grade_id") == MERGE)
    copied = model.replace("out", "res").replace("### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION", "")
    sim = similarity([_class(tmp_path, {"hal": {MERGE: copied}})], solutions_dir=SOLUTIONS)
    assert _flags(sim) == [(MERGE, "solution", "hal", "solution")]
    assert sim.flags[0].right.path == "02_training (solution)"


def test_malformed_notebooks_are_reported_not_a_crash(tmp_path):
    broken = nbformat.writes(_notebook({COUNT: CAROL_COUNT}))
    broken = broken.replace('"cell_type": "code"', '"cell_type": 3', 1)
    folder = _class(
        tmp_path,
        {"alice": ALICE, "carol": {COUNT: CAROL_COUNT}, "ivan": "{ not json", "judy": broken, "kim": "[1, 2]"},
    )
    sim = similarity([folder], solutions_dir=SOLUTIONS)
    assert _flags(sim) == [(COUNT, "submission", "alice", "carol")]
    assert [Path(p).parts[-3] for p, _ in sim.skipped] == ["ivan", "judy", "kim"]
    assert all("not a readable notebook" in reason for _, reason in sim.skipped)
    assert "not compared (in full): " in format_similarity(sim) and "## Not compared" in similarity_markdown(sim)


def test_the_order_is_the_same_whatever_order_the_submissions_come_in(flagged):
    folder, sim = flagged
    subs = collect([folder], SOLVED)
    random.Random(7).shuffle(subs)
    assert find_similar(subs, SOLVED).to_dict() == sim.to_dict()
    assert [f.cell for f in sim.flags] == sorted((f.cell for f in sim.flags), key=[COUNT, MERGE, TRAIN].index)


def test_settings_out_of_range_are_refused():
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\], got 1.5"):
        Settings(threshold=1.5)
    with pytest.raises(ValueError, match="at least 1, got 0, 8, 5"):
        Settings(min_shared=0)


# ------------------------------------------------------------ the report


def test_learners_text_cannot_break_out_of_the_report(tmp_path):
    hostile = CAROL_COUNT.replace("# count them with a Counter", "# ```\n    # <script>alert(1)</script>")
    left, right = Side("x\x1b[31m", "a.ipynb", hostile), Side("y", "b.ipynb", CAROL_COUNT)
    sim = find_similar([], SOLVED)
    match = compare(fingerprint(left.source), fingerprint(right.source))
    sim.flags.append(Flag("02_training", COUNT, "submission", left, right, "jaccard", 1.0, 3, match.blocks))
    page = similarity_markdown(sim)
    assert "\n````\n" in page and "\x1b" not in page  # a longer fence than the learner's ```
    assert "<script>" not in similarity_html(sim) and "&lt;script&gt;" in similarity_html(sim)
    assert "\x1b" not in format_similarity(sim) and "alert" not in format_similarity(sim)
    assert write_similarity(sim, tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert write_similarity(sim, tmp_path / "r.md").read_text(encoding="utf-8").startswith("# Similarity report")


def test_side_by_side_numbers_each_side_by_its_own_file():
    left, right = Side("a", "a", "p\nq\nr"), Side("b", "b", "s\nt", first_line=40)
    assert side_by_side(left, right, Block((2, 3), (1, 2), 2), width=3).splitlines() == [
        "   2 q   |   40 s",
        "   3 r   |   41 t",
    ]


# ------------------------------------------------------------ the command


def test_bpe_lab_grade_similarity_only_on_a_class_folder(flagged, tmp_path, capsys):
    folder, sim = flagged
    out = tmp_path / "similar.html"
    args = ["grade", str(folder), "--solutions", str(SOLUTIONS), "--similarity-only", "--json"]
    assert main([*args, "--similarity-out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"similarity": sim.to_dict()}
    assert [(f["left"]["name"], f["right"]["name"]) for f in printed["similarity"]["flags"]] == [
        ("alice", "carol"),
        ("erin", "bpe_lab.core.words.merge_symbols"),
    ]
    assert "tally[(w[k], w[k + 1])] += weight" in out.read_text(encoding="utf-8")
    book = tmp_path / "gradebook.csv"
    assert main(["grade", str(folder), "--solutions", str(SOLUTIONS), "--similarity-only", "--out", str(book)]) == 0
    assert "alice ~ carol, jaccard 100%" in capsys.readouterr().out
    assert (tmp_path / "gradebook-similarity.md").read_text(encoding="utf-8").startswith("# Similarity report")
    assert not book.exists()  # nothing was graded


def test_bpe_lab_grade_similarity_beside_the_grading_prints_one_json_object(flagged, monkeypatch, capsys):
    folder, sim = flagged
    monkeypatch.setattr(grade_command, "grade_collection", lambda *a, **k: [])  # the wiring, not the kernels
    assert main(["grade", str(folder), "--solutions", str(SOLUTIONS), "--similarity", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"reports": [], "similarity": sim.to_dict()}
    assert main(["grade", str(folder), "--solutions", str(SOLUTIONS), "--similarity"]) == 0
    assert capsys.readouterr().out.endswith("\n\n" + format_similarity(sim) + "\n")  # after the reports


def test_a_wrong_threshold_stops_before_grading(flagged, monkeypatch, capsys):
    folder, _ = flagged
    monkeypatch.setattr(grade_command, "grade_collection", lambda *a, **k: pytest.fail("graded"))
    assert main(["grade", str(folder), "--similarity", "--similarity-threshold", "0"]) == 2
    assert "threshold must be in (0, 1], got 0.0" in capsys.readouterr().err


# ------------------------------------------------------------ every notebook, written answers, long cells

WRITTEN = "02_written_tie_rule"


def test_every_solution_submitted_twice_is_flagged_cell_by_cell_and_its_exercise_never(tmp_path):
    for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb")):
        for student, notebook in (("ann", path), ("ben", path), ("cat", SOLUTIONS.parent / "exercises" / path.name)):
            (tmp_path / student).mkdir(exist_ok=True)
            (tmp_path / student / path.name).write_text(notebook.read_text(encoding="utf-8"), encoding="utf-8")
    sim = similarity([tmp_path], solutions_dir=SOLUTIONS)
    cells = [cell for name, nb in SOLVED.items() for cell in answer_cells(name, nb)]
    assert len(cells) == 43 and sum(cell.prose for cell in cells) == 10  # 33 to code, 10 written
    pairs = {f.cell for f in sim.flags if (f.against, f.left.name, f.right.name) == ("submission", "ann", "ben")}
    models = {f.cell for f in sim.flags if (f.against, f.right.name) == ("solution", "solution")}
    assert [c.grade_id for c in cells if c.grade_id not in pairs] == ["07_wild_pretokenize_zh_answer"]  # one regex
    assert models == pairs
    assert not [f for f in sim.flags if "cat" in (f.left.name, f.right.name)] and sim.skipped == []


def test_each_tasks_package_answers_are_what_it_is_compared_with():
    cells = {c.grade_id: c for c in answer_cells("02_training", SOLVED["02_training"])}
    named = {gid: [side.name for side, _ in cell.references] for gid, cell in cells.items()}
    train = "bpe_lab.core.train"
    assert named == {
        COUNT: [f"{train}.count_pairs", "solution"],
        MERGE: ["bpe_lab.core.words.merge_symbols", "solution"],
        TRAIN: [f"{train}.train_bpe", f"{train}.train_trace", f"{train}._rounds", f"{train}.pick_pair"]
        + ["bpe_lab.core.train_fast.train_fast", "bpe_lab.core.train_fast.learn_merges", "solution"],
        "02_training_first_mistake_answer": [
            "bpe_lab.grading.check.training.find_first_mistake",
            f"{train}.train_trace",
            "solution",
        ],
        WRITTEN: ["solution"],
    }
    # on every notebook, every package answer a task names is read (none lost to a source it cannot find)
    for name, nb in SOLVED.items():
        read = {side.name for cell in answer_cells(name, nb) for side, _ in cell.references[:-1]}
        assert read == {path for task in load_tasks(nb) for path in task.own}, name


def test_a_written_answer_copied_is_flagged_and_one_in_ones_own_words_is_not(tmp_path):
    model = next(c.source for c in SOLVED["02_training"].cells if nbgrader(c).get("grade_id") == WRITTEN)
    copied = "**" + model.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "").upper() + "**"
    own = (
        "Ties decide everything after them: once two pairs tie and one is merged, the words change, so "
        "every later count changes too. Without a rule nobody could reproduce a vocabulary."
    )
    sim = similarity([_class(tmp_path, {"lee": {WRITTEN: copied}, "max": {WRITTEN: own}})], solutions_dir=SOLUTIONS)
    assert _flags(sim) == [(WRITTEN, "solution", "lee", "solution")] and sim.flags[0].score == 1.0
    assert [t.text for t in words("A *tie*, (says `max`)...")] == ["a", "tie", "says", "max"]


def test_a_cell_over_the_limit_is_compared_on_its_beginning_and_said_so(tmp_path):
    long = ALICE[COUNT] + "\n" + "\n".join(f"    step_{i} = {i} * weight" for i in range(3000))
    assert len(long) > MAX_CELL_CHARS
    sim = similarity([_class(tmp_path, {"ned": {COUNT: long}, "oli": {COUNT: long}})], solutions_dir=SOLUTIONS)
    assert _flags(sim) == [(COUNT, "submission", "ned", "oli")]
    assert [reason for _, reason in sim.skipped] == [
        f"{COUNT} holds {len(long):,} characters: only its first 50,000 compared"
    ] * 2
    assert all(len(side.source) == MAX_CELL_CHARS for side in (sim.flags[0].left, sim.flags[0].right))
