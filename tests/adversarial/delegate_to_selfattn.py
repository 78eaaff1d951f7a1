# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores
# message: selfattn
import selfattn
softmax = selfattn.softmax
