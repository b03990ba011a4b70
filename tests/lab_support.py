"""JupyterLab in headless Chromium, for the browser test and the screenshots.

``tests/test_browser.py`` checks what a learner sees; ``tests/screenshots.py``
photographs every notebook. Both need the same things, written once here: a
JupyterLab server on 127.0.0.1 whose every Jupyter directory is in a
temporary folder (no user settings, workspace or news prompt leaks in), in a
process group of its own so it and its kernels can be ended by pid; Debian's
Chromium driven by Playwright; and one page that opens notebook after
notebook in the same JupyterLab (a page load costs seconds, a kernel more),
each check scoped to the notebook it opened.

Nothing here imports pytest: failures raise ``LabError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]

# The kernel is ready when the notebook's session has a kernel whose socket
# is connected and which has finished starting (idle), not merely when the
# page has loaded.
KERNEL_READY_JS = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  const ctx = panel && panel.sessionContext;
  const kernel = ctx && ctx.session && ctx.session.kernel;
  return !!kernel && ctx.isReady && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

# Run All has finished when no cell of the current notebook waits for its
# turn or runs ("[*]") and the kernel is idle again.
RUN_ALL_DONE_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const prompts = [...panel.node.querySelectorAll('.jp-InputArea-prompt')].map(p => p.textContent);
  return !!kernel && kernel.status === 'idle' && !prompts.some(p => p.includes('*'));
}"""

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


