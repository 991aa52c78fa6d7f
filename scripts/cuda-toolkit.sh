#!/usr/bin/env bash
# Assembles the CUDA 13.0 toolkit that the optional `candle` feature of the
# `sdpa` crate builds with, from NVIDIA's PyPI wheels, under
# target/cuda-toolkit (git-ignored). Our own kernels never need it: only
# candle-core's `cuda` feature does (its kernels are .cu files compiled by
# nvcc, and its cudarc links the CUDA libraries).
#
# The tree holds nvcc (with cicc, libdevice and the CRT and CCCL headers),
# the runtime headers, and the libraries candle links: cudart, cublas,
# cublasLt, curand, nvrtc. The driver (libcuda.so) comes with a GPU driver,
# not a wheel, so the script writes a link-time stub that exports every
# driver function cudarc binds; the real libcuda.so.1 is loaded at run time.
#
# CUDA 13.0 because the GPU machines' driver (580) runs PTX up to ISA 9.0:
# candle's kernels are PTX, JIT-compiled by the driver, so a newer nvcc
# would produce PTX that driver refuses.
#
# Usage: scripts/cuda-toolkit.sh [DEST]      (DEST: target/cuda-toolkit)
# then:  source target/cuda-toolkit/env.sh
#        cargo build -p sdpa --features candle
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$(realpath -m "${1:-$repo/target/cuda-toolkit}")

# One CUDA release (13.0) throughout; cublas and curand number their own.
wheels=(
    nvidia-cuda-nvcc==13.0.88
    nvidia-cuda-crt==13.0.88
    nvidia-nvvm==13.0.88
    nvidia-cuda-runtime==13.0.96
    nvidia-cuda-cccl==13.0.85
    nvidia-cuda-nvrtc==13.0.88
    nvidia-cublas==13.0.0.19
    nvidia-curand==10.4.0.35
)

# The driver bindings of the cudarc that candle and sdpa share: the stub
# libcuda.so exports each function they name.
cudarc_version=0.19.10

if [[ -x "$dest/bin/nvcc" && -e "$dest/lib/stubs/libcuda.so" && -e "$dest/env.sh" ]]; then
    echo "cuda-toolkit: $dest is already assembled"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "cuda-toolkit: downloading ${#wheels[@]} wheels"
python3 -m pip download --quiet --no-deps --dest "$work/wheels" "${wheels[@]}"

echo "cuda-toolkit: unpacking into $dest"
mkdir -p "$work/unpacked"
for wheel in "$work"/wheels/*.whl; do
    python3 -m zipfile -e "$wheel" "$work/unpacked"
done
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/unpacked/nvidia/cu13" "$dest"
# Wheels drop the executable bit on some tools.
chmod +x "$dest"/bin/* "$dest"/nvvm/bin/* 2>/dev/null || true

# The linker looks for libNAME.so; wheels ship only the versioned names.
for lib in cudart cublas cublasLt curand nvrtc; do
    versioned=$(cd "$dest/lib" && ls "lib$lib.so."* | grep -v alt | sort | head -n 1)
    ln -sf "$versioned" "$dest/lib/lib$lib.so"
done

echo "cuda-toolkit: writing the link-time libcuda.so stub"
cargo fetch --manifest-path "$repo/Cargo.toml" --quiet
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
bindings=$(find "$registry" -path "*/cudarc-$cudarc_version/src/driver/sys/mod.rs" | head -n 1)
if [[ -z "$bindings" ]]; then
    echo "cuda-toolkit: cudarc $cudarc_version's driver bindings not found under $registry" >&2
    exit 1
fi
mkdir -p "$dest/lib/stubs"
grep -oE '^pub unsafe fn cu[A-Za-z0-9_]+' "$bindings" | awk '{print $4}' | sort -u |
    awk '{print "int " $1 "(void) { return 999; /* CUDA_ERROR_UNKNOWN */ }"}' >"$work/libcuda_stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$dest/lib/stubs/libcuda.so" "$work/libcuda_stub.c"

cat >"$dest/env.sh" <<EOF
# Source this before building \`sdpa\` with \`--features candle\`.
export CUDA_ROOT="$dest"
export CUDA_HOME="$dest"
export CUDA_PATH="$dest"
export PATH="$dest/bin:\$PATH"
# candle compiles its kernels for the H100/H200 (sm_90).
export CUDA_COMPUTE_CAP=\${CUDA_COMPUTE_CAP:-90}
# The linker follows libcublas's own dependencies (libcublasLt) here.
export LD_LIBRARY_PATH="$dest/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
EOF

"$dest/bin/nvcc" --version | tail -n 2
echo "cuda-toolkit: done; source $dest/env.sh"
