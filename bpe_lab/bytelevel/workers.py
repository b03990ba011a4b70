"""Worker processes for the jobs of one file: fresh interpreters over pipes.

What this adds over ``multiprocessing`` (a Pool): workers that depend on
nothing but ``bpe_lab``. A worker is ``python -c CODE`` started by
``subprocess``: it reads pickled jobs on its stdin and writes one pickled
reply per job on its stdout, ``(True, result)`` or ``(False, error)``,
until its stdin closes. Why not a Pool:

- **Nothing is forked.** Forking a process with threads (a notebook's
  kernel, tqdm's monitor) can copy a held lock into the child, which then
  deadlocks; Python 3.12+ warns about it.
- **No main module.** "spawn" and "forkserver" import the main module in
  every worker: a script without an ``if __name__ == "__main__":`` guard
  runs again in each, one read from stdin (``python -``) cannot be
  imported at all and the Pool starts workers that die, forever, and the
  ``bpe-lab`` command itself is a heavy import. ``CODE`` imports only
  what it names.
- **Nothing stays behind.** A Pool leaves the forkserver and the resource
  tracker running until the program ends (12-13 MB each; no public API
  stops them on Python 3.10-3.13). A worker here exits when its stdin
  closes.

Starting one costs a fresh interpreter importing ``bpe_lab`` (part of what
``make bench``'s training and ``encode_file`` rows time), paid while the
caller gets on with its own share.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Worker", "serve", "parallel_ok"]


def parallel_ok() -> bool:
    """Whether worker processes can be started: ``sys.executable`` is an
    interpreter (empty in some embedded or frozen programs)."""
    return bool(sys.executable)


def serve(handle: Callable[[Any], object]) -> None:
    """(In a worker.) Answer each job on stdin with ``handle(job)`` on stdout
    until stdin closes; an exception is sent back, to be raised by the caller."""
    with contextlib.suppress(EOFError):
        while True:
            job = pickle.load(sys.stdin.buffer)
            try:
                reply: tuple[bool, object] = (True, handle(job))
            except Exception as err:  # raised again in the caller, which knows the file and offset
                reply = (False, err)
            pickle.dump(reply, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
            sys.stdout.buffer.flush()


class Worker:
    """One worker process running ``code`` (which calls ``serve``)."""

    def __init__(self, code: str, what: str) -> None:
        self.what = what  # "a counting worker": for the error when it dies
        # our import path, as "spawn" passes it on: the same bpe_lab, and the
        # modules of classes it is handed (a Tokenizer subclass) are found
        paths = [str(Path(__file__).resolve().parents[2])] + [p or os.getcwd() for p in sys.path]
        setup = f"import sys; sys.path[:0] = {list(dict.fromkeys(paths))!r}; "
        self.process = subprocess.Popen(
            [sys.executable, "-c", setup + code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def send(self, job: object) -> None:
        """Hand over one job (jobs queue in the pipe: a few small ones never block)."""
        assert self.process.stdin is not None
        try:
            pickle.dump(job, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
        except OSError as err:
            raise self._died(err) from None

    def receive(self) -> object:
        """The reply to the oldest job not yet received; raises its error."""
        assert self.process.stdout is not None
        try:
            ok, result = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as err:
            raise self._died(err) from None
        if not ok:
            raise result
        return result

    def _died(self, err: BaseException) -> RuntimeError:
        return RuntimeError(f"{self.what} died (exit code {self.process.poll()}): {err!r}")

    def close(self) -> None:
        """Close its stdin (its cue to exit after the job in hand) and wait."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
