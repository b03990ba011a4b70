"""Generated cases for chapter 04: incremental pair counts and the pair index.

What this adds over ``generators`` (the table and the shared inputs): the
inputs of chapter 04's tasks, and for an update made in place a call that
sends back its arguments too, so that generated cases are judged as the
fixed ones are:
``(lambda w, c, i: (merge_indexed(w, c, i, pair), w, c, i))(words, counts, index)``.
The references are ``check.complexity``'s (``recount_deltas``,
``index_words``, ``merge_in_index``) and ``learn_merges``.

What a value cannot show, whether ``merge_indexed`` touches only the words
``index[pair]`` names and whether ``train_indexed``'s work grows with its
merges rather than with corpus x merges, the fixed cases ask with
``check.work_growth(FN, TASK)``. In the kernel that counts operations on
traced words, which a submission can forge; so the grader plans its own
measurement of those calls (``MEASURED``, run by ``run.measure``): an
untimed cell builds the chapter's core words (``check.instruments.core_words``,
166 words whose first 40 merges all count 12 or more) alone and with
``FILLERS`` words of two symbols of their own (each pair counted once, so
no merge ever involves them), and timed cells run the learner's function:

- ``merge_indexed``: the core's first ``MERGES`` (100) merges, one call each, on
  the core alone and on the core with the fillers. A local merge does the
  same work on both (the same words, listed by the same ``index[pair]``);
  one that visits every word pays for each filler in every call.
- ``train_indexed``: ``TRAIN_MERGES`` (10 and 60) merges on both corpora;
  the verdict is the large corpus's extra cost of 50 more merges less the
  small one's. A local trainer pays for the fillers once (its index and
  heap) whatever the merges; a recount or a scan pays for them in every
  round. (Every core pair counts 3 or more, every filler pair 1: no
  filler pair is ever the best.)

The weighted CPU seconds must stay under ``BOUND``. Each timed call also
sends back its value, which must be the reference's on the core alone
(the fillers change nothing).

A difference can be padded: an answer that burns on the core alone what
its scan costs with the fillers (it sees ``len(words)``) makes it 0. So
each timed cell is followed by a local answer of the grader's on the same
input, timed the same way in the same kernel (``Measured.reference``), and
every timed cell must stay within ``RATIO`` times its reference's seconds
plus ``BOUND``. The reference is the kernel-side module's own code
(``run.in_kernel``'s ``reference_merge``, as ``merge_in_index`` merges, on
copies of the same words, counts and index; ``reference_train``, an index
and a heap as the solution's): the package's answers have no body in the
kernel that grades the task (``run.stubs``).

Every cell is a call of ``run.in_kernel`` with data (``kernel_call``): the
setup sends the core's words, the fillers' sizes, the merges and the pairs
whose counts a call sends back (``measured_setup``, which keeps the corpora
in that module); each timed cell is the probe's hidden call of
``timed_merge(NAME, CORPUS)`` or ``timed_train(NAME, CORPUS, MERGES)``,
which calls the learner's function the cell names with the garbage
collector off, the reference's the same around the local answer. The solution's cells take about what the reference's do
(its merges 0.02 s against 0.02, its trainer with the fillers 0.4 s
against 0.25): a local answer has room to be several times slower.
Padding a scan shows on the cell it pads: the cheapest rescanning merge
costs some 0.7 s on the core alone, against an allowance of 0.2 s; a
recount padded on the small corpus 1.9 s against 0.16.

**The margins.** ``/proc`` counts CPU time in ticks of 10 ms, so two
readings around a cell are good to about 20 ms, and a sum of two or four
cells' figures to some 40 ms (ipykernel's own threads add a few ms). A
local answer's weighted sum is that noise: the work it does grows with
the words it touches, the same on both corpora, and the garbage collector
is off during the calls and the corpora frozen out of its reach (a full
collection's cost follows the objects the kernel holds). ``BOUND`` is 12
ticks: three times the noise, so a local answer stays under it however
loaded the machine (CPU time, unlike wall time, does not count the time
a loaded machine keeps the kernel waiting). A merge that visits every word
does ``MERGES`` x ``FILLERS`` = 20,000,000 word visits more: even the
cheapest Python loop over them (one set lookup per visit) spends dozens
of ticks, a scan for the pair (``pair in zip(...)``) many times more. A
trainer that recounts or scans every word in each of 50 more rounds does
5,000,000 visits more, each looking at a word's symbols: dozens of ticks
again, hundreds for a recount. A slower machine is slower at all of it:
the wrong answers' sums grow, a local one's stays noise.
``tests/test_grading_measured.py`` runs the decision several times on a
loaded machine.
What it does not catch: work at C speed over the list's pointers alone (a
``list(words)`` copy in each call, a ``max`` without a key: a few ns an
item), which the traced words' hint names to a learner at home.

>>> from bpe_lab.grading.cases.generators import GENERATORS
>>> call = GENERATORS["04_complexity_merge_indexed"].source
>>> call("merge_indexed", ([(("a", "b"), 2)], {("a", "b"): 2}, {("a", "b"): {0}}, ("a", "b")))[:58]
"(lambda w, c, i: (merge_indexed(w, c, i, ('a', 'b')), w, c"
"""

