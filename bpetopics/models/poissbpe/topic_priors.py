"""The theta step's priors on PoissBPE's topics, as a mixin of
:class:`~bpetopics.models.poissbpe.PoissBPE`: the diversity prior (``topic_repulsion``)
and the Dirichlet prior (``topic_smoothing``), their penalty (autograd) and their
gradients written out (:mod:`bpetopics.models.poissbpe.topic_prior` has the functions and the
reasoning behind them)."""

from __future__ import annotations

import torch

from bpetopics.models.poissbpe.topic_prior import (dirichlet_logit_grad, dirichlet_penalty, topic_overlap,
                                        topic_overlap_grad)

#: The diversity prior pushes each topic away from up to this many others at full weight
#: (T = 60); with more topics the same push is shared among them (_penalty_weight).
FULL_PUSH_PARTNERS = 59
#: Above this many topics both priors on the topics weaken as FULL_PRIOR_TOPICS / T
#: (:meth:`TopicPriors._prior_scale`): the diversity prior's push on each topic, and the
#: default Dirichlet prior's pseudo-counts, whose total over the topics then stays what
#: 100 topics have. At T = 200 the full priors pulled the topics' top words towards
#: rarer ones that carry less well to held-out text (docs/defaults.md: the diversity
#: prior, the Dirichlet prior).
FULL_PRIOR_TOPICS = 100
#: ``topic_smoothing=None`` (the default): eta = BASE_SMOOTHING on corpora of
#: SMOOTHING_TOKENS tokens and more, BASE_SMOOTHING * SMOOTHING_TOKENS / N_tok below, at
#: most MAX_SMOOTHING (docs/defaults.md: 0.45 on lee's 17,700
#: tokens, 0.52 on 400 documents of 20 Newsgroups; the corpora of 100,000 tokens and more
#: keep 0.1).
BASE_SMOOTHING = 0.1
#: With a sparse Dirichlet prior (``topic_smoothing`` < 0) each topic logit stays within
#: this many nats of its row's log-normaliser (beta_tw >= about e^-30 = 1e-13): the prior
#: would push the logits of the words a topic lacks down by about ``lr`` a step without
#: end, into float32's subnormal numbers, whose arithmetic is many times slower.
LOGIT_FLOOR = 30.0
SMOOTHING_TOKENS = 80_000
MAX_SMOOTHING = 1.0


def smoothing_for(n_tokens: float) -> float:
    """The default Dirichlet pseudo-counts eta for a corpus of ``n_tokens`` tokens."""
    return min(MAX_SMOOTHING, BASE_SMOOTHING * max(1.0, SMOOTHING_TOKENS / max(float(n_tokens), 1.0)))


