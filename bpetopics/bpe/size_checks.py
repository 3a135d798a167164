"""The estimators' size checks (:class:`SizeChecks`, a part of
:class:`~bpetopics.bpe.model.BPEBase`): refuse, before anything is allocated, sizes that
cannot work for the data or the memory (:mod:`bpetopics.bpe.sizes` has the estimate),
and parameters that cannot train in several processes."""

from __future__ import annotations

from bpetopics.bpe import sizes
from bpetopics.bpe.device import resolve_device
from bpetopics.bpe.pursuit import default_budget


class SizeChecks:
    """What the estimator checks of its sizes; needs ``code_length()``, ``_n_out(shape)``,
    ``_validate_params()`` and the parameters ``hidden``, ``batch_size`` and ``device``."""

    def check_sizes(self, n_data: int, n_features: int) -> None:
        """Refuse, before anything is allocated, sizes that cannot work for data of
        ``n_data`` points and ``n_features`` features: raises
        :class:`~bpetopics.bpe.sizes.SizeError` (a ValueError naming the parameter to
        lower) for too many bits, or when the memory a fit needs
        (:func:`~bpetopics.bpe.sizes.estimate_fit_bytes`) exceeds what is free."""
        self._validate_params()
        self._check_code_length()
        self._check_memory(n_data, n_features)

    def check_processes(self, n_processes: int, label=str) -> None:
        """Refuse (ValueError, one line) parameters that cannot train with ``n_processes``
        processes sharing each step, before any starts; ``label`` as for :meth:`validate`.
        Every parameter of the shared estimator can."""

    def _check_code_length(self) -> None:
        """SizeError for a code longer than the pursuit can search."""
        sizes.check_bits(self.code_length())

    def _least_data(self, n_data: int) -> tuple[int, int]:
        """The fewest points and features that data of at least ``n_data`` points can have
        and train with these parameters (the memory check before the data is read)."""
        return max(1, int(n_data)), 1

    def _size_parameters(self) -> dict:
        """The parameters that size a fit, by name (those a memory refusal may name)."""
        return {"n_bits": self.code_length(), "hidden": tuple(int(h) for h in self.hidden),
                "batch_size": int(self.batch_size)}

    def _fit_memory(self, n_data: int, n_features: int, size: dict) -> dict:
        """The memory estimate by part (:func:`~bpetopics.bpe.sizes.estimate_fit_bytes`)
        of a fit on data of this size with the size parameters ``size``."""
        return sizes.estimate_fit_bytes(n_data, n_features, size["n_bits"], self._n_out((n_data, n_features)),
                                        size["hidden"], size["batch_size"], None,
                                        default_budget(resolve_device(self.device)))

    def _check_memory(self, n_data: int, n_features: int) -> None:
        """SizeError when a fit on data of this size needs more memory than is free,
        naming the size parameter whose least value would save most."""
        sizes.check_fit_sizes(lambda size: self._fit_memory(n_data, n_features, size), self._size_parameters(),
                              sizes.free_memory_bytes(resolve_device(self.device)))
