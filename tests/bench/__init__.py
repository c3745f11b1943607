"""Tests of `symposium bench diagnosis`: its design and its figures."""
