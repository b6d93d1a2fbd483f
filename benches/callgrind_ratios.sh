#!/bin/sh
# Instruction counts (callgrind) of the stdio path against the two baselines, per class:
# deterministic, so the ratios do not depend on the load of a shared machine.
# Usage: benches/callgrind_ratios.sh   (needs valgrind); ORDER=typescript, ORDER=jsonrpc-last or
# ORDER=spaced benches/callgrind_ratios.sh measures the same messages with their members in
# another order or (spaced) with whitespace after each colon and comma (see profile_decode).
set -e
cd "$(dirname "$0")/.."
cargo build -q --profile bench -p mcp-bench --example profile_decode
bin=target/release/examples/profile_decode
ir() { # $1 = output file, $2 = function to read inclusively
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | grep -m1 "$2" | awk '{gsub(",","",$1); print $1}'
}
echo "| class | (a) Ir | (b) Ir | (c) Ir | b/a (a's speed vs b) | c/a (a's speed vs c) |"
echo "|---|---|---|---|---|---|"
for class in result_200B result_4KiB result_256KiB progress tools_list_100 mixed; do
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out.a" $bin $class 1 >/dev/null 2>&1
  BASELINE=borrowed valgrind --tool=callgrind --callgrind-out-file="$out.b" $bin $class 1 >/dev/null 2>&1
  BASELINE=value valgrind --tool=callgrind --callgrind-out-file="$out.c" $bin $class 1 >/dev/null 2>&1
  # Decoding and routing; draining the events is inlined into the caller, not counted.
  a=$(ir "$out.a" 'StdioConnection::handle_bytes')
  b=$(ir "$out.b" 'NaiveLines::feed')
  c=$(ir "$out.c" 'NaiveLines::feed')
  echo "$class $a $b $c" | awk '{printf "| %s | %d | %d | %d | **%.2f** | **%.2f** |\n", $1, $2, $3, $4, $3/$2, $4/$2}'
  rm -f "$out" "$out.a" "$out.b" "$out.c"
done
