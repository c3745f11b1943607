"""The diagnosis benchmark (``symposium bench diagnosis``): ``diagnosis.py`` runs the systems over
the cases, ``report.py`` writes the tables and plots."""
