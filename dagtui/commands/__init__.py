"""One module per `dagtui` subcommand; see `dagtui.cli`."""
