"""The engine: the generalized-α step as phase kernels over packed data.

``fields`` (where every array lives), ``data`` (State, Inputs, Workspace and their packing),
``params`` (step parameters and the coefficient vector), ``step`` (the phases, the step, the
N-step advance), ``elements/`` (one module per element table), ``constraints/`` (one module
per kind and the one dispatch), ``assemble``, ``initial`` (consistent initial accelerations),
``invariants`` (energy and momentum of output rows), ``rows`` (the output row), ``checks``
(redundant constraints), ``api`` (the Python side: functional core, statuses).
"""
