# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
# message: filled its disk
# fills /dev/shm, then /tmp (files under the 16 MiB per-file cap): together they hold 128 MiB
import os


def causal_mask(T):
    for folder in ("/dev/shm", "/tmp"):
        i = 0
        while True:
            try:
                with open(os.path.join(folder, f"fill{i}"), "wb") as fh:
                    fh.write(b"x" * (8 << 20))
            except OSError:
                if folder == "/tmp":
                    raise
                break
            i += 1
