"""Shared test set-up: a deterministic hypothesis profile for CI, the
textbook corpus every chapter's tests start from, timings run once (and
notebook 08's on at most 4 MB), and a check that the suite leaves nothing
in the temp folder.

The temp-folder check. The machine's temp folder is shared: other programs,
and other test runs, create and remove entries there while the suite runs,
so comparing it before and after cannot say who left what. Instead the run
gets a temp folder of its own, ``bpe-tests-PID`` inside the real one:
``TMPDIR`` (which every child process inherits: kernels, workers, nbgrader)
and ``tempfile.tempdir`` point into it, so whatever the suite makes with
``tempfile`` lands there and nothing foreign does. After each test the new
entries are noted with the test's id; at the end of the session whatever is
still there fails the run, listed with the test it appeared in, and the
folder is removed. pytest's own ``tmp_path`` folders stay in the real temp
folder (``pytest-of-USER``, which pytest prunes itself). A run that was
killed leaves its folder behind; the next run removes the folders of runs
whose process is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.grading.check.scratch import release_registered, sweep

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
# .ci/run sets CI=true; a developer's run explores new examples each time.
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def textbook_corpus() -> Mapping[str, int]:
    """low 5, lower 2, newest 6, widest 3 (Sennrich et al., 2016), the
    package's read-only ``TEXTBOOK_CORPUS``: one object for the whole run,
    since no test can change it (a write raises TypeError)."""
    return TEXTBOOK_CORPUS


# -- nothing left in the temp folder ------------------------------------------

#: Short: a kernel's IPC socket lives in the temp folder, and a Unix socket's
#: path has room for about 107 bytes.
_PREFIX = "bpe-tests-"
#: Set by the first process of a run; an xdist worker finds the run's folder there.
_ENV = "BPE_LAB_SUITE_TMP"
_OUTSIDE = "outside any test (a session fixture's teardown?)"
_REPORT = ".bpe-tests-left-"  # + worker id: what a worker left, for the first process


def pytest_configure(config: pytest.Config) -> None:
    # The notebooks' timing cells run their code once, not best of 3, and
    # notebook 08's on corpora of up to 4 MB, not 8: their outputs are not
    # compared (variants.scaling.MAX_REPEAT_ENV; 08's MAX_BYTES), and the
    # cells that are hold at either size.
    os.environ.setdefault("BPE_LAB_MAX_REPEAT", "1")
    os.environ.setdefault("BPE_LAB_MAX_BYTES", "4000000")
    config.pluginmanager.register(TempWatch(), "bpe-lab-temp-watch")


class TempWatch:
    """The run's own temp folder, and which test each entry appeared in (a
    plugin, so that it sees the notebooks' items too, not only tests/)."""

    def __init__(self) -> None:
        real = Path(tempfile.gettempdir())
        # pytest's tmp_path folders stay in the real temp folder
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(real))
        self.worker = os.environ.get("PYTEST_XDIST_WORKER")
        if self.worker and os.environ.get(_ENV):
            self.folder = Path(os.environ[_ENV])
        else:
            _remove_stale_folders(real)
            self.folder = real / f"{_PREFIX}{os.getpid()}"
            shutil.rmtree(self.folder, ignore_errors=True)  # a killed run's that had our process id
            self.folder.mkdir(mode=0o700)
            os.environ[_ENV] = str(self.folder)
        for name in ("TMPDIR", "TEMP", "TMP"):
            os.environ[name] = str(self.folder)
        tempfile.tempdir = str(self.folder)
        self.made_in: dict[str, str] = {}
        self.left: dict[str, str] = {}

    def entries(self) -> set[str]:
        try:
            return {name for name in os.listdir(self.folder) if not name.startswith(_REPORT)}
        except FileNotFoundError:  # a test removed it
            self.folder.mkdir(parents=True, exist_ok=True)
            return set()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        before = self.entries()
        yield
        for name in self.entries() - before:
            self.made_in.setdefault(name, item.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        release_registered()  # what this process would remove at its exit (check.text_file's folder)
        if self.worker:  # the first process reads it after every worker has ended
            report = {name: test for name, test in self.made_in.items() if name in self.entries()}
            (self.folder / f"{_REPORT}{self.worker}").write_text(json.dumps(report), encoding="utf-8")
            return
        # a process killed after check.text_file or a grading (a kernel shut down at once) leaves its
        # folder for the next run to sweep (check.scratch): the end of the suite is that next run
        for parent in (self.folder / f"{kind}-{os.getuid()}" for kind in ("bpe-lab-text", "bpe-lab-grader")):
            sweep(parent)
            with contextlib.suppress(OSError):
                parent.rmdir()  # only when empty: a folder of a live process stays, and is reported
        made_in = dict(self.made_in)
        for report in self.folder.glob(_REPORT + "*"):
            made_in.update(json.loads(report.read_text(encoding="utf-8")))
        self.left = {name: made_in.get(name, _OUTSIDE) for name in sorted(self.entries())}
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.left and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_unconfigure(self) -> None:
        """A run that made no session (``--help``, a usage error) removes its folder too."""
        if not self.worker:
            shutil.rmtree(self.folder, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.left:
            return
        by_test: dict[str, list[str]] = {}
        for name, test in self.left.items():
            by_test.setdefault(test, []).append(name)
        terminalreporter.section("left in the temp folder", sep="=", red=True, bold=True)
        terminalreporter.line(
            f"FAILED: the suite made {len(self.left)} entries in its temp folder and did not remove them "
            f"(removed now, with {self.folder}); the test each appeared in:"
        )
        for test, names in by_test.items():
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            terminalreporter.line(f"  {test}: {shown}")


def _remove_stale_folders(temp: Path) -> None:
    """The folders of earlier runs that were killed (their process is gone)."""
    if not os.path.isdir("/proc"):
        return
    for entry in temp.glob(_PREFIX + "*"):
        pid = entry.name[len(_PREFIX) :]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(entry, ignore_errors=True)
