#!/usr/bin/env python3
"""Turns `cargo bench -p mcp-bench` output into the BENCHMARKS.md tables (medians, ratios).

Usage: cargo bench -p mcp-bench 2>&1 | tee bench.txt; python3 benches/summarize.py bench.txt
"""
import re
import sys

UNITS = {"B/s": 1, "KiB/s": 1024, "MiB/s": 1024**2, "GiB/s": 1024**3,
         "ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1}


def parse(path):
    res, name = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip()
        m = re.match(r"^([a-z_]+/[^\s]+)\s*(time:.*)?$", line)
        if m and not line.startswith("Benchmarking"):
            name = m.group(1)
            line = m.group(2) or ""
        m = re.search(r"(time|thrpt):\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if m and name:
            res.setdefault(name, {})[m.group(1)] = float(m.group(2)) * UNITS[m.group(3)]
    return res


def mib(x):
    return f"{x / 1024**2:,.0f} MiB/s"


def main():
    r = parse(sys.argv[1])
    classes = ["result_200B", "result_4KiB", "result_256KiB", "progress", "tools_list_100", "mixed"]
    print("| class | (a) stdio session | (b) borrowed envelope | (c) `Value` | a/b (target ≥ 0.8) | a/c (target ≥ 2) |")
    print("|---|---|---|---|---|---|")
    for c in classes:
        g = lambda v: r.get(f"core_decode/{c}/{v}", {}).get("thrpt")
        a, b, v = g("a_stdio_session"), g("b_borrowed_envelope"), g("c_value")
        if a and b and v:
            print(f"| {c} | {mib(a)} | {mib(b)} | {mib(v)} | **{a / b:.2f}** | **{a / v:.2f}** |")
    print()
    print("| class | `SseDecoder` | naive split | decoder/naive | decoder + session | naive + borrowed envelope | full/baseline |")
    print("|---|---|---|---|---|---|---|")
    for c in classes:
        g = lambda v: r.get(f"sse_decode/{c}/{v}", {}).get("thrpt")
        d, n, f, nb = g("decoder"), g("naive_split"), g("decoder_session"), g("naive_borrowed_envelope")
        if d and n and f and nb:
            print(f"| {c} | {mib(d)} | {mib(n)} | **{d / n:.2f}** | {mib(f)} | {mib(nb)} | **{f / nb:.2f}** |")
    print()
    print("| operation | 1k in flight | 10k | 100k | 100k / 1k |")
    print("|---|---|---|---|---|")
    for op in ["send", "respond", "cancel", "timeout"]:
        t = [r.get(f"pending_scaling/{op}/{n}", {}).get("time") for n in (1000, 10000, 100000)]
        if all(t):
            cells = " | ".join(f"{x * 1e9:,.0f} ns" for x in t)
            print(f"| {op} | {cells} | {t[2] / t[0]:.1f}x |")


if __name__ == "__main__":
    main()
