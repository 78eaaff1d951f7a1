# notebook: 08-cost
# replace: crossover_length
# full: crossover_length
def crossover_length(d):
    # 4 T^2 d = 24 T d^2  <=>  T = 24 d^2 / (4 d)
    return 24 * d**2 // (4 * d)
