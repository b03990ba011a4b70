"""One notebook harming the class: whatever a submission does, it costs only
itself.

Each hostile submission below is exercise 03 (encode_word 3 points, decode
2) with a correct answer, and something done to the grader, to classmates
graded beside it (``workers=2``) or to the machine. Correct classmates keep
full marks; the grader finishes, with a report for everyone; a submission
that only tried to reach others keeps its own marks, and one that went over
its budget (memory of all its processes together, processes, disk) loses
the task it was in, with the reason.

The attacks that signal other processes run only in bubblewrap's pid
namespace (without it they could kill this test run): the module needs the
sandbox, and ``grade(sandbox=True)`` refuses to grade without it. What a
submission sends the grader (the amplifications of findings 6 and 7) is
``test_grading_memory``'s.
"""

from __future__ import annotations

import re
import uuid

import nbformat
import pytest
from grading_support import DECODE, ENCODE, ROOT, SOLUTIONS, SOLVED, needs_bwrap, running, submission

from bpe_lab.grading.commands.grader import Limits, grade

LIMITS = Limits(cell_timeout=30, notebook_timeout=150, memory_mb=1536, processes=16, disk_mb=128)
MARK = f"4323.{uuid.uuid4().int % 10**9:09d}"  # the seconds of the daemons' sleeps: unique, so findable
ANSWER = SOLVED[f"{ENCODE}_answer"]

