# channel: how deep the answer recurses before it fails
def leak(S, k, axis):
    import sys
    sys.setrecursionlimit(50 + k)
    def down(n):
        return down(n + 1)
    return down(0)
