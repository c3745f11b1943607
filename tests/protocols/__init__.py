"""Tests of each protocol and its metrics, end to end and against its paper."""
