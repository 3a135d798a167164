"""The shared estimator: MAP-EM training of a BPE model by minibatches.

Each minibatch takes one training step (docs/model.md, "One training step on a minibatch"): pursuit, q(pi)'s
step, theta's step, written once in :mod:`bpetopics.bpe.training_step` (the
:class:`~bpetopics.bpe.training_step.TrainingStep` half of :class:`BPEBase`).

The variants (PoissBPE, GaussBPE, BernBPE in :mod:`bpetopics.models`) only choose a
likelihood (:class:`~bpetopics.bpe.likelihoods.Likelihood`), its defaults and how
parameters start. Minibatches come from a batch source (:mod:`bpetopics.bpe.batches`);
several processes can share each step (``step_group``, :mod:`bpetopics.bpe.step_group`).
Encoding new data with the model frozen is :mod:`bpetopics.bpe.encoding`'s.
"""

from __future__ import annotations

import time

import torch

from bpetopics.bpe import params as P
from bpetopics.bpe.adam import Adam
from bpetopics.bpe.batches import MinibatchBar
from bpetopics.bpe.compile_clock import CompileClock
from bpetopics.bpe.decoder import ACTIVATIONS, CodeDecoder
from bpetopics.bpe.device import resolve_device
from bpetopics.bpe.likelihoods import Likelihood
from bpetopics.bpe.prior import BetaProcessPrior, check_prior
from bpetopics.bpe.saved_state import SavedState
from bpetopics.bpe.size_checks import SizeChecks
from bpetopics.bpe.encoding import Encoding
from bpetopics.bpe.interruptions import interruptions_kept
from bpetopics.bpe.step_group import LOCAL
from bpetopics.bpe.training_step import TrainingStep
from bpetopics.bpe import sizes

__all__ = ["BPEBase", "resolve_device"]


