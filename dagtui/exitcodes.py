"""The process exit codes, one set for every command (README "Command line").

They are a contract with CI scripts, so they live in one place: a command, the suite runner,
the batch report and `dagtui merge` all answer with these, and a test or a shell script can
rely on 2 meaning "fix your input" wherever it comes from. An `IntEnum`, so a member is the
plain integer `sys.exit`, JSON reports and comparisons with literals expect.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    #: nothing wrong: the graph is valid, every case passed, the files are formatted
    OK = 0
    #: failures found: an invalid graph, a failing case or label, a file `fmt --check` would
    #: change
    FAILURES = 1
    #: usage or input error: a bad flag, an unreadable or unparsable file, a bad label
    #: (`dagtui.labels.check`)
    USAGE = 2
    #: judge errors prevented a verdict, or the judge could not be used or went down mid-run
    JUDGE = 3
