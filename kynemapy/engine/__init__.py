"""The engine: the generalized-α step as phase kernels over packed data.

``fields`` (where every array lives), ``data`` (State, Inputs, Workspace and their packing),
``params`` (step parameters and the coefficient vector), ``step`` (the phases, the step, the
N-step advance), ``solvers`` (the Newton solvers), ``elements/`` (one module per element
table), ``constraints/`` (one module per kind and the one dispatch), ``assemble`` (the Newton
system), ``initial_velocity`` (consistent initial velocities), ``invariants`` (energy and
momentum of output rows, compiled), ``energies`` (the same for states from Python), ``rows``
(the output row), ``checks`` (redundant constraints, nodes without mass), ``entry`` (the one
compiled entry point), ``lookup``, ``stored_call`` and ``native`` (calling it cheaply),
``batch`` (many simulations in one call), ``notice`` (the first compilation's notice), ``api``
(the Python side: functional core, statuses, consistent initial accelerations).
"""