class LabError(RuntimeError):
    """JupyterLab did not start, or a page did not reach the state waited for."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def lab_env(tmp: Path, ipython_startup: str = "") -> dict[str, str]:
    """Every Jupyter directory in ``tmp``; news and update checks off.
    ``ipython_startup`` (Python source) runs in every kernel before its first cell."""
    dirs = {name: tmp / name for name in ("config", "data", "runtime", "settings", "workspaces", "ipython", "mpl")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    # The announcements plugin asks "receive official Jupyter news?" on first
    # start; disable it, and turn off news and update checks in its settings.
    _write_json(
        dirs["config"] / "labconfig" / "page_config.json",
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}},
    )
    _write_json(
        dirs["settings"] / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    if ipython_startup:
        startup = dirs["ipython"] / "profile_default" / "startup" / "00-bpe-lab.py"
        startup.parent.mkdir(parents=True, exist_ok=True)
        startup.write_text(ipython_startup)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        IPYTHONDIR=str(dirs["ipython"]),
        MPLCONFIGDIR=str(dirs["mpl"]),
        JUPYTER_PLATFORM_DIRS="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return env


def lab_command(port: int, token: str, notebooks: Path) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={notebooks}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")
    return command


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, be sent SIGTERM if the process
    that started us dies, even by SIGKILL (the server then stops its kernels)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _request(url: str, token: str, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return int(response.status)


class Lab:
    """A running JupyterLab: ``base`` url, ``token``, ``proc``, ``log``."""

    def __init__(self, proc: subprocess.Popen[bytes], base: str, token: str, log: Path) -> None:
        self.proc, self.base, self.token, self.log = proc, base, token, log

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{path}?reset&token={self.token}"

    def wait(self, timeout: float = 45) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if _request(f"{self.base}/api/status", self.token) == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise LabError(f"JupyterLab did not answer within {timeout} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        """Ask the server to shut down (it stops its kernels), then make sure:
        every process it started, and the server itself, is ended by pid."""
        import psutil

        try:
            started = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            started = []
        try:
            _request(f"{self.base}/api/shutdown", self.token, method="POST")
            self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group we created (start_new_session)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for child in started:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


@contextlib.contextmanager
def running_lab(tmp: Path, notebooks: Path, *, ipython_startup: str = "", nice: int = 0) -> Iterator[Lab]:
    """JupyterLab serving ``notebooks`` with its state in ``tmp``; stopped,
    with its kernels, however the block ends. ``nice`` lowers the priority
    of the server and so of the kernels it starts."""
    port, token = free_port(), os.urandom(16).hex()
    log = tmp / "jupyterlab.log"
    command = lab_command(port, token, notebooks)
    if nice:
        command = ["nice", "-n", str(nice), *command]
    lab = Lab(_start(command, lab_env(tmp, ipython_startup), notebooks, log), f"http://127.0.0.1:{port}", token, log)
    try:
        lab.wait()
        yield lab
    finally:
        lab.stop()


def _start(command: list[str], env: Mapping[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            command,
            env=dict(env),
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )


@contextlib.contextmanager
def running_course_lab(tmp: Path, folder: Path, timeout: float = 60) -> Iterator[tuple[Lab, str]]:
    """JupyterLab as ``bpe-lab lab FOLDER --no-browser`` starts it (the
    command and environment of ``bpe_lab.course``), its state in ``tmp``, on
    127.0.0.1 with the app exposed to the page; the running lab and the URL
    it printed for the learner to open. Stopped however the block ends."""
    from bpe_lab.course import lab_command as course_command
    from bpe_lab.course import lab_environment

    port = free_port()
    extra = [
        "--ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = tmp / "jupyterlab.log"
    base = {k: v for k, v in lab_env(tmp).items() if k != "JUPYTER_TOKEN"}  # its own token, printed in its URL
    with lab_environment(base) as env:
        proc = _start(course_command(folder, port=port, browser=False, extra=extra), env, folder, log)
        lab = Lab(proc, f"http://127.0.0.1:{port}", "", log)
        try:
            deadline = time.monotonic() + timeout
            printed = None
            while printed is None:
                found = re.search(rf"^\s+(http://127\.0\.0\.1:{port}/\S+)$", log.read_text(errors="replace"), re.M)
                printed = found.group(1) if found else None
                if printed is None and (proc.poll() is not None or time.monotonic() > deadline):
                    raise LabError(f"JupyterLab printed no URL within {timeout} s:\n{log.read_text()[-3000:]}")
                time.sleep(0.3)
            lab.token = printed.partition("token=")[2]
            lab.wait()
            yield lab, printed
        finally:
            lab.stop()


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright, closed however the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


class LabPage:
    """One Chromium page on one JupyterLab, opening notebook after notebook.

    ``open`` makes a notebook the current tab and returns a locator of its
    panel, so a check never reads a widget of a notebook opened before.
    """

    def __init__(self, browser: Any, lab: Lab, first: str, *, width: int = 1360, height: int = 900) -> None:
        self.lab = lab
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.set_default_timeout(40_000)
        self.page.goto(lab.url(first))
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
        self._current = first

    def open(self, path: str, *, kernel: bool = True) -> Any:
        """Notebook ``path`` (relative to the server's root) as the current
        tab, its first cell attached and, if ``kernel``, its kernel ready."""
        if path != self._current:
            self.page.evaluate("p => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }", path)
            self._current = path
        self.page.wait_for_function(
            "p => { const w = window.jupyterapp.shell.currentWidget;"
            " return !!w && !!w.context && w.context.path === p && w.context.isReady"
            " && !!w.node.querySelector('.jp-Notebook .jp-Cell'); }",
            arg=path,
        )
        if kernel:
            self.page.wait_for_function(KERNEL_READY_JS, polling=250)
        return self.panel()

    def panel(self) -> Any:
        """A locator of the current notebook's panel."""
        widget_id = self.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
        return self.page.locator(f'[id="{widget_id}"]')

    def command(self, name: str, args: Mapping[str, Any] | None = None) -> None:
        # the command's result (often a widget) stays in the page: it cannot be serialised
        self.page.evaluate(
            "async ([n, a]) => { await window.jupyterapp.commands.execute(n, a); }", [name, dict(args or {})]
        )

    def run_all(self, timeout: float = 300) -> None:
        """Run every cell of the current notebook and wait until it is done."""
        self.command("notebook:run-all-cells")
        self.page.wait_for_timeout(300)  # let the first cell be queued
        self.page.wait_for_function(RUN_ALL_DONE_JS, polling=500, timeout=timeout * 1000)

    def theme(self, name: str) -> None:
        """Switch to the "light" or "dark" theme and wait until it applies."""
        self.command("apputils:change-theme", {"theme": THEMES[name]})
        light = "true" if name == "light" else "false"
        self.page.wait_for_selector(f'body[data-jp-theme-light="{light}"]', state="attached")
        self.page.wait_for_timeout(500)  # let the theme's stylesheet apply before a picture

    def close(self) -> None:
        self.page.close()
