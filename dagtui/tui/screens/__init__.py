"""The editor's screens that sit on top of it: dialogs, help, the calibration view."""
