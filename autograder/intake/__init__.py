"""Intake: which submissions a run grades, and each one read as untrusted data and staged."""
