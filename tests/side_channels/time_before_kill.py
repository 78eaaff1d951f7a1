# channel: how long the run lasts before it is killed
def leak(S, k, axis):
    import os
    import signal
    import time
    time.sleep(k / 1000)
    os.kill(os.getpid(), signal.SIGKILL)
