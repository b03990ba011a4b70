"""Instruments for chapter 04: counting what a trainer touches, not how long it takes.

What this adds to ``runner`` (which compares a learner's values with the
package's): a way to tell a trainer that works locally from one that
recounts, when both give the same merges. Objects handed to the learner's
function record what is done with them:

- ``TracedWords``, the corpus, records which word ids are read and written;
- ``TracedFreq``, a word's frequency, counts the arithmetic done with it
  (every pair count update, ``counts[p] + freq`` or ``delta * freq``);
- ``TracedSymbol``, a starting symbol, counts its equality comparisons
  (a scan for a pair, ``pair in zip(symbols, symbols[1:])``, compares them).

``words`` is documented as a list, and behaves as one where a trainer may
copy it: ``words.copy()``, ``copy.copy``, ``copy.deepcopy``, a pickle's
round trip and ``words + more`` give a corpus whose reads are recorded with
the original's (the same word ids) and whose frequencies and symbols are
the same traced objects (immutable, as ints and strings are: a deep copy
keeps them, a pickle's ``loads`` in the same process finds their tally
again), and ``list(words)``, ``dict(words)``, ``words[:]`` read every word
once and keep those objects too. So a trainer that copies the corpus is
judged as one that does not, and one that recounts or scans its copy is
still seen. ``measure_work`` trains on corpora with
more and more filler words that no merge involves: a local trainer pays for
them once, when it builds its index; a recount or a scan pays again in every
round. The counts are operations, so they are the same on every machine.

A grading kernel's check decides nothing (``run.visible``): the grader
sends each call of a traced corpus as text that builds it in the kernel
(``check.TracedWords(WORDS)``, ``check.traced_corpus(FILLERS)``, from
``TracedWords.made``) and gets back, with the value, what the corpus
recorded (``TracedWords.state``), which it writes into its own copy
(``TracedWords.restore``) before its check looks. What was recorded is
measured in the kernel, so it stays the kernel's word (a submission can
replace these classes, read the words' storage, reset the counters): it
can only cost points there (a failing visible check), never earn them.
Whether a merge stays local and a trainer's work stays flat is what the
grader measures itself, as CPU time of the kernel's processes on a corpus
of many more words (``run.measure``); the counts here are for learners,
whose hints they give.
"""

from __future__ import annotations

import copy
import itertools
import weakref
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from typing import Any

from bpe_lab.core.symbols import END_OF_WORD, Pair

__all__ = [
    "Words",
    "TracedWords",
    "TracedFreq",
    "TracedSymbol",
    "MERGES",
    "FILLERS",
    "FLAT",
    "core_words",
    "traced_corpus",
    "measure_work",
    "work_growth",
]

#: The trainer's corpus: word id -> (symbols, frequency); ids never change.
Words = list[tuple[tuple[str, ...], int]]


#: Each live traced corpus and tally by a key of its own, so that a pickle's
#: ``loads`` in the same process records into the original again.
_LIVE: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_KEYS = itertools.count()


def _live(made: Any) -> int:
    """``made``'s key in ``_LIVE``, given once."""
    key = next(_KEYS)
    _LIVE[key] = made
    return key


