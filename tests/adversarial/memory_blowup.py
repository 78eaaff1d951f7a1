# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
def causal_mask(T):
    hog = []
    while True:
        hog.append(bytearray(100 << 20))
