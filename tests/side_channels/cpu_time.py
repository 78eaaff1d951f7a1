# channel: running until the CPU limit stops the run
def leak(S, k, axis):
    x = k
    while True:
        x = (x * 3 + 1) % 1_000_003
