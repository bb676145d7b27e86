"""Writing into the user's folders: the tool changes only what it wrote, each file and folder in one step.

* :mod:`.record`: the record of what the tool wrote in an output folder
  (``ACP-CODEGEN.json``) and the one door every writing command goes through:
  it refuses a path the tool did not write, in one line naming the path and
  ``--force``, and writes nothing else;
* :mod:`.swap`: a folder replaced in one step, with what the user put in it kept;
* :mod:`.atomic`: a file replaced in one step, and operating-system errors as one line.
"""

from __future__ import annotations

from .atomic import TEMPORARY_INFIX, check_folder, default_file_mode, os_error, write_atomic, write_files
from .record import RECORD_NAME, Output, Plan, Record, read_record, write_folder

__all__ = [
    "RECORD_NAME",
    "TEMPORARY_INFIX",
    "Output",
    "Plan",
    "Record",
    "check_folder",
    "default_file_mode",
    "os_error",
    "read_record",
    "write_atomic",
    "write_files",
    "write_folder",
]
