"""Tests of the `symposium` command line, bad input, the installed wheel."""
