# Sourced by test-all.sh and demo.sh: the Debian packages of the build and of every test family, and
# a function that installs the missing ones (apt-get update only when something is missing).
#
# compilers, CMake and Ninja (the ci preset's generator), ccache (four presets compile the same
# sources; a second run recompiles only what changed); lld (the presets link their executables with it:
# with ccache warm, ld.bfd linking the ~120 test programs was most of each build, 136 s against 36 s for
# the ci preset); gcc's ThreadSanitizer runtime (tsan preset);
# cmocka (tests); UCX (backend); OpenSSL (store authentication); libabigail (abi);
# clang 14 and its runtime libraries (fuzzers); Open MPI (peer benchmarks); gfortran (Fortran bindings);
# fypp (the Fortran bindings' per-kind procedures are generated from one template);
# bindgen (Rust bindings check); graphviz (xffl-topo pictures); python3 (checker scripts);
# iproute2 (two simulated facilities in network namespaces); procps (process checks); doxygen (the API
# reference, target docs, and its test docs.api_reference); PMIx headers (mpirun and srun --mpi=pmix
# without MASTER_ADDR; libpmix2 is loaded at run time) and SLURM's daemons and client (tests/launchers
# starts a one-node cluster); libcurl's headers (etcd:// federations; libcurl4 is loaded at run time)
# and etcd's server and client (tests/federation starts a 3-member cluster).
xffl_packages=(
  build-essential cmake ninja-build ccache lld pkg-config binutils libtsan2
  libcmocka-dev libucx-dev libssl-dev
  abigail-tools
  clang-14 libclang-rt-14-dev llvm-14
  libopenmpi-dev openmpi-bin
  gfortran bindgen graphviz python3 iproute2 procps valgrind
  doxygen fypp
  libpmix-dev slurmctld slurmd slurm-client
  libcurl4-openssl-dev etcd-server etcd-client
)

# xffl_install_packages: installs what dpkg does not know as installed; root, or sudo.
xffl_install_packages() {
  local missing=() p
  for p in "${xffl_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all ${#xffl_packages[@]} Debian packages present"
    return 0
  fi
  echo "missing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "not root and no sudo: install them first" >&2; return 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
    { echo "apt-get update failed" >&2; return 1; }
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    { echo "apt-get install failed" >&2; return 1; }
}
