"""``python -m rocpy``: the ``rocpy`` command."""
import sys

from .cli import main

sys.exit(main())