class TracedWords(MutableSequence[tuple[tuple[str, ...], int]]):
    """A corpus that records which word ids are read and written.

    Not a ``list`` subclass, so that no C-level list method can read it
    unseen; it keeps its word ids (no insert, no delete). ``tally``: the
    operations counted on its frequencies and symbols, if they are traced;
    ``made``: the source that builds it afresh in a grading kernel. A copy
    (``copy()``, ``copy.copy``, ``copy.deepcopy``, pickle) records into the
    same ``read`` and ``written``: the same words, by the same ids.

    >>> words = TracedWords([(("a", "b"), 1), (("c",), 2)])
    >>> mine = copy.deepcopy(words)
    >>> mine[1] = (("c",), 3)
    >>> mine, words.read, words.written
    ([(('a', 'b'), 1), (('c',), 3)], [0, 1], [1])
    """

    def __init__(self, words: Sequence[tuple[tuple[str, ...], int]]) -> None:
        if isinstance(words, (str, bytes)) or not isinstance(words, (Sequence, list)):
            raise TypeError(f"TracedWords: words must be a list of (symbols, frequency), not {type(words).__name__}")
        self._words = list(words)
        self.read: list[int] = []
        self.written: list[int] = []
        self.tally: _Tally | None = None
        self.made = ""
        self._touched: int | None = None  # restored from a kernel's state: the count alone
        self._key = _live(self)

    def __len__(self) -> int:
        return len(self._words)

    def __getitem__(self, i: Any) -> Any:
        ids = range(len(self._words))[i]
        self.read.extend(ids if isinstance(ids, range) else [ids])
        return self._words[i]

    def __setitem__(self, i: Any, value: Any) -> None:
        ids = range(len(self._words))[i]
        self.written.extend(ids if isinstance(ids, range) else [ids])
        self._words[i] = value

    def __iter__(self) -> Iterator[tuple[tuple[str, ...], int]]:
        for i, word in enumerate(self._words):
            self.read.append(i)
            yield word

    def __delitem__(self, i: Any) -> None:
        raise TypeError("words keeps its word ids: replace a word (words[i] = ...), never delete one")

    def insert(self, i: int, value: Any) -> None:
        raise TypeError("words keeps its word ids: replace a word (words[i] = ...), never insert one")

    def _sharing(self, words: list[tuple[tuple[str, ...], int]]) -> TracedWords:
        """A corpus of ``words`` that records into this one's lists (its copy)."""
        twin = TracedWords(words)
        twin.read, twin.written, twin.tally, twin.made = self.read, self.written, self.tally, self.made
        return twin

    def copy(self) -> TracedWords:
        """A shallow copy, as ``list.copy``: it reads every word once, and records with this one."""
        return self._sharing(list(self))

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> TracedWords:
        return self._sharing(copy.deepcopy(list(self), memo))

    def __reduce__(self) -> tuple[Any, ...]:
        return _traced_words, (self._key, list(self))

    def __add__(self, other: Any) -> list[tuple[tuple[str, ...], int]]:
        return list(self) + list(other) if isinstance(other, (list, TracedWords)) else NotImplemented

    def __radd__(self, other: Any) -> list[tuple[tuple[str, ...], int]]:
        return list(other) + list(self) if isinstance(other, list) else NotImplemented

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TracedWords):
            other = other.plain()
        return isinstance(other, list) and self.plain() == other

    __hash__ = None  # type: ignore[assignment]  # a list's: unhashable

    def __repr__(self) -> str:
        return repr(self._words)

    def plain(self) -> Words:
        """The words, as a list (not recorded)."""
        return list(self._words)

    def touched(self) -> int:
        """How many reads and writes of a word were recorded."""
        return len(self.read) + len(self.written) if self._touched is None else self._touched

    def state(self) -> tuple[Any, ...]:
        """What it recorded, as plain data: (words, ids read, ids written)
        without a tally, else (reads and writes, arithmetic, comparisons).

        >>> words = TracedWords([(("a", "b"), 1), (("c",), 2)])
        >>> words[1] = (("c",), 3)
        >>> words.state()
        ([(('a', 'b'), 1), (('c',), 3)], [], [1])
        """
        if self.tally is None:
            return self.plain(), sorted(set(self.read)), sorted(set(self.written))
        return self.touched(), self.tally.arithmetic, self.tally.compared

    def restore(self, state: Any) -> None:
        """Take ``state`` (a kernel's ``state()``) as what it recorded; a
        ``ValueError`` when it has not that shape."""
        if self.tally is None:
            words, read, written = state
            if not (isinstance(words, list) and len(words) == len(self._words)):
                raise ValueError("words changed length")
            self._words, self.read, self.written = list(words), [int(i) for i in read], [int(i) for i in written]
            return
        touched, arithmetic, compared = (int(n) for n in state)
        self._touched, self.tally.arithmetic, self.tally.compared = touched, arithmetic, compared


def _traced_words(key: int, words: list[tuple[tuple[str, ...], int]]) -> TracedWords:
    """A pickled corpus loaded again: a copy recording with its original
    while that lives in this process, else a corpus of its own."""
    original = _LIVE.get(key)
    return original._sharing(words) if isinstance(original, TracedWords) else TracedWords(words)


class _Tally:
    """Operations counted on the traced frequencies and symbols."""

    def __init__(self) -> None:
        self.arithmetic = 0
        self.compared = 0
        self.key = _live(self)


def _traced(kind: type[Any], value: Any, key: int) -> Any:
    """A pickled traced frequency or symbol loaded again: counting into its
    tally while that lives in this process, else a plain int or str."""
    tally = _LIVE.get(key)
    return kind(value, tally) if isinstance(tally, _Tally) else kind.__mro__[1](value)


class TracedFreq(int):
    """A word frequency that counts the arithmetic done with it (a pair count
    update ``counts[p] + freq`` or ``delta * freq``); results are plain ints."""

    tally: _Tally

    def __new__(cls, value: int, tally: _Tally) -> TracedFreq:
        made = super().__new__(cls, value)
        made.tally = tally
        return made

    def _count(self, result: int) -> int:
        self.tally.arithmetic += 1
        return int(result)

    def __add__(self, other: Any) -> Any:
        return self._count(int(self) + other)

    def __radd__(self, other: Any) -> Any:
        return self._count(other + int(self))

    def __sub__(self, other: Any) -> Any:
        return self._count(int(self) - other)

    def __rsub__(self, other: Any) -> Any:
        return self._count(other - int(self))

    def __mul__(self, other: Any) -> Any:
        return self._count(int(self) * other)

    def __rmul__(self, other: Any) -> Any:
        return self._count(other * int(self))

    def __neg__(self) -> int:
        return self._count(-int(self))

    def __copy__(self) -> TracedFreq:
        return self  # immutable, as an int: a copy is the same object, and counts the same

    def __deepcopy__(self, memo: dict[int, Any]) -> TracedFreq:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return _traced, (TracedFreq, int(self), self.tally.key)


