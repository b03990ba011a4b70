"""What a grading kernel runs for the hidden calls, and the plain data it sends back.

What this adds over ``tasks`` (the hidden cases as data): the code that runs
them in the learner's kernel. ``probe_source(calls, forbid)`` is one cell
that calls each hidden CALL with the task's forbidden functions guarded
(``guard``) and publishes, for each, one small dict as display data of type
``RESULT_MIME``:

- ``{"repr": TEXT}``: the value was plain data (None, bool, int, float, str,
  bytes, and lists, tuples, dicts and sets of them), written with the *base
  classes'* ``repr``, so a subclass cannot pretend with a ``__repr__`` of its
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
"""

from __future__ import annotations

from bpe_lab.grading.sandbox import RESULT_MIME

__all__ = ["MAX_REPR", "probe_source"]

#: The longest text of a hidden call's value that the kernel sends back.
MAX_REPR = 100_000

_PROBE = """
def __bpe_lab_probe():
    from IPython.display import publish_display_data
    from bpe_lab.grading.guard import Delegated, guard
    import operator

    class TooLarge(Exception):
        pass

    class Unplain(Exception):
        pass

    def dump(value, out, depth):
        # append the text of a plain value to out (its length first), with
        # the base classes' repr; TooLarge past the limit
        def put(text):
            out[0] += len(text)
            if out[0] > {limit}:
                raise TooLarge()
            out.append(text)

        if depth > 60:
            raise Unplain("nested more than 60 levels")
        if value is None or value is True or value is False:
            put(repr(value))
        elif isinstance(value, int):
            put(int.__repr__(value))
        elif isinstance(value, float):
            put(float.__repr__(value))
        elif isinstance(value, str):
            put(str.__repr__(value))
        elif isinstance(value, (bytes, bytearray)):
            put(bytes.__repr__(bytes(value)))
        elif isinstance(value, (list, tuple, set)):
            kind = list if isinstance(value, list) else tuple if isinstance(value, tuple) else set
            if kind is set and not set.__len__(value):
                put("set()")
                return
            put({{list: "[", tuple: "(", set: "{{"}}[kind])
            count = 0
            for item in kind.__iter__(value):
                if count:
                    put(", ")
                dump(item, out, depth + 1)
                count += 1
            put({{list: "]", tuple: ",)" if count == 1 else ")", set: "}}"}}[kind])
        elif isinstance(value, dict):
            put("{{")
            for number, (key, item) in enumerate(dict.items(value)):
                if number:
                    put(", ")
                dump(key, out, depth + 1)
                put(": ")
                dump(item, out, depth + 1)
            put("}}")
        elif hasattr(type(value), "__index__"):
            put(int.__repr__(operator.index(value)))
        else:
            raise Unplain(type(value).__module__ + "." + type(value).__qualname__)

    results = []
    for case in [{cases}]:
        reached, value = [], None
        try:
            with guard({forbid!r}) as reached:
                value = case()
            out = [0]
            try:
                dump(value, out, 0)
                result = {{"repr": "".join(out[1:])}}
            except TooLarge:
                result = {{"too_large": out[0]}}
            except Unplain as kind:
                result = {{"unplain": str(kind)[:200]}}
        except BaseException as err:
            try:
                error = (type(err).__name__ + (": " + str(err) if str(err) else ""))[:300]
            except BaseException:
                error = type(err).__name__
            result = {{"error": error}}
        result["reached"] = [str(path) for path in reached]
        results.append(result)
        value = out = None
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
    return _PROBE.format(cases=lambdas, limit=MAX_REPR, mime=RESULT_MIME, forbid=list(forbid))
