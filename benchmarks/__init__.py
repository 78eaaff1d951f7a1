"""Speed and memory benchmarks, printed as ratios measured in one run (`make bench`)."""
