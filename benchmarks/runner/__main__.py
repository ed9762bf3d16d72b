"""``python -m benchmarks.runner ...`` (from the checkout's root): the same as ``turbocql bench ...``."""

import sys

from .cli import main

sys.exit(main())
