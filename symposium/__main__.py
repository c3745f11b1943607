"""``python -m symposium``: the app, as the ``symposium`` command starts it."""

from symposium import main

raise SystemExit(main())
