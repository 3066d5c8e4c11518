"""`python -m dagtui` is the `dagtui` command."""

from dagtui.cli import main

raise SystemExit(main())
