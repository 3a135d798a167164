"""``bpetopics compile``: compile the CPU kernels now, so that a first training does not."""

from __future__ import annotations

import click

from bpetopics.cli import main


@main.command("compile")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def compile_command(quiet):
    """Compile the CPU kernels for this machine (numba), ahead of a first training.

    A machine's first training otherwise compiles them during its first epoch, and its
    first similar-document search (`bpetopics similar`) before answering. They are
    kept in numba's cache (beside the installed modules, or in $NUMBA_CACHE_DIR), so
    running this again only loads them. `make venv` runs it after installing.

    \b
    Examples:
      bpetopics compile
      NUMBA_CACHE_DIR=/opt/cache bpetopics compile    # e.g. in a container build
    """
    import time

    from bpetopics.bpe.compile_clock import CompileClock
    from bpetopics.models.poissbpe.compiled.warm_up import compile_kernels
    from bpetopics.search import compile_search_loops

    if not quiet:
        click.echo("Compiling the CPU kernels for this machine (or loading them from numba's cache)...", err=True)
    start = time.process_time()
    seconds = compile_kernels()
    with CompileClock().listening() as clock:
        compile_search_loops()
    seconds += clock.seconds
    if not quiet:
        what = f"{seconds:.1f} s compiling" if seconds > 0 else "all loaded from the cache"
        click.echo(f"Done: {what} ({time.process_time() - start:.1f} CPU s in all).", err=True)
