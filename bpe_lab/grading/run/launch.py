"""The first thing a grading kernel runs: walls, then limits, then ipykernel.

What this adds over ipykernel's own launcher (``sandbox`` writes a
kernelspec that runs this file by its path, so the package is not imported
before the limits are set):

- when the grader asks for a sandbox (``BPE_LAB_JAIL`` in the environment:
  the ``bwrap`` command ``jail`` built), it runs itself again inside it;
- it limits its own memory and file sizes (jupyter_client cannot pass a
  ``preexec_fn``), then starts ipykernel;
- before all that it offers itself, and so everything it starts, to the
  out-of-memory killer first (``oom_score_adj`` 1000, which any process may
  raise): where the grader runs in a memory cgroup or a small machine, the
  memory a submission takes between two looks of its budget's watcher
  (memfds, tmpfs) kills that submission's kernel, never the grader.

Usage: ``python launch.py MEMORY_BYTES FILE_SIZE_BYTES -f CONNECTION_FILE``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys


def first_to_go() -> None:
    """The out-of-memory killer's first choice: this process and all it starts."""
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:  # not Linux
        pass


def main() -> None:
    """Jail, limit, start the kernel."""
    first_to_go()
    jail = os.environ.pop("BPE_LAB_JAIL", "")
    if jail:
        command = json.loads(jail)
        # its parent's pid means nothing in the sandbox's pid namespace, and
        # ipykernel would take the namespace's init for a dead parent;
        # bwrap --die-with-parent does that job instead
        os.environ.pop("JPY_PARENT_PID", None)
        os.execv(command[0], [*command, sys.executable, os.path.abspath(__file__), *sys.argv[1:]])
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ""  # the kernel's folder, as for any kernel, not this one
    memory, fsize = int(sys.argv.pop(1)), int(sys.argv.pop(1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()


if __name__ == "__main__":
    main()
