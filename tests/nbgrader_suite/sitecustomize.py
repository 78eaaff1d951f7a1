"""Activates the course's drop-ins (``dropins.py``) at interpreter start when
``SELFATTN_NBGRADER_DROPINS=1``: ``make test-nbgrader`` puts this folder on ``PYTHONPATH`` for its
drop-in run, so nbgrader started in a subprocess by nbgrader's tests has them too."""

import os

if os.environ.get("SELFATTN_NBGRADER_DROPINS") == "1":
    import dropins

    dropins.activate()
