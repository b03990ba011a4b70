"""Cases: the hidden inputs drawn for each submission, and their answers.

What this stage adds over ``authoring`` (the fixed hidden cases a solution
writes): more of them, different for every student. ``generated`` seeds
and checks them; the generators say, task by task, how an input is drawn
and which package function computes its expected value, in the grader's
process, never in the learner's kernel.
"""
