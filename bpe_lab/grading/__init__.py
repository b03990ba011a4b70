"""Layer 5, the course machinery: self-checks, exercises and grading.

What it adds over the layers below: it judges a learner's code against the
package's own reference implementations, and turns the solved notebooks
into the learner's exercises. A folder per stage, in the order a
submission meets them (each stage imports only the ones before it):

- ``check/``: the learner's side, the self-checks a learner runs in an
  exercise notebook, one module per chapter over one shared runner (``from
  bpe_lab.grading import check``), with ``answers`` (the package functions
  a task may not call) and ``guard`` (the trap that catches a call); it
  imports nothing of the instructor's side;
- ``parsing``: the one ``ast.parse`` every stage below makes;
- ``notebook_format``: the one import of nbformat every stage below makes
  (without jsonschema's IRI grammars, most of the CPU time of its import);
- ``authoring/``: ``release`` (``solutions/`` -> ``exercises/``, ``bpe-lab
  release``) and ``tasks`` (a solution's graded tasks, hidden tests and
  written answers, as data);
- ``intake/``: ``submissions`` (reading a file that may be anything) and
  ``roster`` (whose notebook it is, which assignment it answers);
- ``cases/``: the hidden cases generated per student (``generated``) by
  each chapter's generators;
- ``run/``: ``assembly`` (a submission's cells with the solution's locked
  ones), ``stubs``, ``reach``, ``kernel_package`` (the ``bpe_lab`` a
  grading kernel imports: only what its notebook's setup reaches has a
  body), ``sandbox``, ``jail``, ``distributions``, ``wire``, ``launch``,
  ``budget``, ``reaper`` (a kernel per submission under bubblewrap as an
  unprivileged user that sees an allow-list, read over sockets that refuse
  large frames, with limits per process and one budget for all its
  processes, its processes reaped), ``probe`` and ``visible`` (its values
  read back as plain data, the visible self-check's cases decided in the
  grader), ``in_kernel`` (what the kernel runs for them: module code, kept
  whole in its view, that the cells they send only call, with data);
- ``score/``: ``judge``, ``task_score`` (scores and partial credit, decided
  in the grader, never on the kernel's word), ``report``, ``feedback`` (the
  gradebook and the feedback a learner may see), ``similarity``,
  ``similar_answers``, ``similarity_report`` (answer cells copied between
  classmates or from the package, flagged for a person, never scored);
- ``commands/``: ``grader`` (``grade``: the stages in order),
  ``grade_command`` (``bpe-lab grade``) and ``gradescope`` (the autograder
  bundle for Gradescope, ``bpe-lab gradescope``).
"""
