"""A compiled call whose arguments are stored once, in native form: the cheap way into the engine.

numba's wrapper converts every argument of a compiled function from Python on each call; the
engine's :class:`~kynemapy.engine.fields.Data` holds about 80 arrays, and converting them cost
1.7 µs of every ``Simulation.step()`` (a step of the heavy top takes 4 µs).  A
:class:`StoredCall` converts the arguments of :func:`~kynemapy.engine.entry.run_task` once,
keeps the native values (array descriptors: data pointers, shapes, strides) in an int64
*blob*, and calls ``run_task``'s compiled code through its address with them: a call then
converts two or three arguments.

The machine code that runs is ``run_task``'s own, compiled and cached once: the small entry
points here (:func:`stored_status`, :func:`stored_with`) call it through its address (numba's
*wrapper address protocol*, as for first-class functions), so it is neither compiled again nor
optimized into them, and ``step()`` and ``advance()`` share it.

The stored descriptors point into the arrays of the arguments, which the :class:`StoredCall`
keeps alive; they stay valid as long as those arrays are not replaced (the engine's arrays are
views into fixed arenas, written in place; a simulation whose arrays change makes a new
:class:`StoredCall`).
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine.api import argument_types, entry
from kynemapy.engine.entry import ADVANCE

_I64 = ir.IntType(64)
#: ``run_task``'s result: (steps done, rows recorded, status)
_RESULT = types.UniTuple(types.int64, 3)


@intrinsic
def _store_value(typingctx, value, blob):
    """Write the native value of ``value`` into ``blob`` (int64, 1-D) from word 1 on when it
    fits; return the bytes the blob needs (word 0 is left for the function's address)."""

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(sig.args[0])
        needed = context.get_abi_sizeof(llty) + 8
        arr = context.make_array(sig.args[1])(context, builder, args[1])
        have = builder.mul(arr.nitems, ir.Constant(_I64, 8))
        with builder.if_then(builder.icmp_signed(">=", have, ir.Constant(_I64, needed))):
            slot = builder.bitcast(builder.gep(arr.data, [ir.Constant(_I64, 1)]), llty.as_pointer())
            builder.store(args[0], slot)
        return ir.Constant(_I64, needed)

    return types.int64(value, blob), codegen


def _load_arguments(context, builder, blob_type, blob, args_type):
    """The stored argument tuple's elements and the address of the function (``blob[0]``)."""
    arr = context.make_array(blob_type)(context, builder, blob)
    address = builder.load(arr.data)
    llty = context.get_value_type(args_type)
    slot = builder.bitcast(builder.gep(arr.data, [ir.Constant(_I64, 1)]), llty.as_pointer())
    stored = builder.load(slot)
    return address, [builder.extract_value(stored, i) for i in range(len(args_type))]


def _call(context, builder, address, arg_types, values):
    """Call the C-ABI wrapper at ``address`` (numba's ``cfunc`` wrapper of ``run_task``)."""
    fnty = ir.FunctionType(context.get_value_type(_RESULT), [context.get_value_type(t) for t in arg_types])
    return builder.call(builder.inttoptr(address, fnty.as_pointer()), values)


@intrinsic
def _call_stored(typingctx, blob, args_ref):
    """``run_task(*stored)``: the call with every argument stored."""
    args_type = args_ref.instance_type

    def codegen(context, builder, sig, args):
        address, values = _load_arguments(context, builder, sig.args[0], args[0], args_type)
        return _call(context, builder, address, args_type.types, values)

    return _RESULT(blob, args_ref), codegen


@intrinsic
def _call_stored_data(typingctx, blob, args_ref, p, task, n, every, rows, max_rows, iterations, out):
    """``run_task(stored_data, p, task, ...)``: the stored Data (first stored argument), the rest given."""
    args_type = args_ref.instance_type
    given = (p, task, n, every, rows, max_rows, iterations, out)
    if tuple(args_type.types[1:]) != given:
        return None  # other argument types than those stored: no such call

    def codegen(context, builder, sig, args):
        address, values = _load_arguments(context, builder, sig.args[0], args[0], args_type)
        return _call(context, builder, address, args_type.types, [values[0], *args[2:]])

    return _RESULT(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out), codegen


@njit
def store_arguments(arguments, blob):
    """Store the native value of the tuple ``arguments`` into ``blob`` (int64, 1-D) from word 1
    on, if it fits; returns the length in bytes the blob needs."""
    return _store_value(arguments, blob)


#: raised when ``run_task`` raised inside compiled code (numba's C-ABI wrapper then reports the
#: exception on stderr and returns zeros: a step that did nothing with a "converged" status)
FAILED = "kynemapy: the compiled step raised an error (reported above); the state may be partly updated"


@njit
def stored_status(blob, args_ref):
    """``run_task(*arguments)[2]`` with every argument stored in ``blob`` (see :class:`StoredCall`);
    the stored call must ask for at least one step."""
    steps, _, status = _call_stored(blob, args_ref)
    if steps == 0 and status == 0:
        raise RuntimeError(FAILED)
    return status


@njit
def stored_with(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out):
    """``run_task(d, p, task, n, every, rows, max_rows, iterations, out)`` with ``d`` the Data
    stored in ``blob`` (see :class:`StoredCall`)."""
    result = _call_stored_data(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out)
    if task == ADVANCE and n > 0 and result[0] == 0 and result[2] == 0:
        raise RuntimeError(FAILED)
    return result


class StoredCall:
    """``run_task`` with its arguments converted once (see the module's description).

    Parameters
    ----------
    kernel
        The compiled ``run_task`` (a numba dispatcher; compiled for these arguments' types on
        first use).
    arguments : tuple
        Its arguments ``(d, p, task, n, every, rows, max_rows, iterations, out)``: ``d`` a
        :class:`~kynemapy.engine.fields.Data`; kept alive by this object.

    Attributes
    ----------
    status : callable
        ``status()``: run the stored call, return its status (``run_task(*arguments)[2]``).
    run : callable
        ``run(p, task, n, every, rows, max_rows, iterations, out)``: ``run_task`` with the stored
        ``d`` and these arguments (of the stored arguments' types); returns ``run_task``'s
        ``(steps_done, rows_recorded, status)``.
    """

    __slots__ = ("arguments", "blob", "run", "status")

    def __init__(self, kernel: Any, arguments: tuple[Any, ...]) -> None:
        if arguments[2] != ADVANCE or arguments[3] < 1:
            raise ValueError("StoredCall: the stored call must be an ADVANCE of at least one step")
        self.arguments = arguments
        compiled = entry(kernel, arguments)
        if JIT_DISABLED:  # plain Python: nothing to store
            self.blob = np.zeros(0, dtype=np.int64)
            self.status = lambda: compiled(*arguments)[2]
            self.run = functools.partial(compiled, arguments[0])
            return
        arg_types = argument_types(kernel, arguments)
        address = numba.types.CompileResultWAP(kernel.overloads[arg_types]).__wrapper_address__()
        empty = np.zeros(0, dtype=np.int64)
        store = entry(store_arguments, (arguments, empty))
        needed = store(arguments, empty)
        blob = np.zeros((needed + 7) // 8, dtype=np.int64)
        if store(arguments, blob) != needed:  # pragma: no cover - the size is a constant of the type
            raise RuntimeError("kynemapy: the stored call's size changed")
        blob[0] = address
        self.blob = blob
        args_ref = types.TypeRef(types.Tuple(arg_types))
        self.status = functools.partial(entry(stored_status, (blob, args_ref)), blob, args_ref)
        self.run = functools.partial(entry(stored_with, (blob, args_ref, *arguments[1:])), blob, args_ref)
