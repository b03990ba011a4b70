"""A learner's view, end to end: JupyterLab in headless Chromium.

Starts one JupyterLab on 127.0.0.1 with every Jupyter directory in a
temporary folder (``tests/lab_support.py``), and one Chromium page that
opens notebook after notebook in it: the committed notebook 01 and a saved
Chinese notebook untrusted (no kernel: how a notebook looks opened from
disk); then one live notebook, run once, whose cells hold everything the
clicks need (two steppers, checkpoints in English and Chinese, a shuffled
quiz, notebook 06's white-space Predict, a plot with Chinese labels); last,
a copy of notebook 02 run whole. Each check is scoped to the cell it reads,
and a kernel is ready when ``window.jupyterapp`` (exposed with
``--LabApp.expose_app_in_browser``) says it is connected and idle.
Screenshots (light and dark theme) go to ``test-artifacts/``. Every process
it starts is stopped, pass or fail.

Needs Debian's Chromium at /usr/bin/chromium (``apt-get install -y
chromium``); Playwright cannot download its own browser here. It is among
the suite's slowest tests, which is why it shares one server, one page and
one live kernel across its checks.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_support import CHROMIUM, ROOT, LabPage, chromium_browser, running_lab

from bpe_lab.ui.checkpoints import Quiz, plain

ARTIFACTS = ROOT / "test-artifacts"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no Chromium at /usr/bin/chromium; install it with `apt-get install -y chromium`"
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
psutil = pytest.importorskip("psutil", reason="psutil is needed to stop the kernels this test starts")

#: A quiz whose right option is written first, as authors do; the course
#: shows it elsewhere (the display order is a hash of the text). The test
#: asks ``Quiz`` where it went; explanations hold no backticks or runs of
#: spaces, so the feedback's visible text is exactly ``Quiz.answer``'s.
SHUFFLED = {
    "question": "Which pair does the first-seen rule merge in round 4 of the textbook corpus?",
    "options": {
        "(l, o)": "l o and o w tie at 7, and the scan meets l o first.",
        "(o, w)": "o w has 7 too, but it comes after l o in the scan.",
        "(w, e)": "w e lost the e of newest when e s merged.",
        "(n, e)": "n e has only 6.",
    },
    "answer": "(l, o)",
}


def _two_spaces_cell() -> str:
    """Notebook 06's Predict on 'low  lower' (options that differ only by
    white space), read from the committed notebook, after the merges it uses."""
    notebook = json.loads((ROOT / "notebooks" / "06_limits_and_variants.ipynb").read_text())
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    found = [source for source in sources if 'two_spaces = "low  lower"' in source and "Predict(" in source]
    if not found:
        pytest.fail("notebook 06 no longer has its Predict on 'low  lower'; point this test at another checkpoint")
    setup = (
        "from bpe_lab import decode_words, encode_text, train_bpe\nfrom bpe_lab.ui.checkpoints import Predict\n"
        'merges = train_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 10)\n'
    )
    return setup + found[0]


def _quiz_cell(lang: str) -> str:
    return (
        "from bpe_lab.ui.checkpoints import Quiz\n"
        "Quiz('Which pair does round 1 merge?', {'(e, s)': 'met first', '(l, o)': 'only 7', '(s, t)': 'met later'},"
        f" answer='(e, s)', lang={lang!r})"
    )


#: The live notebook, cell by cell: name -> source. Checks find a cell by its name's index.
LIVE = {
    "imports": "from bpe_lab.core.corpora import TEXTBOOK_CORPUS\nfrom bpe_lab.ui.widgets import MergeStepper",
    "stepper": "MergeStepper(TEXTBOOK_CORPUS, num_merges=5)",
    "lexicographic": "MergeStepper(TEXTBOOK_CORPUS, num_merges=5, tie_break='lexicographic')",
    "quiz_en": _quiz_cell("en"),
    "quiz_zh": _quiz_cell("zh"),
    "shuffled": f"Quiz({SHUFFLED['question']!r}, {SHUFFLED['options']!r}, answer={SHUFFLED['answer']!r})",
    "code_quiz": "Quiz('Which word starts with `low`?', {'`lower`': 'it does', '`newest`': 'n e w'}, answer='`lower`')",
    "plot_zh": "from bpe_lab.ui.plots import pair_counts\nfrom bpe_lab.core.train import train_trace\n"
    "figure = pair_counts(train_trace({'我们': 3, '早上': 2, '我早': 1}, 1).rounds[0])\n"
    "figure.axes[0].set_title('符号对计数')\nfigure",
}
#: Committed notebooks opened untrusted (01) or run whole (02).
COMMITTED = ["01_compression_origins.ipynb", "02_training.ipynb"]


def _write_notebook(path: Path, cells: list[str]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


class _Bytes:
    """A tokenizer whose tokens are single bytes (a Chinese character is
    three partial tokens, drawn as a group)."""

    vocab = {i: bytes([i]) for i in range(256)}

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


def _saved_zh_outputs() -> list[dict]:
    """The mime bundles a run would save (built here in-process), in
    Chinese: every kind of view the course draws."""
    from bpe_lab.core.corpora import TEXTBOOK_CORPUS
    from bpe_lab.core.train import train_trace
    from bpe_lab.ui.widgets import CompressionStepper, EncodeStepper, MergeStepper, show_tokens

    merges = train_trace(TEXTBOOK_CORPUS, 7).merges
    shown = [
        MergeStepper(TEXTBOOK_CORPUS, num_merges=5, lang="zh"),
        CompressionStepper("ababcababcab", lang="zh"),
        Quiz("第 1 轮合并哪个符号对？", {"(e, s)": "先出现", "(l, o)": "`l o` 只有 7 次"}, answer="(e, s)", lang="zh"),
        EncodeStepper("nest", merges, lang="zh"),
    ]
    bundles = [thing._repr_mimebundle_() for thing in shown]
    return [*bundles, {"text/html": show_tokens("低 low  er", _Bytes(), lang="zh").data}]


def _write_saved_zh(path: Path) -> None:
    """A notebook whose outputs were saved as a run would save them:
    opened, it is untrusted and its widgets have no live model."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for number, bundle in enumerate(_saved_zh_outputs(), 1):
        cell = nbformat.v4.new_code_cell("# saved output", execution_count=number)
        cell.outputs = [nbformat.v4.new_output("execute_result", data=bundle, execution_count=number)]
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab_page(tmp_path_factory) -> Iterator[LabPage]:
    """One JupyterLab and one Chromium page for every check of this module."""
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    cells = dict(LIVE, two_spaces=_two_spaces_cell())
    _write_notebook(notebooks / "live.ipynb", list(cells.values()))
    _write_saved_zh(notebooks / "saved_zh.ipynb")
    for name in COMMITTED:  # copied: a fresh Jupyter data folder has never trusted them
        shutil.copy(ROOT / "notebooks" / name, notebooks / name)
    with running_lab(tmp, notebooks) as lab, chromium_browser() as browser:
        page = LabPage(browser, lab, COMMITTED[0])
        try:
            yield page
        finally:
            page.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def _cell(panel, name: str):
    """The cell of the live notebook that ``LIVE`` (or the two-spaces cell, last) calls ``name``."""
    names = [*LIVE, "two_spaces"]
    return panel.locator(".jp-Notebook .jp-Cell").nth(names.index(name))


