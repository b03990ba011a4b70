"""Hints that teach: each self-check, given the mistake a learner is likely
to make, says what happened (issue 30, point 6), pinned word for word; and
an untouched exercise's later cells say which task to finish first instead
of raising ``NameError``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import regex

from bpe_lab.grading import check
from bpe_lab.grading.authoring.tasks import load_tasks
from bpe_lab.grading.check.hidden import write_plain
from bpe_lab.grading.check.runner import CheckFailed, finish_first
from bpe_lab.grading.run.visible import record, verdict

ROOT = Path(__file__).resolve().parent.parent


def _cells(folder: str, stem: str) -> list[str]:
    notebook = nbformat.read(ROOT / folder / f"{stem}.ipynb", as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def _solved(stem: str, *names: str) -> dict[str, object]:
    """The solution notebook's code cells that define ``names``, run in a fresh namespace."""
    namespace: dict[str, object] = {"__name__": f"solution_{stem}"}
    for source in _cells("solutions", stem):
        if source.startswith(("import", "from", "EOT")) or any(
            f"def {n}(" in source or f"class {n}" in source for n in names
        ):
            exec(compile(source, f"<{stem}>", "exec"), namespace)
    return namespace


# ------------------------------------------------ exercise 01, task 2: a freed code given again


def _most_frequent_pair(data):
    best = None
    for pair in dict.fromkeys(zip(data, data[1:])):
        count = data.count(bytes(pair))
        if best is None or count > best[1]:
            best = (pair, count)
    return best


def _compress_reusing_freed_codes(data):
    """The mistake task 2 warns about: the smallest byte value not in the data *now*."""
    table = {}
    while len(data) > 1:
        pair, count = _most_frequent_pair(data)
        free = next((b for b in range(256) if b not in data), None)
        if count < 2 or free is None:
            break
        table[free] = pair
        data = data.replace(bytes(pair), bytes([free]))
    return data, table


def test_a_compress_that_gives_a_freed_code_again_is_told_so_not_sent_to_most_frequent_pair(capsys):
    check.check_most_frequent_pair(_most_frequent_pair)
    with pytest.raises(CheckFailed) as failed:
        check.check_compress(_compress_reusing_freed_codes)
    assert str(failed.value) == (
        "compress(b'the theme of the thesis'): replacement 3: (32, 1) gets code 0, which already stands for "
        "(116, 104) (replacement 1): a code that left the data is still in the table, and the table keeps one pair "
        "per code, so (116, 104) is lost. Use the smallest byte value that never occurred, neither in the data nor "
        "as an earlier code"
    )
    assert "most_frequent_pair" not in str(failed.value)


# ------------------------------------------------ exercise 09, task 1: a special token with a new id


def _pipeline_without_specials_in_the_vocab(tokenizer):
    """The likely mistake: the special tokens left out of the model's vocab, then added."""
    import tokenizers
    from tokenizers import AddedToken, decoders, models, pre_tokenizers

    from bpe_lab.bytelevel.byte_map import bytes_to_unicode

    printable = bytes_to_unicode()
    specials = tokenizer.special_ids
    vocab = {"".join(printable[b] for b in t): i for i, t in tokenizer.vocab.items() if i not in specials.values()}
    merges = [("".join(printable[b] for b in a), "".join(printable[b] for b in b_)) for a, b_ in tokenizer.merges]
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in tokenizer.special_tokens])
    return hf


