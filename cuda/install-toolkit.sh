#!/bin/sh
# install-toolkit.sh - install Debian's CUDA compiler toolchain (bookworm: 11.8; trixie/sid: 12.4;
# experimental: 12.5) into a prefix laid out like a standard CUDA_HOME (bin/nvcc, include/, lib64/,
# lib64/stubs/, nvvm/libdevice/), for building and linking the CUDA backend on a machine without a
# GPU (make cuda-check).
#
# Only what the build needs is unpacked: nvcc and its tools (nvidia-cuda-toolkit), the headers,
# libcudart and the link stubs of libcuda/libcublas/libcublasLt (nvidia-cuda-dev, libcudartN) and,
# for CUDA 12, the libcu++ headers (<nv/target>, <cuda/std/...>, needed by cuda_fp16.h), which
# Debian ships apart in libcu++-dev (main).
# No driver package is installed: the .deb files are fetched with `apt-get download` and unpacked
# with dpkg-deb, so the package database is not touched.
#
# SUITE bookworm (the default): bookworm's non-free component is added to the system's apt sources
# (a list of its own) and the host compiler g++-11 (the newest nvcc 11.8 accepts) is installed with
# apt-get from bookworm main.
# Any other SUITE (trixie, sid, experimental): the system's apt sources are left alone; the
# suite's main and non-free indexes are fetched into a private apt state directory (a temp dir,
# removed on exit) and only `apt-get download` uses it. nvcc 12.x accepts g++ up to 13, so
# bookworm's g++-12 (its default g++) is the host compiler; it is installed from the system's
# sources when missing.
#
# Usage: cuda/install-toolkit.sh [PREFIX [SUITE]]
#   PREFIX default: /opt/ggml-cuda-11.8 for bookworm, /opt/ggml-cuda-12 otherwise ("" = default);
#   no-op when PREFIX/bin/nvcc exists.
#   e.g. cuda/install-toolkit.sh "" sid    -> CUDA 12.4 in /opt/ggml-cuda-12
# Needs root (or sudo) for apt-get install, for the bookworm source list and for writing PREFIX.
set -eu

suite=${2:-bookworm}
case $suite in
    bookworm) prefix=${1:-/opt/ggml-cuda-11.8} ;;
    *[!a-z-]* | "") echo "install-toolkit: bad suite name '$suite'" >&2; exit 2 ;;
    *) prefix=${1:-/opt/ggml-cuda-12} ;;
esac
if [ -x "$prefix/bin/nvcc" ]; then
    echo "install-toolkit: $prefix/bin/nvcc already present"
    exit 0
fi

sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

if [ "$suite" = bookworm ]; then
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
else
    if ! command -v g++-12 >/dev/null 2>&1; then
        echo "install-toolkit: installing g++-12"
        $sudo apt-get update -q
        $sudo apt-get install -y -q g++-12
    fi
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
# apt-get download fetches as user _apt when run as root: let it write here
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
if [ "$suite" = bookworm ]; then
    echo "install-toolkit: downloading"
    apt-get download nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 >/dev/null
else
    # a private apt state (sources, lists, caches): the system's are neither read nor written
    apt="$tmp/apt"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/empty"
    # main for libcu++-dev (CUDA 12's cuda_fp16.h includes <nv/target>); experimental is not a
    # whole distribution, sid completes it
    {
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main non-free"
        [ "$suite" != experimental ] ||
            echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main"
    } > "$apt/sources.list"
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown -R _apt "$apt"; fi
    set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/empty" \
        -o Dir::Etc::Preferences="$apt/empty/none" -o Dir::Etc::PreferencesParts="$apt/empty" \
        -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Acquire::Languages=none
    echo "install-toolkit: fetching the $suite index (private apt state in $apt)"
    apt-get "$@" update -q >/dev/null
    # libcudart11.0, libcudart12, ...: the one nvidia-cuda-dev depends on
    cudart=$(apt-cache "$@" show "nvidia-cuda-dev/$suite" | sed -n 's/^Depends:.*\(libcudart[0-9][0-9.]*\) (.*/\1/p' | head -1)
    [ -n "$cudart" ] || { echo "install-toolkit: no nvidia-cuda-dev/libcudart in $suite" >&2; exit 1; }
    echo "install-toolkit: downloading from $suite ($cudart)"
    apt-get "$@" download "nvidia-cuda-toolkit/$suite" "nvidia-cuda-dev/$suite" "$cudart/$suite" libcu++-dev >/dev/null
fi
ls -l ./*.deb | awk '{s += $5; print "  " $9 " " $5} END {printf "  total %.1f MB\n", s / 1e6}'

mkdir -p root
echo "install-toolkit: unpacking"
dpkg-deb -x nvidia-cuda-toolkit_*.deb root
dpkg-deb -x libcudart*.deb root
dpkg-deb --fsys-tarfile nvidia-cuda-dev_*.deb | tar -x -C root --wildcards \
    './usr/include/*' \
    './usr/lib/x86_64-linux-gnu/stubs/*' \
    './usr/lib/x86_64-linux-gnu/libcudart.so' \
    './usr/lib/x86_64-linux-gnu/libcudart_static.a'
if [ "$suite" != bookworm ]; then
    dpkg-deb --fsys-tarfile libcu++-dev_*.deb | tar -x -C root './usr/include'
fi

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
