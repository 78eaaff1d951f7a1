# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: do not import `selfattn`
def softmax(S, axis=-1):
    import selfattn

    return selfattn.softmax(S, axis=axis)
