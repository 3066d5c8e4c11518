"""`python -m dagtui` is the `dagtui` command."""

from .cli import main

raise SystemExit(main())
