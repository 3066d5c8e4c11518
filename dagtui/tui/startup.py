"""The garbage collector stays off from the start of `dagtui edit` to the app's first frame.

Starting the editor imports Textual and dagtui and builds the screen: about 120 collections
of the young generations before the first frame, which found about 760 objects to free in
all (a few kilobytes; everything a start allocates lives as long as the app) and cost
~12 ms of a ~250 ms start on a quiet machine (~4 % of the instructions it runs, counted with
callgrind), more on a loaded one. So the command pauses the collector before its imports
(`pause_collector`) and the app resumes it once its first frame is on screen
(`resume_collector`, on Textual's Ready event: `DagtuiApp._first_frame_shown`); from then
on it runs as usual.

Textual-free and import-free on purpose: it runs before the imports it is about.
"""

from __future__ import annotations

import gc

#: True while this module holds the collector off (so a resume never turns on a collector
#: that somebody else switched off)
_paused = False


def pause_collector() -> None:
    """Switch the collector off until `resume_collector` (no-op when it already is off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Switch the collector back on, if `pause_collector` switched it off."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