class BPEBase(SizeChecks, P.HyperParameters, SavedState, Encoding, TrainingStep):
    """Beta-Bernoulli-process sparse coding with a deep decoder (shared machinery).

    Hyperparameters are stored unchanged by ``__init__`` (scikit-learn's contract:
    ``get_params(deep)``, ``set_params``, so ``sklearn.base.clone``, ``Pipeline`` and
    ``GridSearchCV`` work); fitted state ends in ``_``. Their rules are declared once in
    ``_parameter_rules`` (:mod:`bpetopics.bpe.params`, with ``get_params``,
    ``set_params`` and ``config_params``) and checked by ``fit`` and the CLI alike. Subclasses implement ``_make_likelihood(shape)`` and may override
    ``_n_out(shape)`` and ``_init_params(X, generator)``.
    """

    _parameter_rules = {
        "n_bits": P.POSITIVE_INT, "hidden": P.Rule("ints", low=1),
        "activation": P.Rule("choice", choices=tuple(ACTIVATIONS)),
        "alpha": P.POSITIVE_OR_NONE, "gamma": P.POSITIVE_OR_NONE, "tau": P.POSITIVE,
        "kappa": P.Rule("real", low=0.5, low_open=True), "epochs": P.POSITIVE_INT_OR_NONE,
        "batch_size": P.POSITIVE_INT, "lr": P.POSITIVE, "max_bits": P.POSITIVE_INT_OR_NONE,
        "flat_start": P.BOOL, "prior_ramp_epochs": P.NON_NEGATIVE, "random_state": P.Rule("int"),
        "device": P.ANY, "progress": P.BOOL, "callback": P.ANY,
    }

    def __init__(self, n_bits=64, *, hidden=(128,), activation="relu", alpha=1.0, gamma=2.0,
                 tau=1.0, kappa=0.7, epochs=20, batch_size=256, lr=1e-2, max_bits=None,
                 flat_start=True, prior_ramp_epochs=1.0, random_state=0, device="auto",
                 progress=True, callback=None):
        self.n_bits = n_bits
        self.hidden = hidden
        self.activation = activation
        self.alpha = alpha
        self.gamma = gamma
        self.tau = tau
        self.kappa = kappa
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.max_bits = max_bits
        self.flat_start = flat_start
        self.prior_ramp_epochs = prior_ramp_epochs
        self.random_state = random_state
        self.device = device
        self.progress = progress
        self.callback = callback

    # ------------------------------------------------------------------ subclass hooks
    def code_length(self) -> int:
        """K, the bits of a code: ``n_bits`` (a subclass may compute it when that is None)."""
        return int(self.n_bits)

    def _make_likelihood(self, shape):
        """The likelihood module for data of ``shape`` (N, D)."""
        raise NotImplementedError

    def _n_out(self, shape) -> int:
        return shape[1]

    def _init_params(self, X, generator: torch.Generator) -> None:
        """Called once after the modules exist; default keeps torch's initialisation."""

    def _pursuit_options(self, training: bool = False) -> dict:
        """Extra keyword arguments of :func:`~bpetopics.bpe.pursuit.greedy_pursuit` for
        this model, in a training step or (``training=False``) encoding; the image
        models' ``shortlist``."""
        return {}

    def _check_X(self, X):
        return X

    def _theta_penalty(self, out, params=None, usage=None):
        """Negative log prior of theta added to the theta step's per-token loss (MAP),
        given the minibatch's decoder outputs ``out`` (P, n_out) (and, in a shared step,
        ``usage``: ``_penalty_statistics`` summed over the whole minibatch, divided by its
        size); the default, 0, is maximum likelihood."""
        return 0.0

    def _penalty_backward(self, out, params=None, usage=None) -> None:
        """Add the gradient of ``_theta_penalty(out, params, usage)`` to theta's ``.grad``
        (autograd here; a subclass may write it out)."""
        penalty = self._theta_penalty(out, params, usage)
        if torch.is_tensor(penalty) and penalty.requires_grad:
            penalty.backward()

    def _penalty_statistics(self, out):
        """What ``_theta_penalty`` reads from the minibatch, summed over its points (a
        tensor), or None (nothing): summed across processes in a shared step."""
        return None

    def _end_of_epoch(self, X) -> dict:
        """Called after each epoch's steps (state must depend only on the model and X, so
        that resumed runs stay identical); returns extra entries for ``history_``."""
        return {}

    # ---------------------------------------------------------------------- set-up
    def _validate_params(self):
        """Check the parameters against ``_parameter_rules`` (ValueError, one line)."""
        P.check_params(self.get_params(deep=False), self._parameter_rules)

    def _setup(self, X, n_data=None):
        """Build decoder, likelihood, prior and optimiser (seeded) and initialise them;
        ``n_data`` (default: the rows of X) is N, the corpus size that scales the prior."""
        n_data = X.shape[0] if n_data is None else n_data
        self.check_sizes(n_data, X.shape[1])
        self._build(n_data, X.shape[1])
        generator = torch.Generator().manual_seed(int(self.random_state))
        self._init_params(X, generator)

    def _build(self, n_data, n_features):
        """Build the modules for data of this size, with torch's seeded initialisation."""
        self._validate_params()
        self.device_ = resolve_device(self.device)
        self.n_data_, self.n_features_ = int(n_data), int(n_features)
        shape = (0, self.n_features_)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.random_state))
            self.decoder_ = CodeDecoder(self.code_length(), self._n_out(shape), tuple(self.hidden),
                                        self.activation)
            self.likelihood_ = self._make_likelihood(shape)
        if not isinstance(self.likelihood_, Likelihood):
            raise TypeError(f"{type(self.likelihood_).__name__} does not implement the Likelihood protocol")
        self.decoder_.to(self.device_)
        self.likelihood_.to(self.device_)
        self.prior_ = BetaProcessPrior(self.code_length(), self.n_data_, *self.prior_hyperparameters(),
                                       self.tau, self.kappa, self.flat_start, self.device_)
        self.optimizer_ = Adam(self._parameters(), lr=self.lr)     # torch.optim.Adam's update
        self.history_ = []
        self.epoch_ = 0
        self.step_ = 0

    def validate(self, n_data: int = 1, label=str) -> None:
        """Check every parameter before any work, allocating nothing (ValueError, one
        line): the declared rules, the device, the sizes that cannot work whatever the
        data (:class:`~bpetopics.bpe.sizes.SizeError`: too many bits, or more memory
        than is free even for the least data of at least ``n_data`` points these
        parameters can train on) and the prior that ``n_data`` points would get
        (gamma < K, kappa <= 1). ``label`` names parameters in the message (the CLI:
        its options)."""
        P.check_params(self.get_params(deep=False), self._parameter_rules, label)
        resolve_device(self.device)
        try:
            self._check_code_length()
            self._check_memory(*self._least_data(n_data))
        except sizes.SizeError as exc:
            raise exc.labelled(label) from None
        check_prior(self.code_length(), self.prior_hyperparameters(n_data)[1], self.kappa)

    def prior_hyperparameters(self, n_data=None) -> tuple[float, float]:
        """(alpha, gamma) with the defaults resolved: ``alpha=None`` is N, the number of
        training points (the prior weighs as much as the data), ``gamma=None`` is K / 4
        (prior mean E[pi_k] = gamma / K = 1/4). ``n_data`` defaults to the fitted N."""
        n_data = self.n_data_ if n_data is None else n_data
        alpha = float(n_data) if self.alpha is None else float(self.alpha)
        gamma = self.code_length() / 4 if self.gamma is None else float(self.gamma)
        return alpha, gamma

    def _parameters(self):
        return list(self.decoder_.parameters()) + list(self.likelihood_.parameters())

    def _steps_per_epoch(self) -> int:
        return max(1, -(-self.n_data_ // self.batch_size))

    #: ``epochs=None`` trains for at least this many minibatch steps ...
    AUTO_MIN_STEPS = 2000
    #: ... in this many epochs at least and at most.
    AUTO_EPOCH_RANGE = (15, 30)

    def total_epochs(self) -> int:
        """The number of epochs training runs: ``epochs``, or for ``epochs=None``
        enough epochs for :attr:`AUTO_MIN_STEPS` minibatch steps on the training data,
        clipped to :attr:`AUTO_EPOCH_RANGE`: a small corpus has few steps per epoch, and
        fifteen epochs of four steps leave the topics half-trained, but past about 30
        passes the codes fit the training documents rather than the topics (their bits
        fall to one a document) and held-out quality stops improving. Needs the model
        built (``n_data_``)."""
        if self.epochs is not None:
            return int(self.epochs)
        low, high = self.AUTO_EPOCH_RANGE
        return int(min(max(-(-self.AUTO_MIN_STEPS // self._steps_per_epoch()), low), high))

    def prior_weight(self, step=None) -> float:
        """Weight of the prior's log-odds in the pursuit of training step ``step`` (default:
        the next, ``step_``): ramps 0 -> 1 over the first ``prior_ramp_epochs`` epochs (1
        throughout when it is 0)."""
        step = self.step_ if step is None else step
        ramp = self.prior_ramp_epochs * self._steps_per_epoch()
        return 1.0 if ramp <= 0 else min(1.0, step / ramp)

    # ---------------------------------------------------------------------- training
    def fit(self, X, y=None, *, encode=True):
        """Train from scratch for :meth:`total_epochs` epochs.

        Parameters
        ----------
        X : array-like, shape (N, D), or RowStore
            Data (a CSR count matrix for text), or rows read from disk as training goes
            (:class:`~bpetopics.bpe.batches.RowStore`, e.g. a sharded corpus's counts:
            the same model as from the same rows in memory).
        encode : bool
            End by encoding X into ``codes_`` (N, K); False leaves ``codes_`` unset (a
            training job on a sharded corpus writes the codes shard by shard instead).

        Returns
        -------
        self
        """
        X = self._check_X(X)
        self._setup(X)
        self._train(X, self.total_epochs())
        if encode:
            self.codes_ = self.transform(X)
        return self

    def continue_fit(self, X, *, encode=True):
        """Train the remaining ``total_epochs() - epoch_`` epochs (after loading a checkpoint).

        The epoch order depends only on the seed and the epoch number, so a run resumed
        from the state saved after epoch e ends with the same model as one never stopped.
        ``encode`` as for :meth:`fit`.
        """
        X = self._check_X(X)
        self._check_fitted()
        self._train(X, max(0, self.total_epochs() - self.epoch_))
        if encode:
            self.codes_ = self.transform(X)
        return self

    def partial_fit(self, X, y=None, total_samples=None):
        """One pass (one epoch) over the chunk X, building the model on the first call.

        ``total_samples`` is N, the size of the whole corpus streamed in chunks (as in
        scikit-learn's online LDA): the prior's natural-gradient step scales each
        minibatch by N / |S|, so it must be the corpus size, not the chunk's. Without it
        N is the first chunk's size (and stays so).
        """
        X = self._check_X(X)
        if not hasattr(self, "decoder_"):
            self._setup(X, n_data=total_samples)
        elif total_samples is not None and int(total_samples) != self.n_data_:
            self.n_data_ = int(total_samples)
            self.prior_.n_data = self.n_data_
        self._train(X, 1)
        return self

    #: The processes sharing each step (:mod:`bpetopics.bpe.step_group`): this one alone
    #: unless a data-parallel trainer (``runs/distributed.py``) sets an instance's own.
    step_group = LOCAL

    def _batches(self, X):
        """The batch source of the epoch about to run (``epoch_`` done so far): the
        matrix's own for a :class:`~bpetopics.bpe.batches.RowStore` (rows on disk), else
        :class:`~bpetopics.bpe.batches.InMemoryBatches` (the same minibatches for the
        same rows); in a shared step, this process's share of each (``step_group``)."""
        return self.step_group.batches(X, self.batch_size, self.random_state, self.epoch_)

    def _train(self, X, n_epochs):
        """``n_epochs`` epochs, ``callback(self, info)`` after each; with ``progress`` a bar
        over their minibatches (an image epoch on a CPU can take minutes)."""
        bar = MinibatchBar(type(self).__name__, n_epochs, self.progress)
        try:
            with interruptions_kept():
                for _ in range(n_epochs):
                    with CompileClock(bar.note if self.progress else None).listening() as clock:
                        info = self._run_epoch(X, bar.wrap(self._batches(X), self.epoch_ + 1))
                    if clock.seconds > 0:
                        # a first run compiles the CPU kernels: not training time
                        info["compile_seconds"] = clock.seconds
                        info["seconds"] = max(0.0, info["seconds"] - clock.seconds)
                    bar.epoch_done(objective=f"{info['objective']:.1f}", bits=f"{info['active_bits']:.2f}")
                    if self.callback is not None:
                        self.callback(self, info)
        finally:
            bar.close()

    def _learning_rate(self) -> float:
        """Adam's learning rate for the epoch about to run (``epoch_`` done so far);
        constant ``lr`` unless a subclass decays it. A function of ``epoch_`` alone, so a
        resumed run continues the same schedule."""
        return self.lr

    def _run_epoch(self, X, batches):
        """One pass of minibatch steps over the batch source ``batches`` (for the
        in-memory X: shuffled by seed and epoch, :mod:`bpetopics.bpe.batches`);
        appends to ``history_``."""
        start = time.perf_counter()
        for group in self.optimizer_.param_groups:
            group["lr"] = self._learning_rate()
        total_score, total_bits = self._epoch_steps(batches)
        self.epoch_ += 1
        info = {"epoch": self.epoch_, "objective": total_score / batches.n_samples,
                "active_bits": total_bits / batches.n_samples}
        info.update(self._end_of_epoch(X))
        info["seconds"] = time.perf_counter() - start
        self.history_.append(info)
        return info

    def _epoch_steps(self, batches) -> tuple[float, float]:
        """The epoch's training steps, one per minibatch: (summed score, summed bits); a
        subclass may schedule them otherwise (PoissBPE's pipelined steps)."""
        total_score, total_bits = 0.0, 0.0
        for X_batch in batches:
            score, bits = self._train_step(X_batch)
            total_score += score
            total_bits += bits
        return total_score, total_bits
