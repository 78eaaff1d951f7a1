"""Late work: the penalty policy (policy.py), due dates and extensions (due_dates.py), and the
penalties and final scores in the gradebook (penalties.py)."""
