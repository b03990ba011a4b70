"""Score: what a run earned, decided in the grader, and what to hand back.

What this stage adds over ``run`` (the kernel's values as plain data):
the verdict. ``judge`` and ``task_score`` score each task (never on the
kernel's word), ``report`` and ``feedback`` are the gradebook and the page a
learner may see; ``similarity``, ``similar_answers`` and
``similarity_report`` flag answers that look copied, for a person, never
scored.
"""
