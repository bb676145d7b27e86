"""``python -m codegen.cli``: the ``acp-codegen`` command."""

import sys

from . import console

if __name__ == "__main__":
    sys.exit(console())
