# notebook: 08-cost
# replace: crossover_length
# zero: crossover_length
# message: 6 d²
def crossover_length(d):
    return 6 * d * d
