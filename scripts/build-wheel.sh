#!/usr/bin/env bash
# Builds the `sdpa-fp8` Python wheel (python/) into .whl/ (git-ignored), to
# carry to the GPU machine: one abi3 wheel (CPython 3.11 and newer, so the
# GPU machine's 3.12 too) tagged manylinux_2_28, linked by zig so it needs
# no newer glibc than that. It embeds the kernels (PTX and, with ptxas from
# `cargo xtask setup`, cubins) and depends only on torch, which it does not
# bring: install it there with `pip install --no-deps`.
#
# maturin and ziglang come from PyPI into a virtual environment under
# target/ (made on first use). With WITH_PYTEST=1, pytest and its
# dependencies (pure-Python wheels, for CPython 3.12) are downloaded into
# .whl/pytest/ too, for a GPU machine that lacks them:
# `pip install --no-index --no-deps .whl/pytest/*.whl` there.
#
# Usage: [WITH_PYTEST=1] scripts/build-wheel.sh [extra maturin args]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/target/wheel-venv"
out="$root/.whl"

[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c "import maturin, ziglang" 2>/dev/null; then
    "$venv/bin/pip" install --quiet "maturin>=1.9,<2" ziglang
fi

mkdir -p "$out"
cd "$root/python"
# maturin finds zig as `python -m ziglang` of the environment first on PATH.
PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --release --zig --compatibility manylinux_2_28 \
    --interpreter "$venv/bin/python" --out "$out" "$@"

wheel=$(ls -t "$out"/sdpa_fp8-*.whl | head -n 1)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"

if [[ "${WITH_PYTEST:-0}" == 1 ]]; then
    "$venv/bin/pip" download --quiet pytest --python-version 3.12 --only-binary=:all: \
        --platform manylinux_2_28_x86_64 -d "$out/pytest"
    echo "pytest: $(ls "$out/pytest" | tr '\n' ' ')"
fi
