"""The widgets the editor's screens are built from."""
