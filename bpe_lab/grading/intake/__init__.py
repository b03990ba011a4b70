"""Intake: the files handed to ``bpe-lab grade``, as submissions.

What this stage adds over ``authoring`` (what an assignment holds): what a
class handed in. ``submissions`` reads one file that may be anything,
safely and once; ``roster`` says whose notebook each file is and which
assignment it answers, from the layouts instructors download.
"""
