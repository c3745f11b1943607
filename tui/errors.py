"""The command line's own error type (kept apart from ``cli`` so ``python -m tui.cli`` and the
installed ``symposium`` script share one class)."""


class UserError(Exception):
    """An error to report as one line, without a traceback."""
