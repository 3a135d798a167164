"""What every ``compiled/`` folder of the package shares: how its numba kernels are cached
on disk (:mod:`bpetopics.compiled.kernel_cache`)."""
