"""Compiled-code intrinsics that keep values in their native form in an int64 *blob* and call a
compiled function through its address with them (used by :mod:`kynemapy.engine.stored_call`).

A blob is a 1-D int64 array: word 0 the address of the function to call (numba's C-ABI
wrapper of ``run_task_at``, :mod:`kynemapy.engine.entry`), from word 1 the native value of the
Data, then, from the next whole word, the native value of the tuple of the other arguments.
The native value of an array is its descriptor (data pointer, shape, strides), so a stored
value stays valid while the arrays it points into live and are not replaced.  The Data is
passed to ``run_task_at`` by its address in the blob, never copied (about 730 words).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_I64 = ir.IntType(64)
#: ``run_task``'s result: (steps done, rows recorded, status)
RESULT = types.UniTuple(types.int64, 3)


@intrinsic
def store_native(typingctx, value, blob, word):
    """Write the native value of ``value`` into ``blob`` (int64, 1-D) from word ``word`` on, when
    it fits; return its size in bytes (a constant of the value's type)."""

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(sig.args[0])
        size = ir.Constant(_I64, context.get_abi_sizeof(llty))
        arr = context.make_array(sig.args[1])(context, builder, args[1])
        start = args[2]
        room = builder.mul(builder.sub(arr.nitems, start), ir.Constant(_I64, 8))
        fits = builder.and_(
            builder.icmp_signed(">=", start, ir.Constant(_I64, 0)), builder.icmp_signed(">=", room, size)
        )
        with builder.if_then(fits):
            slot = builder.bitcast(builder.gep(arr.data, [start]), llty.as_pointer())
            builder.store(args[0], slot)
        return size

    return types.int64(value, blob, types.int64), codegen


def _words(context, llty):
    return (context.get_abi_sizeof(llty) + 7) // 8


def _load(context, builder, blob_type, blob, args_type):
    """The address (word 0), the address of the stored Data (word 1) and the other stored
    arguments (from the word after the Data)."""
    arr = context.make_array(blob_type)(context, builder, blob)
    address = builder.load(arr.data)
    data_ty = context.get_value_type(args_type.types[0])
    rest_type = types.Tuple(args_type.types[1:])
    rest_ty = context.get_value_type(rest_type)
    data_at = builder.ptrtoint(builder.gep(arr.data, [ir.Constant(_I64, 1)]), _I64)
    rest_word = ir.Constant(_I64, 1 + _words(context, data_ty))
    rest = builder.load(builder.bitcast(builder.gep(arr.data, [rest_word]), rest_ty.as_pointer()))
    return address, data_at, [builder.extract_value(rest, i) for i in range(len(rest_type))]


def _call(context, builder, address, rest_types, data_at, values):
    """Call the C-ABI wrapper at ``address`` of ``run_task_at(data_at, data_ref, *values)``
    (:mod:`kynemapy.engine.entry`): the Data passed by its address, ``data_ref`` (a type only)
    as a null pointer."""
    ref_ty = context.get_value_type(types.TypeRef(types.int64))
    arg_lltypes = [_I64, ref_ty, *(context.get_value_type(t) for t in rest_types)]
    fnty = ir.FunctionType(context.get_value_type(RESULT), arg_lltypes)
    return builder.call(builder.inttoptr(address, fnty.as_pointer()), [data_at, ir.Constant(ref_ty, None), *values])


@intrinsic
def call_stored(typingctx, blob, args_ref):
    """``run_task(*stored)``: the call with every argument stored in ``blob``."""
    args_type = args_ref.instance_type

    def codegen(context, builder, sig, args):
        address, data_at, values = _load(context, builder, sig.args[0], args[0], args_type)
        return _call(context, builder, address, args_type.types[1:], data_at, values)

    return RESULT(blob, args_ref), codegen


@intrinsic
def call_stored_data(typingctx, blob, args_ref, p, task, n, every, rows, max_rows, iterations, out):
    """``run_task(stored Data, p, task, ...)``: the Data stored in ``blob``, the rest given."""
    args_type = args_ref.instance_type
    given = (p, task, n, every, rows, max_rows, iterations, out)
    if tuple(args_type.types[1:]) != given:
        return None  # other argument types than those stored: no such call

    def codegen(context, builder, sig, args):
        address, data_at, _ = _load(context, builder, sig.args[0], args[0], args_type)
        return _call(context, builder, address, args_type.types[1:], data_at, list(args[2:]))

    return RESULT(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out), codegen


@intrinsic
def call_with_data(typingctx, address, d, p, task, n, every, rows, max_rows, iterations, out):
    """``run_task_at(&d, ...)`` through the C-ABI wrapper at ``address``: the Data ``d`` stored
    once on the stack and passed by its address."""

    def codegen(context, builder, sig, args):
        with builder.goto_entry_block():  # one stack slot per call site, not one per call
            slot = builder.alloca(args[1].type)
        builder.store(args[1], slot)
        data_at = builder.ptrtoint(slot, _I64)
        return _call(context, builder, args[0], sig.args[2:], data_at, list(args[2:]))

    return RESULT(address, d, p, task, n, every, rows, max_rows, iterations, out), codegen


@intrinsic
def load_data(typingctx, data_at, data_ref):
    """The Data (of the type ``data_ref`` refers to) stored at address ``data_at`` (int64).

    The whole Data as one value (~730 words), for the tests of the stored Data: the package reads
    each field it needs by name (:func:`load_field`), which compiles much faster (LLVM splits the
    aggregate slowly: the result-file kernel 4 s with it, 1 s without)."""
    data_type = data_ref.instance_type

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(data_type)
        return builder.load(builder.inttoptr(args[0], llty.as_pointer()))

    return data_type(data_at, data_ref), codegen


_I32 = ir.IntType(32)


@intrinsic(prefer_literal=True)
def load_item(typingctx, data_at, data_ref, index, item):
    """Item ``item`` of member ``index`` (both literal ints) of the tuple (the Data) of the type
    ``data_ref`` refers to, stored at address ``data_at`` (int64), e.g. one element table of
    ``Data.tables``: one load of that item alone (a load of the whole member, whose words a
    function then kept on its stack while it called others, cost the element phase two thirds
    of its instructions)."""
    if not isinstance(index, types.IntegerLiteral) or not isinstance(item, types.IntegerLiteral):
        return None
    k, j = index.literal_value, item.literal_value
    data_type = data_ref.instance_type
    member = data_type.types[k]

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(data_type)
        pointer = builder.inttoptr(args[0], llty.as_pointer())
        indices = [ir.Constant(_I32, 0), ir.Constant(_I32, k), ir.Constant(_I32, j)]
        return builder.load(builder.gep(pointer, indices, inbounds=True))

    return member.types[j](data_at, data_ref, index, item), codegen


@intrinsic(prefer_literal=True)
def load_field(typingctx, data_at, data_ref, name):
    """The field ``name`` (a literal string) of the NamedTuple (the Data) of the type
    ``data_ref`` refers to, stored at address ``data_at`` (int64): one load of that field alone."""
    if not isinstance(name, types.StringLiteral):
        return None
    data_type = data_ref.instance_type
    k = data_type.fields.index(name.literal_value)

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(data_type)
        pointer = builder.inttoptr(args[0], llty.as_pointer())
        return builder.load(builder.gep(pointer, [ir.Constant(_I32, 0), ir.Constant(_I32, k)], inbounds=True))

    return data_type.types[k](data_at, data_ref, name), codegen


@intrinsic
def call_address(typingctx, addresses, index, arguments):
    """``f(*arguments)`` for the compiled function whose C-ABI wrapper is at
    ``addresses[index]`` (an int64 array of addresses; see :mod:`kynemapy.engine.units`);
    ``arguments`` a tuple of the values to pass, of the types that function was compiled for.
    Returns the function's int64 result (0 where it raised: numba's wrapper then reports the
    error on stderr)."""
    if not isinstance(arguments, types.BaseTuple):
        return None

    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        address = builder.load(builder.gep(arr.data, [args[1]]))
        arg_types = list(sig.args[2].types)
        values = [builder.extract_value(args[2], i) for i in range(len(arg_types))]
        fnty = ir.FunctionType(_I64, [context.get_value_type(t) for t in arg_types])
        return builder.call(builder.inttoptr(address, fnty.as_pointer()), values)

    return types.int64(addresses, index, arguments), codegen
