"""Code that runs *inside* the grading sandbox, beside student code (standard library and
NumPy only, copied into the sandbox as top-level scripts; nothing here imports the grader)."""
