#!/usr/bin/env bash
# Run the proptest fuzz harnesses for a given number of minutes each, in
# rounds of DCSIM_FUZZ_CASES cases with fresh random seeds, and log what ran.
#   validation/fuzz.sh [minutes for tcp_fuzz] [minutes for parser_fuzz]
# Failures are minimized by proptest and saved under
# crates/dcsim/tests/proptest-regressions/ (commit them: they are the corpus
# that is re-run first from then on).
set -euo pipefail
cd "$(dirname "$0")/.."
tcp_min=${1:-35}
parser_min=${2:-25}
cases=${DCSIM_FUZZ_CASES:-20000}
log=${FUZZ_LOG:-validation/fuzz.log}
# Build once and run the test binaries directly (no cargo lock held meanwhile).
bins=$(cargo test --profile ci -p dcsim --test tcp_fuzz --test parser_fuzz --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys; [print(m["executable"]) for m in map(json.loads, sys.stdin) if m.get("executable")]')
run() { # target minutes
  local target=$1 minutes=$2 rounds=0 start end bin
  [ "$minutes" -gt 0 ] || return 0
  bin=$(echo "$bins" | grep "/$target-")
  start=$(date +%s); end=$((start + minutes * 60))
  while [ "$(date +%s)" -lt "$end" ]; do
    DCSIM_FUZZ_CASES=$cases "$bin" -q > /tmp/fuzz-$target.out 2>&1 || {
      echo "$(date -Is) $target FAILED in round $((rounds + 1))" | tee -a "$log"; cat /tmp/fuzz-$target.out; return 1; }
    rounds=$((rounds + 1))
  done
  echo "$(date -Is) $target: $rounds rounds x $cases cases per property, $(( $(date +%s) - start )) s" | tee -a "$log"
}
run tcp_fuzz "$tcp_min"
run parser_fuzz "$parser_min"
