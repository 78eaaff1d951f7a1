"""What the instructor reads: the run summary, the class report, similarity."""
