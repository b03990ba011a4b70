"""Commands: the stages walked in order, for ``bpe-lab grade`` and Gradescope.

What this adds over the stages below (each one step of the pipeline): the
whole walk. ``grader`` takes a class through intake, cases, run and score
(``grade``); ``grade_command`` is ``bpe-lab grade`` and ``gradescope`` the
autograder bundle for Gradescope (``bpe-lab gradescope``).
"""
