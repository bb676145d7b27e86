"""``python -m codegen.cli``: the ``acp-codegen`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
