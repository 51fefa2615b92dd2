"""`python -m tracer ...`: see tracer/cli.py."""

import sys

from tracer.cli import main

sys.exit(main())
