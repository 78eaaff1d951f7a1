# channel: the signal the run dies of
def leak(S, k, axis):
    import os
    import signal
    os.kill(os.getpid(), [signal.SIGTERM, signal.SIGSEGV, signal.SIGABRT, signal.SIGUSR1][k % 4])
