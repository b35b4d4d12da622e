"""``python -m gradcode.cli`` (the same as ``python -m gradcode`` and the ``gradcode`` command)."""

import sys

from . import main

sys.exit(main())
