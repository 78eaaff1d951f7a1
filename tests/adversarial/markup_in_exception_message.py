# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax,attention
# full: scaled_scores
# message: raised ValueError: < img src=x onerror=alert(1)>
raise ValueError("<img src=x onerror=alert(1)>")
