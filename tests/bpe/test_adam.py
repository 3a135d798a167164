"""core.adam.Adam is torch.optim.Adam's update, bit for bit (fused kernel, or the default
tensor operations), with its state_dict layout."""

import pytest
import torch

from bpetopics.bpe.adam import Adam


def _params(seed):
    torch.manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(7, 3)), torch.nn.Parameter(torch.randn(5)),
            torch.nn.Parameter(torch.randn(2))]


def _steps(params, optimizer, n, seed, skip_last=False):
    gen = torch.Generator().manual_seed(seed)
    for step in range(n):
        optimizer.zero_grad()
        loss = sum((p * torch.randn(p.shape, generator=gen)).sum() ** 2 for p in params[:2])
        if not skip_last:
            loss = loss + params[2].exp().sum()
        loss.backward()
        if step == n // 2:                        # lr changes between epochs in training
            for group in optimizer.param_groups:
                group["lr"] = 0.02
        optimizer.step()


@pytest.mark.parametrize("fused", [True, False])
def test_same_parameters_as_torch_adam_bit_for_bit(fused, monkeypatch):
    if fused and not Adam.fused:
        pytest.skip("this torch has no fused Adam kernel")
    monkeypatch.setattr(Adam, "fused", fused)
    ours, theirs, default = _params(0), _params(0), _params(0)
    _steps(ours, Adam(ours, lr=0.05), 25, seed=1)
    _steps(theirs, torch.optim.Adam(theirs, lr=0.05, fused=fused or None), 25, seed=1)
    _steps(default, torch.optim.Adam(default, lr=0.05), 25, seed=1)
    for a, b, c in zip(ours, theirs, default):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, c, rtol=1e-5, atol=1e-6)     # fused: float rounding


@pytest.mark.parametrize("fused", [True, False])
def test_step_with_given_gradients_is_step(fused, monkeypatch):
    """step_with(params, grads) is step() with those gradients in .grad, bit for bit,
    and leaves .grad alone."""
    if fused and not Adam.fused:
        pytest.skip("this torch has no fused Adam kernel")
    monkeypatch.setattr(Adam, "fused", fused)
    given, read = _params(2), _params(2)
    given_opt, read_opt = Adam(given, lr=0.05), Adam(read, lr=0.05)
    gen = torch.Generator().manual_seed(3)
    for _ in range(6):
        grads = [torch.randn(p.shape, generator=gen) for p in given[:2]]
        given_opt.step_with(given[:2], grads)
        read_opt.zero_grad()
        for p, g in zip(read[:2], grads):
            p.grad = g.clone()
        read_opt.step()
    assert all(p.grad is None for p in given)
    for a, b in zip(given, read):
        assert torch.equal(a, b)
    for a, b in zip(given[:2], read[:2]):
        for key in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(given_opt.state[a][key], read_opt.state[b][key])
    assert not torch.equal(given[0], _params(2)[0])                  # the steps moved it

def test_parameters_without_gradient_are_left_alone():
    params = _params(0)
    before = params[2].detach().clone()
    optimizer = Adam(params, lr=0.05)
    _steps(params, optimizer, 3, seed=1, skip_last=True)
    assert torch.equal(params[2], before) and params[2] not in optimizer.state


def test_state_dict_moves_between_ours_and_torchs():
    ours, theirs = _params(0), _params(0)
    a, b = Adam(ours, lr=0.05), torch.optim.Adam(theirs, lr=0.05)
    _steps(ours, a, 4, seed=2)
    _steps(theirs, b, 4, seed=2)
    # continue ours from torch's state and torch's from ours: both go on identically
    ours2, theirs2 = [p.detach().clone().requires_grad_() for p in theirs], [p.detach().clone().requires_grad_() for p in ours]
    a2, b2 = Adam(ours2, lr=0.05), torch.optim.Adam(theirs2, lr=0.05)
    a2.load_state_dict(b.state_dict())
    b2.load_state_dict(a.state_dict())
    _steps(ours2, a2, 5, seed=3)
    _steps(theirs2, b2, 5, seed=3)
    for x, y in zip(ours2, theirs2):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)  # fused or not: rounding
    assert set(a.state_dict()["state"][0]) == set(b.state_dict()["state"][0])
    assert a.state_dict()["param_groups"][0].keys() == b.state_dict()["param_groups"][0].keys()


def test_reset_moments_zeroes_only_the_rows_asked_for():
    param = torch.nn.Parameter(torch.ones(3, 4))
    opt = Adam([param], lr=0.1)
    param.grad = torch.ones(3, 4)
    opt.step()
    opt.reset_moments(param, 1)
    opt.reset_moments(param, (slice(None), 3))
    for key in ("exp_avg", "exp_avg_sq"):
        moment = opt.state[param][key]
        assert (moment[1] == 0).all() and (moment[:, 3] == 0).all()
        assert (moment[[0, 2], :3] > 0).all()
    assert opt.state[param]["step"] == 1                        # the step count is kept
