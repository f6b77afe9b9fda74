"""A PyIceberg FileIO that records every file it creates, so a test can
tell the files PyIceberg wrote from the files geocompact wrote (both write
under the same table location). A catalog uses it when given
`py-io-impl=recording_io.RecordingFileIO`."""

from __future__ import annotations

from pyiceberg.io.pyarrow import PyArrowFileIO

CREATED: set[str] = set()


def local_path(location: str) -> str:
    """A file: URI in any of its spellings, as a plain path."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            return location[len(prefix):]
    return location


class RecordingFileIO(PyArrowFileIO):
    def new_output(self, location: str):
        CREATED.add(local_path(location))
        return super().new_output(location)
