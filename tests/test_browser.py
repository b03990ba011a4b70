"""A learner's view, end to end: JupyterLab in headless Chromium.

Starts JupyterLab on 127.0.0.1 with every Jupyter directory in a temporary
folder (so no user settings, workspace or news prompt leaks in), opens a
notebook that shows a ``MergeStepper``, waits until the kernel is really
connected (read from ``window.jupyterapp``, which
``--LabApp.expose_app_in_browser`` exposes), runs all cells, clicks
"next merge" three times and reads the highlighted pair and the three
recorded rules back from the page. Screenshots (light and dark theme) go to
``test-artifacts/``. Every process it starts is stopped, pass or fail.

Needs Debian's Chromium at /usr/bin/chromium (``apt-get install -y
chromium``); Playwright cannot download its own browser here. Takes about
20-40 s on two cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
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

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no Chromium at /usr/bin/chromium; install it with `apt-get install -y chromium`"
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
psutil = pytest.importorskip("psutil", reason="psutil is needed to stop the kernels this test starts")

NOTEBOOK_CELLS = [
    "from bpe_lab.core.corpora import TEXTBOOK_CORPUS\nfrom bpe_lab.ui.widgets import MergeStepper",
    "stepper = MergeStepper(TEXTBOOK_CORPUS, num_merges=5)\nstepper",
]
QUIZ = (
    "from bpe_lab.ui.checkpoints import Quiz\n"
    "Quiz('Which pair does round 1 merge?', {'(e, s)': 'met first', '(l, o)': 'only 7', '(s, t)': 'met later'},"
    " answer='(e, s)', lang=LANG)"
)
LIVE_CELLS = [
    "LANG = 'LANGUAGE'\nfrom bpe_lab.core.corpora import TEXTBOOK_CORPUS\nfrom bpe_lab.ui.widgets import MergeStepper",
    "MergeStepper(TEXTBOOK_CORPUS, num_merges=5, tie_break='lexicographic', lang=LANG)",
    QUIZ,
    "from bpe_lab.ui.plots import pair_counts\nfrom bpe_lab.core.train import train_trace\n"
    "pair_counts(train_trace({'我们': 3, '早上': 2, '我早': 1}, 1).rounds[0]).axes[0].set_title('符号对计数')",
]
#: Committed notebooks opened untrusted, without running them.
COMMITTED = ["01_compression_origins.ipynb", "02_training.ipynb"]

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def _write_notebook(path: Path, cells: list[str] = NOTEBOOK_CELLS) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


def _write_saved_zh(path: Path) -> None:
    """A notebook whose outputs were saved as a run would save them (the
    widget's mime bundle, built here in-process), in Chinese: opened, it is
    untrusted and its widgets have no live model."""
    import nbformat

    from bpe_lab.core.corpora import TEXTBOOK_CORPUS
    from bpe_lab.ui.checkpoints import Quiz
    from bpe_lab.ui.widgets import CompressionStepper, MergeStepper

    shown = [
        MergeStepper(TEXTBOOK_CORPUS, num_merges=5, lang="zh"),
        CompressionStepper("ababcababcab", lang="zh"),
        Quiz("第 1 轮合并哪个符号对？", {"(e, s)": "先出现", "(l, o)": "只有 7 次"}, answer="(e, s)", lang="zh"),
    ]
    nb = nbformat.v4.new_notebook()
    for number, thing in enumerate(shown, 1):
        cell = nbformat.v4.new_code_cell("# saved output", execution_count=number)
        cell.outputs = [
            nbformat.v4.new_output("execute_result", data=thing._repr_mimebundle_(), execution_count=number)
        ]
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


def _lab_env(tmp: Path) -> dict[str, str]:
    """Every Jupyter directory in ``tmp``; news and update checks off."""
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


def _lab_command(port: int, token: str, notebooks: Path) -> list[str]:
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


def _get(url: str, token: str, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status


def _wait_for_server(proc: subprocess.Popen, base: str, token: str, log: Path, timeout: float = 45) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if _get(f"{base}/api/status", token) == 200:
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen, base: str, token: str) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure:
    every process it started, and the server itself, is ended by pid."""
    try:
        started = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        started = []
    try:
        _get(f"{base}/api/shutdown", token, method="POST")
        proc.wait(timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGTERM)  # the group this test created (start_new_session)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for child in started:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """A running JupyterLab holding ``stepper.ipynb``: yields (base url, token)."""
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    _write_notebook(notebooks / "stepper.ipynb")
    for lang in ("en", "zh"):
        _write_notebook(notebooks / f"live_{lang}.ipynb", [cell.replace("LANGUAGE", lang) for cell in LIVE_CELLS])
    _write_saved_zh(notebooks / "saved_zh.ipynb")
    for name in COMMITTED:  # copied: a fresh Jupyter data folder has never trusted them
        shutil.copy(ROOT / "notebooks" / name, notebooks / name)
    port, token = _free_port(), os.urandom(16).hex()
    base, log = f"http://127.0.0.1:{port}", tmp / "jupyterlab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            _lab_command(port, token, notebooks),
            env=_lab_env(tmp),
            cwd=notebooks,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        _wait_for_server(proc, base, token, log)
        yield base, token
    finally:
        _stop(proc, base, token)


@pytest.fixture(scope="module")
def chromium(lab):
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def _open(chromium, lab, name: str, width: int = 1360, kernel: bool = True):
    """A new page with notebook ``name`` open (and, if ``kernel``, its kernel connected)."""
    base, token = lab
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(40_000)
    page.goto(f"{base}/lab/tree/{name}?reset&token={token}")
    if kernel:
        page.wait_for_function(KERNEL_READY_JS, polling=250)
    else:
        page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached")
    return page


@pytest.fixture()
def page(chromium, lab):
    """A headless Chromium page with the stepper notebook open and its kernel connected."""
    page = _open(chromium, lab, "stepper.ipynb")
    try:
        yield page
    finally:
        page.close()


def _rules(page) -> list[tuple[str, str, str]]:
    rows = page.locator(".bpe-merge .bpe-merges li.bpe-rule").evaluate_all(
        "items => items.map(li => [li.dataset.left, li.dataset.right, li.dataset.rule])"
    )
    return [tuple(row) for row in rows]


def test_merge_stepper_in_jupyterlab(page):
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        _click_three_merges_and_read_back(page)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "merge_stepper_failure.png"))  # what the page showed when it failed
        raise
    _screenshots(page)


