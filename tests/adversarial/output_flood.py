# notebook: 07-masking
# replace: causal_mask
# full: causal_mask,padding_mask
import os, sys
for _ in range(200_000):
    print("x" * 100)
    sys.stderr.write("y" * 100 + "\n")
os.write(1, b"z" * (20 << 20))

def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1)
