"""``bpe-lab grade``: grading a class from the command line.

What this adds over ``grader`` (``grade``, the function): the options an
instructor sets (limits, workers, sandbox, salt, the deadline and late
policy), and what comes out: the reports printed (or ``--json``), the
gradebook (``--out``: one row per student, one number per assignment,
``score.gradebook``), the per-task detail (``--details``), the LMS's own
import file (``--lms canvas|moodle``, ``score.lms``: beside ``--out`` as
``STEM-canvas.csv``), a feedback file per student (``--feedback``), the seconds per
submission, and with ``--similarity`` the answers that look copied
(``similar_answers``; ``--similarity-only`` grades nothing and runs no kernel).
The class is collected once (``roster.collect_class``): the grader and the
similarity report take the same notebooks, each file read and parsed once.

Names, paths, messages and cell text are the learner's: what is printed
shows them through ``terminal_text.shown`` (``format_report``,
``format_similarity``), and ``--json`` through ``json.dumps`` with
``ensure_ascii``, which writes every control and non-ASCII character as
``\\uNNNN``: no escape sequence reaches the instructor's terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bpe_lab.grading.commands.grader import Limits, Report, default_workers, format_report, grade_collection
from bpe_lab.grading.intake.roster import Collection, collect_class
from bpe_lab.grading.score.feedback import write_feedback
from bpe_lab.grading.score.gradebook import LatePolicy, class_gradebook, write_class_gradebook, write_details
from bpe_lab.grading.score.lms import LMS_FORMATS, parse_lms_assignments, write_lms
from bpe_lab.grading.score.report import recorded_nonces
from bpe_lab.grading.score.similar_answers import THRESHOLD, Settings, similarity
from bpe_lab.grading.score.similarity_report import format_similarity, write_similarity

__all__ = ["run_grade", "add_grade_command"]


def run_grade(args: argparse.Namespace) -> None:
    settings = Settings(threshold=args.similarity_threshold)  # a wrong threshold stops before grading
    limits = Limits(args.cell_timeout, args.timeout, args.memory_mb, processes=args.processes, disk_mb=args.disk_mb)
    sandbox = False if args.no_sandbox else {"auto": None, "require": True, "off": False}[args.sandbox]
    policy = LatePolicy.parse(args.due, args.late_penalty, args.late_cap)  # a wrong --due stops before grading
    lms_ids = parse_lms_assignments(args.lms_assignment)
    if args.lms and not args.out:
        raise ValueError(f"--lms {args.lms} writes beside the gradebook: give --out too")
    started = time.monotonic()
    collection = collect_class(args.submissions, args.solutions, args.assignment)  # the run's one reading
    if args.similarity_only:
        _similarity(args, settings, None, collection)
        return
    reports = grade_collection(
        collection,
        limits=limits,
        workers=args.workers,
        sandbox=sandbox,
        salt=args.salt,
        nonces=recorded_nonces(args.nonces) if args.nonces else None,
    )
    seconds = time.monotonic() - started
    if args.json and not _wants_similarity(args):
        print(json.dumps([r.to_dict() for r in reports], indent=1, ensure_ascii=True))
    elif not args.json:
        print("\n\n".join(format_report(r) for r in reports))
    if _wants_similarity(args):
        _similarity(args, settings, reports, collection)
    if args.out or args.details:
        _write_books(args, class_gradebook(reports, collection.submissions, policy), lms_ids)
    if args.feedback:
        written = write_feedback(reports, args.feedback)
        print(f"wrote {len(written)} feedback files to {args.feedback}", file=sys.stderr)
    workers = args.workers or default_workers()
    print(
        f"graded {len(reports)} submissions in {seconds:.1f} s "
        f"({seconds / max(1, len(reports)):.2f} s each, {workers} workers)",
        file=sys.stderr,
    )


def _write_books(args: argparse.Namespace, book: Any, lms_ids: dict[str, str]) -> None:
    """The gradebook (``--out``), its LMS file (``--lms``) and the detail (``--details``)."""
    if args.out:
        write_class_gradebook(book, args.out)
        print(f"wrote {args.out} ({len(book.rows)} students, {len(book.entries)} submissions)", file=sys.stderr)
    if args.lms:
        out = Path(args.out).with_name(f"{Path(args.out).stem}-{args.lms}.csv")
        left = write_lms(book, args.lms, out, lms_ids)
        print(f"wrote {out} ({args.lms}'s grade import)", file=sys.stderr)
        if left:
            print(f"  left out (no {args.lms} id in their file names): {', '.join(left)}", file=sys.stderr)
    if args.details:
        write_details(book, args.details)
        print(f"wrote {args.details} (per task)", file=sys.stderr)


def add_grade_command(subparsers: Any) -> None:
    """Register ``bpe-lab grade`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("grade", help="grade submitted notebooks against solutions/ into a gradebook")
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks (any layout: see README)")
    parser.add_argument(
        "--out", help="write the gradebook CSV here (one row per student, one number per assignment; no paths)"
    )
    parser.add_argument(
        "--details",
        metavar="FILE",
        help="write each submission's per-task points, reasons, nonce and file here (.json: JSON, else CSV)",
    )
    parser.add_argument(
        "--lms",
        choices=LMS_FORMATS,
        help="also write the gradebook in this LMS's grade-import format, beside --out as STEM-LMS.csv",
    )
    parser.add_argument(
        "--lms-assignment",
        action="append",
        metavar="ASSIGNMENT=ID",
        help="the LMS's id of an assignment (Canvas: its column becomes 'ASSIGNMENT (ID)'); repeatable",
    )
    parser.add_argument(
        "--due",
        metavar="TIME",
        help="the deadline, ISO 8601 with a time zone (2026-12-10T23:59+01:00); a submission's time is "
        "Canvas's LATE marker, else its file's modification time",
    )
    parser.add_argument(
        "--late-penalty",
        metavar="SHARE/day",
        help="points lost per started day late, e.g. 10%%/day (needs --due)",
    )
    parser.add_argument("--late-cap", metavar="SHARE", help="the most a late penalty takes, e.g. 50%% (default 100%%)")
    parser.add_argument("--feedback", metavar="DIR", help="write one Markdown feedback file per student here")
    parser.add_argument("--json", action="store_true", help="print the per-task reports as JSON")
    parser.add_argument("--solutions", default="solutions", help="folder of solution notebooks (default: solutions)")
    parser.add_argument("--assignment", help="grade every submission as this assignment (e.g. 02_training)")
    parser.add_argument(
        "--salt",
        default=os.environ.get("BPE_LAB_SALT", ""),
        help="a course secret mixed into the generated hidden cases' seeds (default: $BPE_LAB_SALT)",
    )
    parser.add_argument(
        "--nonces",
        metavar="FILE",
        help="re-grade with the nonces an earlier run recorded (its --json output or --details file), "
        "so each submission meets the generated cases it met then (default: each file's own digest)",
    )
    parser.add_argument(
        "--cell-timeout", type=float, default=Limits.cell_timeout, help="seconds per cell (default: %(default)s)"
    )
    parser.add_argument(
        "--timeout", type=float, default=Limits.notebook_timeout, help="seconds per notebook (default: %(default)s)"
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=Limits.memory_mb,
        help="memory of one submission: each process's address space, and all its processes' "
        "resident memory together (default: %(default)s)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=Limits.processes,
        help="processes one submission may run at once (default: %(default)s)",
    )
    parser.add_argument(
        "--disk-mb",
        type=int,
        default=Limits.disk_mb,
        help="MB one submission may write to its folder, and the size of its /tmp (default: %(default)s)",
    )
    parser.add_argument(
        "--workers",
        "--jobs",
        dest="workers",
        type=int,
        help="submissions graded at once, each in its own kernel (default: one per core)",
    )
    parser.add_argument(
        "--sandbox",
        choices=["auto", "require", "off"],
        default="auto",
        help="run kernels in bubblewrap (auto and require: always, refusing where it cannot run; off: never)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bubblewrap, on purpose, where it cannot run: a submission can then read "
        "what the grader can (the solutions, the salt), and every report says so",
    )
    _add_similarity_options(parser)
    parser.set_defaults(run=run_grade)


# ------------------------------------------------------------ --similarity


def _wants_similarity(args: argparse.Namespace) -> bool:
    return bool(args.similarity or args.similarity_only or args.similarity_out)


def _similarity(
    args: argparse.Namespace, settings: Settings, reports: list[Report] | None, collection: Collection
) -> None:
    """Compare the class's answer cells (``similar_answers``) in the
    notebooks ``collection`` read (those graded: no file is read again):
    print the summary (or, with ``--json``, the reports and the flags as one
    object), and write the report file: ``--similarity-out``, else beside ``--out``."""
    found = similarity(collection, settings=settings)
    if args.json:
        both: dict[str, Any] = {"similarity": found.to_dict()}
        if reports is not None:
            both = {"reports": [r.to_dict() for r in reports], **both}
        print(json.dumps(both, indent=1, ensure_ascii=True))  # learner text as \uNNNN escapes
    else:
        print(("\n\n" if reports is not None else "") + format_similarity(found))
    out = args.similarity_out or (
        Path(args.out).with_name(Path(args.out).stem + "-similarity.md") if args.out else None
    )
    if out:
        write_similarity(found, out)
        print(f"wrote {out} ({len(found.flags)} flagged)", file=sys.stderr)


def _add_similarity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--similarity",
        action="store_true",
        help="also list answer cells that look copied from each other, the package or the model answer "
        '(never scored; with --json one object: {"reports": [...], "similarity": {...}})',
    )
    parser.add_argument(
        "--similarity-only",
        action="store_true",
        help="only the similarity report: grade nothing, run no kernel (reads the notebooks' JSON)",
    )
    parser.add_argument(
        "--similarity-out",
        metavar="FILE",
        help="write the similarity report here (.html: HTML, else Markdown; default with --out: beside the gradebook)",
    )
    parser.add_argument(
        "--similarity-threshold",
        type=float,
        metavar="SHARE",
        default=THRESHOLD,
        help="flag pairs whose fingerprints are at least this share in common (default: %(default)s)",
    )
