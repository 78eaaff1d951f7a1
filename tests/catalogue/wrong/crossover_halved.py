# notebook: 08-cost
# replace: crossover_length
# zero: crossover_length
# message: solve 4 T² d
def crossover_length(d):
    return 12 * d
