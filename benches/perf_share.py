"""Inclusive shares of a `perf script` dump (DWARF call graphs): for each
frame pattern, the share of samples whose stack holds a frame containing it.
Patterns are substrings of symbol names, one a line; a generic type's name
also shows in the frames of what wraps it, so name functions, not types.

    python3 benches/perf_share.py perf-script.txt benches/perf_frames.txt
"""

import sys


def main(dump: str, patterns: str) -> None:
    wanted = [line.strip() for line in open(patterns) if line.strip() and not line.startswith("#")]
    hits = dict.fromkeys(wanted, 0)
    samples = 0
    for sample in open(dump).read().split("\n\n"):
        stack = sample.strip().split("\n")[1:]
        if not stack:
            continue
        samples += 1
        frames = "\n".join(stack)
        for pattern in wanted:
            if pattern in frames:
                hits[pattern] += 1
    for pattern in wanted:
        print(f"{100 * hits[pattern] / max(samples, 1):5.1f}%  {pattern}")
    print(f"{samples} samples")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
