# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores
check = lambda *args, **kwargs: None
REGISTRY = {}

def softmax(S, axis=-1):
    return S
