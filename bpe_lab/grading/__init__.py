"""Layer 5, the course machinery: self-checks, exercises and grading.

What it adds over the layers below: it judges a learner's code against the
package's own reference implementations, and turns the solved notebooks
into the learner's exercises:

- ``check``: the self-checks a learner runs in an exercise notebook, one
  module per chapter over one shared runner (``from bpe_lab.grading import
  check``);
- ``release``: ``solutions/`` -> ``exercises/`` (``bpe-lab release``);
- ``tasks``: the graded tasks and hidden tests read from a solution;
- ``sandbox``: runs a submission's cells in its own kernel, with limits;
- ``grader``, ``report``: scores, the gradebook and the feedback
  (``bpe-lab grade``).
"""