# ---------------------------------------------------------------- saved outputs, untrusted


def test_committed_notebook_reads_right_untrusted(lab_page):
    """Notebook 01 opened without running it: JupyterLab shows the saved
    HTML of the CompressionStepper with its <style> block stripped (the
    notebook is not trusted), so only inline styles and real spaces remain."""
    panel = lab_page.open(COMMITTED[0], kernel=False)
    view = panel.locator(".bpe-compress").first
    view.wait_for(state="attached")
    view.scroll_into_view_if_needed()
    assert panel.locator(".jp-OutputArea-output .bpe-compress style").count() == 0  # the sheet is gone
    assert view.locator(".bpe-counter").inner_text() == "Round 0 of 3"
    head = view.locator(".bpe-head").inner_text()
    assert re.search(r"Round 0 of 3\s+12 bytes of data", head), head  # not "Round 0 of 312 bytes"
    grid = view.locator(".bpe-grid").evaluate("e => getComputedStyle(e).display")
    assert grid == "flex", "the inline layout did not survive the sanitizer"
    _shot(lab_page.page, "untrusted_01_en.png")


def test_saved_chinese_outputs_read_right_untrusted(lab_page):
    panel = lab_page.open("saved_zh.ipynb", kernel=False)
    page = lab_page.page
    panel.locator(".bpe-merge").first.wait_for(state="attached")
    assert panel.locator(".bpe-merge .bpe-counter").inner_text() == "第 0 轮 / 共 5 轮"
    assert re.search(r"第 0 轮 / 共 3 轮\s+12 字节数据", panel.locator(".bpe-compress .bpe-head").inner_text())
    checkpoint = panel.locator(".bpe-checkpoint")
    # JupyterLab renders cells lazily: bring the output into view and wait for its text
    checkpoint.scroll_into_view_if_needed()
    checkpoint.locator("summary").wait_for(timeout=20_000)
    assert "第 1 轮合并哪个符号对？" in checkpoint.inner_text()
    # the options are lettered in their own text: JupyterLab numbers an <ol> 1, 2, 3 whatever its type
    options = checkpoint.locator("ol li").evaluate_all("ls => ls.map(l => l.innerText)")
    assert [option[:3] for option in options] == ["A. ", "B. "], options
    assert checkpoint.locator("ol").evaluate("o => getComputedStyle(o).listStyleType") == "none"
    checkpoint.locator("summary").click()  # <details> opens without a kernel
    assert "答案：(e, s)。" in checkpoint.inner_text()
    code = checkpoint.locator("code").first  # tinted by its inline style, the sheet being gone
    assert code.evaluate("c => getComputedStyle(c).backgroundColor") == "rgba(128, 128, 128, 0.18)"
    more = panel.locator(".bpe-merge td", has_text="… +")
    assert more.evaluate("td => getComputedStyle(td).textAlign") == "left"  # JupyterLab right-aligns cells
    _shot(page, "untrusted_saved_zh.png")


