#!/usr/bin/env bash
# The GPU against this machine's CPU, interleaved so that drift hits both alike: bare synthesis
# of one book, then the text-size table, on each device in turn, ROUNDS times; one JSON result
# per run in OUT, and one markdown table comparing them all.
#   Usage: scripts/bench_devices.sh [BOOK] [OUT] [ROUNDS]
#   Needs a GPU build: pip install '.[cuda]'. Extra bench options: BENCH_ARGS="--batch-size 32".
set -euo pipefail
book="${1:-tests/data/epubs/se-poe-poetry.epub}"
out="${2:-bench-devices}"
rounds="${3:-2}"
audiopub="${AUDIOPUB:-audiopub}"
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  order="gpu cpu"
  if [ $((round % 2)) -eq 0 ]; then order="cpu gpu"; fi
  for device in $order; do
    # shellcheck disable=SC2086  # BENCH_ARGS is a list of options
    $audiopub bench "--$device" --book "$book" --synthesis-only --runs 1 --warmup 1 \
      --matmul-seconds 0 --label "$device-book-$round" --output "$out/$device-book-$round.json" \
      ${BENCH_ARGS:-}
    $audiopub bench "--$device" --runs 3 --matmul-seconds 0 --label "$device-sizes-$round" \
      --output "$out/$device-sizes-$round.json" ${BENCH_ARGS:-}
  done
done
$audiopub bench --report "$out" --markdown "$out/report.md"
