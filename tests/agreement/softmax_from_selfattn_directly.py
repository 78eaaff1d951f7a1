# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: do not import `selfattn`
from selfattn import softmax