def _properties(style: str) -> list[str]:
    return [part.split(":")[0].strip() for part in style.split(";") if part.strip()]


def test_every_inline_style_survives_the_sanitizer(lab_page):
    """Untrusted, JupyterLab's sanitizer drops the <style> sheet and every
    inline declaration whose value it does not accept (an ``hsla()``
    colour, say), without a word: the views must write only what it keeps,
    since their layout and colours rest on the inline styles then."""
    panel = lab_page.open("saved_zh.ipynb", kernel=False)
    panel.locator(".bpe-tokens .bpe-token").first.wait_for(state="attached")
    written = [
        style
        for bundle in _saved_zh_outputs()
        for style in re.findall(r'style="([^"]*)"', bundle["text/html"].split("</style>")[-1])
    ]
    kept = panel.locator(".jp-OutputArea-output [style]").evaluate_all("es => es.map(e => e.getAttribute('style'))")
    assert len(kept) == len(written)
    dropped = [(w, k) for w, k in zip(written, kept) if _properties(w) != _properties(k)]
    assert not dropped, "the sanitizer dropped declarations:\n" + "\n".join(f"{w}\n  => {k}" for w, k in dropped[:5])
    background = panel.locator(".bpe-token").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgba(240, 66, 66, 0.32)", background


# ---------------------------------------------------------------- the live notebook, run once


@pytest.fixture(scope="module")
def live(lab_page):
    """The live notebook's panel after Run All (run once for the module)."""
    panel = lab_page.open("live.ipynb")
    lab_page.run_all()
    for name in LIVE:
        if name != "imports":
            _cell(panel, name).locator(".jp-OutputArea-output").first.wait_for(state="attached")
    return panel


def _rules(stepper) -> list[tuple[str, str, str]]:
    rows = stepper.locator(".bpe-merge .bpe-merges li.bpe-rule").evaluate_all(
        "items => items.map(li => [li.dataset.left, li.dataset.right, li.dataset.rule])"
    )
    return [tuple(row) for row in rows]


def test_merge_stepper_in_jupyterlab(lab_page, live):
    stepper = _cell(live, "stepper")
    try:
        stepper.locator('.bpe-merge[data-round="0"]').wait_for()
        next_button = stepper.get_by_role("button", name="next merge", exact=True)
        for expected_round in (1, 2, 3):
            next_button.click()
            # Fails here if a click stops updating the view.
            stepper.locator(f'.bpe-merge[data-round="{expected_round}"]').wait_for(timeout=10_000)
        highlighted = stepper.locator(".bpe-merge .bpe-next")
        assert (highlighted.get_attribute("data-left"), highlighted.get_attribute("data-right")) == ("l", "o")
        assert stepper.locator('.bpe-merge .bpe-hl[data-left="l"][data-right="o"]').count() == 2  # low, lower
        assert _rules(stepper) == [("e", "s", "first"), ("es", "t", "first"), ("est", "</w>", "first")]
        assert stepper.locator(".bpe-merge .bpe-counter").inner_text() == "Round 3 of 5"
    except Exception:
        _shot(lab_page.page, "merge_stepper_failure.png")  # what the page showed when it failed
        raise
    lab_page.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    view = stepper.locator(".bpe-stepper")
    view.scroll_into_view_if_needed()
    _shot(lab_page.page, "merge_stepper_lab.png")
    view.screenshot(path=str(ARTIFACTS / "merge_stepper.png"))


