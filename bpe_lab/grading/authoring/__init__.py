"""Authoring: what a solution notebook gives the rest of grading.

What this stage adds over ``check`` (the self-checks a learner runs): the
instructor's reading of a solution. ``release`` turns ``solutions/`` into
the learner's ``exercises/`` (``bpe-lab release``); ``tasks`` reads a
solution's graded cells back as data (their points, hidden tests, forbidden
functions and written answers), which every later stage takes as given.
"""
