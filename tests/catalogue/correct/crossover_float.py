# notebook: 08-cost
# replace: crossover_length
# full: crossover_length
# Solved as a ratio of the two costs' factors: a float, the same number.
def crossover_length(d):
    return 24 * d**2 / (4 * d)
