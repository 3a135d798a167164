"""Adam for the theta step, without ``torch.optim``'s machinery.

The update is ``torch.optim.Adam``'s with its default options (Kingma and Ba 2015; g the
gradient, t the step)::

    m <- beta1 m + (1 - beta1) g                 (lerp)
    v <- beta2 v + (1 - beta2) g^2
    theta <- theta - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

computed by torch's fused Adam kernel (``torch._fused_adam_``, what
``torch.optim.Adam(fused=True)`` runs: one pass over each parameter instead of seven)
where torch has it, else by the seven tensor operations of ``torch.optim.Adam``'s default
path; the two agree to float rounding and each is deterministic.

Why not ``torch.optim.Adam`` itself: creating the first ``torch.optim`` optimiser in a
process imports ``torch._dynamo`` (its ``add_param_group`` is wrapped to disable the
compiler), most of a CPU second and ~70 MiB. The state and ``state_dict`` have
``torch.optim.Adam``'s layout, so checkpoints written with either load in the other.
"""

from __future__ import annotations

import torch


def _one_float32_device(params) -> bool:
    """Whether every parameter is float32 on the first one's device (the fused kernel's
    condition)."""
    device = params[0].device
    return all(p.dtype == torch.float32 for p in params) and all(p.device == device for p in params[1:])


class Adam:
    """Adam on a list of parameters; ``param_groups``, ``state``, ``zero_grad``, ``step``,
    ``state_dict`` and ``load_state_dict`` as in ``torch.optim.Adam`` (one group).

    Parameters
    ----------
    params : iterable of torch.nn.Parameter
    lr : float
    betas : (float, float)
    eps : float
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.param_groups = [{"params": list(params), "lr": lr, "betas": tuple(betas), "eps": eps,
                              "weight_decay": 0, "amsgrad": False, "maximize": False,
                              "foreach": None, "capturable": False, "differentiable": False,
                              "fused": None, "decoupled_weight_decay": False}]
        self.state: dict = {}

    def zero_grad(self) -> None:
        """Drop the gradients (``set_to_none``, torch's default)."""
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None

    #: Whether the fused kernel runs (where torch has it); False: the tensor operations.
    fused = hasattr(torch, "_fused_adam_")

    def step(self) -> None:
        """One Adam update of every parameter that has a gradient."""
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params:
                self._update(group, params, [p.grad for p in params])

    def step_with(self, params, grads) -> None:
        """One Adam update of ``params`` (of the optimiser's one group) with the gradients
        ``grads`` given, not read from ``.grad``: :meth:`step`'s update, for a caller that
        holds them (the compiled theta step)."""
        self._update(self.param_groups[0], params, grads)

    @torch.no_grad()
    def _update(self, group, params, grads) -> None:
        """Adam on ``params`` with ``grads`` (module docstring), the group's options."""
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        states = [self.state_of(p) for p in params]
        steps = [s["step"] for s in states]
        torch._foreach_add_(steps, 1.0)                    # one call for every step count
        if self.fused and _one_float32_device(params):
            torch._fused_adam_(params, grads, [s["exp_avg"] for s in states],
                               [s["exp_avg_sq"] for s in states], [], steps, amsgrad=False,
                               lr=lr, beta1=beta1, beta2=beta2, weight_decay=0.0, eps=eps,
                               maximize=False, grad_scale=None, found_inf=None)
            return
        for param, grad, state in zip(params, grads, states):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = state["step"].item()
            step_size = lr / (1 - beta1 ** step)
            denom = (exp_avg_sq.sqrt() / (1 - beta2 ** step) ** 0.5).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)

    def state_of(self, param) -> dict:
        """The parameter's step count and moments, created (zero) on first use; the step
        lives on the parameter's device (the fused kernel reads it there)."""
        state = self.state.get(param)
        if not state:
            state = self.state[param] = {
                "step": torch.tensor(0.0, device=param.device),
                "exp_avg": torch.zeros_like(param, memory_format=torch.preserve_format),
                "exp_avg_sq": torch.zeros_like(param, memory_format=torch.preserve_format)}
        return state

    def reset_moments(self, param, index) -> None:
        """Zero the moment estimates of ``param[index]`` (a restarted part of a parameter
        starts its Adam history afresh); nothing when the parameter has no state yet."""
        for value in self.state.get(param, {}).values():
            if torch.is_tensor(value) and value.shape == param.shape:
                value[index] = 0

    def state_dict(self) -> dict:
        """``{"state": {index: {"step", "exp_avg", "exp_avg_sq"}}, "param_groups": [...]}``,
        parameters by their index, as ``torch.optim.Adam.state_dict``."""
        index = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for param in group["params"]:
                index.setdefault(id(param), len(index))
                ids.append(index[id(param)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, saved: dict) -> None:
        """Restore from :meth:`state_dict` (or ``torch.optim.Adam``'s); tensors are copied
        to each parameter's device. Raises ValueError when the groups do not match."""
        groups = saved["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(g["params"]) != len(own["params"]) for g, own in zip(groups, self.param_groups)):
            raise ValueError("the saved optimiser state does not match the model's parameters")
        self.state = {}
        for group, own in zip(groups, self.param_groups):
            own.update({k: (tuple(v) if k == "betas" else v) for k, v in group.items() if k != "params"})
            for saved_index, param in zip(group["params"], own["params"]):
                entry = saved["state"].get(saved_index, saved["state"].get(str(saved_index)))
                if entry:
                    if tuple(entry["exp_avg"].shape) != tuple(param.shape):
                        raise ValueError(f"the saved optimiser state has shape {tuple(entry['exp_avg'].shape)} "
                                         f"for a parameter of shape {tuple(param.shape)}")
                    self.state[param] = {
                        "step": torch.as_tensor(entry["step"], dtype=torch.float32).clone().to(param.device),
                        "exp_avg": entry["exp_avg"].to(param.device, param.dtype).clone(),
                        "exp_avg_sq": entry["exp_avg_sq"].to(param.device, param.dtype).clone()}
