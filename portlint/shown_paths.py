"""Paths as reports show them, relative to the working directory, in pickled results.

Results (findings' places, a file's state, deep mode's units) hold each path as reports
show it: relative to the directory the run started in, absolute outside it. A class says
which of its fields those are (`shows_paths`); a result pickled in one working directory
and read in another (the cache's entries, a context's packed facts) is unpickled with each
such path moved to the reader's (`loads_written_from`), so one file's result serves runs
from the project's root and from a folder above it.
"""

from __future__ import annotations

import gc
import io
import operator
import os
import pickle
import posixpath
from dataclasses import fields


def shows_paths(*shown: str):
    """Class decorator for a dataclass whose fields `shown` hold paths as reports show them
    (relative to the working directory): it pickles positionally, and a cache entry read in
    another working directory constructs it with those paths made relative to the new one
    (`loads_written_from`), so one file's result serves runs from the project's root
    and from a folder above it."""
    def decorate(cls):
        names = tuple(f.name for f in fields(cls) if f.init)
        values = operator.attrgetter(*names) if len(names) > 1 else lambda self: (getattr(self, names[0]),)

        def __reduce__(self):
            # Positional, not a field dict: results cross from workers (and into the cache)
            # by pickle, and a scan's locations number in the tens of thousands.
            return cls, values(self)

        cls.__reduce__ = __reduce__
        cls.shown_path_positions = tuple(names.index(name) for name in shown)
        return cls
    return decorate


def moved_path(path: str, written_from: str, here: str) -> str:
    """`path` as shown from the working directory `written_from`, shown from `here` instead:
    relative below `here`, absolute elsewhere; names that are no path (`<project>`) as they are."""
    if not path or path.startswith("<") or path == "-":
        return path
    absolute = posixpath.normpath(posixpath.join(written_from, path))
    if absolute.startswith(here.rstrip("/") + "/"):
        return absolute[len(here.rstrip("/")) + 1:]
    return absolute


def loads_written_from(stream, written_from: str, here: str | None = None):
    """Unpickle the next object of `stream` (a file or bytes), pickled in a run whose working
    directory was `written_from`. Shown paths (the fields `shows_paths` marks) are
    relative to a working directory; in a run from another, each is moved to it
    (`moved_path`)."""
    if isinstance(stream, bytes):
        stream = io.BytesIO(stream)
    here = os.getcwd() if here is None else here
    collecting = gc.isenabled()
    # The cycle collector paused: an entry (a project's snapshot: a quarter of a million
    # objects) is all new objects that live on, which a collection in the middle would
    # traverse for nothing, a third of the load's time.
    gc.disable()
    try:
        if written_from == here:
            return pickle.load(stream)
        return _MovingUnpickler(stream, written_from, here).load()
    finally:
        if collecting:
            gc.enable()


class _MovingUnpickler(pickle.Unpickler):
    def __init__(self, stream, written_from: str, here: str) -> None:
        super().__init__(stream)
        self._written_from, self._here = written_from, here

    def find_class(self, module: str, name: str):
        cls = super().find_class(module, name)
        shown = getattr(cls, "shown_path_positions", ())
        if not shown:
            return cls
        written_from, here = self._written_from, self._here
        return lambda *values: cls(*(moved_path(v, written_from, here) if i in shown else v
                                     for i, v in enumerate(values)))