def _click_three_merges_and_read_back(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector('.bpe-merge[data-round="0"]')
    next_button = page.get_by_role("button", name="next merge", exact=True)
    for expected_round in (1, 2, 3):
        next_button.click()
        # Fails here if a click stops updating the view.
        page.wait_for_selector(f'.bpe-merge[data-round="{expected_round}"]', timeout=10_000)

    highlighted = page.locator(".bpe-merge .bpe-next")
    assert (highlighted.get_attribute("data-left"), highlighted.get_attribute("data-right")) == ("l", "o")
    assert page.locator('.bpe-merge .bpe-hl[data-left="l"][data-right="o"]').count() == 2  # low, lower
    assert _rules(page) == [("e", "s", "first"), ("es", "t", "first"), ("est", "</w>", "first")]
    assert page.locator(".bpe-merge .bpe-counter").inner_text() == "Round 3 of 5"


def _screenshots(page) -> None:
    """The whole page, the stepper alone, and the stepper in the dark theme."""
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.locator(".bpe-stepper").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "merge_stepper_lab.png"))
    page.locator(".bpe-stepper").screenshot(path=str(ARTIFACTS / "merge_stepper.png"))
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_selector('body[data-jp-theme-light="false"]', state="attached")
    page.wait_for_timeout(500)  # let the theme's stylesheet apply before the picture
    page.locator(".bpe-stepper").screenshot(path=str(ARTIFACTS / "merge_stepper_dark.png"))


# ---------------------------------------------------------------- saved outputs, untrusted


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def test_committed_notebook_reads_right_untrusted(chromium, lab):
    """Notebook 01 opened without running it: JupyterLab shows the saved
    HTML of the CompressionStepper with its <style> block stripped (the
    notebook is not trusted), so only inline styles and real spaces remain."""
    page = _open(chromium, lab, "01_compression_origins.ipynb", kernel=False)
    try:
        view = page.locator(".bpe-compress").first
        view.wait_for(state="attached")
        view.scroll_into_view_if_needed()
        assert page.locator(".jp-OutputArea-output .bpe-compress style").count() == 0  # the sheet is gone
        assert view.locator(".bpe-counter").inner_text() == "Round 0 of 3"
        head = view.locator(".bpe-head").inner_text()
        assert re.search(r"Round 0 of 3\s+12 bytes of data", head), head  # not "Round 0 of 312 bytes"
        grid = view.locator(".bpe-grid").evaluate("e => getComputedStyle(e).display")
        assert grid == "flex", "the inline layout did not survive the sanitizer"
        _shot(page, "untrusted_01_en.png")
    finally:
        page.close()


