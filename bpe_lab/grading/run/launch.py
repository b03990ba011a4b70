"""The first thing a grading kernel runs: walls, then limits, then ipykernel.

What this adds over ipykernel's own launcher (``sandbox`` writes a
kernelspec that runs this file by its path, so the package is not imported
before the limits are set):

- when the grader made cgroups for it (``BPE_LAB_CGROUP``: their
  ``cgroup.procs`` files, ``cgroups``), it moves itself into them, so that
  everything it starts is counted there, and leaves a process outside
  them that removes them once it has ended (``tidy``);
- when the grader asks for a sandbox (``BPE_LAB_JAIL`` in the environment:
  the ``bwrap`` command ``jail`` built), it runs itself again inside it,
  with the seccomp filters (``BPE_LAB_SECCOMP``, ``syscalls``) handed to
  bubblewrap on pipes (``--add-seccomp-fd``);
- it limits its own memory, file sizes and open files (jupyter_client
  cannot pass a ``preexec_fn``), then starts ipykernel (``--trial``: it
  imports zmq instead, and says so: ``jail``'s trial of the real command);
- before all that it offers itself, and so everything it starts, to the
  out-of-memory killer first (``oom_score_adj`` 1000, which any process may
  raise): where the grader runs in a memory cgroup or a small machine, the
  memory a submission takes between two looks of its budget's watcher
  (memfds, tmpfs) kills that submission's kernel, never the grader.

Usage: ``python launch.py MEMORY_BYTES FILE_SIZE_BYTES -f CONNECTION_FILE``
(or ``python launch.py --trial MEMORY_BYTES FILE_SIZE_BYTES``).
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time


def first_to_go() -> None:
    """The out-of-memory killer's first choice: this process and all it starts."""
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:  # not Linux
        pass


#: Files a kernel may hold open at once: ipykernel and zmq hold about 60.
OPEN_FILES = 256


def join(procs: list[str]) -> None:
    """Move this process into each cgroup whose ``cgroup.procs`` file is given."""
    for path in procs:
        with open(path, "w") as group:
            group.write(str(os.getpid()))


def tidy(procs: list[str]) -> None:
    """Leave behind, outside the groups, a process that removes them once
    this one (the kernel, or the bubblewrap it becomes) has ended and they
    are empty, whoever ended it: the grader removes them itself when it
    stops a kernel, but a grader killed with SIGKILL has no last word.
    It is a process of a session of its own, a child of no process of the
    kernel's (so no budget counts it), and it carries the kernel's mark
    (``reaper``)."""
    kernel = os.getpid()
    try:
        watched = os.pidfd_open(kernel)
    except (AttributeError, OSError):  # before Linux 5.3: the next grader's sweep removes them
        return
    first = os.fork()
    if first:
        os.close(watched)
        os.waitpid(first, 0)  # gone at once: bubblewrap must find no child of this process's making
        return
    try:
        os.setsid()
        if os.fork() == 0:
            select.select([watched], [], [])  # readable when the kernel has ended
            for _ in range(200):  # 10 s for its last processes to leave the groups
                folders = [os.path.dirname(path) for path in procs if os.path.isdir(os.path.dirname(path))]
                for folder in folders:
                    try:
                        os.rmdir(folder)
                    except OSError:  # not empty yet, or removed by the grader meanwhile
                        pass
                if not folders:
                    break
                time.sleep(0.05)
    finally:
        os._exit(0)


def _pipe(data: bytes) -> int:
    """A pipe's read end, inheritable, holding ``data`` (a filter of a few kB: under a pipe's buffer)."""
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    return read


def main() -> None:
    """Cgroups, jail, limit, start the kernel."""
    first_to_go()
    groups = json.loads(os.environ.pop("BPE_LAB_CGROUP", "[]"))
    if groups:
        tidy(groups)
        join(groups)
    jail = os.environ.pop("BPE_LAB_JAIL", "")
    filters = json.loads(os.environ.pop("BPE_LAB_SECCOMP", "[]"))
    if jail:
        command = json.loads(jail)
        for program in filters:  # loaded by bubblewrap, with no_new_privs, before it runs the kernel
            command[1:1] = ["--add-seccomp-fd", str(_pipe(bytes.fromhex(program)))]
        # its parent's pid means nothing in the sandbox's pid namespace, and
        # ipykernel would take the namespace's init for a dead parent;
        # bwrap --die-with-parent does that job instead
        os.environ.pop("JPY_PARENT_PID", None)
        os.execv(command[0], [*command, sys.executable, os.path.abspath(__file__), *sys.argv[1:]])
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ""  # the kernel's folder, as for any kernel, not this one
    trial = sys.argv[1:2] == ["--trial"]
    if trial:
        sys.argv.pop(1)
    memory, fsize = int(sys.argv.pop(1)), int(sys.argv.pop(1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if trial:  # the interpreter, a compiled library of site-packages, the filters: all there
        import zmq

        print(f"a kernel can start here (zmq {zmq.zmq_version()})")
        return
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()


if __name__ == "__main__":
    main()
