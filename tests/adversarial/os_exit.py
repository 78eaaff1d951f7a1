# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
# message: ended before returning
import os

def causal_mask(T):
    os._exit(0)
