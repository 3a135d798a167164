"""``python -m bpetopics`` works as the ``bpetopics`` command."""

from bpetopics.cli import main

if __name__ == "__main__":
    main(prog_name="bpetopics")     # usage lines and hints name the command, not "-m bpetopics"
