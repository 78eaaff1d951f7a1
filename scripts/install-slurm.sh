#!/usr/bin/env bash
# Debian packages of a one-node Slurm for the Slurm tests (scripts/one_node_slurm.py): slurm-wlm
# (slurmctld, slurmd, sbatch, srun, scancel) and munge (Slurm's authentication). Installs what is
# missing when run as root; otherwise prints the command to run.
set -euo pipefail
need=()
for cmd in slurmctld slurmd sbatch; do
  command -v "$cmd" >/dev/null 2>&1 || { need+=(slurm-wlm); break; }
done
for cmd in munged mungekey; do
  command -v "$cmd" >/dev/null 2>&1 || { need+=(munge); break; }
done
if [ ${#need[@]} -eq 0 ]; then
  echo "system packages present: slurm-wlm, munge"
  exit 0
fi
exec bash "$(dirname "$0")/apt-install.sh" "${need[@]}"