def test_a_special_token_added_under_a_new_id_is_told_both_ids_and_how_to_keep_bpe_labs():
    pytest.importorskip("tokenizers")
    with pytest.raises(CheckFailed) as failed:
        check.check_build_pipeline(_pipeline_without_specials_in_the_vocab)
    why = (
        "'<|endoftext|>' is one token but got the new id 399, not bpe_lab's 256: add_special_tokens keeps the id of "
        "a token the model's vocab holds and numbers one it lacks anew. Put each special token in the vocab you give "
        "models.BPE with bpe_lab's id ('<|endoftext|>': 256) before add_special_tokens"
    )
    assert str(failed.value) == (
        "build_pipeline(Tokenizer(400 ids, 143 merges, special_tokens=['<|endoftext|>']))"
        ".encode('the end<|endoftext|>The start').ids: expected [257, 101, 32, 262, 100, 256, 379, 279, 300, 114, "
        "116], got [257, 101, 32, 262, 100, 399, 379, 279, 300, 114, 116]: " + why
    )
    assert failed.value.hint == why


def test_the_grader_gives_the_same_special_token_hint_in_full():
    """The grader judges what a kernel's ``pipeline_results`` sent back with
    the same check (``visible``), and shows a hint up to 300 characters."""
    pytest.importorskip("tokenizers")
    solution = nbformat.read(ROOT / "solutions" / "09_production.ipynb", as_version=4)
    visible = record(solution, load_tasks(solution))["09_production_build_pipeline"]
    returned = []
    for source in visible.sources():  # what the kernel runs, on the mistaken answer
        value = eval(
            source, {**visible.namespace, "check": check, "build_pipeline": _pipeline_without_specials_in_the_vocab}
        )  # noqa: S307 - our own calls
        out: list[str] = []
        write_plain(value, out, [0])
        returned.append({"repr": "".join(out), "reached": []})
    assert verdict(visible, returned) == (
        "the self-check check.check_build_pipeline failed on case 1: build_pipeline(Tokenizer(400 ids, 143 merges, "
        "special_tokens=['<|endoftext|>'])).encode('the end<|endoftext|>The start').ids returned a wrong value: "
        "'<|endoftext|>' is one token but got the new id 399, not bpe_lab's 256: add_special_tokens keeps the id of "
        "a token the model's vocab holds and numbers one it lacks anew. Put each special token in the vocab you give "
        "models.BPE with bpe_lab's id ('<|endoftext|>': 256) before add_special_tokens "
        "(run it in your notebook to see why)"
    )


# ------------------------------------------------ exercise 10, tasks 2 and 3


def _train_first_met(text, vocab_size, special_tokens, pattern):
    """Task 2 with the likely tie-break: the pair counted first wins a tie."""
    words = {}
    for part, special in _solved("10_capstone", "split_specials")["split_specials"](text, special_tokens):
        for piece in [] if special else regex.findall(pattern, part):
            word = tuple(bytes([b]) for b in piece.encode("utf-8"))
            words[word] = words.get(word, 0) + 1
    vocab = {b: bytes([b]) for b in range(256)}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    merges = []
    while len(vocab) < vocab_size:
        counts = {}
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + count
        if not counts:
            break
        best = max(counts, key=counts.get)
        merges.append(best)
        vocab[len(vocab)] = best[0] + best[1]
        merged = {}
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i : i + 2] == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + count
        words = merged
    return vocab, merges


def test_a_wrong_tie_break_in_the_capstone_names_the_first_merge_that_differs_and_the_rule():
    with pytest.raises(CheckFailed) as failed:
        check.check_train_with_pattern(_train_first_met)
    assert str(failed.value) == (
        "train(\"The weather is very nice today.\\nI w..., 400, ['<|endoftext|>'], cl100k): merge 2: expected "
        "(b'e', b's'), got (b'e', b'r'): both occur 81 times at this point, and a tie goes to the lexicographically "
        "greater pair of bytes ((b'e', b's') > (b'e', b'r'): compare the pairs of bytes, as max does)"
    )


