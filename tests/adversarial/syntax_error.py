# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
# message: SyntaxError
def causal_mask(T)
    return None
