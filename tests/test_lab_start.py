"""``bpe-lab lab`` as a learner meets it, in headless Chromium: JupyterLab
started with the course's own command and environment (``bpe_lab.course``,
``tests/lab_support.py``), on a copied course.

With ``--no-browser`` the URL JupyterLab prints is the one a learner copies:
it opens notebook 00, not the launcher. The start page (``notebooks/README.md``)
opens rendered, not as raw Markdown in the text editor, whether reached by
notebook 00's link or opened as a double-click in the file browser does.
Run All and a save in JupyterLab leave every cell's source as it was, which
is what ``bpe-lab lab --update`` relies on to replace a notebook the learner
only ran.

Needs Debian's Chromium at /usr/bin/chromium, as ``tests/test_browser.py``.
"""

from __future__ import annotations

import json

import pytest
from lab_support import CHROMIUM, KERNEL_READY_JS, RUN_ALL_DONE_JS, chromium_browser, running_course_lab

from bpe_lab.course import FIRST_NOTEBOOK, START_PAGE, copy_course, sources_digest

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no Chromium at /usr/bin/chromium; install it with `apt-get install -y chromium`"
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
psutil = pytest.importorskip("psutil", reason="psutil is needed to stop the kernels this test starts")

CURRENT = """p => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!w && !!w.context && w.context.path === p && w.context.isReady; }"""
#: What the current document shows: rendered Markdown, or a text editor.
SHOWN = """() => { const w = window.jupyterapp.shell.currentWidget;
  const h1 = w.node.querySelector('.jp-RenderedMarkdown h1');
  return {rendered: !!h1, editor: !!w.node.querySelector('.cm-editor'),
          title: h1 ? h1.textContent.replace('\u00b6', '').trim() : null}; }"""  # without the heading's anchor link


def test_the_printed_url_opens_notebook_00_and_the_start_page_opens_rendered(tmp_path):
    folder = tmp_path / "course"
    copy_course(folder)
    (tmp_path / "lab").mkdir()
    short = "notebooks/short_run.ipynb"  # notebook 00's first cells, as committed: Run All of it is quick
    notebook = json.loads((folder / FIRST_NOTEBOOK).read_text(encoding="utf-8"))
    notebook["cells"] = notebook["cells"][:12]
    (folder / short).write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    copied = (folder / short).read_bytes()
    title = (folder / START_PAGE).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ").strip()
    with running_course_lab(tmp_path / "lab", folder) as (lab, printed), chromium_browser() as browser:
        assert printed == f"{lab.base}/lab/tree/{FIRST_NOTEBOOK}?token={lab.token}"
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        page.set_default_timeout(60_000)
        page.goto(printed)
        page.wait_for_function(CURRENT, arg=FIRST_NOTEBOOK)
        page.wait_for_function(KERNEL_READY_JS, polling=250)

        page.get_by_role("link", name="The start page").first.click()  # notebook 00's link to the start page
        page.wait_for_function(CURRENT, arg=START_PAGE)
        page.wait_for_function(
            "() => !!window.jupyterapp.shell.currentWidget.node.querySelector('.jp-RenderedMarkdown h1')"
        )
        assert page.evaluate(SHOWN) == {"rendered": True, "editor": False, "title": title}

        page.evaluate(
            "p => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }", "exercises/README.md"
        )
        page.wait_for_function(CURRENT, arg="exercises/README.md")  # the file browser's double-click
        page.wait_for_function(
            "() => !!window.jupyterapp.shell.currentWidget.node.querySelector('.jp-RenderedMarkdown h1')"
        )
        assert page.evaluate(SHOWN) == {"rendered": True, "editor": False, "title": "exercises"}

        page.evaluate("p => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }", short)
        page.wait_for_function(CURRENT, arg=short)
        page.wait_for_function(KERNEL_READY_JS, polling=250)
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        page.wait_for_timeout(300)
        page.wait_for_function(RUN_ALL_DONE_JS, polling=500, timeout=300_000)
        page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    saved = (folder / short).read_bytes()
    ran = [c for c in json.loads(saved)["cells"] if c["cell_type"] == "code" and c["outputs"]]
    assert saved != copied and len(ran) > 3  # JupyterLab saved its outputs into the file
    assert sources_digest(saved) == sources_digest(copied)  # and not one source changed: --update will replace it
