"""Widgets that render a protocol's events."""
