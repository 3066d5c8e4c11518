"""How a dagtui terminal app starts and draws: the garbage collector stays off from the start
of `dagtui edit` to the app's first frame, and frames reach the terminal promptly.

The collector: starting the editor imports Textual and dagtui and builds the screen, which
took about 120 collections of the young generations before the first frame; they found
about 760 objects to free in all (a few kilobytes; everything a start allocates lives as
long as the app) and cost ~12 ms of a ~250 ms start on a quiet machine (~4 % of the
instructions it runs, counted with callgrind), more on a loaded one. So the command pauses
the collector before its imports (`pause_collector`) and the app resumes it once its first
frame is on screen (`resume_collector`, on Textual's Ready event:
`DagtuiApp._first_frame_shown`); from then on it runs as usual.

Frames: Textual writes every frame to the terminal from a thread of its own (the
`textual-output` writer), and CPython hands the GIL to a waiting thread only after the
switch interval, 5 ms by default. Right after its first frame the editor is busy (it
builds the form and the bottom panels and validates), so the writer waited for the GIL at
each step of its write (taking the frame off its queue, writing, flushing). Measured from
the moment the app handed `dagtui edit`'s first frame to the driver to its bytes arriving
on a 120x36 pseudo-terminal (11 runs, code_review.toml): 5.6 ms median, 9.7 ms at worst,
against 2.4 ms for a bare Textual app that has nothing to do next. `prompt_frames` lowers
the interval to `SWITCH_INTERVAL` while the app runs (`DagtuiApp.run`): 1.5 ms median,
2.7 ms at worst, and every later frame drawn while the app works gets out as soon. The
interval only matters while two threads want the GIL at once, so an idle app pays
nothing, and a busy one switches at most 1,000 times a second, a few microseconds each.

Textual-free, and importing only what the interpreter has loaded by then: it runs before
the imports it is about.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

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


#: seconds a thread may hold the GIL while another waits for it, while a dagtui app runs
SWITCH_INTERVAL = 0.001


@contextmanager
def prompt_frames() -> Iterator[None]:
    """Within the block, a thread waiting for the GIL (Textual's writer) gets it after
    `SWITCH_INTERVAL` rather than 5 ms; the interval is put back afterwards."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SWITCH_INTERVAL))
    try:
        yield
    finally:
        sys.setswitchinterval(before)