class TopicPriors:
    """The penalty hooks of :class:`~bpetopics.bpe.model.BPEBase` for PoissBPE (needs its
    ``likelihood_``, ``n_topics``, ``topic_repulsion``, ``topic_smoothing`` and, with
    smoothing, ``n_tokens_``)."""

    def _topics_now(self) -> int:
        """T, the topics the model has now: ``current_topics_`` (T0 before the topics
        grow), ``n_topics`` before the model is built."""
        return getattr(self, "current_topics_", None) or self.n_topics

    def _prior_scale(self) -> float:
        """min(1, 100 / T) (:data:`FULL_PRIOR_TOPICS`): how much of their strength the
        priors on the topics keep with T topics (:meth:`_topics_now`)."""
        return min(1.0, FULL_PRIOR_TOPICS / self._topics_now())

    def _penalty_weight(self) -> float:
        """lambda T min(T - 1, 59) min(1, 100 / T): the penalty is this times the
        use-weighted mean cosine. Up to T = 60 that is the cosines summed over all ordered
        pairs (lambda T (T - 1)); above, the push on each topic stays what 59 partners give
        it, shared among its T - 1 (the full sum grows with T: at T = 100 it cost
        coherence, perplexity and accuracy for diversity); above T = 100 that push falls
        as 100 / T (:meth:`_prior_scale`; at T = 200 half of it raised held-out coherence
        and lowered perplexity for a little diversity; docs/defaults.md)."""
        n_topics = self._topics_now()
        return (self.topic_repulsion * n_topics * min(n_topics - 1, FULL_PUSH_PARTNERS)
                * self._prior_scale())

    def _topic_smoothing(self) -> float:
        """eta in use: ``topic_smoothing``, or for None :func:`smoothing_for` the corpus's
        N_tok (``n_tokens_``; BASE_SMOOTHING before it is known) times min(1, 100 / T)
        (:meth:`_prior_scale`: above 100 topics the pseudo-counts of all topics together
        stay what 100 topics have; at T = 200 half of them gave more diverse topics and,
        on long documents, lower perplexity; docs/defaults.md)."""
        if self.topic_smoothing is not None:
            return float(self.topic_smoothing)
        n_tokens = getattr(self, "n_tokens_", None)
        return (smoothing_for(n_tokens) if n_tokens else BASE_SMOOTHING) * self._prior_scale()

    def _logit_floor(self) -> float:
        """:data:`LOGIT_FLOOR` with a sparse Dirichlet prior (eta < 0), else inf (none)."""
        return LOGIT_FLOOR if self._topic_smoothing() < 0 else float("inf")

    def _adam_step(self) -> None:
        """The theta step's Adam step, then, with a sparse Dirichlet prior, the topic logits
        floored :data:`LOGIT_FLOOR` nats below their row's log-normaliser (the compiled
        step floors them itself)."""
        super()._adam_step()
        floor = self._logit_floor()
        if floor < float("inf"):
            with torch.no_grad():
                logits = self.likelihood_.topic_logits
                logits.clamp_(min=torch.logsumexp(logits, dim=1, keepdim=True) - floor)

    def _smoothing_strength(self) -> float:
        """s = eta / N_tok, the Dirichlet prior's weight per token (0 without smoothing)."""
        eta = self._topic_smoothing()
        return eta / self.n_tokens_ if eta else 0.0

    def _theta_penalty(self, out, params=None, usage=None):
        """lambda * R(beta): the use-weighted cosines summed over all ordered pairs of
        topics, T (T - 1) times their weighted mean (topic_prior.py), times 59 / (T - 1)
        above 60 topics (:meth:`_penalty_weight`); ``params`` is the
        minibatch's beta when already computed, ``usage`` the topics' mean use in the
        minibatch when processes share it (else from ``out``); plus the topics' Dirichlet
        prior, -(eta / N_tok) sum ln beta (``topic_smoothing``)."""
        beta = self.likelihood_.topic_word() if params is None else params
        penalty = 0.0
        if self._topic_smoothing():
            penalty = dirichlet_penalty(beta, self._smoothing_strength())
        if not self.topic_repulsion:
            return penalty
        if usage is None:
            usage = self.likelihood_.link(out).detach().mean(0)         # (T,)
        overlap = topic_overlap(beta, usage)
        return penalty + self._penalty_weight() * overlap

    def _smoothing_backward(self, params=None) -> None:
        """The gradient of the topics' Dirichlet prior (``topic_smoothing``,
        topic_prior.dirichlet_logit_grad) into ``topic_logits.grad``."""
        if not self._topic_smoothing():
            return
        logits = self.likelihood_.topic_logits
        beta = self.likelihood_.minibatch_params() if params is None else params
        grad = dirichlet_logit_grad(beta, self._smoothing_strength()).to(logits.dtype)
        logits.grad = grad if logits.grad is None else logits.grad.add_(grad)

    def _penalty_backward(self, out, params=None, usage=None) -> None:
        """The gradients of :meth:`_theta_penalty` (the diversity prior, written out:
        topic_prior.py) and of the topics' Dirichlet prior into ``topic_logits.grad``.

        Both reach the logits through beta's softmax in one chain: the Dirichlet prior's
        logit gradient s (W beta_tv - 1) is beta_tv (g_tv - <beta_t, g_t>) - s for the
        diversity prior's g with s W taken off its inner products, so the two cost three
        passes over the W x T logits instead of seven."""
        if not self.topic_repulsion:
            self._smoothing_backward(params)
            return
        if usage is None:
            usage = self.likelihood_.link(out).detach().mean(0)         # (T,)
        beta = self.likelihood_.minibatch_params() if params is None else params
        _, grad, inner = topic_overlap_grad(beta, usage, scale=self._penalty_weight())
        strength = self._smoothing_strength()
        if strength:
            inner = inner - strength * beta.shape[0]                    # <beta_t, g_t> - s W
        self.likelihood_.add_topic_word_grad(grad, beta, inner=inner)
        if strength:
            self.likelihood_.topic_logits.grad.sub_(strength)

    def _penalty_statistics(self, out):
        """The summed mixtures sum_n f(z_n) (T,) that the diversity prior's use reads."""
        return self.likelihood_.link(out).detach().sum(0) if self.topic_repulsion else None
