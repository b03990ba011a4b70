"""How the benchmark runs a contender: in a fresh interpreter, its memory sampled.

What this adds under the cases (``training``, ``growth``): the two
measurements every big case needs, kept apart from what is measured:

- **a fresh process per run**, so that one contender's peak memory is not
  the other's, nor the parent's (``in_fresh_process``);
- **the peak of the whole process tree**: ``train_bytelevel`` counts in
  worker processes. ``RUSAGE_CHILDREN`` cannot give their sum: its
  ``ru_maxrss`` is the largest single child's, only once it has been waited
  for, and misses processes that are not children (a forkserver's workers:
  it reported 0 MB per worker). ``TreeMemory`` samples this process and all
  its descendants every 20 ms from ``/proc`` and keeps two peaks:

  - ``peak_mb``, the largest sum of resident memory (``VmRSS``), raised to
    this process's own exact peak (``VmHWM``) at the end. It over-counts:
    a page shared by two processes (the interpreter's and the libraries'
    code, 5-7 MB per Python process here) is counted in each;
  - ``peak_pss_mb``, the largest sum of proportional memory (``Pss`` in
    ``smaps_rollup``), where a shared page is split between the processes
    that map it: what the tree needed, the fairer measure. Sampled only
    (the kernel keeps no high-water mark of it), it may miss a short peak.

  Both may miss a peak shorter than 20 ms. HF tokenizers, one process with
  threads, is measured the same way; for one process PSS is below RSS by
  the pages it shares with others (the libc, a few MB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["Result", "TreeMemory", "in_fresh_process", "peak_mb", "child_bytelevel", "child_hf", "memory"]

#: What a benchmark child process reports: seconds, megabytes, or an error.
Result = dict[str, Any]


def in_fresh_process(function: str, *args: object, env: dict[str, str] | None = None) -> Result:
    """Run ``bpe_lab.bench.runs.<function>(*args)`` in a new interpreter and
    return the JSON it prints: a fresh process has its own peak memory."""
    package_root = str(Path(__file__).resolve().parents[2])
    child_env = {**os.environ, **(env or {})}
    child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, child_env.get("PYTHONPATH")]))
    code = f"import json, bpe_lab.bench.runs as b; print(json.dumps(b.{function}(*{args!r})))"
    result = subprocess.run([sys.executable, "-c", code], env=child_env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"benchmark {function} failed:\n{result.stderr[-2000:]}")
    measured: Result = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def peak_mb() -> float:
    """This process's peak resident memory in MB: Linux's VmHWM when
    available (``ru_maxrss`` survives ``exec``, so a child started by a big
    parent would report the parent's peak)."""
    import resource

    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _descendants(root: int) -> list[int]:
    """``root`` and every process below it, from each ``/proc/<pid>/stat``'s parent id."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # it just ended
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _proc_mb(pid: int, name: str, field: str) -> float:
    """The ``field`` line (in kB) of ``/proc/<pid>/<name>``, in MB; 0 if gone."""
    try:
        with open(f"/proc/{pid}/{name}") as lines:
            for line in lines:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class TreeMemory:
    """``with TreeMemory() as tree: ...``; then ``tree.peak_mb`` is the largest
    resident memory (RSS) of this process plus its descendants seen
    meanwhile (Linux; elsewhere this process's own peak), and
    ``tree.peak_pss_mb`` the largest proportional one (PSS; 0 where
    ``smaps_rollup`` is missing). See the module's docstring."""

    def __init__(self, every: float = 0.02):
        self.every = every
        self.peak_mb = 0.0
        self.peak_pss_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeMemory:
        if os.path.isdir("/proc"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.peak_mb = max(self.peak_mb, peak_mb())  # the main process alone, exactly

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            tree = _descendants(me)
            self.peak_mb = max(self.peak_mb, sum(_proc_mb(pid, "status", "VmRSS:") for pid in tree))
            self.peak_pss_mb = max(self.peak_pss_mb, sum(_proc_mb(pid, "smaps_rollup", "Pss:") for pid in tree))
            self._stop.wait(self.every)


def child_bytelevel(path: str, vocab_size: int, workers: int | None) -> Result:
    """(In a fresh process.) Time train_bytelevel; the peak memory of this
    process and of the whole tree, counting workers included."""
    from bpe_lab.bytelevel.train import train_bytelevel

    with TreeMemory() as tree:
        start = time.perf_counter()
        _, merges = train_bytelevel(path, vocab_size, [ENDOFTEXT], workers=workers, progress=False)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "merges": len(merges),
        "peak_mb": tree.peak_mb,
        "pss_mb": tree.peak_pss_mb,
        "main_mb": peak_mb(),
    }


def child_hf(path: str, vocab_size: int) -> Result:
    """(In a fresh process; one thread with RAYON_NUM_THREADS=1, else every
    core.) Time HF tokenizers' BPE trainer with GPT-2's byte-level
    pre-tokenizer and the 256 bytes."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    with TreeMemory() as tree:
        start = time.perf_counter()
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=[ENDOFTEXT],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tokenizer.train([path], trainer)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "merges": tokenizer.get_vocab_size() - 257,
        "peak_mb": tree.peak_mb,
        "pss_mb": tree.peak_pss_mb,
    }


def memory(run: Result) -> str:
    """A run's peak memory for the table: ``"412 MB RSS (380 PSS)"``."""
    return f"{run['peak_mb']:.0f} MB RSS ({run['pss_mb']:.0f} PSS)"
