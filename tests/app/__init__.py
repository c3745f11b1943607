"""Tests of the Textual app under Pilot: screens, snapshots, hostile text, streaming, themes."""
