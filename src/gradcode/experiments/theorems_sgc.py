"""Paper's theorems checked by computation (``theorems``): declared with ``@statement``."""

from __future__ import annotations
