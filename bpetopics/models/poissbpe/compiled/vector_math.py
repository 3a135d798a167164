"""Elementary functions that compiled loops can vectorise (numba, float32).

numba turns ``np.exp`` on a float32 into one call to libm's ``expf`` per value, which
stops LLVM from vectorising the loop around it. :func:`expf` is Cephes' ``expf`` in pure
arithmetic (range reduction, a degree-5 polynomial, the power of two put in the exponent
bits), so a loop of them runs in the machine's vector width. The logarithm's counterpart
is :func:`bpetopics.models.poissbpe.compiled.pursuit_loops.log_inplace`.
"""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

#: The arguments :func:`expf` takes as themselves: below EXP_FLOOR the result is
#: exp(-87), about 1.6e-38 (the smallest normal float32 is 1.2e-38), where libm's would be
#: a subnormal or 0; above EXP_CEILING it is exp(88), about 1.65e38 (not inf).
EXP_FLOOR, EXP_CEILING = -87.0, 88.0

if numba is not None:
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def as_float32(typingctx, bits):
        """The float32 whose bits are the int32 ``bits`` (a bit cast, no conversion)."""
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType())
        return types.float32(types.int32), codegen

    @numba.njit(inline="always", nogil=True, error_model="numpy")
    def expf(x):  # pragma: no cover - compiled
        """exp(x) for a float32 x, by Cephes' expf: x = n ln 2 + r with |r| <= ln 2 / 2
        (ln 2 in two parts, so r is exact), exp(r) = 1 + r + r^2 P(r), times 2^n built
        in the exponent's bits. Within 3e-7 relative of exp in float64 over
        [EXP_FLOOR, EXP_CEILING]; x outside is taken as the nearer end (so the
        exponent's bits never overflow)."""
        x = min(max(x, np.float32(EXP_FLOOR)), np.float32(EXP_CEILING))
        n = np.floor(x * np.float32(1.44269504088896341) + np.float32(0.5))     # round(x / ln 2)
        r = x - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
        z = r * r
        p = np.float32(1.9875691500e-4) * r + np.float32(1.3981999507e-3)
        p = p * r + np.float32(8.3334519073e-3)
        p = p * r + np.float32(4.1665795894e-2)
        p = p * r + np.float32(1.6666665459e-1)
        p = p * r + np.float32(5.0000001201e-1)
        return (p * z + r + np.float32(1.0)) * as_float32((np.int32(n) + np.int32(127)) << np.int32(23))
