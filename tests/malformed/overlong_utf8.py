# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: not UTF-8
import json

from grading_support import answer_cell


def mutate(raw: str) -> bytes:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append("\n# a slash @1 @2 a quote @3 a NUL @4 a surrogate @5\n")
    text = json.dumps(nb).encode()
    # overlong forms of "/", '"' and NUL, and the UTF-8 bytes of a surrogate: all invalid UTF-8
    for mark, seq in ((b"@1", b"\xc0\xaf"), (b"@2", b"\xe0\x80\xaf"), (b"@3", b"\xc0\xa2"), (b"@4", b"\xc0\x80"),
                      (b"@5", b"\xed\xb2\x80")):
        text = text.replace(mark, seq)
    return text
