"""Atomic operations on an int64 array for compiled loops that threads share (numba).

Two threads that work on one minibatch inside compiled calls (:mod:`~bpetopics.models.poissbpe.compiled.rows_pursuit`) claim its parts with these instead of a Python lock, so neither needs
Python's global interpreter lock between the parts:

    fetch_add(a, i, v)    old = a[i]; a[i] += v; return old     (one indivisible step)
    load_acquire(a, i)    a[i], read after every write the writer made before its
                          store_release (and never hoisted out of a waiting loop)
    store_release(a, i, v)
    cpu_relax()           a hint inside a spin-wait (x86's ``pause``; nothing elsewhere)

They are LLVM's atomic instructions (sequentially consistent read-modify-write, acquire
loads, release stores), emitted by numba intrinsics; ``a`` must be a C-contiguous int64
array.
"""

from __future__ import annotations

import platform

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    def _pointer(context, builder, signature, args):
        """The address of ``array[index]`` (the call's first two arguments)."""
        array_type, index_type = signature.args[:2]
        index = context.cast(builder, args[1], index_type, types.intp)
        array = context.make_array(array_type)(context, builder, args[0])
        return cgutils.get_item_pointer(context, builder, array_type, array, [index], wraparound=False)

    def _value(context, builder, signature, args):
        """The call's third argument as int64."""
        return context.cast(builder, args[2], signature.args[2], types.int64)

    def _check(array):
        if not (isinstance(array, types.Array) and array.dtype == types.int64 and array.ndim == 1):
            raise numba.core.errors.TypingError("atomics need a 1-D int64 array")

    @intrinsic
    def fetch_add(typingctx, array, index, value):
        """Add ``value`` to ``array[index]`` atomically; the value before."""
        _check(array)

        def codegen(context, builder, signature, args):
            return builder.atomic_rmw("add", _pointer(context, builder, signature, args),
                                      _value(context, builder, signature, args), "seq_cst")

        return types.int64(array, index, value), codegen

    @intrinsic
    def load_acquire(typingctx, array, index):
        """``array[index]``, an acquire load."""
        _check(array)

        def codegen(context, builder, signature, args):
            return builder.load_atomic(_pointer(context, builder, signature, args), "acquire", 8)

        return types.int64(array, index), codegen

    @intrinsic
    def store_release(typingctx, array, index, value):
        """``array[index] = value``, a release store."""
        _check(array)

        def codegen(context, builder, signature, args):
            builder.store_atomic(_value(context, builder, signature, args),
                                 _pointer(context, builder, signature, args), "release", 8)
            return context.get_dummy_value()

        return types.none(array, index, value), codegen

    #: x86's spin-wait hint, as LLVM's intrinsic (numba's LLVM parses no inline assembly)
    _PAUSE = ("llvm.x86.sse2.pause" if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
              else "")

    @intrinsic
    def cpu_relax(typingctx):
        """A spin-wait hint to the processor."""

        def codegen(context, builder, signature, args):
            if _PAUSE:
                pause = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                       _PAUSE)
                builder.call(pause, [])
            return context.get_dummy_value()

        return types.none(), codegen
