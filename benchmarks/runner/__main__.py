"""``python -m turbocql.bench ...``: the same as ``turbocql bench ...``."""

import sys

from .cli import main

sys.exit(main())