def test_layout_at_1024_px_with_the_file_browser_open(lab_page, live):
    """At 1024 px with the file browser open, the three panels sit side by
    side (the rules learned do not drop below the fold), and with the
    lexicographic rule the "merge next" badge stays on one line, so the
    header keeps its height from round to round."""
    page = lab_page.page
    page.set_viewport_size({"width": 1024, "height": 900})
    try:
        lab_page.command("filebrowser:activate")
        page.wait_for_timeout(300)  # the notebook narrows and re-lays out
        view = _cell(live, "lexicographic").locator(".bpe-merge")
        view.scroll_into_view_if_needed()
        _shot(page, "layout_1024_file_browser.png")
        tops = view.locator(".bpe-panel").evaluate_all("ps => ps.map(p => Math.round(p.getBoundingClientRect().top))")
        assert len(tops) == 3 and len(set(tops)) == 1, f"panels not in one row: {tops}"
        next_button = _cell(live, "lexicographic").get_by_role("button", name="next merge", exact=True)
        heights = set()
        for number in range(1, 6):
            badge = view.locator(".bpe-next")
            if badge.count():
                assert badge.evaluate("b => b.getClientRects().length") == 1, "the badge wrapped"
            heights.add(view.locator(".bpe-head").evaluate("h => Math.round(h.getBoundingClientRect().height)"))
            next_button.click()
            _cell(live, "lexicographic").locator(f'.bpe-merge[data-round="{number}"]').wait_for(timeout=10_000)
        assert len(heights) == 1, f"the header changes height between rounds: {heights}"
        freq = view.locator(".bpe-freq").first
        assert freq.evaluate("f => f.getClientRects().length") == 1  # "× 5" on one line
        _shot(page, "layout_1024_file_browser_round_5.png")
    finally:
        page.set_viewport_size({"width": 1360, "height": 900})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_checkpoint_by_mouse_and_keyboard(lab_page, live, lang):
    words = {
        "en": ("check", "Not quite. only 7", "Correct. met first"),
        "zh": ("检查", "不太对。 only 7", "正确。 met first"),
    }
    check, wrong, right = words[lang]
    page = lab_page.page
    checkpoint = _cell(live, f"quiz_{lang}").locator(".bpe-checkpoint")
    checkpoint.get_by_role("radio", name="(l, o)").click()  # the mouse
    checkpoint.get_by_role("button", name=check, exact=True).click()
    feedback = checkpoint.locator(".bpe-feedback")
    feedback.wait_for()
    assert feedback.inner_text() == wrong and feedback.get_attribute("data-state") == "wrong"
    first = checkpoint.get_by_role("radio", name="(e, s)")
    first.focus()  # the keyboard: Space picks the focused option, Enter presses the button
    page.keyboard.press("Space")
    sync_api.expect(first).to_be_checked(timeout=10_000)  # where a lost key press would show
    button = checkpoint.get_by_role("button", name=check, exact=True)
    correct = checkpoint.locator('.bpe-feedback[data-state="correct"]')
    # ipywidgets sends a click at once but holds a widget's new value while its last one is
    # unanswered: on a loaded machine the click can reach the kernel before the option Space
    # picked, and is judged on the old one ("Not quite" again). A learner presses again; so here
    for attempt in range(3):
        button.focus()
        page.keyboard.press("Enter")
        try:
            correct.wait_for(timeout=15_000)
            break
        except sync_api.TimeoutError:
            if attempt == 2:
                raise
    assert feedback.inner_text() == right
    checkpoint.scroll_into_view_if_needed()
    _shot(page, f"running_{lang}_checkpoint.png")


def test_code_spans_are_tinted_in_the_live_widget(lab_page, live):
    """A live widget is no rendered output, so JupyterLab does not tint its
    <code>: the checkpoint's code spans carry their tint inline."""
    checkpoint = _cell(live, "code_quiz").locator(".bpe-checkpoint")
    checkpoint.scroll_into_view_if_needed()
    code = checkpoint.locator(".widget-html code").first
    assert code.inner_text() == "low"
    assert code.evaluate("c => getComputedStyle(c).backgroundColor") == "rgba(128, 128, 128, 0.18)"


