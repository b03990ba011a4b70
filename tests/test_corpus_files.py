"""Offline corpora built from files already on the machine: cached, joined
with <|endoftext|>, deduplicated, and never half-written."""

import sysconfig
from pathlib import Path

import pytest

from bpe_lab.cli import main
from bpe_lab.core import corpus_files
from bpe_lab.core.corpus_files import corpus_files as files_of
from bpe_lab.core.corpus_files import offline_corpus, stdlib_corpus


def test_stdlib_corpus_is_cached_and_joined_with_endoftext(tmp_path):
    path = stdlib_corpus(tmp_path, max_bytes=200_000)
    assert path.name.startswith("stdlib-") and path.stat().st_size >= 200_000
    assert stdlib_corpus(tmp_path, max_bytes=200_000) == path
    text = path.read_text(encoding="utf-8")
    assert "<|endoftext|>" in text and not text.startswith("<|endoftext|>")


def test_site_packages_are_a_second_source_without_the_stdlib():
    stdlib_root = Path(sysconfig.get_paths()["stdlib"])
    site = list(files_of("site-packages"))
    assert site and all("site-packages" in p.parts or "dist-packages" in p.parts for p in site)
    assert any(p.suffix == ".md" for p in site)
    stdlib = files_of("stdlib")
    assert all(stdlib_root in p.parents and "site-packages" not in p.parts for p in (next(stdlib), next(stdlib)))


def test_identical_and_empty_files_are_taken_once_and_bad_utf8_skipped(tmp_path, monkeypatch):
    texts = tmp_path / "texts"
    texts.mkdir()
    for name, data in [("a.txt", b"same licence"), ("b.txt", b"same licence"), ("c.txt", b"  \n"),
                       ("d.txt", b"caf\xe9"), ("e.txt", b"other")]:  # fmt: skip
        (texts / name).write_bytes(data)
    monkeypatch.setattr(corpus_files, "_roots", lambda source: [texts])
    path = offline_corpus(sources=("stdlib",), cache=tmp_path / "cache")
    assert path.read_bytes() == b"same licence<|endoftext|>other"


def test_max_bytes_stops_after_the_file_that_reaches_it(tmp_path, monkeypatch):
    texts = tmp_path / "texts"
    texts.mkdir()
    for i in range(5):
        (texts / f"{i}.txt").write_text(f"file {i} " * 10)
    monkeypatch.setattr(corpus_files, "_roots", lambda source: [texts])
    path = offline_corpus(100, cache=tmp_path)
    assert path.read_text().count("<|endoftext|>") == 1  # two files of 70 bytes reach 100


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sources": ("pypi",)}, "unknown corpus source 'pypi'"),
        ({"max_bytes": 0}, "max_bytes must be a positive int or None, got 0"),
        ({"max_bytes": 1.5}, "max_bytes must be a positive int or None, got 1.5"),
    ],
)
def test_bad_arguments_are_named(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        offline_corpus(cache=tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_build_leaves_no_file(tmp_path, monkeypatch):
    def broken(out, files, max_bytes):
        out.write(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(corpus_files, "_write_corpus", broken)
    with pytest.raises(KeyboardInterrupt):
        offline_corpus(1000, cache=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_corpus_command_prints_the_path_and_size(tmp_path, capsys):
    assert main(["corpus", "--mb", "0.1", "--sources", "stdlib", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(str(tmp_path / "stdlib-")) and out.rstrip().endswith("MB)")
    assert main(["corpus", "--mb", "-1", "--cache-dir", str(tmp_path)]) == 2
    assert "--mb must be positive" in capsys.readouterr().err
