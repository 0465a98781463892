"""``python -m astjit``: the same command line as ``astjit``."""

import sys

from .inspection.cli import main

if __name__ == "__main__":
    sys.exit(main())
