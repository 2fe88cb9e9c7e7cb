"""Test-wide set-up.

pytest-xdist workers run with ``COLUMNS=80`` in their environment, which our
consoles honour as a user's explicit width; the console tests check what a
script reading piped output sees, so the variable is removed before the package
creates its consoles.
"""

import os

os.environ.pop("COLUMNS", None)
