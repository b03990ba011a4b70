"""``bpe-lab grade``: grading a class from the command line.

What this adds over ``grader`` (``grade``, the function): the options an
instructor sets (limits, workers, sandbox, salt), and what comes out: the
reports printed (or ``--json``), the gradebook (``--out``, one row per
student), a feedback file per student (``--feedback``), and the seconds per
submission.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from bpe_lab.grading.feedback import write_feedback
from bpe_lab.grading.grader import Limits, default_workers, format_report, grade, gradebook

__all__ = ["run_grade", "add_grade_command"]


def run_grade(args: argparse.Namespace) -> None:
    limits = Limits(args.cell_timeout, args.timeout, args.memory_mb, processes=args.processes, disk_mb=args.disk_mb)
    sandbox = False if args.no_sandbox else {"auto": None, "require": True, "off": False}[args.sandbox]
    started = time.monotonic()
    reports = grade(
        args.submissions,
        solutions_dir=args.solutions,
        limits=limits,
        workers=args.workers,
        assignment=args.assignment,
        sandbox=sandbox,
        salt=args.salt,
    )
    seconds = time.monotonic() - started
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=1))
    else:
        print("\n\n".join(format_report(r) for r in reports))
    if args.out:
        gradebook(reports).to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(reports)} submissions)", file=sys.stderr)
    if args.feedback:
        written = write_feedback(reports, args.feedback)
        print(f"wrote {len(written)} feedback files to {args.feedback}", file=sys.stderr)
    workers = args.workers or default_workers()
    print(
        f"graded {len(reports)} submissions in {seconds:.1f} s "
        f"({seconds / max(1, len(reports)):.2f} s each, {workers} workers)",
        file=sys.stderr,
    )


def add_grade_command(subparsers: Any) -> None:
    """Register ``bpe-lab grade`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("grade", help="grade submitted notebooks against solutions/ into a gradebook")
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks (any layout: see README)")
    parser.add_argument("--out", help="write the gradebook CSV here (one row per student)")
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
    parser.set_defaults(run=run_grade)