from __future__ import annotations

import ast
import functools
import random
from typing import Any

from bpe_lab.core.train import count_pairs
from bpe_lab.core.train_fast import learn_merges
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.cases.generators import (
    MEASURED,
    Args,
    Corpus,
    Measured,
    Pair,
    draw,
    kernel_call,
    random_corpus,
    random_symbols_and_pair,
    register,
)
from bpe_lab.grading.check.complexity import index_words, merge_in_index, recount_deltas
from bpe_lab.grading.check.instruments import core_words
from bpe_lab.grading.parsing import parse

__all__: list[str] = []  # it registers its generators, and exports nothing


Words = list[tuple[tuple[str, ...], int]]


@register("04_complexity_pair_deltas", recount_deltas)
def _pair_deltas_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: random_symbols_and_pair(rng))


def _merge_and_update(corpus: Corpus, counts: dict[Pair, int], pair: Pair) -> tuple[Corpus, dict[Pair, int]]:
    """Merge ``pair`` everywhere and correct ``counts`` word by word."""
    counts, merged = dict(counts), {}
    for symbols, freq in corpus.items():
        if pair in zip(symbols, symbols[1:]):
            for p, change in recount_deltas(symbols, pair).items():
                counts[p] = counts.get(p, 0) + change * freq
                if counts[p] == 0:
                    del counts[p]
            symbols = merge_symbols(symbols, pair)
        merged[symbols] = freq
    return merged, counts


@register("04_complexity_merge_and_update", _merge_and_update)
def _merge_and_update_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        corpus = random_corpus(rng)
        counts = count_pairs(corpus)
        return (corpus, counts, rng.choice(sorted(counts))) if counts else None

    return draw(make)


def _words(rng: random.Random) -> Words:
    """2-5 distinct words of symbols (runs of ``a`` repeat a pair), some ending in ``</w>``."""
    words: dict[tuple[str, ...], int] = {}
    for _ in range(rng.randint(2, 5)):
        symbols = tuple(rng.choice(["a", "a", "b", "c", "ab"]) for _ in range(rng.randint(1, 6)))
        words[symbols + (("</w>",) if rng.random() < 0.7 else ())] = rng.randint(1, 9)
    return list(words.items())


@register("04_complexity_build_index", index_words)
def _build_index_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_words(rng),))


def _merge_indexed(words: Words, counts: dict[Any, int], index: dict[Any, set[int]], pair: Any) -> Args:
    """The changed pairs, then words, counts and index as the merge leaves them."""
    words, counts, index = list(words), dict(counts), {p: set(ids) for p, ids in index.items()}
    return merge_in_index(words, counts, index, pair), words, counts, index


def _merge_indexed_call(name: str, args: Args) -> str:
    words, counts, index, pair = args
    return f"(lambda w, c, i: ({name}(w, c, i, {pair!r}), w, c, i))({words!r}, {counts!r}, {index!r})"


@register("04_complexity_merge_indexed", _merge_indexed, _merge_indexed_call)
def _merge_indexed_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        words = _words(rng)
        counts, index = index_words(words)
        return (words, counts, index, rng.choice(sorted(counts))) if counts else None

    return draw(make)


def _train_indexed(words: Words, num_merges: int) -> list[Any]:
    return learn_merges(dict(words), num_merges, tie_break="lexicographic")


@register("04_complexity_train_indexed", _train_indexed)
def _train_indexed_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_words(rng), rng.randint(1, 12)))


# ------------------------------------------------ measured: work that must not grow with the corpus

