"""The benchmarks of bpetopics: ``python -m benchmarks NAME [--quick] [ARGS...]``.

Each ``bench_*.py`` module also runs as a script; ``benchmarks/README.md`` lists them and
the documentation table each feeds. Benchmarks measure speed; the tests never do.
"""