def test_saved_chinese_outputs_read_right_untrusted(chromium, lab):
    page = _open(chromium, lab, "saved_zh.ipynb", kernel=False)
    try:
        page.locator(".bpe-merge").first.wait_for(state="attached")
        assert page.locator(".bpe-merge .bpe-counter").inner_text() == "第 0 轮 / 共 5 轮"
        assert re.search(r"第 0 轮 / 共 3 轮\s+12 字节数据", page.locator(".bpe-compress .bpe-head").inner_text())
        checkpoint = page.locator(".bpe-checkpoint")
        # JupyterLab renders cells lazily: bring the output into view and wait for its text
        checkpoint.scroll_into_view_if_needed()
        page.wait_for_function("() => (document.querySelector('.bpe-checkpoint') || {}).innerText", timeout=20_000)
        assert "第 1 轮合并哪个符号对？" in checkpoint.inner_text()
        checkpoint.locator("summary").click()  # <details> opens without a kernel
        assert "答案：(e, s)。" in checkpoint.inner_text()
        _shot(page, "untrusted_saved_zh.png")
    finally:
        page.close()


# ---------------------------------------------------------------- running: layout, checkpoints, languages


def _run_all(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector('.bpe-merge[data-round="0"]')
    page.wait_for_selector(".bpe-checkpoint")


def test_layout_at_1024_px_with_the_file_browser_open(chromium, lab):
    """At 1024 px with the file browser open, the three panels sit side by
    side (the rules learned do not drop below the fold), and with the
    lexicographic rule the "merge next" badge stays on one line, so the
    header keeps its height from round to round."""
    page = _open(chromium, lab, "live_en.ipynb", width=1024)
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
        _run_all(page)
        view = page.locator(".bpe-merge")
        view.scroll_into_view_if_needed()
        _shot(page, "layout_1024_file_browser.png")
        tops = view.locator(".bpe-panel").evaluate_all("ps => ps.map(p => Math.round(p.getBoundingClientRect().top))")
        assert len(tops) == 3 and len(set(tops)) == 1, f"panels not in one row: {tops}"
        next_button = page.get_by_role("button", name="next merge", exact=True)
        heights = set()
        for number in range(1, 6):
            badge = view.locator(".bpe-next")
            if badge.count():
                assert badge.evaluate("b => b.getClientRects().length") == 1, "the badge wrapped"
            heights.add(view.locator(".bpe-head").evaluate("h => Math.round(h.getBoundingClientRect().height)"))
            next_button.click()
            page.wait_for_selector(f'.bpe-merge[data-round="{number}"]', timeout=10_000)
        assert len(heights) == 1, f"the header changes height between rounds: {heights}"
        freq = view.locator(".bpe-freq").first
        assert freq.evaluate("f => f.getClientRects().length") == 1  # "× 5" on one line
        _shot(page, "layout_1024_file_browser_round_5.png")
    finally:
        page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_checkpoint_by_mouse_and_keyboard(chromium, lab, lang):
    words = {
        "en": ("check", "Not quite. only 7", "Correct. met first"),
        "zh": ("检查", "不太对。 only 7", "正确。 met first"),
    }
    check, wrong, right = words[lang]
    page = _open(chromium, lab, f"live_{lang}.ipynb")
    try:
        _run_all(page)
        checkpoint = page.locator(".bpe-checkpoint")
        checkpoint.get_by_role("radio", name="(l, o)").click()  # the mouse
        checkpoint.get_by_role("button", name=check, exact=True).click()
        feedback = checkpoint.locator(".bpe-feedback")
        feedback.wait_for()
        assert feedback.inner_text() == wrong and feedback.get_attribute("data-state") == "wrong"
        first = checkpoint.get_by_role("radio", name="(e, s)")
        first.focus()  # the keyboard: Space picks the focused option, Enter presses the button
        page.keyboard.press("Space")
        checkpoint.get_by_role("button", name=check, exact=True).focus()
        page.keyboard.press("Enter")
        page.wait_for_selector('.bpe-feedback[data-state="correct"]')
        assert feedback.inner_text() == right
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.locator(".bpe-merge").scroll_into_view_if_needed()
        _shot(page, f"running_{lang}.png")
        checkpoint.scroll_into_view_if_needed()
        _shot(page, f"running_{lang}_checkpoint.png")
    finally:
        page.close()
