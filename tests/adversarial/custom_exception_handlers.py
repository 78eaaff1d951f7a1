# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores
import sys
sys.excepthook = lambda *a: None
try:
    get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)
    get_ipython().input_transformers_post.append(lambda lines: ["pass\n"])
except NameError:
    pass

def softmax(S, axis=-1):
    raise ValueError("wrong on purpose")
