"""Layer 5, the course machinery: self-checks, exercises and grading.

What it adds over the layers below: it judges a learner's code against the
package's own reference implementations, and turns the solved notebooks
into the learner's exercises. In the order a submission meets them:

- ``check``: the self-checks a learner runs in an exercise notebook, one
  module per chapter over one shared runner (``from bpe_lab.grading import
  check``);
- ``release``: ``solutions/`` -> ``exercises/`` (``bpe-lab release``);
- ``roster``, ``submissions``: whose notebook a file is, which assignment it
  answers, and reading it safely;
- ``tasks``, ``generators``, ``generators_more``, ``cases``: the graded tasks
  of a solution, their fixed hidden tests (``check.hidden`` scores them
  under real nbgrader) and the cases generated per student;
- ``assembly``: a submission's cells with the solution's locked ones;
- ``answers``, ``guard``, ``stubs``, ``reach``, ``kernel_package``: the
  package functions a task may not call, the trap that catches a call, and
  the ``bpe_lab`` a grading kernel imports (only what its notebook's setup
  reaches has a body; without the task's answers for the second run);
- ``visible``: the visible self-check's cases, decided in the grader;
- ``sandbox``, ``jail``, ``distributions``, ``wire``, ``launch``,
  ``budget``, ``reaper``, ``probe``: a kernel per submission under
  bubblewrap as an unprivileged user that sees an allow-list (the libraries
  it may import: ``distributions``), read over sockets that refuse large
  frames (``wire``), with limits per process and one budget for all its
  processes, its processes reaped, its values read back as plain data;
- ``judge``, ``task_score``, ``grader``, ``report``, ``feedback``: scores
  and partial credit (decided in the grader, never on the kernel's word),
  the gradebook and the feedback a learner may see; ``grade_command`` is
  ``bpe-lab grade``;
- ``similarity``, ``similar_answers``, ``similarity_report``: answer cells
  copied between classmates or from the package, flagged for a person
  (``bpe-lab grade --similarity``), never scored;
- ``gradescope``: the autograder bundle for Gradescope (``bpe-lab gradescope``).
"""
