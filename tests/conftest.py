"""Shared by every tier of the suite.

The tiers are folders: ``unit/`` (components and the public API, against Kynema's unit-test
numbers and hand calculations), ``io/`` (result files: round trips, restart data, damaged and
salvaged files, killed and colliding writers), ``cli/`` (the ``kynemapy`` command in child
processes: its words, how a run ends, install hints), ``ensembles/`` (sweeps on Dask and their
resumption), ``regression/`` (Kynema-FMB's regression numbers), ``verification/``
(independent references: closed forms, tight scipy integrations, finite-difference gradients,
the validation cases) and ``examples/`` (every example program, each run once).
``pytest -m "not slow"`` is the fast tier; CI runs everything.

The helper modules beside this file (``references``, ``sparse_systems``: independent
references and test systems, which never import what they check; ``models``: small models
built with the package, shared by test modules) and the example programs are importable from
every test module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
for path in (TESTS, ROOT / "examples"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def pytest_sessionstart(session) -> None:
    """Compile (or load) every kernel once before the tests, as ``kynemapy compile`` does: the
    tests that run ``kynemapy`` in a child process and read its stderr line by line then never
    see the one-line notice of a first compilation (tested on its own in test_one_engine.py).
    On two cores or more the engine's units compile in a second process meanwhile (about a
    minute less from an empty cache on two cores).  With pytest-xdist's workers (the project's
    default, ``-n auto``), the controller does it before it starts them, and the workers load
    what they use from the cache."""
    from kynemapy._jit import JIT_DISABLED

    if not JIT_DISABLED and not os.environ.get("PYTEST_XDIST_WORKER"):
        from kynemapy.run.precompile import compile_all

        compile_all(progress=False)


def pytest_collection_modifyitems(session, config, items) -> None:
    """Run the tests marked ``slow`` first, each tier in its collected order.

    pytest-xdist's workers take the tests in the collected order, and the longest runs sit at
    the end of it (``verification/``): a 35 s test started last kept one worker busy while the
    other had nothing left.  Longest first, the end of a run is short tests on both workers.
    The order is the same in every worker (a stable sort on the marker), as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
