"""The debate a log line belongs to, as a context variable.

Set by the run-and-journal loop (:func:`store.drive.drive`) and read by the log formatter of
the interfaces (``tui.diagnostics``); copied into worker threads with the context, so backend
log lines carry it too. A leaf module, so that reading it imports nothing heavy.
"""

from __future__ import annotations

import contextvars

#: The id of the debate whose events are being driven ("-" outside a debate).
current_debate: contextvars.ContextVar[str] = contextvars.ContextVar("symposium_debate", default="-")
