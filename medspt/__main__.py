"""``python -m medspt``: the ``medspt`` command."""

import sys

from medspt.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
