"""Tests of promises across the house: untrusted text, fuzzing, no network, import direction."""
