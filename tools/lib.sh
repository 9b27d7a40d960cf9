# Shared by tools/run and tools/test: make sure what the build needs is here.
# Installs missing Debian packages when running as root; otherwise says what
# to install and stops.

fastpmix_need_cmd() { command -v "$1" >/dev/null 2>&1; }

# fastpmix_install_packages PACKAGE ... : installs them with apt-get when
# running as root; otherwise says what to install and stops.
fastpmix_install_packages() {
    [ $# -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && fastpmix_need_cmd apt-get; then
        echo "fastpmix: installing $* with apt-get" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
    else
        echo "fastpmix: missing packages: $*" >&2
        echo "  install them with: sudo apt-get install $*" >&2
        exit 1
    fi
}

# fastpmix_ensure_packages CMD=PACKAGE ... : for each missing command, its package.
fastpmix_ensure_packages() {
    local missing=()
    for pair in "$@"; do
        local cmd=${pair%%=*} pkg=${pair#*=}
        fastpmix_need_cmd "$cmd" || missing+=("$pkg")
    done
    fastpmix_install_packages ${missing[@]+"${missing[@]}"}
}

# fastpmix_ensure_libs MODULE=PACKAGE ... : for each C library whose
# pkg-config module is not found, its Debian -dev package (needs pkg-config).
fastpmix_ensure_libs() {
    local missing=()
    for pair in "$@"; do
        local module=${pair%%=*} pkg=${pair#*=}
        pkg-config --exists "$module" || missing+=("$pkg")
    done
    fastpmix_install_packages ${missing[@]+"${missing[@]}"}
}

fastpmix_ensure_toolchain() {
    if ! fastpmix_need_cmd cargo; then
        echo "fastpmix: cargo not found; install the Rust toolchain (rustup) first" >&2
        exit 1
    fi
    # A C compiler and linker: rustc links through cc, and the C ABI tests use gcc.
    fastpmix_ensure_packages cc=gcc pkg-config=pkg-config
    # hwlocality (src/place/) links the system hwloc, and hwloc links
    # libudev: without libudev-dev the link fails on -ludev.
    fastpmix_ensure_libs hwloc=libhwloc-dev libudev=libudev-dev
}

# What the C ABI tests need (tests/c_*.rs): C++ and Fortran compilers for the
# header and interface-module checks, valgrind for the leak checks, and
# OpenPMIx's development package, whose pmix.h the layout probe compares
# ours against (pkg-config module "pmix").
fastpmix_ensure_c_abi_tools() {
    fastpmix_ensure_packages c++=g++ gfortran=gfortran valgrind=valgrind
    fastpmix_ensure_libs pmix=libpmix-dev
}

# What tools/bench-compare needs besides the toolchain: strace for the
# syscall counts, perf for the one a tracer's stops would distort (a
# spinning receiver's, row sysown), and OpenPMIx's development package
# (pkg-config module "pmix") to build the comparison binary against
# OpenPMIx.
fastpmix_ensure_bench_tools() {
    fastpmix_ensure_packages strace=strace perf=linux-perf
    fastpmix_ensure_libs pmix=libpmix-dev
}

# The second uid of the two-uid tests (tests/peer/mod.rs): a system user no
# other process runs as. Only root can create it; the tests fall back to
# uid 65534 (nobody) otherwise, and skip, saying why, when not root.
fastpmix_ensure_test_user() {
    [ "$(id -u)" = 0 ] || return 0
    id fastpmix-peer >/dev/null 2>&1 && return 0
    if fastpmix_need_cmd useradd; then
        useradd --system --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin fastpmix-peer \
            || echo "tools: could not create user fastpmix-peer; two-uid tests use uid 65534" >&2
    else
        echo "tools: no useradd; two-uid tests use uid 65534" >&2
    fi
}

# What tools/slurm-test needs: Debian's Slurm 22.05 (slurm-wlm: slurmctld,
# slurmd, srun, and the mpi/pmix plugin in slurm-wlm-basic-plugins) and
# munge, its authentication daemon; iproute2
# for the test's private loopback; and OpenPMIx's development package (the
# plugin dlopens the library at `$(pkg-config --variable=libdir pmix)/libpmix.so`,
# the path the test bind-mounts fastpmix over; the OpenPMIx side of the
# comparison builds its clients against that package's pmix.h). The
# packages' maintainer scripts do not start the daemons on machines with a
# policy-rc.d that forbids it (as these have); the test starts its own, in
# private namespaces.
fastpmix_ensure_slurm() {
    fastpmix_ensure_packages slurmctld=slurm-wlm slurmd=slurm-wlm srun=slurm-wlm \
        munged=munge ip=iproute2
    fastpmix_ensure_libs pmix=libpmix-dev
}

# What tools/ompi-test needs: Debian's Open MPI 4.1 (openmpi-bin: mpirun,
# orted, and the pmix/ext3x component that records NEEDED libpmix.so.2;
# libopenmpi-dev: mpicc and mpi.h). Its OpenMP support is gcc's (libgomp,
# with gcc). The test puts fastpmix first on LD_LIBRARY_PATH under the name
# libpmix.so.2; nothing of the installed packages changes.
fastpmix_ensure_openmpi() {
    fastpmix_ensure_packages cc=gcc mpirun=openmpi-bin orted=openmpi-bin mpicc=libopenmpi-dev
}
