# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: not UTF-8
import json

from grading_support import answer_cell


def mutate(raw: str) -> bytes:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append("\n# caf@@ and @@@@ and @@\n")
    text = json.dumps(nb, ensure_ascii=False).encode()
    # a Latin-1 e-acute, a stray continuation byte, a truncated sequence, bytes never valid in UTF-8
    return text.replace(b"caf@@", b"caf\xe9").replace(b"@@@@", b"\x80\xbf\xe2\x82").replace(b"@@", b"\xfe\xff")
