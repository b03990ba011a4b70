"""Screenshots of every notebook as a learner sees it, for a person to look at.

    .venv/bin/python tests/screenshots.py OUT_DIR [--only 02,05] [--lang en,zh] [--theme light,dark]

(``make screenshots`` writes them to ``screenshots/``, which git ignores.)
Opens each notebook ``notebooks/NN_*.ipynb`` in JupyterLab in headless
Chromium and scrolls through it a screen at a time, in these modes:

- ``saved``: as opened from disk, untrusted, before anything runs (what a
  learner sees first; the saved outputs are in English);
- ``run-en`` and ``run-zh``: after Run All. The notebooks build their
  widgets with the default ``lang="en"``; the course has no global switch,
  so for ``zh`` every kernel starts by making ``labels.labels("en")``
  return the Chinese labels (an IPython start-up file), which is what a
  notebook passing ``lang="zh"`` everywhere would show;

each in JupyterLab's light and dark themes. Pictures go to
``OUT_DIR/NN_name/MODE-THEME-KK.png``; a line per notebook says how many
outputs were errors or warnings. Nothing is judged: the point is to look.

The notebooks run on copies in a temporary folder (the committed ones are
never written), one at a time, each notebook's kernel shut down before the
next. The server runs in a process group of its own and dies with this
script (``PR_SET_PDEATHSIG``); SIGTERM, SIGHUP and Ctrl-C stop the server,
the browser and remove the temporary folder. A folder left by a run that was
killed outright is removed by the next run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_support import CHROMIUM, ROOT, LabError, LabPage, chromium_browser, running_lab  # noqa: E402

PREFIX = "bpe-screenshots-"
MODES = ("saved", "run")
#: Run in every kernel of the zh pass, before its first cell.
ZH_STARTUP = "import bpe_lab.ui.labels as _labels\n_labels.LABELS['en'] = _labels.ZH\ndel _labels\n"

# Outputs a learner would notice, each with its cell's number: tracebacks
# and warnings (stderr; their last line), and outputs or panels wider than
# their box (they scroll sideways).
PROBLEMS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = [...panel.node.querySelectorAll('.jp-Notebook .jp-Cell')];
  const found = [];
  cells.forEach((cell, i) => cell.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').forEach(
      out => found.push(`stderr in cell ${i}: ${out.innerText.trim().split('\\n').slice(-1)[0].slice(0, 160)}`)));
  cells.forEach((cell, i) => cell.querySelectorAll('.jp-OutputArea-output, .bpe-panel').forEach(out => {
    if (out.scrollWidth > out.clientWidth + 1)
      found.push(`too wide in cell ${i}: ${out.className.split(' ')[0]} ${out.scrollWidth} px in ${out.clientWidth}`);
  }));
  return found;
}"""

SCROLLER_JS = "() => window.jupyterapp.shell.currentWidget.node.querySelector('.jp-WindowedPanel-outer')"


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the script as Ctrl-C does: through every finally."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def _sweep_stale() -> None:
    """Remove the temporary folders of earlier runs whose process is gone."""
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        match = re.match(re.escape(PREFIX) + r"(\d+)-", folder.name)
        if not match:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass


def _scroll_shots(lab_page: LabPage, out: Path, stem: str) -> int:
    """Screens of the current notebook from top to bottom; returns how many."""
    page = lab_page.page
    scroller = page.evaluate_handle(SCROLLER_JS)
    page.evaluate("s => { s.scrollTop = 0; }", scroller)
    shots, last = 0, -1
    while True:
        page.wait_for_timeout(400)  # lazy cells and plots render
        top = page.evaluate("s => s.scrollTop", scroller)
        if top == last:
            break
        shots += 1
        page.screenshot(path=str(out / f"{stem}-{shots:02d}.png"))
        last = top
        page.evaluate("s => { s.scrollTop += s.clientHeight - 80; }", scroller)
    return shots


def _close_current(lab_page: LabPage) -> None:
    """Shut the current notebook's kernel down and close its tab without a
    "save changes?" dialog (the copy is thrown away anyway)."""
    lab_page.page.evaluate(
        """async () => {
          const w = window.jupyterapp.shell.currentWidget;
          await w.sessionContext.shutdown();
          w.context.model.dirty = false;
          w.dispose();
        }"""
    )


def _notebook_pass(
    lab_page: LabPage, name: str, out: Path, lang: str, themes: list[str], saved: bool, timeout: float
) -> str:
    folder = out / Path(name).stem
    folder.mkdir(parents=True, exist_ok=True)
    lab_page.open(name, kernel=False)
    lab_page.page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
    notes = []
    if saved:
        for theme in themes:
            lab_page.theme(theme)
            notes.append(f"saved-{theme}: {_scroll_shots(lab_page, folder, f'saved-{theme}')}")
    lab_page.open(name)  # its kernel ready
    started = time.monotonic()
    lab_page.run_all(timeout=timeout)
    notes.append(f"run {time.monotonic() - started:.0f} s")
    problems = lab_page.page.evaluate(PROBLEMS_JS)
    for theme in themes:
        lab_page.theme(theme)
        notes.append(f"run-{lang}-{theme}: {_scroll_shots(lab_page, folder, f'run-{lang}-{theme}')}")
    _close_current(lab_page)
    listed = "".join(f"\n  {problem}" for problem in problems)
    return f"{name}: {', '.join(notes)}{listed}"


def _language_pass(names: list[str], out: Path, lang: str, themes: list[str], timeout: float) -> None:
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-") as folder:
        tmp = Path(folder)
        notebooks = tmp / "notebooks"
        shutil.copytree(ROOT / "notebooks", notebooks)  # copies: never write the committed notebooks
        startup = ZH_STARTUP if lang == "zh" else ""
        with running_lab(tmp, notebooks, ipython_startup=startup, nice=10) as lab, chromium_browser() as browser:
            lab_page = LabPage(browser, lab, names[0], width=1280, height=1400)
            try:
                for name in names:
                    print(_notebook_pass(lab_page, name, out, lang, themes, lang == "en", timeout), flush=True)
            finally:
                lab_page.theme("light")  # the next pass starts from the default
                lab_page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the PNG files (created)")
    parser.add_argument("--only", default="", help="notebook numbers, comma-separated (default: all)")
    parser.add_argument("--lang", default="en,zh", help="languages of the run passes (en, zh)")
    parser.add_argument("--theme", default="light,dark", help="themes (light, dark)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one notebook may take to run")
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        parser.error(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    only = {n.strip().zfill(2) for n in args.only.split(",") if n.strip()}
    names = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb") if not only or p.name[:2] in only)
    langs = [lang for lang in args.lang.split(",") if lang]
    themes = [theme for theme in args.theme.split(",") if theme]
    bad = [x for x in langs if x not in ("en", "zh")] + [x for x in themes if x not in ("light", "dark")]
    if bad or not names:
        parser.error(f"unknown language or theme {bad}" if bad else f"no notebook matches --only {args.only}")
    _stop_on_signals()
    _sweep_stale()
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for lang in langs:
            _language_pass(names, args.out, lang, themes, args.timeout)
    except KeyboardInterrupt as stop:
        print(f"stopped ({stop}); the server, the browser and the temporary folder are cleaned up", file=sys.stderr)
        return 130
    except LabError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
