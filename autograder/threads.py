"""One BLAS thread per process, wherever the course runs NumPy beside other processes.

Every process here shares a few cores with others: a sandbox beside the grading pool's other workers,
a student's kernel beside the class's on the hub, formgrader beside them. There, a second OpenBLAS
thread spins against the other processes' more than it computes: two chapter-10 trainings at once on
two cores take 3.8 CPU-s each with one thread and 16.9 with two (``benchmarks/blas_threads.py``).
The Makefile exports the same variables for everything ``make`` starts.
"""

from __future__ import annotations

#: The environment that holds each BLAS library NumPy may load (OpenBLAS, OpenMP builds, MKL) to one thread.
ONE_BLAS_THREAD: dict[str, str] = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
