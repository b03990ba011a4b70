"""What a grading kernel runs for the hidden calls, and the plain data it sends back.

What this adds over ``tasks`` (the hidden cases as data): the code that runs
them in the learner's kernel. ``probe_source(calls, forbid)`` is one cell
that calls each hidden CALL with the task's forbidden functions guarded
(``guard``) and publishes, for each, one small dict as display data of type
``RESULT_MIME``:

- ``{"repr": TEXT}``: the value was plain data (None, bool, int, float, str,
  bytes, and lists, tuples, dicts and sets of them), written with the *base
  classes'* ``repr`` (``check.hidden.write_plain``, which nbgrader's scored
  cells use too), so a subclass cannot pretend with a ``__repr__`` of its
  own; the grader parses TEXT with ``ast.literal_eval``;
- ``{"unplain": TYPE}``: it was something else (a generator, a custom object
  whose ``__eq__`` always says True, a numpy array): never passed to
  ``repr`` at all, so a ``__repr__`` that raises or hangs does no harm;
- ``{"too_large": N}``: its text passed ``MAX_REPR`` characters (a list of
  10**8 items stops there, long before it is written out);
- ``{"error": TEXT}``: the call raised (any ``BaseException``).

Every dict also says which forbidden functions were ``reached``. All of it
is the kernel's word: the grader believes it only where it costs points
(``judge``).

A call a chapter measures (``measure``: ``check.work_growth(...)``) runs
in the probe as any other, and is marked after it with one comment line:
the sandbox then runs that case's cells, measures them from the host, and
puts its own verdict in that case's place.

**What the kernel keeps of the calls.** The learner's code sees each call's
inputs while it runs, as it must; afterwards the cell's text is gone: the
sandbox sends every cell with ``store_history=False`` (nothing in ``In``,
``_ih``, ``_i``, ``Out`` or IPython's history database), and the probe
takes its cell out of ``linecache`` (where IPython's compiler puts it for
tracebacks and ``inspect``) before it calls anything (``FORGET_CELL``).
What the learner's code copies away while it runs can only leave the
grader through feedback, which shows learner text as one short line that
repeats no hidden call (``judge``), and the generated inputs change with
every new submission (``cases``).
"""

from __future__ import annotations

from bpe_lab.grading.check.hidden import MAX_REPR
from bpe_lab.grading.run.measure import marks, plan_of
from bpe_lab.grading.run.sandbox import RESULT_MIME

__all__ = ["MAX_REPR", "FORGET_CELL", "probe_source"]

#: Takes the cell it begins out of ``linecache`` (the cell is compiled by
#: then; only tracebacks and ``inspect`` read it there): the probe begins
#: with it, and so may any cell that holds hidden calls, before code that
#: could fail first.
FORGET_CELL = (
    "import linecache as __bpe_lab_lines, sys as __bpe_lab_sys\n"
    "__bpe_lab_lines.cache.pop(__bpe_lab_sys._getframe().f_code.co_filename, None)\n"
    "del __bpe_lab_lines, __bpe_lab_sys\n"
)


_PROBE = """
def __bpe_lab_probe():
    from IPython.display import publish_display_data
    from bpe_lab.grading.check.hidden import NotPlain, TooLarge, write_plain
    from bpe_lab.grading.check.guard import Delegated, guard

    results = []
    for case in [{cases}]:
        reached, value = [], None
        try:
            with guard({forbid!r}) as reached:
                value = case()
            out, size = [], [0]
            try:
                write_plain(value, out, size)
                result = {{"repr": "".join(out)}}
            except TooLarge:
                result = {{"too_large": size[0]}}
            except NotPlain as why:
                kind = why.kind
                result = {{"unplain": (kind.__module__ + "." + kind.__qualname__ if kind else str(why))[:200]}}
        except BaseException as err:
            try:
                error = (type(err).__name__ + (": " + str(err) if str(err) else ""))[:300]
            except BaseException:
                error = type(err).__name__
            result = {{"error": error}}
        result["reached"] = [str(path) for path in reached]
        results.append(result)
        value = out = size = None
    publish_display_data({{"{mime}": results}})
__bpe_lab_probe()
del __bpe_lab_probe
"""


def probe_source(calls: list[str], forbid: tuple[str, ...] | list[str]) -> str:
    """One cell that runs ``calls`` (Python expressions) with ``forbid``
    guarded and publishes what each returned, as plain data.

    >>> "lambda: (f(1))" in probe_source(["f(1)"], [])
    True
    """
    lambdas = ",\n        ".join(f"lambda: ({call})" for call in calls)
    timed = {
        number: [probe_source([call], forbid) for call, _, _ in plan.timed]
        for number, call in enumerate(calls)
        if (plan := plan_of(call)) is not None
    }
    return FORGET_CELL + _PROBE.format(cases=lambdas, mime=RESULT_MIME, forbid=list(forbid)) + marks(calls, timed)
