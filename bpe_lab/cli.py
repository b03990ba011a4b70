"""The ``bpe-lab`` command: the package's entry points from a terminal.

bpe-lab train corpus.txt --merges 100 --out merges.txt
bpe-lab encode --merges-file merges.txt lowest newer
bpe-lab encode-file corpus.txt --gpt2 --out ids.npy --workers 2
bpe-lab corpus --mb 128          # an offline corpus for the benchmark
bpe-lab lab [FOLDER]             # the course, copied out of the installed package
bpe-lab release / grade / gradescope / bench  # exercises, grading, the benchmark
"""

from __future__ import annotations

import argparse
import sys

from bpe_lab.bench.command import add_bench_command
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.corpus_files import SOURCES, offline_corpus
from bpe_lab.core.encode import encode_text
from bpe_lab.core.mergefile import load_merges, save_merges
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.core.symbols import TIE_BREAKS
from bpe_lab.core.textfile import read_text
from bpe_lab.core.train import train_bpe
from bpe_lab.course import copy_course, open_lab
from bpe_lab.grading.grade_command import add_grade_command
from bpe_lab.grading.gradescope import add_gradescope_command
from bpe_lab.grading.release import add_release_command


def _train(args: argparse.Namespace) -> None:
    word_freq = word_frequencies(read_text(args.corpus))
    if not word_freq:
        raise ValueError(f"{args.corpus} contains no words")
    merges = train_bpe(word_freq, args.merges, tie_break=args.tie_break, on_short="ignore")
    if len(merges) < args.merges:
        print(
            f"bpe-lab: note: asked for {args.merges} merges but only {len(merges)} were possible: "
            "every word is now a single symbol",
            file=sys.stderr,
        )
    if args.out:
        save_merges(merges, args.out)
        print(f"learned {len(merges)} merges from {len(word_freq)} distinct words; wrote {args.out}")
    else:
        for a, b in merges:
            print(a, b)


def _encode(args: argparse.Namespace) -> None:
    merges = load_merges(args.merges_file)
    text = " ".join(args.words) if args.words else sys.stdin.read()
    print(" ".join(encode_text(text, merges)))


def _encode_file(args: argparse.Namespace) -> None:
    tokenizer = gpt2_tokenizer() if args.gpt2 else Tokenizer.load(args.tokenizer)
    ids = tokenizer.encode_file(args.input, args.out, workers=args.workers, dtype=args.dtype)
    if args.out:
        print(f"wrote {len(ids):,} ids ({ids.dtype}) to {args.out}")
    else:
        print(" ".join(map(str, ids.tolist())))


def _corpus(args: argparse.Namespace) -> None:
    max_bytes = None if args.mb is None else int(args.mb * 1e6)
    if max_bytes is not None and max_bytes < 1:
        raise ValueError(f"--mb must be positive, got {args.mb}")
    path = offline_corpus(max_bytes, sources=args.sources, cache=args.cache_dir)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")


def _lab(args: argparse.Namespace) -> None:
    copied, kept = copy_course(args.folder)
    print(
        f"copied {len(copied)} course files into {args.folder}"
        + (f"; kept your {len(kept)} existing ones" if kept else "")
    )
    if not args.no_open:
        open_lab(args.folder)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe-lab", description="Byte Pair Encoding, from the course BPE Lab.")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="learn merges from a UTF-8 text file (white-space words)")
    train.add_argument("corpus", help="path of a UTF-8 text file")
    train.add_argument("--merges", type=int, required=True, help="how many merges to learn")
    train.add_argument("--tie-break", choices=TIE_BREAKS, default="first")
    train.add_argument("--out", help="write the merges here (default: print them)")
    train.set_defaults(run=_train)

    encode = sub.add_parser("encode", help="encode words with a merges file (words from the arguments or stdin)")
    encode.add_argument("--merges-file", required=True, help="a file written by 'bpe-lab train --out'")
    encode.add_argument("words", nargs="*")
    encode.set_defaults(run=_encode)

    encode_file = sub.add_parser(
        "encode-file", help="encode a UTF-8 file with a byte-level tokenizer, in parallel, into a .npy file"
    )
    encode_file.add_argument("input", help="path of a UTF-8 text file")
    which = encode_file.add_mutually_exclusive_group(required=True)
    which.add_argument("--tokenizer", help="a tokenizer saved by Tokenizer.save (JSON)")
    which.add_argument("--gpt2", action="store_true", help="GPT-2's own tokenizer (shipped, offline)")
    encode_file.add_argument("--out", help="write the ids here as a .npy file (default: print them)")
    encode_file.add_argument("--workers", type=int, help="worker processes (default: every core for large files)")
    encode_file.add_argument("--dtype", help="uint16 or uint32 (default: the smallest that holds every id)")
    encode_file.set_defaults(run=_encode_file)

    corpus = sub.add_parser(
        "corpus", help="build an offline corpus from this Python's own files (cached, not committed)"
    )
    corpus.add_argument("--mb", type=float, help="about this many megabytes (default: all the sources hold)")
    corpus.add_argument(
        "--sources", nargs="+", choices=SOURCES, default=list(SOURCES), help="where the text comes from"
    )
    corpus.add_argument("--cache-dir", help="where to write it (default: $BPE_LAB_CACHE or ~/.cache/bpe_lab)")
    corpus.set_defaults(run=_corpus)

    lab = sub.add_parser("lab", help="copy the course into a folder of yours and open it in JupyterLab")
    lab.add_argument("folder", nargs="?", default="bpe-lab-course", help="where (default: ./bpe-lab-course)")
    lab.add_argument("--no-open", action="store_true", help="only copy, do not start JupyterLab")
    lab.set_defaults(run=_lab)

    add_release_command(sub)
    add_grade_command(sub)
    add_gradescope_command(sub)
    add_bench_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"bpe-lab: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
