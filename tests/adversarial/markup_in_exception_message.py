# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores, attention
# message: raised ValueError: < img src=x onerror=alert(1)>
raise ValueError("<img src=x onerror=alert(1)>")
