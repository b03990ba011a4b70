"""Every relative link in a chapter's Markdown leads to a file of the copied course.

``bpe-lab lab`` copies ``notebooks/`` and ``exercises/`` into the learner's
folder, and nothing else: a link to ``../tests/...`` or ``../bpe_lab/...``
works in a clone of the repository and leads nowhere in the learner's copy
(the package's own files are read through ``help()`` or ``module.__file__``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(ROOT.glob("notebooks/*.ipynb"))
COPIED = {ROOT / "notebooks", ROOT / "exercises"}


def _relative_links(notebook: Path) -> list[tuple[int, str]]:
    """(cell index, target) of every Markdown link that is not a URL or an anchor."""
    links = []
    for index, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "markdown":
            for target in re.findall(r"\]\(([^)\s]+)\)", "".join(cell["source"])):
                if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
                    links.append((index, target.partition("#")[0]))
    return links


def test_the_chapters_have_relative_links_to_check():
    assert sum(len(_relative_links(nb)) for nb in NOTEBOOKS) > 30


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_relative_link_stays_inside_the_copied_course(notebook):
    for index, target in _relative_links(notebook):
        path = (notebook.parent / target).resolve()
        assert path.is_file(), f"{notebook.name} cell {index}: {target} leads nowhere"
        assert path.parent in COPIED, f"{notebook.name} cell {index}: {target} is not in the learner's copy"