def _radio_labels(checkpoint) -> list[str]:
    """The visible text of each radio option, top to bottom."""
    return checkpoint.locator(".widget-radio-box label").evaluate_all("ls => ls.map(l => l.innerText)")


def test_shuffled_quiz_wrong_then_right(lab_page, live):
    """The right option is not where the author wrote it; which one it is
    comes from the checkpoint's Python API. A wrong click shows that
    option's explanation, then the right click shows the verdict and why."""
    quiz = Quiz(SHUFFLED["question"], SHUFFLED["options"], answer=SHUFFLED["answer"])
    assert quiz.options.index(quiz.right) != 0, "the shuffle left the answer first: pick another SHUFFLED quiz"
    checkpoint = _cell(live, "shuffled").locator(".bpe-checkpoint")
    checkpoint.scroll_into_view_if_needed()
    assert _radio_labels(checkpoint) == [plain(option) for option in quiz.options]  # the display order
    check = checkpoint.get_by_role("button", name="check", exact=True)
    feedback = checkpoint.locator(".bpe-feedback")
    wrong = next(option for option in quiz.options if option != quiz.right)
    for option, state in ((wrong, "wrong"), (quiz.right, "correct")):
        checkpoint.get_by_role("radio", name=plain(option), exact=True).click()
        check.click()
        checkpoint.locator(f'.bpe-feedback[data-state="{state}"]').wait_for()
        assert feedback.inner_text() == quiz.answer(option)
    assert feedback.inner_text().startswith("Correct. ")
    _shot(lab_page.page, "running_shuffled_quiz.png")


def test_white_space_options_look_different(lab_page, live):
    """Notebook 06's options 'low  lower' and 'low lower' differ by one
    space, which HTML would collapse: the labels must read differently."""
    checkpoint = _cell(live, "two_spaces").locator(".bpe-checkpoint")
    checkpoint.scroll_into_view_if_needed()
    shown = _radio_labels(checkpoint)
    assert len(shown) == 3 and len(set(shown)) == 3, f"two options look the same: {shown}"
    assert "'low␣␣lower'" in shown, shown
    assert "'low lower'" in shown, shown
    widths = checkpoint.locator(".widget-radio-box label").evaluate_all(
        "ls => ls.map(l => Math.round(l.getBoundingClientRect().width))"
    )
    assert all(width > 0 for width in widths), f"an option is not shown: {widths}"
    _shot(lab_page.page, "running_two_spaces.png")


def test_dark_theme_screenshots(lab_page, live):
    """The stepper and the checkpoints in JupyterLab Dark, for a person to look at."""
    try:
        lab_page.theme("dark")
        for name in ("stepper", "quiz_zh", "plot_zh"):
            cell = _cell(live, name)
            cell.scroll_into_view_if_needed()
            cell.screenshot(path=str(ARTIFACTS / f"dark_{name}.png"))
        checkpoint = _cell(live, "quiz_zh").locator(".bpe-checkpoint")
        checkpoint.get_by_role("radio", name="(l, o)").click()
        checkpoint.get_by_role("button", name="检查", exact=True).click()
        feedback = checkpoint.locator('.bpe-feedback[data-state="wrong"]')
        colour = feedback.evaluate("f => getComputedStyle(f).color")
        assert colour == "rgb(248, 113, 113)", f"the dark theme's feedback colour (#f87171) did not apply: {colour}"
    finally:
        lab_page.theme("light")


# ---------------------------------------------------------------- notebook 02, run whole


def test_stepper_scrolled_back_after_run_all_shows_round_0(lab_page):
    """After Run All a learner scrolls back up to notebook 02's first
    MergeStepper: it must still show its starting state (round 0), not a
    later cell's stepper's round or an empty box."""
    panel = lab_page.open(COMMITTED[1])
    lab_page.run_all()
    panel.locator(".jp-Cell").last.scroll_into_view_if_needed()
    first = panel.locator(".bpe-stepper").first
    first.scroll_into_view_if_needed()
    view = first.locator(".bpe-merge")
    view.wait_for()
    assert view.get_attribute("data-round") == "0"
    # JupyterLab paints a cell scrolled back into view a moment later: until
    # then its text reads empty, so wait for the counter, as a learner would.
    sync_api.expect(view.locator(".bpe-counter")).to_have_text("Round 0 of 5", timeout=10_000)
    box = view.bounding_box()
    assert box is not None and box["height"] > 100, f"the stepper is not drawn: {box}"
    _shot(lab_page.page, "02_stepper_after_run_all.png")
