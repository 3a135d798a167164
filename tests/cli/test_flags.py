"""One meaning per flag: the renamed flags, their old spellings (hidden aliases that warn),
``--device auto`` everywhere, and one-line errors for missing or invalid choices."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from bpetopics.cli import main, option
from tests.cli.conftest import one_line_error

#: (command path, required arguments, new flag, old flag, value, parameter name).
RENAMED = [
    (["train"], ["--out", "r"], "--top-n", "--top", "4", "top"),
    (["topics"], ["r"], "--top-n", "--top", "4", "top"),
    (["ldavis"], ["r", "--out", "p.html"], "--top-n", "--terms", "4", "R"),
    (["evaluate"], ["r"], "--max-docs", "--sample", "60", "sample"),
    (["graph"], ["r", "--out", "g.png"], "--bits-out", "--bits", "b.csv", "bits_path"),
    (["corpus"], ["src"], "--corpus-seed", "--seed", "3", "seed"),
    (["corpus"], ["src"], "--nproc", "--jobs", "2", "jobs"),
    (["images", "train"], ["mnist", "--model", "vae", "--out", "r"], "--max-images", "--limit", "60", "limit"),
    (["images", "encode"], ["r", "mnist", "--out", "c.npz"], "--max-images", "--limit", "60", "limit"),
    (["images", "table"], ["--out", "t"], "--max-images", "--n-train", "60", "n_train"),
    (["images", "show"], ["r", "--out", "b.png"], "--show-bits", "--bits", "7", "n_bits"),
    (["images", "show"], ["r", "--out", "b.png"], "--show-images", "--images", "7", "n_images"),
]


def command(path):
    cmd = main
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def parsed(path, args) -> dict:
    """The parameters ``bpetopics PATH ARGS`` would run with (parsed, not run)."""
    return command(path).make_context(path[-1], list(args)).params


@pytest.mark.parametrize("path,required,new,old,value,name", RENAMED, ids=lambda v: v if isinstance(v, str) else None)
def test_an_old_spelling_works_as_the_new_one_and_warns(path, required, new, old, value, name, capsys):
    with_new = parsed(path, [*required, new, value])
    assert capsys.readouterr().err == ""
    with_old = parsed(path, [*required, old, value])
    assert capsys.readouterr().err == f"Warning: {old} is deprecated; use {new}\n"
    assert with_old == with_new
    assert str(with_new[name]) == value
    assert parsed(path, [*required, f"{old}={value}"]) == with_new
    capsys.readouterr()


@pytest.mark.parametrize("path,required,new,old,value,name", RENAMED, ids=lambda v: v if isinstance(v, str) else None)
def test_old_spellings_are_hidden_from_the_help(path, required, new, old, value, name):
    shown = CliRunner().invoke(main, [*path, "--help"]).output
    assert new in shown
    ctx = click.Context(command(path))
    visible = {o for p in command(path).get_params(ctx) if not getattr(p, "hidden", False) for o in p.opts}
    assert new in visible and old not in visible


def test_an_old_spelling_with_the_new_one_is_one_line(runner):
    one_line_error(runner.invoke(main, ["topics", "r", "--top", "3", "--top-n", "4"]),
                   "--top is the deprecated spelling of --top-n: give --top-n only", "bpetopics topics --help")


def test_a_bad_value_under_an_old_spelling_names_the_new_flag(runner):
    result = runner.invoke(main, ["topics", "r", "--top", "0"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["Warning: --top is deprecated; use --top-n",
                                          "Error: invalid --top-n: 0 is not in the range x>=1."]


def test_topics_with_the_old_top_prints_as_many_words(runner, trained_run):
    out, _ = trained_run
    new = runner.invoke(main, ["topics", str(out), "--top-n", "3"])
    old = runner.invoke(main, ["topics", str(out), "--top", "3"])
    assert new.exit_code == old.exit_code == 0, old.output
    weights = re.findall(r"\b\d\.\d{3}\b", new.stdout.splitlines()[1])    # a label, then word weight pairs
    assert old.stdout == new.stdout and len(weights) == 3
    assert old.stderr == "Warning: --top is deprecated; use --top-n\n"


def test_option_keeps_the_types_callback_and_multiple_values():
    seen = []

    @click.command()
    @option("--names", multiple=True, old=("--name",), callback=lambda ctx, p, v: seen.append(v) or v)
    def cmd(names):
        click.echo(",".join(names))

    result = CliRunner().invoke(cmd, ["--name", "a", "--names", "b", "--name", "c"])
    assert result.exit_code == 2 and "give --names only" in result.output   # both spellings: refused
    result = CliRunner().invoke(cmd, ["--name", "a", "--name", "c"])
    assert result.exit_code == 0 and result.stdout == "a,c\n" and seen == [("a", "c")]
    assert result.stderr == "Warning: --name is deprecated; use --names\n"   # one line, however often given
    with pytest.raises(TypeError):
        option("--quiet", is_flag=True, old=("--silent",))


def _leaves(group, path=()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, (*path, name))
        else:
            yield (*path, name), cmd


@pytest.mark.parametrize("path", [p for p, _ in _leaves(main)], ids=" ".join)
def test_no_command_shows_a_retired_flag_and_device_defaults_to_auto(path):
    cmd = command(path)
    params = [p for p in cmd.get_params(click.Context(cmd)) if isinstance(p, click.Option)]
    visible = {o: p for p in params if not p.hidden for o in p.opts}
    assert not {"--top", "--terms", "--sample", "--limit", "--n-train", "--jobs"} & set(visible)
    if "--device" in visible:
        assert visible["--device"].default == "auto"
    if "--bits" in visible:     # the code length K, nothing else
        assert "code" in visible["--bits"].help.lower()


def test_a_missing_choice_is_one_line(runner, tmp_path):
    one_line_error(runner.invoke(main, ["images", "train", "mnist", "--out", str(tmp_path / "r")]),
                   "Missing option '--model'", "gaussbpe, bernbpe, vae, gsvae", "bpetopics images train --help")


@pytest.mark.parametrize("args,flag", [(["topics", "r", "--format", "x"], "--format"),
                                       (["info", "r", "--format", "x"], "--format"),
                                       (["encode", "r", "in", "--out", "c.csv", "--mixture", "x"], "--mixture"),
                                       (["images", "train", "mnist", "--out", "r", "--model", "x"], "--model")])
def test_an_invalid_choice_is_one_line(runner, args, flag):
    one_line_error(runner.invoke(main, args), f"invalid {flag}: 'x' is not one of")
