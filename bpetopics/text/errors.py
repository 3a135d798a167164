"""Errors and warnings of the text pipeline."""


class CorpusError(ValueError):
    """A problem with a corpus source or its settings that the user can fix.

    The message is one line that names the problem and the fix; the command line
    prints it as is and exits with code 2.
    """


class CorpusWarning(UserWarning):
    """Something was skipped while loading a corpus (e.g. files that are not text)."""