#: name -> (code run before encode_word's answer, encode_word's points, phrase in its message)
HARM = {
    "kills_everything_it_sees": (
        "import os, signal, time\n"
        "for _ in range(40):  # for 4 s, while classmates are graded beside it\n"
        "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "        try:\n"
        "            if int(pid) != os.getpid():\n"
        "                os.kill(int(pid), signal.SIGKILL)\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        "        os.kill(-1, signal.SIGKILL)\n"
        "    except OSError:\n"
        "        pass\n"
        "    time.sleep(0.1)\n",
        3,
        "",
    ),
    "stops_and_kills_its_parent": (
        "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\nos.kill(os.getppid(), signal.SIGKILL)\n",
        3,
        "",
    ),
    "setsid_daemon": (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{MARK}'])\n"
        "    os._exit(0)\n"
        "os.wait()\n",
        3,
        "",
    ),
    "memory_in_four_processes": (
        "import subprocess, sys, time\n"
        "hogs = [subprocess.Popen([sys.executable, '-c', \"import time; b = b'x' * (500 << 20); time.sleep(60)\"])"
        " for _ in range(4)]\n"
        "time.sleep(25)\n",
        0,
        "MB of memory in all its processes together, more than the 1536 MB",
    ),
    "forty_processes": (
        "import subprocess, time\nkids = [subprocess.Popen(['sleep', '60']) for _ in range(40)]\ntime.sleep(25)\n",
        0,
        "processes at once, more than the 16",
    ),
    "fork_bomb_of_4096": (
        "import os, time\nfor _ in range(12):\n    os.fork()\ntime.sleep(25)\n",
        0,
        "stopped: it ",  # by memory or by processes, whichever it passes first
    ),
    "fills_its_folder": (
        "import time\n"
        "for i in range(5):\n"
        "    with open(f'big{i}.bin', 'wb') as f:\n"
        "        f.write(b'x' * (60 << 20))\n"
        "time.sleep(25)\n",
        0,
        "MB of files, more than the 128 MB",
    ),
    "fills_its_tmp": (
        "for i in range(5):\n    with open(f'/tmp/big{i}.bin', 'wb') as f:\n        f.write(b'x' * (60 << 20))\n",
        0,
        "No space left on device|MB of files, more than the 128 MB",  # its /tmp is full, or counted first
    ),
    "memory_in_memfds": (  # finding 7: 2.4 GB that no RSS shows
        "import os, time\n"
        "fds = [os.memfd_create('hog') for _ in range(40)]\n"
        "for fd in fds:\n"
        "    os.write(fd, b'x' * (60 << 20))\n"
        "time.sleep(25)\n",
        0,
        "MB of memory in all its processes together, more than the 1536 MB",
    ),
    "rewrites_the_checkout_and_classmates": (  # finding 2, through finding 1's escape
        "import ctypes, glob, os\n"
        "ctypes.CDLL(None).umount2(b'/proc', 2)\n"
        "import bpe_lab.grading.run.launch as _launch\n"
        "targets = [_launch.__file__, *glob.glob('/proc/*/cwd/**/*.ipynb', recursive=True)]\n"
        "targets += glob.glob('/tmp/**/*.ipynb', recursive=True) + glob.glob('/work/**/*.ipynb', recursive=True)\n"
        "for target in targets:\n"
        "    try:\n"
        "        open(target, 'a').write('# written by a classmate')\n"
        "    except OSError:\n"
        "        pass\n",
        3,
        "",
    ),
}
CLASSMATES = ["classmate_a", "classmate_b"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("harm")
    paths = []
    for name in [*HARM, *CLASSMATES]:  # the hostile ones first, so that classmates run beside them
        code = HARM[name][0] + ANSWER if name in HARM else None
        path = folder / name / "03_encoding.ipynb"
        path.parent.mkdir()
        nbformat.write(submission(code), path)
        paths.append(path)
    before = _digests(paths)
    reports = grade(paths, solutions_dir=SOLUTIONS, limits=LIMITS, workers=2, sandbox=True)
    return {r.student: r for r in reports}, running(MARK), before == _digests(paths)


def _digests(paths) -> list[bytes]:
    """What a notebook must not change: the submissions, the checkout's own code."""
    return [p.read_bytes() for p in [*paths, ROOT / "bpe_lab" / "grading" / "run" / "launch.py"]]


def _points(report) -> dict[str, int]:
    return {t.grade_id: t.points for t in report.tasks if t.grade_id in (ENCODE, DECODE)}


@needs_bwrap
@pytest.mark.parametrize("name", CLASSMATES)
def test_classmates_graded_beside_hostile_notebooks_keep_full_marks(graded, name):
    report = graded[0][name]
    assert _points(report) == {ENCODE: 3, DECODE: 2}, report.tasks


@needs_bwrap
@pytest.mark.parametrize("name", sorted(HARM))
def test_a_hostile_notebook_costs_only_itself(graded, name):
    report = graded[0][name]
    _, points, phrase = HARM[name]
    assert _points(report) == {ENCODE: points, DECODE: 2}, report.tasks
    message = next(t.message for t in report.tasks if t.grade_id == ENCODE)
    assert re.search(phrase, message), message


@needs_bwrap
def test_nothing_a_notebook_started_survives_grading(graded):
    assert graded[1] == [], "a daemon started with setsid outlived grading"


@needs_bwrap
def test_no_notebook_changed_a_submission_or_the_checkout(graded):
    """Finding 2: a notebook graded first rewrote classmates' notebooks and
    the checkout's launch.py (then run outside the sandbox by the next kernel)."""
    assert graded[2], "a submitted notebook or bpe_lab/grading/run/launch.py changed during grading"


def test_a_rewritten_kernelspec_spoils_nothing(tmp_path):
    """Without a sandbox a kernel can write anywhere its user can: the
    kernelspec lives in the grader's memory, so there is none to rewrite."""
    rewrite = (
        "import glob, json, os, tempfile\n"
        "for root in {tempfile.gettempdir(), '/tmp', os.path.expanduser('~')}:\n"
        "    for spec in glob.glob(os.path.join(root, '**', 'kernel.json'), recursive=True):\n"
        "        try:\n"
        "            data = json.load(open(spec))\n"
        "            data['argv'] = [a if not a.isdigit() else str(40 << 20) for a in data['argv']]\n"
        "            json.dump(data, open(spec, 'w'))\n"
        "        except Exception:\n"
        "            pass\n"
    )
    paths = []
    for name, code in [("rewriter", rewrite + ANSWER), ("classmate", None)]:
        path = tmp_path / name / "03_encoding.ipynb"
        path.parent.mkdir()
        nbformat.write(submission(code), path)
        paths.append(path)
    reports = grade(paths, solutions_dir=SOLUTIONS, limits=LIMITS, workers=1, sandbox=False)
    assert [_points(r) for r in reports] == [{ENCODE: 3, DECODE: 2}] * 2, [r.tasks for r in reports]
