"""Shared test set-up: a deterministic hypothesis profile for CI, and the
textbook corpus every chapter's tests start from."""

import os
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, settings

from bpe_lab.core.corpora import TEXTBOOK_CORPUS

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
