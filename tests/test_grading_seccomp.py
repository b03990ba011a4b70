"""As root, with bubblewrap, as CI runs the grader: the system calls a kernel may make.

Issue 30's attacks 2 and 3: inside a graded kernel io_uring, userfaultfd,
keyctl, memfd_secret and landlock all succeeded (and the sandbox's user is
root outside); 64 unix socket pairs with raised buffers queued more than a
gigabyte that no process's resident memory showed. Sockets of the
families a kernel never needs (AF_ALG, the kernel's crypto API; AF_VSOCK)
are refused too. One kernel in the
sandbox, started once, tries each as a cell of its own and reports what it
got as data (errno names); each test reads one report.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from grading_support import needs_bwrap

from bpe_lab.grading.run import jail, syscalls
from bpe_lab.grading.run.sandbox import RESULT_MIME, Cell, Limits, run_cells
from bpe_lab.grading.run.stubs import package_dir

pytestmark = needs_bwrap

REPORT = f"""
import ctypes, errno, json, os, resource, socket
from IPython.display import publish_display_data
libc = ctypes.CDLL(None, use_errno=True)
def _report(value):
    publish_display_data({{{RESULT_MIME!r}: [{{"value": json.dumps(value)}}]}})
def _call(number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(number, *args)
    return [result, errno.errorcode.get(ctypes.get_errno(), "")]
"""

#: x86_64 numbers, called through ctypes as a submission would (the libc wrappers may not exist)
CALLS = {
    "io_uring_setup": "_call(425, 8, ctypes.create_string_buffer(120))",
    "userfaultfd": "_call(323, 1)",  # UFFD_USER_MODE_ONLY: allowed to any user where the kernel has it
    "keyctl": "_call(250, 0, -3, 0)",  # KEYCTL_GET_KEYRING_ID of the session keyring
    "memfd_secret": "_call(447, 0)",
    "landlock_create_ruleset": "_call(444, 0, 0, 1)",  # LANDLOCK_CREATE_RULESET_VERSION
    "socket(AF_ALG)": "_call(41, 38, 5, 0)",  # the kernel's crypto API, SOCK_SEQPACKET
    "socket(AF_VSOCK)": "_call(41, 40, 1, 0)",
}

ATTACKS = {
    "calls": "_report({" + ", ".join(f"{name!r}: {call}" for name, call in CALLS.items()) + "})",
    "status": "_report([l.split() for l in open('/proc/self/status') if l.startswith(('NoNewPrivs', 'Seccomp'))])",
    "open_files": "_report(resource.getrlimit(resource.RLIMIT_NOFILE))",
    "socket_buffers": (
        "pairs = [socket.socketpair() for _ in range(64)]\n"
        "refused, queued = [], 0\n"
        "for a, b in pairs:\n"
        "    for end in (a, b):\n"
        "        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):\n"
        "            try:\n"
        "                end.setsockopt(socket.SOL_SOCKET, option, 1 << 30)\n"
        "            except OSError as err:\n"
        "                refused.append(errno.errorcode[err.errno])\n"
        "    a.setblocking(False)\n"
        "    try:\n"
        "        while True:\n"
        "            queued += a.send(b'x' * 65536)\n"
        "    except BlockingIOError:\n"
        "        pass\n"
        "for a, b in pairs:\n"
        "    a.close()\n"
        "    b.close()\n"
        "_report([sorted(set(refused)), len(refused), queued >> 20])"
    ),
    "threads_and_processes": (  # what the allow-list must let through: a thread, a subprocess, a pipe
        "import subprocess, threading\n"
        "seen = [socket.socket(family).close() or family.name for family in (socket.AF_INET, socket.AF_INET6)]\n"
        "thread = threading.Thread(target=lambda: seen.append(1))\n"
        "thread.start()\n"
        "thread.join()\n"
        "_report([seen, subprocess.run(['echo', 'hi'], capture_output=True, text=True).stdout])"
    ),
}


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Each attack's report, from one kernel in the sandbox under ``--memory-mb 400``."""
    run = tmp_path_factory.mktemp("seccomp")
    (run / "work").mkdir()
    confinement = jail.confine(run, run / "work", package_dir(), sandbox=True, tmp_mb=32)
    cells = [Cell(REPORT)] + [Cell(code, results=True) for code in ATTACKS.values()]
    limits = Limits(cell_timeout=60, memory_mb=400)
    outcomes = asyncio.run(run_cells(cells, run / "work", limits, confinement))
    assert outcomes[0].status == "ok", outcomes[0]
    reports = {}
    for name, outcome in zip(ATTACKS, outcomes[1:]):
        assert outcome.status == "ok" and len(outcome.results) == 1, (name, outcome)
        reports[name] = json.loads(outcome.results[0][0]["value"])
    return reports


@pytest.mark.parametrize("name", sorted(CALLS))
def test_calls_off_the_allow_list_are_refused(attacked, name):
    assert attacked["calls"][name] == [-1, "EPERM"], attacked["calls"]


def test_the_kernel_runs_under_two_filters_with_no_new_privileges(attacked):
    assert attacked["status"] == [["NoNewPrivs:", "1"], ["Seccomp:", "2"], ["Seccomp_filters:", "2"]]


def test_raising_socket_buffers_is_refused_and_64_pairs_queue_little(attacked):
    """Attack 3: every raise refused (2 options x 2 ends x 64 pairs), so
    the pairs hold their default buffers: 14 MB here, not a gigabyte."""
    refused, count, queued_mb = attacked["socket_buffers"]
    assert (refused, count) == (["EPERM"], 256), attacked["socket_buffers"]
    assert queued_mb < 64, attacked["socket_buffers"]


def test_a_kernel_holds_at_most_256_open_files(attacked):
    assert attacked["open_files"] == [256, 256]


def test_threads_and_subprocesses_still_work(attacked):
    assert attacked["threads_and_processes"] == [["AF_INET", "AF_INET6", 1], "hi\n"]


def test_the_filters_refuse_everything_off_the_list_and_kill_other_architectures():
    """The programs libseccomp compiled: the allow-list's default is EPERM
    (0x00050001) and a foreign architecture's call is killed (0x80000000)."""
    allow_list, options = syscalls.program()
    words = {int.from_bytes(allow_list[i + 4 : i + 8], "little") for i in range(0, len(allow_list), 8)}
    assert 0x00050001 in words and 0x80000000 in words and 0x7FFF0000 in words
    assert len(options) < len(allow_list)
    for name in CALLS:
        assert name not in syscalls.ALLOWED
    assert 38 not in syscalls.SOCKET_FAMILIES and 40 not in syscalls.SOCKET_FAMILIES


def test_without_libseccomp_grading_refuses_and_says_what_to_install(monkeypatch, tmp_path):
    """No silent grading without a filter: confine refuses as it does without bwrap."""

    def missing():
        raise RuntimeError("Unable to find libseccomp")

    monkeypatch.setattr(syscalls, "_library", missing)
    syscalls._compiled.cache_clear()
    jail._trial.cache_clear()
    try:
        assert "apt-get install libseccomp2" in syscalls.unavailable()
        with pytest.raises(jail.SandboxUnavailable) as refused:
            jail.confine(tmp_path, tmp_path, package_dir())
        assert "Unable to find libseccomp" in str(refused.value) and "pip install pyseccomp" in str(refused.value)
        assert jail.bwrap() is None
    finally:
        syscalls._compiled.cache_clear()
        jail._trial.cache_clear()
