"""ProdLDA (Srivastava and Sutton 2017, "Autoencoding variational inference for topic
models"): the neural bag-of-words topic model, in compact torch.

Generative model, with a Laplace approximation of the Dirichlet(alpha) prior in the
softmax basis (Hennig et al. 2012), for T topics::

    h_d      ~ N(mu0, Sigma0),   mu0_t = ln alpha_t - mean_s ln alpha_s
                                 Sigma0_tt = (1/alpha_t)(1 - 2/T) + (1/T^2) sum_s 1/alpha_s
    theta_d  = softmax(h_d)
    x_d      ~ Multinomial(n_d, softmax(BN(beta' theta_d)))      (a product of experts)

beta (T x W) is unnormalised: each topic multiplies word probabilities rather than
mixing them, which is what gives ProdLDA its sharper topics. The encoder is the paper's:
two softplus layers of 100 units, dropout 0.2, batch-normalised mean and log-variance;
dropout 0.2 on theta; Adam with lr 2e-3 and beta1 0.99; batch 200.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ProdLDA"]


class _ProdLDANet(nn.Module):
    """Encoder q(h | x) and the product-of-experts decoder."""

    def __init__(self, n_words: int, n_topics: int, hidden: int, dropout: float, alpha: float):
        super().__init__()
        self.enc1 = nn.Linear(n_words, hidden)
        self.enc2 = nn.Linear(hidden, hidden)
        self.enc_drop = nn.Dropout(dropout)
        self.mean = nn.Linear(hidden, n_topics)
        self.mean_bn = nn.BatchNorm1d(n_topics, affine=False)
        self.logvar = nn.Linear(hidden, n_topics)
        self.logvar_bn = nn.BatchNorm1d(n_topics, affine=False)
        self.theta_drop = nn.Dropout(dropout)
        self.beta = nn.Linear(n_topics, n_words, bias=False)     # weight: (W, T) = beta'
        self.beta_bn = nn.BatchNorm1d(n_words, affine=False)
        nn.init.xavier_uniform_(self.beta.weight)
        # Laplace approximation of a symmetric Dirichlet(alpha): mu0 = 0,
        # sigma0^2 = (1/alpha)(1 - 2/T) + (1/T^2) * T/alpha = (1/alpha)(1 - 1/T).
        var0 = (1.0 / alpha) * (1.0 - 1.0 / n_topics)
        self.register_buffer("prior_logvar", torch.full((n_topics,), float(np.log(var0))))

    def encode(self, x):
        """x (B, W) counts -> posterior mean and log-variance of h, each (B, T)."""
        e = F.softplus(self.enc2(F.softplus(self.enc1(x))))
        e = self.enc_drop(e)
        return self.mean_bn(self.mean(e)), self.logvar_bn(self.logvar(e))

    def log_word_probs(self, theta):
        """ln softmax(BN(beta' theta)), theta (B, T) -> (B, W)."""
        return F.log_softmax(self.beta_bn(self.beta(theta)), dim=1)

    def loss(self, x):
        """Negative ELBO summed over the batch: reconstruction + KL(q(h) || N(mu0, Sigma0))."""
        mu, logvar = self.encode(x)
        eps = torch.randn_like(mu)
        theta = self.theta_drop(torch.softmax(mu + (0.5 * logvar).exp() * eps, dim=1))
        recon = -(x * self.log_word_probs(theta)).sum(1)
        var_ratio = (logvar - self.prior_logvar).exp()
        kl = 0.5 * (var_ratio + mu * mu / self.prior_logvar.exp()
                    + self.prior_logvar - logvar - 1.0).sum(1)
        return (recon + kl).sum()


class ProdLDA:
    """ProdLDA behind the topic-model contract (``topic_word_``, ``doc_topic``).

    Parameters
    ----------
    n_topics : int
    epochs : int
    batch_size : int
    lr : float
        Adam's learning rate (beta1 = 0.99 as in the paper's code).
    hidden : int
        Units in each of the encoder's two layers.
    dropout : float
    alpha : float
        Symmetric Dirichlet prior that the Gaussian in softmax basis approximates.
    random_state : int
    device : {"cpu", "cuda", "auto"}

    Attributes
    ----------
    topic_word_ : np.ndarray, shape (T, W)
        Topic t is the word distribution of a document wholly about t,
        softmax(BN(beta' e_t)) (what coherence and the top words use). A mixed document's
        distribution is the product softmax(BN(beta' theta)), not a mixture of these
        rows, so :meth:`heldout_log_likelihood` scores completions with it.
    history_ : list of float
        Mean negative ELBO per document after each epoch.
    fit_seconds_ : float
    """

    def __init__(self, n_topics: int = 20, epochs: int = 100, batch_size: int = 200,
                 lr: float = 2e-3, hidden: int = 100, dropout: float = 0.2,
                 alpha: float = 1.0, random_state: int = 0, device: str = "cpu"):
        self.n_topics = n_topics
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.hidden = hidden
        self.dropout = dropout
        self.alpha = alpha
        self.random_state = random_state
        self.device = device

    def _device(self):
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def fit(self, X, y=None):
        """Train on a document-term count matrix X (N, W) by minibatch Adam."""
        X = sp.csr_matrix(X, dtype=np.float32)
        self.n_words_ = X.shape[1]
        device = self._device()
        keep = np.flatnonzero(np.diff(X.indptr) > 0)        # empty rows teach nothing
        self.history_ = []
        t0 = time.perf_counter()
        # Everything random (initialisation, order, eps, dropout) comes from torch's
        # global generator, seeded here and restored afterwards.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.random_state))
            net = _ProdLDANet(self.n_words_, self.n_topics, self.hidden, self.dropout,
                              self.alpha).to(device)
            opt = torch.optim.Adam(net.parameters(), lr=self.lr, betas=(0.99, 0.999),
                                   foreach=False)
            net.train()
            for _ in range(int(self.epochs)):
                order = keep[torch.randperm(keep.size).numpy()]
                total = 0.0
                for a in range(0, order.size, self.batch_size):
                    rows = order[a:a + self.batch_size]
                    if rows.size < 2:                       # BatchNorm needs two rows
                        continue
                    x = torch.from_numpy(X[rows].toarray()).to(device)
                    loss = net.loss(x)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += float(loss.detach())
                self.history_.append(total / max(keep.size, 1))
        self.fit_seconds_ = time.perf_counter() - t0
        net.eval()
        self.net_ = net
        with torch.no_grad():
            # Topic t as the word distribution of a document wholly about t:
            # softmax(BN(beta' e_t)), with BatchNorm's running statistics.
            eye = torch.eye(self.n_topics, device=device)
            topic_word = net.log_word_probs(eye).double().exp().cpu().numpy()
        self.topic_word_ = topic_word / topic_word.sum(axis=1, keepdims=True)
        return self

    def doc_topic(self, X, batch_size: int = 2048) -> np.ndarray:
        """theta = softmax of the posterior mean of h (encoder in eval mode), (N, T)."""
        X = sp.csr_matrix(X, dtype=np.float32)
        if X.shape[1] != self.n_words_:
            raise ValueError(f"X has {X.shape[1]} words, the model {self.n_words_}")
        out = np.empty((X.shape[0], self.n_topics))
        device = next(self.net_.parameters()).device
        with torch.no_grad():
            for a in range(0, X.shape[0], batch_size):
                x = torch.from_numpy(X[a:a + batch_size].toarray()).to(device)
                mu, _ = self.net_.encode(x)
                out[a:a + len(x)] = torch.softmax(mu, dim=1).double().cpu().numpy()
        return out

    def heldout_log_likelihood(self, observed, heldout, batch_size: int = 2048) -> float:
        """sum_dw heldout_dw ln p(w | observed_d) under ProdLDA's own product of experts.

        Parameters
        ----------
        observed, heldout : scipy.sparse matrices, shape (N, W)
            The two halves of each test document (document completion).
        """
        theta = self.doc_topic(observed, batch_size)
        heldout = sp.csr_matrix(heldout)
        device = next(self.net_.parameters()).device
        total = 0.0
        with torch.no_grad():
            for a in range(0, heldout.shape[0], batch_size):
                logp = self.net_.log_word_probs(
                    torch.from_numpy(theta[a:a + batch_size]).float().to(device))
                h = heldout[a:a + batch_size].tocoo()
                vals = logp[torch.from_numpy(h.row).long(), torch.from_numpy(h.col).long()]
                total += float((torch.from_numpy(h.data).double() * vals.double().cpu()).sum())
        return total

    def top_words(self, vocabulary, n: int = 10) -> list:
        """Each topic's ``n`` highest-weight words, list of T lists of str."""
        from bpetopics.topwords import top_words

        return top_words(self.topic_word_, vocabulary, n)
