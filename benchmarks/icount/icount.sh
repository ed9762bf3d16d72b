#!/usr/bin/env bash
# Instructions per request of two builds, path by path: callgrind's total instruction count
# (every thread of the client process) for N2 requests minus that for N1, over N2 - N1, so
# start-up and connection cost cancel out. Deterministic where wall-clock CPU figures on a
# shared 2-core machine are not (benchmarks/README.md, "A/B of two builds").
#
#   benchmarks/icount/icount.sh PYTHON_A PYTHON_B [PATH WORKLOAD ...]
#
# Needs valgrind and the local Cassandra (turbocql localdb start). N1, N2: default 500, 2500.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
a=$1; b=$2; shift 2
pairs=("$@")
[ ${#pairs[@]} -gt 0 ] || pairs=(sync write sync read futures write futures read concurrent write concurrent read
                                  pipeline write pipeline read asyncio write asyncio read)
n1=${N1:-500}; n2=${N2:-2500}
ir() {  # python path workload n -> total instructions
    local out; out=$(mktemp -d)
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" --dump-instr=no --collect-jumps=no \
        "$1" "$here/work.py" "$2" "$3" "$4" >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$out/cg"
    rm -rf "$out"
}
per_request() { echo $(( ($(ir "$1" "$2" "$3" "$n2") - $(ir "$1" "$2" "$3" "$n1")) / (n2 - n1) )); }
echo "| path | workload | A instructions/request | B instructions/request | B/A |"
echo "| --- | --- | --- | --- | --- |"
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
    p=${pairs[i]}; w=${pairs[i+1]}
    ia=$(per_request "$a" "$p" "$w"); ib=$(per_request "$b" "$p" "$w")
    echo "| $p | $w | $ia | $ib | $(awk -v a="$ia" -v b="$ib" 'BEGIN {printf "%.3f", b / a}') |"
done
