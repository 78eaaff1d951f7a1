"""The class report: ``python -m autograder.report`` (the code is in :mod:`autograder.reporting`)."""

import sys

from autograder.reporting.class_report import main

if __name__ == "__main__":
    sys.exit(main())
