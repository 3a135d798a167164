"""Training steps with the next minibatch's pursuit run during this one's theta step.

A training step on minibatch S_b (:meth:`bpetopics.bpe.model.BPEBase._train_step`) is
strictly in order: the pursuit needs theta_b, the theta step makes theta_{b+1}, and the
next pursuit needs that. The pipelined schedule starts the next pursuit from the theta of
*this* step, one Adam step stale, so that two threads can work at once::

    z_b          pursued with theta_{b-1} and q(pi) after z_{b-1}   (during step b-1)
    q(pi)     <- natural-gradient step from z_b
    start:       the pursuit of S_{b+1} with theta_b and this q(pi)  (second thread)
    theta_{b+1} <- one Adam step at z_b                              (this thread)

Only the order changes: each step's update is the one step's
(:meth:`~bpetopics.bpe.training_step.TrainingStep._update`, the log-odds handed over
between q(pi)'s step and theta's), the epoch's first pursuit its ``_pursue``.

Each code is still the greedy pursuit's for the theta it was pursued with; that theta is
one step older (as in asynchronous SGD with a delay of one step; an Adam step moves
each coordinate by about ``lr``). The first minibatch of each epoch is pursued with the
current theta (the topic moves at the end of an epoch change the model), so a run
resumed from a checkpoint stays identical.

The pursuit reads copies (:class:`~bpetopics.models.poissbpe.compiled.rows_pursuit.ThetaCopy`) in compiled
calls that hold no lock, so the schedule does not depend on the threads: on one thread
the same steps run one after the other and give the same model bit for bit
(``pipeline=True``). On two, the pursuit of S_{b+1} is handed to the helper thread
(:class:`~bpetopics.models.poissbpe.compiled.pursuit_helper.PursuitHelper`) as soon as its theta_b is made,
right after the theta step b-1 and before this thread joins the pursuit of S_b: the
helper goes on to it from its last share of S_b and prepares it (the packed rows, their
vocabulary, the first step's table: none of it needs q(pi)) while this thread ends step
b-1 and takes the prior's step b, which then gives it the log-odds
(``RowsPursuit.release``); the helper pursues shares of decreasing work while this
thread takes the theta step, and this one joins after (:data:`SHARES`). Neither thread
waits on the other's Python: each thread's part is one compiled call
(:mod:`bpetopics.models.poissbpe.compiled.rows_pursuit`), and this thread spins without the GIL while the
helper starts on the next pursuit (a thread woken while the other holds the GIL waited
~50-100 us for it, of a 0.5 ms minibatch). Used where the compiled pursuit serves the
model (CPU, linear decoder, numba) and one process trains (PoissBPE's ``pipeline``).
"""

from __future__ import annotations

from functools import partial

from bpetopics.models.poissbpe.compiled import prior as compiled_prior
from bpetopics.models.poissbpe.compiled.rows_pursuit import RowsPursuit, ThetaCopy, helper

#: The next minibatch's documents are pursued in this many shares of decreasing size
#: (rows_preparation.guided_bounds: 1/2, 1/4, 1/8, 1/8 of the work): the second thread
#: starts on them, this one joins after its theta step, so both finish about together
#: whichever side is longer. Measured on 20 Newsgroups (two-thread epochs alternated in
#: one process, median ms, shares 3 / 4 / 5 / 6): T = 20 83 / 80 / 80 / 82, T = 50
#: 129 / 135 / 135 / 145; before the hand-off ahead, T = 20 two threads over one 1.44x in
#: three shares, 1.49x in four, 1.40x in six, 1.19x in eight.
SHARES = 4

#: How long this thread spins for the helper to start on the next pursuit (2,048 pauses:
#: about 50 us here) before it goes on regardless: long enough for a helper on its own
#: core, short on a machine with more busy threads than cores.
LET_IN_SPINS = 2048


def run_epoch(model, batches, threads: int) -> tuple[float, float]:
    """One epoch of the pipelined schedule (module docstring) over the batch source
    ``batches``; the next pursuit on a second thread when ``threads`` >= 2.

    Parameters
    ----------
    model : BPEBase
        A text model whose pursuit the compiled loop serves, one process.
    batches : BatchSource
    threads : int

    Returns
    -------
    (float, float)
        The epoch's summed scores and summed active bits.
    """
    likelihood = model.likelihood_
    iterator = iter(batches)
    X_batch = next(iterator, None)
    if X_batch is None:
        return 0.0, 0.0
    # the epoch's first minibatch: the step's own pursuit, with the current theta
    params = likelihood.minibatch_params()
    batch, codes, score = model._pursue(X_batch, params, model.prior_weight())
    second = helper() if threads > 1 else None
    upcoming = following = _ahead(model, next(iterator, None), params, second)
    total_score, total_bits = 0.0, 0.0
    try:
        while True:
            # steps 2-4 of the step (BPEBase._update); between q(pi)'s step and theta's, the
            # next pursuit gets its log-odds: the prior after this step's codes
            release = None if upcoming is None else partial(_release, model, upcoming)
            score_sum, bits_sum = model._update(X_batch, batch, codes, score, params, model.prior_weight(),
                                                between=release)
            total_score += score_sum
            total_bits += bits_sum
            if upcoming is None:
                return total_score, total_bits
            # the next topics, and the pursuit after the next handed ahead (queued for the
            # helper: it goes on to it from its last share of this one, without a pause)
            params = likelihood.minibatch_params()
            following = _ahead(model, next(iterator, None), params, second)
            upcoming.join()                   # what the other thread has not taken
            X_batch, (batch, codes, score) = upcoming.X_batch, upcoming.finish().result()
            if following is not None and second is not None:
                following.let_in(LET_IN_SPINS)  # the helper's Python runs while this one waits
            upcoming = following
    finally:                                  # (an error): the helper must not wait for
        for pursuit in (upcoming, following):  # either pursuit handed to it
            if pursuit is not None:
                pursuit.abandon()


def _release(model, pursuit) -> None:
    """Give ``pursuit`` (the next step's) its log-odds: the prior's after this step's
    q(pi) step, times its weight at the next step, w_{t+1} (psi(a_k) - psi(b_k))."""
    pursuit.release(compiled_prior.bit_log_odds(model.prior_), model.prior_weight(model.step_ + 1))


def _ahead(model, X_next, params, second):
    """The pursuit of the minibatch after this one, made now that its theta (this step's
    decoder and topics ``params``) is known and handed to the helper thread (if any) to
    prepare; its shares wait for the log-odds, which the prior's next step sets
    (:meth:`RowsPursuit.release`). None at the epoch's end."""
    if X_next is None:
        return None
    pursuit = RowsPursuit(X_next, ThetaCopy.of_model(model, params, prior=False),
                          SHARES if second is not None else 1, ready=False)
    if second is not None:
        second.hand(pursuit)
    return pursuit
