# channel: the exit status of the run
def leak(S, k, axis):
    import os
    os._exit(k)
