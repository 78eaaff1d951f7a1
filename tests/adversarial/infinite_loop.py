# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
# message: infinite loop
def causal_mask(T):
    while True:
        pass