class TracedSymbol(str):
    """A symbol that counts the times it is compared for equality (a scan
    for a pair, ``pair in zip(symbols, symbols[1:])``, compares symbols)."""

    tally: _Tally

    def __new__(cls, value: str, tally: _Tally) -> TracedSymbol:
        made = super().__new__(cls, value)
        made.tally = tally
        return made

    def __eq__(self, other: object) -> bool:
        self.tally.compared += 1
        return str.__eq__(self, other) is True

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __copy__(self) -> TracedSymbol:
        return self  # immutable, as a str: a copy is the same object, and counts the same

    def __deepcopy__(self, memo: dict[int, Any]) -> TracedSymbol:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return _traced, (TracedSymbol, str(self), self.tally.key)


#: The words every measured corpus shares: chapter 06's English sentences,
#: three times each, so that 40 merges all have counts of 12 or more.
def core_words() -> Words:
    from bpe_lab.core.corpora import parallel_sentences
    from bpe_lab.core.pretokenize import word_frequencies

    freq = word_frequencies(" ".join(parallel_sentences("en")))
    return [(tuple(w) + (END_OF_WORD,), 3 * f) for w, f in freq.items()]


def traced_corpus(fillers: int) -> TracedWords:
    """The core words, then ``fillers`` words of three symbols of their own
    (count 1, so no merge ever involves them): a trainer that works locally
    never reads a filler again after building its index."""
    tally = _Tally()
    symbols = [TracedSymbol(chr(0x4E00 + k), tally) for k in range(3 * fillers)]
    filler: Words = [(tuple(symbols[3 * k : 3 * k + 3]), TracedFreq(1, tally)) for k in range(fillers)]
    core: Words = [(s, TracedFreq(f, tally)) for s, f in core_words()]
    words = TracedWords(core + filler)
    words.tally, words.made = tally, f"check.traced_corpus({int(fillers)})"
    return words


#: (fewer, more) merges and (smaller, larger) numbers of filler words
MERGES, FILLERS = (10, 40), (200, 400)


def measure_work(run: Callable[[TracedWords, int], object]) -> dict[str, float]:
    """How much more work one more word costs when training does 30 more
    merges: word reads, frequency arithmetic and symbol comparisons per
    filler word, at 40 merges less at 10 (0 for a local trainer, about 30
    times a pass over one word for a recount)."""
    work: dict[tuple[int, int], tuple[Any, ...]] = {}
    for merges in MERGES:
        for fillers in FILLERS:
            words = traced_corpus(fillers)
            run(words, merges)
            work[merges, fillers] = words.state()
    small, large = FILLERS
    per_word = [
        (
            (work[MERGES[1], large][k] - work[MERGES[1], small][k])
            - (work[MERGES[0], large][k] - work[MERGES[0], small][k])
        )
        / (large - small)
        for k in range(3)
    ]
    return dict(zip(("reads", "arithmetic", "comparisons"), per_word))


#: Extra work per word (over 30 more merges) below which a trainer is local.
FLAT = 2.0


def work_growth(fn: Callable[..., Any], task: str = "train") -> str:
    """``"flat"`` when ``fn``'s work does not grow with words it has no
    reason to look at (the hidden tests call this). ``task="train"``:
    ``fn(words, num_merges)``, whose work per word must not grow with the
    number of merges; ``task="merge"``: ``fn(words, counts, index, pair)``
    (``merge_indexed``), which must read only the words ``index[pair]``
    lists.

    The counts come from the traced objects inside the kernel that runs
    ``fn``, so a submission could forge them (replace this function, or
    reset the counters): the grader does not believe this value. It
    measures the same property itself, from the CPU time of the kernel's
    processes around calls on a corpus of many more words
    (``run.measure``, ``cases.complexity``), and this call stands for that
    measured verdict there. At home (and under nbgrader) the counts are
    what answers, with a hint saying which operation grew."""
    if task == "merge":
        return _merge_reads(fn)
    if task != "train":
        raise ValueError(f"work_growth: task must be 'train' or 'merge', not {task!r}")
    growth = measure_work(lambda words, merges: fn(words, merges))
    total = sum(growth.values())
    return "flat" if total <= FLAT else f"grows: {total:.0f} more operations per word over 30 more merges"


def _merge_reads(fn: Callable[..., Any]) -> str:
    """``"flat"`` when ``fn(words, counts, index, pair)`` read and wrote only
    the words ``index[pair]`` lists, on the core words with 200 fillers."""
    words = traced_corpus(FILLERS[0])
    counts: dict[Pair, int] = {}
    index: dict[Pair, set[int]] = {}
    for i, (symbols, freq) in enumerate(words.plain()):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + int(freq)
            index.setdefault(pair, set()).add(i)
    pair = max(counts, key=lambda p: (counts[p], p))
    listed = set(index[pair])
    fn(words, counts, index, pair)
    stray = {*words.read, *words.written} - listed
    return "flat" if not stray else f"grows: it read {len(stray)} words that index[pair] does not list"
