#!/usr/bin/env bash
# One task of a Slurm job array that grades a class in N ranges of students (autograder/pipeline/slurm_array.py).
# From the course's root (a checkout with its .venv on a file system the compute nodes share):
#   sbatch --array=0-9 scripts/slurm-grade-array.sh 10 [grade options, e.g. --cpu-seconds 60]
#   make grade GRADE_ARGS="--after-array 10"          # after the array: merges, or names what is left
#SBATCH --job-name=grade-array
#SBATCH --cpus-per-task=1
#SBATCH --output=slurm-grade-%A_%a.out
set -euo pipefail
parts=${1:?usage: sbatch --array=0-N-1 scripts/slurm-grade-array.sh N [grade options]}
shift
exec .venv/bin/python -m autograder.grade array-task "${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}/$parts" "$@"
