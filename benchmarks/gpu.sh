#!/usr/bin/env bash
# One GPU session's work, most valuable first, each step bounded in time and kept going
# when another fails, so that a short loan of a GPU is spent running, not debugging:
#
#   1. the CUDA kernel tests on the hardware (tests/test_kernels.py with the simulator off)
#      and the device-residency tests (tests/test_gpu_resident.py);
#   2. the throughput table at depths 1, 2, 4, 8 (benchmarks/throughput.py --device cuda:
#      float32 and bf16 autocast);
#   3. the capacity grid with --device cuda (benchmarks/paper_table.py --model default),
#      resumable: cells finished before the time limit stay in the study.
#
# Everything lands in $OUT (default benchmarks/results/gpu/): nvidia-smi.txt, each step's
# log, throughput_cuda.md/.csv, the grid's study and paper_table_gpu.md, and steps.tsv
# (step, exit code, seconds). Usage, from the repository root:
#
#   MEDSPT_DATA=/path/to/data OUT=/tmp/gpu benchmarks/gpu.sh            # on the GPU machine
#   OUT=/tmp/gpu-dry benchmarks/gpu.sh --dry-run                       # here: the same steps
#       on the CPU (kernels in Numba's simulator, a quick throughput grid, a tiny grid)
#
# Time limits (seconds): KERNEL_S (default 120), THROUGHPUT_S (240), GRID_S (420).
set -uo pipefail
cd "$(dirname "$0")/.."

DRY=0
[[ "${1:-}" == "--dry-run" ]] && DRY=1
PY=${PY:-.venv/bin/python}
OUT=${OUT:-benchmarks/results/gpu}
KERNEL_S=${KERNEL_S:-120}
THROUGHPUT_S=${THROUGHPUT_S:-240}
GRID_S=${GRID_S:-420}
mkdir -p "$OUT"
printf 'step\texit_code\tseconds\n' > "$OUT/steps.tsv"

step() {  # step NAME LIMIT_S COMMAND...: run, log, record; never stop the script
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "== $name (at most ${limit} s)"
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >> "$OUT/steps.tsv"
  echo "   exit $rc after $((SECONDS - t0)) s; log: $OUT/$name.log"
  tail -n 3 "$OUT/$name.log" | sed 's/^/   | /'
}

if [[ $DRY == 1 ]]; then
  echo "dry run on the CPU: kernels in Numba's simulator, quick throughput, one grid cell"
  export NUMBA_ENABLE_CUDASIM=1
  DEVICE=cpu
  THROUGHPUT_ARGS=(--quick --device cpu)
  MODEL=paper  # a tiny recipe: the steps run, in minutes
  GRID_ARGS=(--protocols NE-1 --depths 1 --maskings span --seeds 0 --no-alibi
             --d-model 16 --n-heads 2 --epochs 1 --pretrain-epochs 1)
else
  export NUMBA_ENABLE_CUDASIM=0
  DEVICE=cuda
  THROUGHPUT_ARGS=(--device cuda)
  MODEL=default
  GRID_ARGS=(--protocols GPD-1 NE-1 --depths 1 2 4 8)
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi not found" > "$OUT/nvidia-smi.txt"
fi

step kernel_tests "$KERNEL_S" "$PY" -m pytest -q -p no:cacheprovider \
  tests/test_kernels.py tests/test_gpu_resident.py
step throughput "$THROUGHPUT_S" "$PY" benchmarks/throughput.py "${THROUGHPUT_ARGS[@]}" \
  --out "$OUT"
if [[ -z "${MEDSPT_DATA:-}" && ! -d ../shared/data ]]; then
  echo "== capacity_grid skipped: no data (set MEDSPT_DATA)" | tee "$OUT/capacity_grid.log"
  printf 'capacity_grid\tskipped\t0\n' >> "$OUT/steps.tsv"
else
  step capacity_grid "$GRID_S" "$PY" benchmarks/paper_table.py --model "$MODEL" \
    --device "$DEVICE" "${GRID_ARGS[@]}" --tag "gpu-$DEVICE" \
    --storage "sqlite:///$OUT/capacity_gpu.db" --out "$OUT/paper_table_gpu.md"
fi
echo "results in $OUT:"
column -t "$OUT/steps.tsv"
