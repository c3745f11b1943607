"""``python -m tui.cli``: the same entry point as the ``symposium`` script."""

from tui.cli.parser import main

raise SystemExit(main())
