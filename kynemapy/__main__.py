"""``python -m kynemapy`` = the ``kynemapy`` command."""

from kynemapy.cli import main

raise SystemExit(main())
