# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
# message: ran out of memory
# each child stays under the per-process address-space cap; together they hold 1.6 GiB
import os
import time


def causal_mask(T):
    children = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            try:
                hold = bytearray(200 << 20)
                hold[::4096] = b"x" * len(hold[::4096])  # touched: resident, not just reserved
                time.sleep(60)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return np.triu(np.full((T, T), -np.inf), k=1)
