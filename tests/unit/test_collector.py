"""Python's garbage collector relaxed while numba compiles (kynemapy._jit)."""

from __future__ import annotations

import gc

import numba
import numba.core.event
import numpy as np

from kynemapy._jit import RELAXED, relaxed_collector


def test_nested_relaxations_give_the_thresholds_back():
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with relaxed_collector():
            assert gc.get_threshold() == RELAXED
            with relaxed_collector():
                assert gc.get_threshold() == RELAXED
            assert gc.get_threshold() == RELAXED  # the outer one still holds
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 5, 500)  # a user's larger thresholds are kept where larger
        with relaxed_collector():
            assert gc.get_threshold() == (50_000, 20, 500)
        assert gc.get_threshold() == (50_000, 5, 500)
    finally:
        gc.set_threshold(*saved)


def test_a_collector_switched_off_is_left_so():
    saved = gc.get_threshold()
    try:
        gc.set_threshold(0)
        with relaxed_collector():
            assert gc.get_threshold()[0] == 0
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*saved)


def test_a_numba_compilation_runs_relaxed_and_restores():
    seen = []

    class Watch(numba.core.event.Listener):
        def on_start(self, event):
            seen.append(("start", gc.get_threshold()))

        def on_end(self, event):
            seen.append(("end", gc.get_threshold()))

    @numba.njit(cache=False)
    def twice(a):
        return 2.0 * a[0]

    saved = gc.get_threshold()
    watch = Watch()
    numba.core.event.register("numba:compile", watch)  # after kynemapy's listener: sees its effect
    try:
        gc.set_threshold(700, 10, 10)
        assert twice(np.ones(1)) == 2.0
        assert seen and seen[0] == ("start", RELAXED)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        numba.core.event.unregister("numba:compile", watch)
        gc.set_threshold(*saved)
