"""Running the stages for a whole class: on this machine, on a Dask cluster or as a Slurm job array."""
