"""What the course's own files say: the graded cells of the source notebooks, ids, the site address."""
