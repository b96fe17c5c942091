#!/usr/bin/env bash
# The CUDA backend's checks on a machine with an NVIDIA GPU, as one script: CuPy
# (pip install "chainrule[cuda]") and the test extra must be importable there.
#   1. CPU and CUDA tensors side by side, and the op catalog on the GPU against the CPU
#      (float32 to 1e-5, float64 to 1e-10): tests/devices_cases.py on CuPy;
#   2. the op catalog, layers and optimizers against PyTorch with every tensor on the GPU
#      (the on_cuda plugin), as test_strict_backend runs them on the stand-in;
#   3. each tensor recipe's goal trained with --device cuda;
#   4. the MLP, CNN and GPT training steps beside PyTorch on the same GPU (cuda_steps.py).
# Results go to $OUT (default gpu-results/), one log per part.
#     bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
export CHAINRULE_ARRAY_BACKEND=cupy PYTHONPATH=tests${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
status=0
$PY -c "import chainrule as cr; print(cr.cuda.get_device_name(), cr.cuda.device_count())" \
    2>&1 | tee "$OUT/device.log" || exit 1
$PY -m pytest -q -p no:cacheprovider -p no:xdist tests/devices_cases.py \
    2>&1 | tee "$OUT/devices_cases.log" || status=1
$PY -m pytest -q -p no:cacheprovider -p no:xdist -p on_cuda tests/test_ops.py \
    tests/test_nn_layers.py tests/test_optim.py tests/test_conv.py tests/test_attention.py \
    tests/test_rnn.py tests/test_transformer.py tests/test_nn_losses.py \
    2>&1 | tee "$OUT/on_cuda.log" || status=1
for recipe in breast-cancer regression moons digits-mlp digits-cnn; do
    $PY -m chainrule train "$recipe" --device cuda --quiet --out "$OUT/runs/$recipe" \
        2>&1 | tee "$OUT/train-$recipe.log" || status=1
done
$PY benchmarks/cuda_steps.py 2>&1 | tee "$OUT/cuda_steps.log" || status=1
exit $status
