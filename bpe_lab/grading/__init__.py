"""Layer 5, the course machinery: self-checks, exercises and grading.

What it adds over the layers below: it judges a learner's code against the
package's own reference implementations, and turns the solved notebooks
into the learner's exercises:

- ``check``: the self-checks a learner runs in an exercise notebook, one
  module per chapter over one shared runner (``from bpe_lab.grading import
  check``);
- ``release``: ``solutions/`` -> ``exercises/`` (``bpe-lab release``);
- ``answers``, ``guard``: which package functions answer which exercise,
  and taking them away while a learner's function runs;
- ``tasks``: the graded tasks, hidden tests and forbidden functions read
  from a solution;
- ``sandbox``, ``launch``, ``jail``, ``stubs``: runs a submission's cells in
  its own kernel, with limits, inside bubblewrap, and on a copy of the
  package without the answers;
- ``submissions``, ``judge``, ``grader``, ``report``: reading submissions,
  judging the kernel's plain data, scores, the gradebook and the feedback
  (``bpe-lab grade``).
"""
