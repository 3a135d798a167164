"""Size sanity before training: refuse sizes that cannot make sense for the data, and
estimate the memory a fit needs before any of it is allocated.

The estimate (float32, 4 bytes an element) adds up what a fit holds at once:

    decoder      4 P: each of the decoder's P parameters (K x H1 + ... + H_L x D_out and
                 the biases), its gradient and Adam's two moments
    topics       4 W T: the topic logits (text), their gradient and Adam's two moments
    topic_word   2 W T: the softmax over words and its gradient (text)
    pursuit      3 max(budget, K (H1 + D_out + 64)): one candidate pass of the greedy
                 pursuit (points x candidate bits x width, at least one point) and the
                 temporaries of its likelihood
    minibatch    4 B (H + D_out + W_B): activations of a step (W_B <= W: a batch's words)
    codes        N K bytes (bool)

It is an order of magnitude, not a promise: it is compared with the memory free on the
device and a fit that needs more than that is refused with the option to lower. Before the
data is known the estimators check the same sum at the least data their parameters allow
(:meth:`bpetopics.bpe.model.BPEBase.validate`): a size that cannot fit whatever the data
is refused before anything is allocated or read.
"""

from __future__ import annotations

import os

#: The most bits a code may have: the pursuit scores every bit at every step.
MAX_BITS = 65536
#: Bytes of one float32.
FLOAT_BYTES = 4


class SizeError(ValueError):
    """A size that cannot work for the data or the machine; names the parameter to lower.

    ``str()`` names the estimator's parameter (``n_topics=100000``);
    :meth:`message` names it as the caller spells it (e.g. the command line's ``--topics``).
    """

    def __init__(self, param: str, value, reason: str, flag: str | None = None):
        self.param, self.value, self.reason = param, value, reason
        super().__init__(self.message(flag))

    def message(self, flag: str | None = None) -> str:
        """One line naming the parameter as ``flag`` (``--topics``), or as ``param=value``."""
        value = ",".join(map(str, self.value)) if isinstance(self.value, (tuple, list)) else self.value
        shown = f"{self.param}={value}" if flag is None else f"{flag} {value}"
        return f"{shown} {self.reason}; lower {self.param if flag is None else flag}"

    def labelled(self, label) -> "SizeError":
        """The same error with ``str()`` naming the parameter as ``label(param)`` (e.g.
        the command line's ``--bits``; ``label=str`` keeps ``param=value``)."""
        flag = label(self.param)
        return SizeError(self.param, self.value, self.reason, None if flag == self.param else flag)


def estimate_fit_bytes(n_data: int, n_features: int, n_bits: int, n_out: int, hidden=(),
                       batch_size: int = 64, topics: int | None = None,
                       pursuit_budget: int = 1 << 22) -> dict:
    """Bytes a fit needs, by part (see the module docstring), and their ``"total"``.

    Parameters
    ----------
    n_data, n_features : int
        N and W (or D, the pixels).
    n_bits : int
        K.
    n_out : int
        D_out, the decoder's output width (T for text, D for images).
    hidden : tuple of int
        Decoder hidden sizes.
    topics : int, optional
        T for text (adds the topic logits W x T); None for images.
    """
    widths = [int(n_bits), *[int(h) for h in hidden], int(n_out)]
    decoder = sum(a * b + b for a, b in zip(widths[:-1], widths[1:]))
    topic_logits = int(n_features) * int(topics) if topics else 0
    first = widths[1]
    parts = {
        "decoder": 4 * decoder * FLOAT_BYTES,
        "topics": 4 * topic_logits * FLOAT_BYTES,
        "topic_word": 2 * topic_logits * FLOAT_BYTES,
        "pursuit": 3 * max(int(pursuit_budget), int(n_bits) * (first + int(n_out) + 64)) * FLOAT_BYTES,
        "minibatch": 4 * int(batch_size) * (sum(widths) + int(n_features)) * FLOAT_BYTES,
        "codes": int(n_data) * int(n_bits),
    }
    parts["total"] = sum(parts.values())
    return parts


def free_memory_bytes(device=None) -> int | None:
    """Memory free for a fit on ``device`` (a torch.device or str): CUDA's free memory, or
    the host's available memory (``MemAvailable``, else physical memory); None if unknown."""
    if device is not None and str(device).startswith("cuda"):
        import torch

        try:
            return int(torch.cuda.mem_get_info(torch.device(device))[0])
        except (RuntimeError, AssertionError):
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def check_fit_memory(parts: dict, free: int | None, culprits: dict) -> None:
    """Raise SizeError when the estimate ``parts`` exceeds ``free`` bytes.

    ``culprits`` maps each size parameter that can be lowered to its value and the bytes
    of the estimate it drives (e.g. how much less the total is with that parameter at its
    least); the one driving most of the estimate is named.
    """
    if free is None or parts["total"] <= free:
        return
    name, (value, _) = max(culprits.items(), key=lambda kv: kv[1][1])
    raise SizeError(name, value, f"needs about {_gb(parts['total'])} of memory to train, more than the "
                                 f"{_gb(free)} free")


def check_fit_sizes(fit_memory, size: dict, free: int | None) -> None:
    """Raise SizeError when a fit with the size parameters ``size`` needs more than
    ``free`` bytes, naming the parameter whose least value would save most.

    Parameters
    ----------
    fit_memory : callable
        ``size``-like dict -> bytes by part; the parts are summed (a ``"total"`` entry is
        left out of the sum).
    size : dict
        Parameter name -> int, or a tuple of ints (layer widths); its least value is 1
        (0 stays 0), 1 for each layer.
    free : int or None
        Bytes free (None: unknown, nothing is refused).

    The estimate for each parameter at its least is only computed when the fit is refused.
    """
    def total(values) -> int:
        return sum(v for k, v in fit_memory(values).items() if k != "total")

    needed = total(size)
    if free is None or needed <= free:
        return
    least = {name: tuple(1 for _ in value) if isinstance(value, tuple) else min(int(value), 1)
             for name, value in size.items()}
    culprits = {name: (value, needed - total({**size, name: least[name]})) for name, value in size.items()}
    check_fit_memory({"total": needed}, free, culprits)


def check_bits(n_bits: int) -> None:
    """Refuse code lengths the pursuit cannot search (over :data:`MAX_BITS`)."""
    if n_bits > MAX_BITS:
        raise SizeError("n_bits", n_bits, f"is more than {MAX_BITS:,} bits: the pursuit scores every bit "
                                          "of every code at each step")
