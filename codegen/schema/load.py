"""Stage 1: find, verify and read upstream schema releases.

The project keeps a *schema store*: ``schemas/lock.json`` records every known
release with the sha256 of each of its four files and where it came from (an
upstream git tag, or a version of the TypeScript SDK's npm package), and
``schemas/v<major>/<release>/`` holds the files themselves, as they came from
there.  ``generate`` and every other command read releases from the store and
check each file against the lock before it is parsed; nothing is downloaded
behind the user's back.  ``--schemas DIR`` (or ``$ACP_SCHEMAS``) puts another
store in front: its files are looked for first, and its own ``lock.json``, if
it has one, adds releases to the bundled lock or overrides them.

The work is in three modules, re-exported here: :mod:`.readers` (a release's
files, parsed and hashed), :mod:`.lock` (the lock) and :mod:`.store` (the
store's folders, fetching, writing).
"""

from __future__ import annotations

from ..textfile import read_toml  # diff/waivers reads its TOML through here
from .lock import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    SHARED_SCHEMAS,
    UPSTREAM_REPOSITORY,
    UPSTREAM_URL,
    FileEntry,
    Lock,
    LockedFile,
    LockedRelease,
    LockEntry,
    NpmEntry,
    NpmOrigin,
    layered_lock,
    lock_bytes,
    lock_entry,
    protocol_major,
    read_layers,
    read_lock,
    sort_releases,
)
from .readers import (
    MAX_FILE_BYTES,
    META_OF,
    RELEASE_FILES,
    SCHEMA_FILES,
    ReleaseFiles,
    SchemaDocument,
    check_release_file,
    check_size,
    parse_json,
    read_json,
    sha256_bytes,
)
from .store import (
    DOWNLOAD_TIMEOUT,
    SchemaSource,
    add_to_lock,
    default_cache_dir,
    default_source,
    fetch_release,
    load_release_folder,
    load_schema_folder,
    release_folder,
    release_paths,
    releases_in,
    write_lock_entries,
    write_store,
)

__all__ = [
    "BUNDLED_SCHEMAS",
    "DEFAULT_LOCK",
    "DOWNLOAD_TIMEOUT",
    "MAX_FILE_BYTES",
    "META_OF",
    "RELEASE_FILES",
    "SCHEMA_FILES",
    "SHARED_SCHEMAS",
    "UPSTREAM_REPOSITORY",
    "UPSTREAM_URL",
    "FileEntry",
    "Lock",
    "LockEntry",
    "LockedFile",
    "LockedRelease",
    "NpmEntry",
    "NpmOrigin",
    "ReleaseFiles",
    "SchemaDocument",
    "SchemaSource",
    "add_to_lock",
    "check_release_file",
    "check_size",
    "default_cache_dir",
    "default_source",
    "fetch_release",
    "layered_lock",
    "load_release_folder",
    "load_schema_folder",
    "lock_bytes",
    "lock_entry",
    "parse_json",
    "protocol_major",
    "read_json",
    "read_layers",
    "read_lock",
    "read_toml",
    "release_folder",
    "release_paths",
    "releases_in",
    "sha256_bytes",
    "sort_releases",
    "write_lock_entries",
    "write_store",
]
