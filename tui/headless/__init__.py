"""Headless runs: the terminal ``printer`` and ``session`` (what every ``symposium run …``
shares); the run-and-journal loop they use is :func:`store.drive.drive`."""
