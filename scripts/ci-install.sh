#!/usr/bin/env bash
# ci-install.sh - every system package that the checks beyond `make test` need, installed in one
# place (Debian/Ubuntu, apt-get; root or sudo). `.ci/run` calls it before those checks; the make
# targets themselves never install anything: when a tool is missing they stop and name this script.
#
#   scripts/ci-install.sh            everything .ci/run needs (what is already there is skipped)
#   scripts/ci-install.sh GROUP...   only some groups: arm64 hbm valgrind clang metal models
#                                    chromium cuda, or bench (OpenBLAS for make bench, not in CI),
#                                    torch (not in CI)
#
# What each group is for:
#   arm64     gcc/g++-aarch64-linux-gnu, qemu-user-static: make test-arm64, conformance-arm64,
#             test-cuda-emu-arm64
#   hbm       libmemkind-dev: make test-hbm
#   valgrind  valgrind: make test-valgrind
#   clang     clang: make test-clang, metal-check
#   metal     gobjc, libgnustep-base-dev, clang: the Metal emulator (make metal-check,
#             test-metal-emu, conformance-metal-emu)
#   models    python3-numpy: compare.py of make models-check / models-check-rpc
#   chromium  chromium: the chat page test of make test-server-clients (npm packages are
#             installed by that test into a temporary folder, not here)
#   cuda      the CUDA 11.8 toolkit in /opt/ggml-cuda-11.8 (cuda/install-toolkit.sh): cuda-check
#   bench     libopenblas-dev: the sgemm comparator of make bench-c
#   torch     python3-torch, libopenblas0-pthread (without it torch runs on the reference BLAS,
#             50 times slower): the PyTorch side of make train-vs-pytorch
set -euo pipefail

cd "$(dirname "$0")/.."

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(arm64 hbm valgrind clang metal models chromium cuda)

sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

want=()
cuda=0
for g in "${groups[@]}"; do
	case "$g" in
	arm64) want+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
	hbm) want+=(libmemkind-dev) ;;
	valgrind) want+=(valgrind) ;;
	clang) want+=(clang) ;;
	metal) want+=(gobjc libgnustep-base-dev clang) ;;
	models) want+=(python3-numpy) ;;
	chromium) want+=(chromium) ;;
	bench) want+=(libopenblas-dev) ;;
	torch) want+=(python3-torch libopenblas0-pthread) ;;
	cuda) cuda=1 ;;
	*) echo "ci-install: unknown group $g (see the header of $0)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${want[@]}"; do
	have_pkg "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "ci-install: apt-get install ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
else
	echo "ci-install: system packages already present (${#want[@]})"
fi

if [ $cuda = 1 ]; then
	prefix=${CUDA_PREFIX:-/opt/ggml-cuda-11.8}
	if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || [ -x "$prefix/bin/nvcc" ]; then
		echo "ci-install: a CUDA toolkit is present"
	else
		sh cuda/install-toolkit.sh "$prefix"
	fi
fi
