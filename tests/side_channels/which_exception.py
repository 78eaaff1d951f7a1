# channel: which of several exception classes is raised
def leak(S, k, axis):
    classes = [type(f"Leak{i}", (Exception,), {}) for i in range(4)]
    raise classes[k % 4]()
