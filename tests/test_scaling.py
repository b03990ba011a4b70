"""Timing helpers: shapes and argument checks (never the times themselves)."""

import pytest

from bpe_lab.variants.scaling import best_time, pretoken_counts, time_curve


def test_best_time_runs_the_function_repeat_times(monkeypatch):
    monkeypatch.delenv("BPE_LAB_MAX_REPEAT", raising=False)
    calls = []
    seconds = best_time(lambda: calls.append(1), repeat=4)
    assert len(calls) == 4 and seconds >= 0
    with pytest.raises(ValueError, match="at least 1"):
        best_time(lambda: None, repeat=0)


def test_the_environment_caps_the_repeats(monkeypatch):
    calls = []
    monkeypatch.setenv("BPE_LAB_MAX_REPEAT", "2")
    best_time(lambda: calls.append(1), repeat=4)
    best_time(lambda: calls.append(2), repeat=1)
    assert calls == [1, 1, 2]
    monkeypatch.setenv("BPE_LAB_MAX_REPEAT", "0")
    with pytest.raises(ValueError, match=r"\$BPE_LAB_MAX_REPEAT must be a whole number of at least 1, got '0'"):
        best_time(lambda: None)


def test_time_curve_times_every_size_in_order():
    seen = []
    sizes, seconds = time_curve(seen.append, (3, 1, 2), repeat=1)
    assert sizes == [3, 1, 2] and seen == [3, 1, 2] and len(seconds) == 3


def test_pretoken_counts_counts_distinct_gpt2_pieces():
    assert pretoken_counts("") == (0, 0)
    assert pretoken_counts("low low low") == (3, 2)  # 'low' and ' low'
