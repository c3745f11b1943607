"""Tests of the journal: atomic turns, contention, crashes, resume, exports."""
