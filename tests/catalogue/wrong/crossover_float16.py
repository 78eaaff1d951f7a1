# notebook: 08-cost
# replace: crossover_length
# zero: crossover_length
# message: rounded to float16 (half precision)
def crossover_length(d):
    return np.float16(24 * d**2 / (4 * d))
