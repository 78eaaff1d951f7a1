"""Verdicts: each staged notebook decided in the sandbox, with fair blame, and stored with its key."""