def test_a_capstone_class_without_save_and_load_is_told_which_method_is_missing():
    solved = _solved("10_capstone", "split_specials", "MyTokenizer")

    class WithoutSave(solved["MyTokenizer"]):
        def save(self, path):
            raise NotImplementedError()

    class WithoutLoad(solved["MyTokenizer"]):
        @classmethod
        def load(cls, path):
            raise NotImplementedError()

    for cls, named in ((WithoutSave, "WithoutSave.save"), (WithoutLoad, "WithoutLoad.load")):
        with pytest.raises(CheckFailed) as failed:
            check.check_my_tokenizer(cls)
        assert str(failed.value) == (
            f"{named} is not written yet (it raises NotImplementedError): write its body in its cell, run that "
            "cell, then run this one again"
        )


# ------------------------------------------------ untouched exercises: which task first


@pytest.mark.parametrize(
    "stem, cell, message",
    [
        ("09_production", "hf.add_special_tokens", "finish task 1 first: hf is made by its cells"),
        ("10_capstone", "mine = MyTokenizer", "finish task 2 first: vocab and merges are made by its cells"),
        ("10_capstone", "gpt2 = ", "finish task 2 first: vocab and merges are made by its cells"),
    ],
)
def test_an_untouched_exercise_says_which_task_to_finish_instead_of_a_name_error(stem, cell, message):
    """The released exercise run top to bottom, as a learner who skips the
    tasks would: the cell that uses a task's result names the task."""
    namespace: dict[str, object] = {"__name__": f"exercise_{stem}"}
    raised: dict[str, BaseException] = {}
    for source in _cells("exercises", stem):
        try:
            exec(compile(source, f"<{stem}>", "exec"), namespace)
        except (NotImplementedError, CheckFailed, NameError) as err:
            raised[source] = err
    found = next(err for source, err in raised.items() if cell in source)
    assert isinstance(found, CheckFailed) and str(found) == (
        f"{message}, and not defined yet. Write task {message[12]}'s answer, run its cells and the ones below it, "
        "then run this cell again"
    )
    assert not any(isinstance(err, NameError) for err in raised.values()), raised


def test_finish_first_passes_when_the_names_are_there_and_refuses_bad_arguments():
    finish_first(3, "mine", namespace={"mine": object()})
    with pytest.raises(CheckFailed, match=r"^finish task 3 first: mine is made by its cells, and not defined yet\."):
        finish_first(3, "mine", namespace={})
    with pytest.raises(TypeError, match="task is a task's number"):
        finish_first(0, "mine")
    with pytest.raises(TypeError, match="name the variables"):
        finish_first(1)


# ------------------------------------------------ the capstone's prompt states what its cells compute


def test_the_capstone_prompt_quotes_the_ratios_and_the_fraction_its_table_gives():
    """Issue 34 item 8: the written answer's prompt said "about twice" and "a
    hundredth"; its figures are now computed under the table (GPT-2's bytes
    per token, recomputed here with bpe_lab's GPT-2) and quoted as printed."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
    from bpe_lab.grading.check.capstone import split_five_languages

    gpt2 = gpt2_tokenizer()
    per_token = {}
    for lang, text in split_five_languages()[1].items():
        per_token[lang] = len(text.encode("utf-8")) / len(gpt2.encode_ordinary(text))
    ratios = {lang: round(per_token["en"] / b, 2) for lang, b in per_token.items() if lang != "en"}
    assert ratios == {"zh": 2.74, "de": 1.65, "fr": 1.6, "es": 1.69}
    assert round(len(gpt2.merges) / 255) == 196  # the capstone trains 512 ids: 255 merges
    notebook = nbformat.read(ROOT / "solutions" / "10_capstone.ipynb", as_version=4)
    table = next(c for c in notebook.cells if c.cell_type == "code" and "per_token" in c.source)
    printed = "".join(o.get("text", "") for o in table.outputs)
    assert f"GPT-2's English over each other language: {ratios}" in printed and "1/196" in printed
    prompt = next(c.source for c in notebook.cells if c.source.startswith("## Written answer: why the two columns"))
    assert "1.6 to 1.7 times" in prompt and "2.7 times" in prompt and "1/196 of GPT-2's merges" in prompt
    assert "twice" not in prompt and "hundredth" not in prompt
