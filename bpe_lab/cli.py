"""The ``bpe-lab`` command: the package's entry points from a terminal.

bpe-lab train corpus.txt --merges 100 --out merges.txt
bpe-lab encode --merges-file merges.txt lowest newer   # also subword-nmt's codes files
bpe-lab encode-file corpus.txt --gpt2 --out ids.npy --workers 2
bpe-lab corpus --mb 128          # an offline corpus for the benchmark
bpe-lab lab [FOLDER] [--update] [-- JUPYTERLAB ARGS]  # the course, copied out of the installed package
bpe-lab release / translate / grade / gradescope / bench  # for instructors: exercises, grading, the benchmark
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bpe_lab.bench.command import add_bench_command
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.corpus_files import SOURCES, offline_corpus
from bpe_lab.core.encode import encode_text, mark_continuations
from bpe_lab.core.mergefile import read_merges, save_merges
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.core.symbols import TIE_BREAKS
from bpe_lab.core.textfile import read_text
from bpe_lab.core.train import train_bpe
from bpe_lab.course import START_PAGE, CourseCopy, copy_course, open_lab, update_course
from bpe_lab.grading.authoring.release import add_release_command
from bpe_lab.grading.commands.grade_command import add_grade_command
from bpe_lab.grading.commands.gradescope import add_gradescope_command
from bpe_lab.translate import add_translate_command


def _train(args: argparse.Namespace) -> None:
    word_freq = word_frequencies(read_text(args.corpus))
    if not word_freq:
        raise ValueError(f"{args.corpus} contains no words")
    merges = train_bpe(
        word_freq,
        args.merges,
        tie_break=args.tie_break,
        glue_end_of_word=args.glue_end_of_word,
        min_frequency=args.min_frequency,
        on_short="ignore",
    )
    if len(merges) < args.merges:
        print(
            f"bpe-lab: note: asked for {args.merges} merges but only {len(merges)} were possible: "
            "every word is now a single symbol",
            file=sys.stderr,
        )
    if args.out:
        save_merges(merges, args.out, glue_end_of_word=args.glue_end_of_word)
        print(f"learned {len(merges)} merges from {len(word_freq)} distinct words; wrote {args.out}")
    else:
        for a, b in merges:
            print(a, b)


def _encode(args: argparse.Namespace) -> None:
    merges, glued = read_merges(args.merges_file)  # the header says how a word ends
    text = " ".join(args.words) if args.words else sys.stdin.read()
    symbols = encode_text(text, merges, glue_end_of_word=glued)
    print(" ".join(mark_continuations(symbols) if args.format == "subword-nmt" else symbols))


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


def _names(paths: list[Path], folder: Path) -> str:
    return ", ".join(p.relative_to(folder).as_posix() for p in paths)


def _lab_report(done: CourseCopy, folder: Path, update: bool) -> str:
    """What ``bpe-lab lab`` did, naming every file it did not bring up to date."""
    lines = [
        f"{'updated' if update else 'copied'} the course in {folder}: "
        + f"{len(done.copied)} new"
        + (f", {len(done.updated)} updated, {len(done.restored)} restored" if update else "")
        + (f"; kept your {len(done.kept)} existing ones" if done.kept else "")
    ]
    if done.edited:
        lines.append(f"kept, as you edited them: {_names(done.edited, folder)}")
    if done.unrecorded:
        lines.append(f"kept, with no record of the version copied: {_names(done.unrecorded, folder)}")
    if done.deleted:
        lines.append(f"left deleted, as you deleted them: {_names(done.deleted, folder)}")
    if done.restored:
        lines.append(f"restored, as the course changed them: {_names(done.restored, folder)}")
    if done.cleared:
        lines.append(f"updated, your outputs in them gone (run them again): {_names(done.cleared, folder)}")
    if done.dropped:
        lines.append(
            f"warning: dropped from the course record, no files of this course: {', '.join(map(repr, done.dropped))}"
        )
    if (done.edited or done.unrecorded) and update:
        lines.append("to get the new version of a kept file, rename yours and run bpe-lab lab --update again")
    lines.append(f"start page: {folder / START_PAGE}")
    return "\n".join(lines)


def _lab(args: argparse.Namespace) -> None:
    jupyter_args: list[str] = getattr(args, "jupyter_args", [])
    if args.no_open and (jupyter_args or args.port is not None or args.no_browser):
        raise ValueError("--no-open only copies: --port, --no-browser and arguments after -- need JupyterLab started")
    folder = Path(args.folder)
    done = update_course(folder) if args.update else copy_course(folder)
    print(_lab_report(done, folder, args.update))
    if not args.no_open:
        open_lab(folder, port=args.port, browser=not args.no_browser, extra=jupyter_args)


#: ``bpe-lab --help`` lists the commands in these groups, in this order (a test fails on a command in none).
COMMAND_GROUPS = {
    "learner commands": ("lab", "train", "encode", "encode-file", "corpus"),
    "instructor commands (exercises, grading, the benchmark)": ("release", "translate", "grade", "gradescope", "bench"),
}


def _grouped_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> str:
    helps = {action.dest: action.help or "" for action in sub._choices_actions}
    missing = sorted(set(sub.choices) - {name for names in COMMAND_GROUPS.values() for name in names})
    if missing:
        raise RuntimeError(f"bpe-lab commands in no group of COMMAND_GROUPS: {missing}")
    width = max(map(len, sub.choices)) + 2
    blocks = [
        f"{title}:\n" + "\n".join(f"  {name:<{width}}{helps.get(name, '')}" for name in names)
        for title, names in COMMAND_GROUPS.items()
    ]
    return "\n\n".join(blocks) + "\n\nbpe-lab COMMAND --help tells more of one."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpe-lab",
        usage="%(prog)s [-h] COMMAND ...",
        description="Byte Pair Encoding, from the course BPE Lab.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS)

    train = sub.add_parser("train", help="learn merges from a UTF-8 text file (white-space words)")
    train.add_argument("corpus", help="path of a UTF-8 text file")
    train.add_argument("--merges", type=int, required=True, help="how many merges to learn")
    train.add_argument("--tie-break", choices=TIE_BREAKS, default="first")
    train.add_argument(
        "--glue-end-of-word",
        action="store_true",
        help="glue </w> to each word's last character, as subword-nmt does (the file's header is then #version: 0.2)",
    )
    train.add_argument(
        "--min-frequency", type=int, default=1, help="stop once the best pair occurs fewer times (subword-nmt: 2)"
    )
    train.add_argument("--out", help="write the merges here (default: print them)")
    train.set_defaults(run=_train)

    encode = sub.add_parser("encode", help="encode words with a merges file (words from the arguments or stdin)")
    encode.add_argument(
        "--merges-file",
        required=True,
        help="a file written by 'bpe-lab train --out' or subword-nmt's learn-bpe (its #version header says how "
        "a word ends: 0.2, </w> glued to the last character; 0.1 or none, </w> a symbol of its own)",
    )
    encode.add_argument(
        "--format",
        choices=("symbols", "subword-nmt"),
        default="symbols",
        help="symbols: the pieces with their </w> (default); subword-nmt: as its apply-bpe prints them, "
        "@@ after each piece that does not end a word",
    )
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

    lab = sub.add_parser(
        "lab",
        help="copy the course into a folder of yours and open it in JupyterLab",
        usage="bpe-lab lab [-h] [--update] [--no-open] [--port PORT] [--no-browser] [folder] [-- JUPYTERLAB_ARGS ...]",
        description="Copy the course into FOLDER and open it in JupyterLab. Everything after -- goes to JupyterLab "
        "as it is, e.g.  bpe-lab lab my-course -- --ServerApp.token=secret",
    )
    lab.add_argument("folder", nargs="?", default="bpe-lab-course", help="where (default: ./bpe-lab-course)")
    lab.add_argument(
        "--update",
        action="store_true",
        help="bring a copied course up to this version: replace the files you never changed, keep your edited ones",
    )
    lab.add_argument("--no-open", action="store_true", help="only copy, do not start JupyterLab")
    lab.add_argument("--port", type=int, help="JupyterLab's port (default: its own, 8888 or the next free one)")
    lab.add_argument("--no-browser", action="store_true", help="start JupyterLab without opening a browser")
    lab.set_defaults(run=_lab)

    add_release_command(sub)
    add_translate_command(sub)
    add_grade_command(sub)
    add_gradescope_command(sub)
    add_bench_command(sub)
    parser.epilog = _grouped_commands(sub)
    return parser


def _parse(argv: list[str]) -> argparse.Namespace:
    """The arguments; for ``bpe-lab lab``, everything after the first ``--``
    is JupyterLab's (``args.jupyter_args``). Another command keeps its
    ``--`` (``bpe-lab encode --merges-file m.txt -- -word``)."""
    parser = build_parser()
    command = next((a for a in argv if not a.startswith("-")), None)
    if command == "lab" and "--" in argv:
        cut = argv.index("--")
        args = parser.parse_args(argv[:cut])
        args.jupyter_args = argv[cut + 1 :]
        return args
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        args.run(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"bpe-lab: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
