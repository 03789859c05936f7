"""The one compiled entry point of the engine, :func:`run_task_at`: the Newton loop and its tasks.

Every Python caller (``Simulation.step``, ``advance``, the run loop, the set-up of a
simulation, reactions: :func:`kynemapy.engine.api.task`) goes through :func:`run_task_at`, so
numba compiles and caches one top-level function: compiling a top-level function
re-optimizes all the code it calls, and each further entry point would pay that again.  The
loop's large phases (elements, constraints, assembly: :mod:`kynemapy.engine.phases`) and the
optional parts are units it calls through their addresses in ``Data.units``, compiled apart
(an edit of an element kernel recompiles its unit, not this loop).  It takes the
:class:`~kynemapy.engine.fields.Data` by its address (about 900 words are never copied),
called through its address with the Data and the other arguments stored once in a blob
(:mod:`kynemapy.engine.stored_call`, which writes the Data into the blob from Python).
:func:`run_task` is its twin that takes the Data itself: it gives the arguments' types, runs
every task in plain Python, and compiled, only stores the Data (for a test).  ``Data.units``
holds ``run_task_at``'s address (:data:`~kynemapy.engine.unit_call.ENGINE`,
:mod:`kynemapy.engine.units`).
"""

from __future__ import annotations

import math

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine.assemble import begin_system
from kynemapy.engine.constraints.joint_unit import drives_missing
from kynemapy.engine.constraints.phase import constraint_outputs, constraint_reaction
from kynemapy.engine.native import store_native
from kynemapy.engine.params import (
    CONVERGENCE_AUTO,
    CONVERGENCE_ROUNDOFF,
    P_ASSEMBLE_K,
    P_CONDITIONER,
    P_CONVERGENCE,
    P_DYNAMIC,
    P_EXACT,
    P_GAMMA_PRIME,
    P_H,
    P_MAX_ITER,
    P_RHS_BIAS,
    P_STATIC_RETRIES,
    P_STIFFNESS,
)
from kynemapy.engine.solvers import factor_reference
from kynemapy.engine.step import (
    CONVERGED,
    MODE_ACCELERATIONS,
    MODE_LINEARIZE,
    MODE_STEPS,
    NEEDS_MEMORY,
    NEEDS_UNIT,
    NOT_CONVERGED,
    NOT_FINITE,
    SINGULAR,
    accelerations_from_solution,
    algorithmic_acceleration,
    begin_load_bisection,
    convergence_error,
    copy_state,
    global_position,
    next_time,
    predict,
    record_row,
    scale_loads,
    set_tangent,
    solve,
    start,
    state_is_finite,
    update,
    update_tangent,
    zero_accelerations,
)
from kynemapy.engine.unit_call import ASSEMBLY, CONSTRAINTS, ELEMENTS, call_unit, load_field
from kynemapy.linalg.dense import SOLVE_CAPACITY, SOLVE_OK

#: tasks of :func:`run_task`
ADVANCE = 0  #: ``advance``: up to ``n`` steps, rows recorded every ``every`` steps
LINEARIZE = 1  #: the Newton system at the current state (``vals``, ``b``)
INITIAL_ACCELERATIONS = 2  #: consistent v̇ and λ (``p`` = params.ACCELERATION_COEFFICIENTS)
CONSTRAINT_TERMS = 3  #: Φ, B, K^Φ of every constraint (``con_*``): the constraint phase alone
START = 4  #: at t = 0: a := v̇, x := (X + u, r ⊗ r0), joint outputs
REACTION = 5  #: ``out`` (6,) := reaction of constraint ``n`` after a linearization (``p``: exact gradients)
RECORD = 6  #: record the state into row ``every`` of ``rows``, with ``n`` Newton iterations
LU_FACTOR = 7  #: factor the reference sparse LU (``ri``, ``rf``) from ``vals``; status in the result
STORE = 8  #: write the native value of ``d`` into ``iterations`` from word 1 (if it fits); its bytes in the result


#: ``run_task``'s status for a task it does not run itself (compiled: every task but ``STORE``)
ELSEWHERE = -1


