#!/bin/sh
# install-toolkit.sh - install Debian bookworm's CUDA 11.8 compiler toolchain into a prefix laid
# out like a standard CUDA_HOME (bin/nvcc, include/, lib64/, lib64/stubs/, nvvm/libdevice/), for
# building and linking the CUDA backend on a machine without a GPU (make cuda-check).
#
# Only what the build needs is unpacked: nvcc and its tools (nvidia-cuda-toolkit), the headers,
# libcudart and the link stubs of libcuda/libcublas/libcublasLt (nvidia-cuda-dev, libcudart11.0).
# No driver package is installed: the .deb files are fetched with `apt-get download` and unpacked
# with dpkg-deb, so the package database is not touched. The host compiler g++-11 (the newest
# nvcc 11.8 accepts) is installed with apt-get from bookworm main.
#
# Usage: cuda/install-toolkit.sh [PREFIX]   (default /opt/ggml-cuda-11.8; no-op when PREFIX/bin/nvcc exists)
# Needs root (or sudo) for apt-get and for writing the source list.
set -eu

prefix=${1:-/opt/ggml-cuda-11.8}
if [ -x "$prefix/bin/nvcc" ]; then
    echo "install-toolkit: $prefix/bin/nvcc already present"
    exit 0
fi

sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

if ! command -v g++-11 >/dev/null 2>&1; then
    echo "install-toolkit: installing g++-11"
    $sudo apt-get update -q
    $sudo apt-get install -y -q g++-11
fi

# bookworm's non-free component, in a list of its own
list=/etc/apt/sources.list.d/ggml-cuda-nonfree.sources
if ! apt-cache policy nvidia-cuda-toolkit 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    if [ ! -f "$list" ]; then
        echo "install-toolkit: adding the non-free component ($list)"
        $sudo sh -c "cat > $list" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
    $sudo apt-get update -q
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
# apt-get download fetches as user _apt when run as root: let it write here
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
echo "install-toolkit: downloading"
apt-get download nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 >/dev/null
ls -l ./*.deb | awk '{s += $5; print "  " $9 " " $5} END {printf "  total %.1f MB\n", s / 1e6}'

mkdir -p root
echo "install-toolkit: unpacking"
dpkg-deb -x nvidia-cuda-toolkit_*.deb root
dpkg-deb -x libcudart11.0_*.deb root
dpkg-deb --fsys-tarfile nvidia-cuda-dev_*.deb | tar -x -C root --wildcards \
    './usr/include/*' \
    './usr/lib/x86_64-linux-gnu/stubs/*' \
    './usr/lib/x86_64-linux-gnu/libcudart.so' \
    './usr/lib/x86_64-linux-gnu/libcudart_static.a'

stage="$tmp/stage"
mkdir -p "$stage/bin" "$stage/lib64/stubs" "$stage/nvvm"
cp -a root/usr/lib/nvidia-cuda-toolkit/bin/nvcc root/usr/lib/nvidia-cuda-toolkit/bin/cicc "$stage/bin/"
cp -a root/usr/lib/nvidia-cuda-toolkit/bin/crt "$stage/bin/"
for t in ptxas fatbinary cudafe++ nvlink bin2c nvprune cuobjdump; do
    cp -a "root/usr/bin/$t" "$stage/bin/"
done
cp -a root/usr/lib/nvidia-cuda-toolkit/libdevice "$stage/nvvm/"
cp -a root/usr/include "$stage/include"
cp -a root/usr/lib/x86_64-linux-gnu/libcudart* "$stage/lib64/"
cp -a root/usr/lib/x86_64-linux-gnu/stubs/libcuda.so root/usr/lib/x86_64-linux-gnu/stubs/libcublas.so \
      root/usr/lib/x86_64-linux-gnu/stubs/libcublasLt.so "$stage/lib64/stubs/"
cat > "$stage/bin/nvcc.profile" <<'PROF'
TOP = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH += $(TOP)/bin:
INCLUDES += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS +=
PTXAS_FLAGS +=
PROF

$sudo mkdir -p "$(dirname "$prefix")"
$sudo rm -rf "$prefix.tmp"
$sudo cp -a "$stage" "$prefix.tmp"
$sudo mv "$prefix.tmp" "$prefix"
echo "install-toolkit: installed in $prefix ($(du -sh "$prefix" | cut -f1))"
"$prefix/bin/nvcc" --version | tail -2
