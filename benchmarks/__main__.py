"""Run every benchmark and print its ratios (targets in brackets).  Usage: python -m benchmarks [--quick] [--full]

``--quick`` skips the book builds and the student's install, and grades classes of 10 and 30 instead
of 30 and 150 students (the sizes the targets name). ``--only student`` runs only what a student feels (also
``python -m benchmarks.student``); ``--only fixed_cost`` only the fixed costs of grading (a class of
150 for the regrade, 30 with ``--quick``); ``--only scale`` only the grading at scale; ``--only oracle``
only what a student flooding the blame oracle costs her class; ``--only loop`` only what a contributor's
test loop costs (one file, one lane, one exercise; everything with ``--full``)."""

from __future__ import annotations

import os
import sys

from .blas_threads import print_blas_threads
from .book import (
    CHAPTER_TARGET_GZIP_MB,
    SITE_TARGET_MB,
    TEXT_SECTION_TARGET_S,
    build_times,
    text_section_cpu,
    widget_latency,
)
from .core import attention_overhead, chunked_vs_full
from .dev_loop import print_dev_loop
from .fixed_cost import print_fixed_costs
from .grading import grading_benchmark
from .hub import print_hub
from .incremental import incremental_benchmark
from .oracle_flood import print_oracle_flood
from .scale import print_scale
from .student import print_student
from .student_text import print_student_text


def main(argv: list[str]) -> int:
    only = argv[argv.index("--only") + 1:][:1] if "--only" in argv else []
    if only == ["student"]:
        print("== what a student feels ==")
        print_student(with_install="--quick" not in argv)
        return 0
    if only == ["fixed_cost"]:
        print("== what grading costs whatever the class's size ==")
        print_fixed_costs(30 if "--quick" in argv else 150)
        return 0
    if only == ["scale"]:
        print("== grading at scale (all nine notebooks, 2 workers) ==")
        print_scale((10, 30) if "--quick" in argv else (30, 150))
        return 0
    if only == ["oracle"]:
        print("== a student flooding the blame oracle ==")
        print_oracle_flood()
        return 0
    if only == ["loop"]:
        print("== a contributor's test loop ==")
        print_dev_loop(full="--full" in argv)
        return 0
    if only:
        print(f"--only takes student, fixed_cost, scale, oracle or loop, not {only[0]!r}", file=sys.stderr)
        return 2
    print("== attention numerics ==")
    r = attention_overhead()
    print(
        f"attention / its two matmuls at T={r['T']}, d={r['d']}: {r['ratio']:.2f}"
        f"  ({r['attention_s'] * 1e3:.1f} ms vs {r['matmul_s'] * 1e3:.1f} ms)  [target <= 1.3]"
    )
    print(f"  the same two products in its blocks of {r['rows']} query rows: {r['blocked_ratio']:.2f};"
          f" with one exp of each score between them (the floor): {r['floor_ratio']:.2f}")
    print_blas_threads()
    print("chunked_attention vs full attention (weights materialised), d=64, block 128:")
    for T in (1024, 2048, 4096, 8192):
        c = chunked_vs_full(T)
        target = "  [target at 4096: memory <= 0.125, time <= 2.0]" if T == 4096 else ""
        print(
            f"  T={T:5d}: time ratio {c['time_ratio']:.2f}, memory ratio {c['memory_ratio']:.3f}"
            f" ({c['chunked_MiB']:.1f} MiB vs {c['full_MiB']:.1f} MiB){target}"
        )
    print("== book ==")
    w = widget_latency()
    print(
        f"widget update, observer to new frame: median {w['median_ms']:.3f} ms  [target <= 50 ms]"
        f"  (on the book's pages each frame is drawn once, up front: {w['frame_render_ms']:.0f} ms)"
    )
    print(f"chapter 10's English runs (every seed, both models, the small slice): {text_section_cpu():.0f} CPU s"
          f"  [target <= {TEXT_SECTION_TARGET_S:g} s]")
    if "--quick" not in argv:
        b = build_times()
        print(f"cold book build (empty execution cache): {b['cold_s']:.0f} s  [target <= 180 s]")
        print(f"cached rebuild, nothing changed: {b['cached_s']:.1f} s  [target <= 20 s]")
        print(f"site size (fresh build): {b['site_MB']:.1f} MB  [target <= {SITE_TARGET_MB:g} MB]")
        print(f"heaviest chapter page ({b['chapter_page']}): {b['chapter_gzip_MB']:.2f} MB compressed, "
              f"{b['chapter_raw_MB']:.2f} MB raw, {b['chapter_requests']:.0f} requests"
              f"  [target <= {CHAPTER_TARGET_GZIP_MB:g} MB compressed]")
    print("== grading ==")
    g = grading_benchmark(40, full="--full" in argv)
    scope = "" if "--full" in argv else ", 2 notebooks each; --full for all nine"
    print(f"{g['notebooks']} notebooks (40 submissions{scope}):")
    print(f"  make grade, 2 workers: {g['ours_2']:.1f} s ({g['per_notebook']:.2f} s per notebook); "
          f"plain nbgrader autograde: {g['plain']:.1f} s; ratio {g['ratio']:.2f}  [target <= 1.0]")
    print(f"  make grade, 1 worker: {g['ours_1']:.1f} s; "
          f"speed-up from 1 to 2 workers {g['speedup']:.2f}x  [target >= 1.6x]")
    print("== grading at scale (all nine notebooks, 2 workers) ==")
    print_scale((10, 30) if "--quick" in argv else (30, 150))
    inc = incremental_benchmark(30)
    print(f"incremental make grade, {inc['students']} students ({inc['notebooks']} notebooks), 2 workers: "
          f"first run {inc['first']:.1f} s; after one resubmitted notebook {inc['second']:.1f} s "
          f"({inc['second_decided']} notebook decided); nothing changed {inc['third']:.1f} s  "
          f"[target: second run <= 0.2 x first]")
    print("== what grading costs whatever the class's size ==")
    print_fixed_costs(30 if "--quick" in argv else 150)
    print("== a student flooding the blame oracle ==")
    print_oracle_flood()
    print("== hostile written answers on a feedback page (one cell each) ==")
    print_student_text()
    print("== what a student feels ==")
    print_student(with_install="--quick" not in argv)
    print("== the course hub (make hub) ==")
    if os.geteuid() == 0:
        print_hub()
    else:
        print("not measured: the hub makes system users, so this part runs as root (python -m benchmarks.hub)")
    print("== a contributor's test loop ==")
    print_dev_loop(full="--full" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
