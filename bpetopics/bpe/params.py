"""Parameter rules, declared once and checked by both the estimators and the CLI.

The small equivalent of scikit-learn's ``_parameter_constraints`` (without importing
scikit-learn into the core): each estimator declares ``_parameter_rules``, a dict from
parameter name to a :class:`Rule`, extended by subclasses with
``{**Base._parameter_rules, ...}``. :func:`check_params` raises the first violation as a
one-line ValueError; ``label`` renames parameters in the message (the CLI passes its
option names, e.g. ``n_topics`` -> ``--topics``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Callable


@dataclass(frozen=True)
class Rule:
    """What a parameter may be.

    kind : "int" (an integer), "real" (a number), "ints" (a sequence of integers) or
        "choice" (one of ``choices``).
    low : the smallest allowed value (for "ints": of each element), or None.
    low_open : True when ``low`` itself is not allowed.
    none : True when None is allowed (it stands for a default computed from the data).
    """

    kind: str
    low: float | None = None
    low_open: bool = False
    none: bool = False
    choices: tuple = ()

    def problem(self, value) -> str | None:
        """Why ``value`` breaks the rule ("must be ..."), or None when it is fine."""
        if value is None:
            return None if self.none else f"must be {self._describe()}; got None"
        if self.kind == "choice":
            return None if value in self.choices else f"unknown {{name}} {value!r}; choose from " + \
                ", ".join(sorted(map(str, self.choices)))
        if self.kind == "ints":
            ok = isinstance(value, (tuple, list)) and all(isinstance(v, Integral) and not isinstance(v, bool)
                                                          and (self.low is None or v >= self.low) for v in value)
            return None if ok else f"sizes must be positive integers; got {','.join(map(str, value))}" \
                if isinstance(value, (tuple, list)) else f"must be a tuple of positive integers; got {value!r}"
        if self.kind == "int" and (not isinstance(value, Integral) or isinstance(value, bool)):
            return f"must be {self._describe()}; got {value!r}"
        if self.kind == "real" and (not isinstance(value, Real) or isinstance(value, bool) or math.isnan(value)):
            return f"must be {self._describe()}; got {value!r}"
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return f"must be {self._describe()}; got {value!r}"
        return None

    def _describe(self) -> str:
        if self.kind == "int" and self.low is None:
            return "an integer"
        if self.kind == "int":
            if (self.low, self.low_open) in ((1, False), (0, True)):
                return "a positive integer"
            return "an integer, zero or more" if (self.low, self.low_open) == (0, False) else f"an integer >= {self.low}"
        if (self.low, self.low_open) == (0, True):
            return "positive"
        if (self.low, self.low_open) == (0, False):
            return "zero or more"
        return "a number" if self.low is None else f"a number {'>' if self.low_open else '>='} {self.low}"


#: The rules used most.
POSITIVE_INT = Rule("int", low=1)
POSITIVE_INT_OR_NONE = Rule("int", low=1, none=True)
POSITIVE = Rule("real", low=0, low_open=True)
POSITIVE_OR_NONE = Rule("real", low=0, low_open=True, none=True)
NON_NEGATIVE = Rule("real", low=0)
NON_NEGATIVE_OR_NONE = Rule("real", low=0, none=True)
BOOL = Rule("choice", choices=(False, True))
ANY = Rule("any")


def check_params(params: dict, rules: dict, label: Callable[[str], str] = str) -> None:
    """Raise ValueError (one line, naming the parameter as ``label(name)``) for the first
    parameter of ``params`` that breaks its rule; parameters without a rule pass."""
    for name, value in params.items():
        rule = rules.get(name)
        if rule is None or rule.kind == "any":
            continue
        problem = rule.problem(value)
        if problem is not None:
            if "{name}" in problem:
                raise ValueError(problem.replace("{name}", label(name)))
            raise ValueError(f"{label(name)} {problem}")


class HyperParameters:
    """scikit-learn's parameter contract for an estimator whose ``__init__`` stores every
    argument unchanged under its own name (the BPE models): ``get_params``, ``set_params``
    (so ``sklearn.base.clone``, ``Pipeline`` and ``GridSearchCV`` work), and
    ``config_params``, the JSON-safe record of a run's config.json."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        import inspect

        return sorted(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self, deep=True) -> dict:
        """Hyperparameters as given to ``__init__`` (scikit-learn's contract; no
        parameter is itself an estimator, so ``deep`` changes nothing)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set hyperparameters (scikit-learn's contract); returns self."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def config_params(self) -> dict:
        """The hyperparameters as a run's config.json records them (JSON-safe; callback
        left out, ``hidden`` a list), in ``__init__``'s order."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p not in ("self", "callback")]
        params = {name: getattr(self, name) for name in names}
        params["hidden"] = list(params["hidden"])
        return params
