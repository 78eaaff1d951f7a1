# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores
# message: No module named 'selfattn'
import selfattn
softmax = selfattn.softmax