#: Filler words beside the core for ``merge_indexed``, and the core's merges it makes, one call each.
FILLERS, MERGES = 200_000, 100
#: Filler words for ``train_indexed``, and its (fewer, more) merges.
TRAIN_FILLERS, TRAIN_MERGES = 100_000, (10, 60)
#: CPU seconds (12 ticks of ``/proc``'s 10 ms) the weighted sum may reach: see the module's docstring.
BOUND = 0.12
#: How many times its reference's CPU seconds (plus ``BOUND``) each timed cell may take.
RATIO = 4
#: The fillers' symbols: two ranges of Han characters, so each filler's one pair is its own.
_SIDE = 512

#: Frees what the setup made, whatever the timed cells did (the garbage collector back on).
CLEANUP = kernel_call("measured_cleanup")


def _work_call(call: str) -> tuple[str, str] | None:
    """(the function, "train" or "merge") of ``check.work_growth(NAME[, TASK])``, or None."""
    try:
        node = parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) == "check.work_growth"
        and not node.keywords
        and 1 <= len(node.args) <= 2
        and isinstance(node.args[0], ast.Name)
    ):
        return None
    task = node.args[1].value if len(node.args) == 2 and isinstance(node.args[1], ast.Constant) else "train"
    if len(node.args) == 2 and not isinstance(node.args[1], ast.Constant) or task not in ("train", "merge"):
        return None
    return node.args[0].id, str(task)


@functools.cache
def _merged_core() -> tuple[list[Pair], Any, list[Pair]]:
    """The core's first ``MERGES`` merges, what ``merge_indexed`` must
    leave (the changed pairs of each call, the words, the counts and index
    of every pair the core ever held), and those pairs."""
    words = core_words()
    pairs = learn_merges(dict(words), MERGES, tie_break="lexicographic")
    merged, (counts, index) = list(words), index_words(words)
    keys = set(counts)
    changed = []
    for pair in pairs:
        changed.append(merge_in_index(merged, counts, index, pair))
        keys |= set(counts)
    ordered = sorted(keys)
    return pairs, (changed, merged, {p: counts.get(p) for p in ordered}, {p: index.get(p) for p in ordered}), ordered


def _setup(kind: str, fillers: int, **more: Any) -> str:
    """The setup cell: ``in_kernel.measured_setup`` with the core's words and the fillers' sizes as data."""
    data = {"core": core_words(), "side": _SIDE, "fillers": fillers, **more}
    return kernel_call("measured_setup", repr(kind), repr(data))


def _merge_plan(name: str) -> Measured:
    pairs, expected, keys = _merged_core()
    # the pairs and keys sent once, in the setup, not in each timed cell: compiling them cost 0.1 s a cell
    setup = _setup("merge", FILLERS, pairs=pairs, keys=keys)
    timed = (
        (kernel_call("timed_merge", name, repr("small")), -1, expected),
        (kernel_call("timed_merge", name, repr("large")), 1, expected),
    )
    references = tuple(kernel_call("reference_merge", repr(corpus)) for corpus in ("small", "large"))
    size = f"{MERGES} merges on the core's {len(core_words())} words, alone and with {FILLERS:,} more"
    mistake = "too slow: the work grew with the corpus"
    return Measured("cpu", setup, timed, CLEANUP, BOUND, size, mistake, "flat", references, RATIO)


def _train_plan(name: str) -> Measured:
    words = core_words()
    setup = _setup("train", TRAIN_FILLERS)
    fewer, more = TRAIN_MERGES
    cells = ((fewer, "large", -1), (fewer, "small", 1), (more, "large", 1), (more, "small", -1))
    timed = tuple(
        (kernel_call("timed_train", name, repr(corpus), repr(merges)), sign, _train_indexed(words, merges))
        for merges, corpus, sign in cells
    )
    references = tuple(kernel_call("reference_train", repr(corpus), repr(merges)) for merges, corpus, _ in cells)
    size = f"{fewer} and {more} merges on {len(words)} words, alone and with {TRAIN_FILLERS:,} more"
    mistake = "too slow: the work grew with the corpus times the merges"
    return Measured("cpu", setup, timed, CLEANUP, BOUND, size, mistake, "flat", references, RATIO)


def _work_plan(call: str) -> Measured | None:
    """The measured plan of a ``check.work_growth`` call, or None."""
    found = _work_call(call) if call.startswith("check.work_growth(") else None
    if found is None:
        return None
    name, task = found
    return _merge_plan(name) if task == "merge" else _train_plan(name)


MEASURED.append(_work_plan)
