# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# full: padding_mask
import sys
sys.exit("bye")
