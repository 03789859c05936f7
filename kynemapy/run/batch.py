"""``Batch``: many simulations of one model advanced together in one compiled, threaded call."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from kynemapy._jit import JIT_DISABLED
from kynemapy.engine.api import NO_ITERATIONS, NO_ROWS
from kynemapy.engine.batch import advance_members
from kynemapy.engine.entry import ADVANCE
from kynemapy.engine.lookup import entry
from kynemapy.engine.step import RESUMABLE
from kynemapy.run.simulation import NONSMOOTH, Simulation


class BatchInfo(NamedTuple):
    """Outcome of :meth:`Batch.advance`.

    Attributes
    ----------
    steps : (M,) int64
        Steps each member completed.
    status : (M,) int64
        Each member's status: 0 (converged) when it completed every step, else the status of
        the step that failed (see :func:`kynemapy.engine.api.status_text`).
    wall_time : float
        Wall-clock time of the call [s].
    """

    steps: np.ndarray
    status: np.ndarray
    wall_time: float


class Batch:
    """Simulations of one model advanced together: each thread (one per core by default)
    steps its share of the members in one compiled call that holds no GIL.

    Each member is a :class:`~kynemapy.Simulation` of the same model (equal model tables) with
    the same step parameters; members differ in their state and inputs (initial conditions,
    loads, joint inputs: set them on each member before :meth:`advance`).  A member's steps
    are exactly those of its own ``Simulation.advance``: the results are bit for bit the
    same, whatever the number of threads.

    Parameters
    ----------
    members : sequence of Simulation
        At least one.  They stay usable on their own; :meth:`advance` updates their states.

    Examples
    --------
    >>> sims = [kp.Simulation(model, params) for _ in range(100)]  # doctest: +SKIP
    >>> for k, sim in enumerate(sims):                              # doctest: +SKIP
    ...     sim.set_load(node, force=(k, 0, 0), moment=(0, 0, 0))
    >>> info = kp.Batch(sims).advance(1000)                         # doctest: +SKIP
    >>> sims[7].state.q                                              # doctest: +SKIP
    """

    def __init__(self, members: Sequence[Simulation]) -> None:
        members = tuple(members)
        if not members:
            raise ValueError("Batch: give at least one Simulation")
        for k, sim in enumerate(members):
            if not isinstance(sim, Simulation):
                raise TypeError(f"Batch: member {k} is a {type(sim).__name__}, not a kynemapy.Simulation")
            if sim.joint_stops is not None:
                raise ValueError(
                    f"Batch: member {k}'s model has {NONSMOOTH}, which Batch does not "
                    "support yet: step its simulations one by one (Simulation.advance, rollout or run)"
                )
        if len({id(sim) for sim in members}) != len(members):
            raise ValueError("Batch: a Simulation is listed twice (each member needs its own)")
        first = members[0]
        for k, sim in enumerate(members[1:], start=1):
            if sim.params != first.params:
                raise ValueError(f"Batch: member {k}'s step parameters differ from member 0's ({sim.params!r})")
            if sim.workspace.solver != first.workspace.solver:
                raise ValueError(
                    f"Batch: member {k} uses the {sim.workspace.solver} solver, member 0 the {first.workspace.solver}"
                )
            for name in ("mi", "mf"):
                a, b = sim.workspace.arenas[name], first.workspace.arenas[name]
                if a.shape != b.shape or not np.array_equal(a, b):
                    raise ValueError(
                        f"Batch: member {k} simulates another model than member 0 (its tables differ); "
                        "a batch runs one model with different states and inputs"
                    )
        self._members = members

    @property
    def members(self) -> tuple[Simulation, ...]:
        """The member simulations, in order."""
        return self._members

    def __len__(self) -> int:
        return len(self._members)

    def advance(self, n_steps: int, threads: int | None = None) -> BatchInfo:
        """Run ``n_steps`` steps of every member (inputs held constant): one compiled call per
        thread, each over its share of the members.

        Parameters
        ----------
        n_steps : int
            Steps per member, >= 0.
        threads : int, optional
            Threads to use (default: one per core, at most one per member); 1 runs the members
            one after the other in this thread.

        Returns
        -------
        BatchInfo
            Steps done and status per member.  A member whose step fails stops there, its
            state that of its last converged step; the other members go on.  Nothing is raised.
        """
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
            raise ValueError(f"Batch.advance: n_steps must be an integer >= 0, got {n_steps!r}")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1
        ):
            raise ValueError(f"Batch.advance: threads must be an integer >= 1, got {threads!r}")
        start = time.perf_counter()
        members = self._members
        m = len(members)
        calls = [sim._stored for sim in members]  # each member's Data, stored in native form
        out = np.zeros((m, 6))
        result = np.zeros((m, 3), dtype=np.int64)
        ps = np.stack([sim.coefficients for sim in members])
        if JIT_DISABLED:
            blobs: Any = [call.run for call in calls]
        else:
            blobs = np.stack([call.blob for call in calls])
        n_threads = min(int(threads) if threads else (os.cpu_count() or 1), m)
        bounds = np.linspace(0, m, n_threads + 1).round().astype(np.int64)
        args = (blobs, calls[0].args_ref, ps, ADVANCE, int(n_steps), 0, NO_ROWS, 0, NO_ITERATIONS, out)
        run = entry(advance_members, (*args, 0, m, result))  # compiled (or loaded) here, before any thread
        if n_threads == 1:
            run(*args, 0, m, result)
        else:  # the compiled call releases the GIL: the threads run at once, on disjoint members
            with ThreadPoolExecutor(n_threads) as pool:
                futures = [pool.submit(run, *args, a, b, result) for a, b in itertools.pairwise(bounds)]
                for future in futures:
                    future.result()
        steps = result[:, 0].copy()
        status = result[:, 2].copy()
        # a member whose sparse fallback outgrew its arrays, or whose joints need their unit with
        # drives, goes on alone once given them
        for k in np.flatnonzero(np.isin(status, RESUMABLE)):
            sim, code = members[k], int(status[k])
            while code in RESUMABLE:
                sim.provide(code)
                done, _, code = sim.advance_rows(int(n_steps) - int(steps[k]), 0, NO_ROWS, 0, NO_ITERATIONS)
                steps[k] += done
            status[k] = code
        return BatchInfo(steps, status, time.perf_counter() - start)
