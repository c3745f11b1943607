"""Filling the New-debate form the way a person would before pressing Start."""

from __future__ import annotations

from textual.widgets import Input, TextArea

from tui.app.screens.new_debate import NewDebateScreen


def fill_examples(form: NewDebateScreen) -> None:
    """Type each required text field's example (the case, the subject …) into it: a new form is
    blank, its examples only placeholders, so a test that starts a debate types them in."""
    for field in form.spec.fields:
        if field.example:
            widget = form.query_one(f"#field-{field.name}")
            if isinstance(widget, TextArea):
                widget.text = field.example
            else:
                form.query_one(f"#field-{field.name}", Input).value = field.example
