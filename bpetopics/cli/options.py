"""Options that mean the same in every command, and old spellings kept working.

Every flag of ``bpetopics`` means one thing in every command (docs/cli.md lists them).
A flag that was renamed keeps its old spelling as a hidden alias: :func:`option` declares
the option with ``old=("--top",)``, and ``--top 5`` then works as ``--top-n 5`` after one
line on stderr, ``Warning: --top is deprecated; use --top-n``.

This module imports nothing from the package: :mod:`bpetopics.cli` re-exports it.
"""

from __future__ import annotations

import click

#: The help of ``--device`` in every command: one meaning, one default (auto).
DEVICE_HELP = "auto (CUDA when present, else the CPU), cpu or cuda."


def deprecation_line(old: str, new: str) -> str:
    """The line printed on stderr when ``old`` (a renamed flag) is used."""
    return f"Warning: {old} is deprecated; use {new}"


class OldSpelling(click.Option):
    """The hidden, deprecated spelling of another option (``replacement``, its name).

    It is eager, so it is processed before every ordinary option: given on the command
    line, it warns and hands its raw value to the replacement, which then converts and
    checks it as if its own flag had been typed (the same type, callback and errors).
    Given together with the new spelling, it is a usage error (one line).
    """

    def __init__(self, param_decls, replacement: str, new_flag: str, **attrs):
        self.replacement = replacement
        self.new_flag = new_flag
        super().__init__(param_decls, hidden=True, is_eager=True, expose_value=False, default=None, **attrs)

    def handle_parse_result(self, ctx, opts, args):
        if self.name in opts and not ctx.resilient_parsing:
            old = self.opts[0]
            if self.replacement in opts:
                raise click.UsageError(f"{old} is the deprecated spelling of {self.new_flag}: give {self.new_flag} "
                                       "only", ctx=ctx)
            click.echo(deprecation_line(old, self.new_flag), err=True)
            opts[self.replacement] = opts.pop(self.name)
        return super().handle_parse_result(ctx, opts, args)


def option(*param_decls, old: tuple[str, ...] = (), **attrs):
    """``click.option``, plus the flag's old spellings ``old`` as hidden aliases that
    warn (:class:`OldSpelling`).

    Parameters
    ----------
    *param_decls, **attrs
        As for ``click.option`` (``cls`` included).
    old : tuple of str
        Former spellings of the flag, e.g. ``("--top",)``; each takes the same values.

    Returns
    -------
    callable
        The decorator.
    """
    probe = attrs.get("cls", click.Option)(param_decls, **{k: v for k, v in attrs.items() if k != "cls"})
    if old and probe.is_flag:
        raise TypeError("old spellings are for options that take a value")
    new_flag = max((o for o in probe.opts if o.startswith("--")), key=len, default=probe.opts[0])

    def decorator(f):
        f = click.option(*param_decls, **attrs)(f)
        for i, spelling in enumerate(old):
            f = click.option(spelling, f"old_spelling_{probe.name}_{i}", cls=OldSpelling, replacement=probe.name,
                             new_flag=new_flag, nargs=probe.nargs, multiple=probe.multiple)(f)
        return f

    return decorator


def device_option(help: str = DEVICE_HELP):
    """``--device``, the same in every command: default auto (CUDA when present, else
    the CPU)."""
    return click.option("--device", default="auto", show_default=True, help=help)
