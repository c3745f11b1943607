"""The Textual app: ``app.py`` (the App and its key map), ``screens/``, ``widgets/`` and the
stylesheet. It only renders protocol events and sends moderator commands."""
