# channel: warnings and text printed to stdout and stderr
def leak(S, k, axis):
    import sys
    import warnings
    warnings.warn(f"k={k}")
    print(f"k={k}")
    print(f"k={k}", file=sys.stderr)
    return _right(S, axis) * 2
