"""The interface layer: what a learner sees in JupyterLab.

Its modules import only downward, in this order (each over the one before):

- ``labels``: every English and Chinese string the interface shows.
- ``steps``: the data of each step (encoding, compression), no HTML.
- ``css``: the one style sheet, light and dark themes alike.
- ``blocks``: HTML building blocks: chips, panels, badges, tables.
- ``views``: the HTML of one step of each stepper, as pure functions.
- ``widgets``: ipywidgets that hold the current step and the buttons.
- ``plots``: matplotlib figures of whole runs, beside ``views``.

Nothing is imported here: ``from bpe_lab.ui.widgets import MergeStepper``.
"""