@njit
def run_task(d, p, task, n, every, rows, max_rows, iterations, out):
    """Task ``STORE``: the native value of ``d`` (:class:`~kynemapy.engine.fields.Data`) written
    into ``iterations`` (int64) from word 1, when it fits: ``(bytes, 0, 0)``.

    Compiled, it serves only tests (the package stores the Data leaf by leaf,
    :func:`kynemapy.engine.stored_call.store_data`: numba's conversion of the Data's ~140
    leaves in a function's wrapper takes about 4 s of first compilation).  Every other task
    runs :func:`run_task_at` on the stored Data through a stored call
    (:class:`~kynemapy.engine.stored_call.StoredCall`, :func:`kynemapy.engine.api.task`); here
    it returns ``(0, 0, ELSEWHERE)``.  Plain Python (``KYNEMAPY_DISABLE_JIT``): every task, on
    ``d`` itself."""
    if JIT_DISABLED:
        return run_task_at(d, None, p, task, n, every, rows, max_rows, iterations, out)
    if task == STORE:  # engine.stored_call: here, the Data is already converted from Python
        return store_native(d, iterations, 1), 0, 0
    return 0, 0, ELSEWHERE


@njit
def run_task_at(data_at, data_ref, p, task, n, every, rows, max_rows, iterations, out):
    """Run ``task`` (``ADVANCE``, ``LINEARIZE``, ...) on the :class:`~kynemapy.engine.fields.Data`
    at address ``data_at`` (int64; ``data_ref`` its type) with the coefficients ``p``.

    ``rows`` (R, width) float64, ``iterations`` (k,) int64 and ``out`` (6,) float64 are the
    caller's buffers (empty where the task does not use them).  Returns ``(steps_done,
    rows_recorded, status)``; tasks other than ``ADVANCE`` return ``(0, 0, status)``.

    ``ADVANCE``, ``LINEARIZE``, ``REACTION`` and ``INITIAL_ACCELERATIONS`` are modes of the one
    Newton loop written out here (not inlined from a function of its own: numba's inliner
    copies a callee's IR block by block, each copy with the callee's whole variable scope,
    which for this loop took 4-5 s of the first compilation).

    The Newton loop: up to ``n`` steps with constant inputs, recording output rows.  Per step
    (Kynema's ``SolveStep``): save the state; :func:`~kynemapy.engine.step.predict`; then per
    Newton iteration ``update_tangent``, ``begin_system``, ``element_phase``,
    ``constraint_phase``, ``assembly_phase``, ``solve``, ``convergence_error``, ``update``, until the
    error is <= 1 (``P_CONVERGENCE`` auto: Kynema's error, and in the last iteration allowed, if
    that still exceeds 1, the round-off error instead: Kynema's result wherever Kynema's test
    passes); the algorithmic acceleration, global position and joint outputs.  A failed step (no
    convergence, NaN, singular matrix) restores the state exactly and stops.  A static step
    (``P_DYNAMIC`` 0: β′ = γ′ = 0) that does not converge at the full load bisects the external
    loads (Kynema's ``Step``): up to ``P_STATIC_RETRIES`` Newton solves, each from the last
    converged partial load, until the full load converges.  ``iterations[i]`` gets the Newton
    iterations of step i (``iterations`` may be shorter than ``n``).  After each converged step
    whose counter is a multiple of ``every`` (> 0), one row is recorded into ``rows``, at most
    ``max_rows``.

    ``LINEARIZE`` (and ``REACTION``) stop after the first assembly (the
    reference factorization's matrix); ``INITIAL_ACCELERATIONS`` solves the first linearization
    for v̇ and λ instead of an increment, with 𝒯 = 0 in the element blocks (their matrix is then
    M) and 𝒯 = I in the constraint rows: the KKT system [M Bᵀ; B 0][v̇; λ] = [−r(v̇ = 0); −γ].
    All are this loop's first pass, so every phase is compiled once, here.  ``CONSTRAINT_TERMS``
    runs the constraint phase alone (exact gradients and bias as ``p`` says, γ′ from ``p``).  Statuses: a step
    status (:mod:`kynemapy.engine.step`), or for ``LINEARIZE`` and ``INITIAL_ACCELERATIONS`` a
    ``SOLVE_*`` status.
    """
    # each field read from the Data by name, one load of that field alone: no aggregate of the
    # whole Data (~730 words) for LLVM to split (this function's first compilation 8.8 s instead
    # of 10.2 s of CPU, docs/performance.md, "2026-11-30, second evening")
    nsys = load_field(data_at, data_ref, "n_system_dofs")
    x0 = load_field(data_at, data_ref, "x0")
    node_dofs = load_field(data_at, data_ref, "node_dofs")
    node_map = load_field(data_at, data_ref, "node_map")
    cnode = load_field(data_at, data_ref, "constraint_node")
    n_rows = load_field(data_at, data_ref, "constraint_n_rows")
    crow = load_field(data_at, data_ref, "constraint_row")
    axes = load_field(data_at, data_ref, "constraint_axes")
    geom = load_field(data_at, data_ref, "constraint_geometry")
    has_load = load_field(data_at, data_ref, "constraint_has_load")
    indptr = load_field(data_at, data_ref, "indptr")
    indices = load_field(data_at, data_ref, "indices")
    row_offsets = load_field(data_at, data_ref, "row_offsets")
    kinds = load_field(data_at, data_ref, "kinds")
    state = load_field(data_at, data_ref, "state")
    time = load_field(data_at, data_ref, "time")
    q = load_field(data_at, data_ref, "q")
    q_prev = load_field(data_at, data_ref, "q_prev")
    q_delta = load_field(data_at, data_ref, "q_delta")
    v = load_field(data_at, data_ref, "v")
    vd = load_field(data_at, data_ref, "vd")
    a = load_field(data_at, data_ref, "a")
    x = load_field(data_at, data_ref, "x")
    lam = load_field(data_at, data_ref, "lam")
    step = load_field(data_at, data_ref, "step")
    f = load_field(data_at, data_ref, "f")
    cin = load_field(data_at, data_ref, "constraint_input")
    vals = load_field(data_at, data_ref, "vals")
    b = load_field(data_at, data_ref, "b")
    dx = load_field(data_at, data_ref, "dx")
    force_scratch = load_field(data_at, data_ref, "force_scratch")
    tangent = load_field(data_at, data_ref, "tangent")
    errors = load_field(data_at, data_ref, "errors")
    bt = load_field(data_at, data_ref, "con_bt")
    s3 = load_field(data_at, data_ref, "s3")
    saved = load_field(data_at, data_ref, "saved")
    snapshot = load_field(data_at, data_ref, "snapshot")
    f_baseline = load_field(data_at, data_ref, "f_baseline")
    n_iter_slot = load_field(data_at, data_ref, "n_iter")
    saved_step = load_field(data_at, data_ref, "saved_step")
    solver = load_field(data_at, data_ref, "solver")
    units = load_field(data_at, data_ref, "units")
    has_output = load_field(data_at, data_ref, "constraint_has_output")
    with_outputs = False  # a joint with outputs (hinge, slider, revolute): else no output call a step
    for ic in range(has_output.shape[0]):
        if has_output[ic] != 0:
            with_outputs = True
    if task == START:
        start(a, vd, x0, q, x, data_at, data_ref)
        return 0, 0, 0
    if task == RECORD:
        record_row(row_offsets, time, step, state, errors, n, rows[every])
        return 0, 0, 0
    if task == LU_FACTOR:
        return 0, 0, factor_reference(units, solver, vals)
    if drives_missing(units, kinds.kind, has_load, axes, cin):  # a servo given to a model built without one
        return 0, 0, NEEDS_UNIT
    if task == ADVANCE:
        mode = MODE_STEPS
    elif task == INITIAL_ACCELERATIONS:
        mode = MODE_ACCELERATIONS
    else:
        mode = MODE_LINEARIZE
    n_steps = n if task == ADVANCE else 1
    h = p[P_H]
    c = p[P_CONDITIONER]
    exact = p[P_EXACT] != 0.0
    with_k = p[P_ASSEMBLE_K] != 0.0
    with_drives = p[P_STIFFNESS] != 0.0  # driven joints' tangents (not in the KKT system of v̇)
    with_bias = p[P_RHS_BIAS] != 0.0
    if task == CONSTRAINT_TERMS:
        call_unit(units, CONSTRAINTS, (data_at, data_ref, exact, with_bias, p[P_GAMMA_PRIME]))
        return 0, 0, SOLVE_OK
    max_iter = int(p[P_MAX_ITER])
    criterion = p[P_CONVERGENCE]
    static = mode == MODE_STEPS and p[P_DYNAMIC] == 0.0
    attempts = max(int(p[P_STATIC_RETRIES]), 1) if static else 1
    recorded = 0
    n_keep = iterations.shape[0]
    for i in range(n_steps):
        if mode == MODE_STEPS:
            copy_state(state, saved)
            saved_step[0] = step[0]
        if static:
            begin_load_bisection(f, f_baseline, state, snapshot)
        low = 0.0
        load_factor = 1.0
        high = 1.0
        status = NOT_CONVERGED
        n_iter = 0
        total_iter = 0
        for _ in range(attempts):
            if static:
                scale_loads(f, f_baseline, load_factor)
            if mode == MODE_STEPS:
                predict(p, v, vd, a, q_delta, q_prev, q, lam)
            elif mode == MODE_ACCELERATIONS:
                zero_accelerations(vd, lam)
            n_iter = 0
            dx_norm = -1.0  # largest node increment of the previous iteration (none yet)
            status = NOT_CONVERGED
            while n_iter < max_iter:
                if mode == MODE_ACCELERATIONS:
                    set_tangent(tangent, 0.0)
                else:
                    update_tangent(h, q_delta, tangent, s3[0])
                begin_system(node_dofs, node_map, f, vals, b)
                call_unit(units, ELEMENTS, (data_at, data_ref, p, c))
                if mode == MODE_ACCELERATIONS:
                    set_tangent(tangent, 1.0)
                call_unit(units, CONSTRAINTS, (data_at, data_ref, exact, with_bias, p[P_GAMMA_PRIME]))
                call_unit(units, ASSEMBLY, (data_at, data_ref, c, with_k, with_drives))
                if mode == MODE_LINEARIZE:
                    if task == REACTION:
                        constraint_reaction(n, cnode, geom, n_rows, q, lam, bt, s3[0], out)
                    return 0, 0, SOLVE_OK
                solved = solve(units, solver, indptr, indices, vals, b, dx, nsys, c)
                if mode == MODE_ACCELERATIONS:
                    if solved == SOLVE_OK:
                        accelerations_from_solution(node_map, node_dofs, crow, n_rows, dx, vd, lam, nsys)
                    return 0, 0, solved
                if solved != SOLVE_OK:
                    status = NEEDS_MEMORY if solved == SOLVE_CAPACITY else SINGULAR
                    break
                # Kynema's test, or the round-off one (P_CONVERGENCE roundoff); with auto, Kynema's
                # test and, in the last iteration allowed if it still fails, the round-off test
                # (a step that fails both reports Kynema's error)
                use_roundoff = criterion == CONVERGENCE_ROUNDOFF
                kynema_err = -1.0
                while True:
                    err, norm = convergence_error(
                        use_roundoff, criterion == CONVERGENCE_AUTO, p, node_map, node_dofs, crow, n_rows, q_delta,
                        lam, dx, nsys, x, indptr, indices, vals, force_scratch, dx_norm,
                    )  # fmt: skip
                    if use_roundoff or criterion != CONVERGENCE_AUTO or err <= 1.0 or n_iter + 1 < max_iter:
                        break
                    kynema_err = err
                    use_roundoff = True
                if kynema_err >= 0.0 and not err <= 1.0:
                    err = kynema_err
                dx_norm = norm
                errors[n_iter] = err
                n_iter += 1
                update(p, node_map, node_dofs, crow, n_rows, q_delta, v, vd, q_prev, q, lam, dx, nsys)
                if not math.isfinite(err):
                    status = NOT_FINITE
                    break
                if err <= 1.0:
                    status = CONVERGED
                    break
            total_iter += n_iter
            if not static or status == NEEDS_MEMORY:
                break
            # Kynema's load bisection: a converged partial load is kept and the full load tried
            # from it; a failed one is undone and the load halved towards the last converged one
            if status == CONVERGED:
                if abs(load_factor - 1.0) < 1e-10:
                    break
                copy_state(state, snapshot)
                low = load_factor
                load_factor = 1.0
            else:
                copy_state(snapshot, state)
                high = load_factor
                load_factor = 0.5 * (low + high)
        if static:
            scale_loads(f, f_baseline, 1.0)
            if status == CONVERGED and abs(load_factor - 1.0) >= 1e-10:
                status = NOT_CONVERGED
        n_iter_slot[0] = n_iter
        if status == CONVERGED:
            algorithmic_acceleration(p, vd, a)
            global_position(x0, q, x)
            if with_outputs:
                constraint_outputs(data_at, data_ref, h < 0.0)  # initial = h < 0: False, but not a literal
            if not state_is_finite(q, v, vd, a, lam):
                status = NOT_FINITE
        if i < n_keep:
            iterations[i] = total_iter
        if status != CONVERGED:
            copy_state(saved, state)
            step[0] = saved_step[0]
            return i, recorded, status
        time[0] = next_time(time[0], h)
        step[0] += 1
        if every > 0 and step[0] % every == 0:
            record_row(row_offsets, time, step, state, errors, n_iter, rows[recorded])
            recorded += 1
            if recorded >= max_rows:
                return i + 1, recorded, CONVERGED
    return n_steps, recorded, CONVERGED
