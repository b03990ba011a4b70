"""Shared test set-up: a deterministic hypothesis profile for CI, and the
textbook corpus every chapter's tests start from."""

import os

import pytest
from hypothesis import HealthCheck, settings

from bpe_lab.core.corpora import TEXTBOOK_CORPUS

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
# .ci/run sets CI=true; a developer's run explores new examples each time.
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def textbook_corpus() -> dict[str, int]:
    """low 5, lower 2, newest 6, widest 3 (Sennrich et al., 2016): a fresh
    copy per test, so a test that changes it cannot change another's input.
    Module-level parametrize lists use ``TEXTBOOK_CORPUS`` itself."""
    return dict(TEXTBOOK_CORPUS)
