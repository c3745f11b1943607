"""Tests of the four backends, the registry, chat templates, models already on disk."""
