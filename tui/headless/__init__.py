"""Headless runs: ``runner.drive`` (journal first, then the sinks), the terminal ``printer``,
and ``session`` (what every ``symposium run …`` shares)."""
