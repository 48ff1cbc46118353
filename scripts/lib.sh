# lib.sh - shared by scripts/quickstart and scripts/test (sourced, not run).
# Installs the Debian packages ccbench needs when they are missing, and builds it.

CC_DEBIAN_PACKAGES="build-essential autoconf automake libtool pkg-config openmpi-bin libopenmpi-dev
libhwloc-dev hwloc libjansson-dev libibverbs-dev ibverbs-providers iproute2 procps jq bc
util-linux python3"

cc_say() { printf '==> %s\n' "$*" >&2; }
cc_die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# Install what is missing (root: apt-get; else sudo when it works without a password).
cc_install_deps() {
    missing=""
    for p in $CC_DEBIAN_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        cc_die "missing packages:$missing (not a Debian system: install them by hand)"
    fi
    if [ "$(id -u)" = 0 ]; then sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"
    else cc_die "missing packages:$missing (run as root, or: sudo apt-get install$missing)"
    fi
    cc_say "installing Debian packages:$missing"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        cc_die "apt-get install failed for:$missing"
}

# Open MPI refuses to run as root unless told; on these machines root is the norm.
cc_mpi_env() {
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    # oversubscribed local ranks must yield the CPU to each other
    export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
}

# cc_build DIR [configure args...]: configure (once) and build out of tree in DIR.
cc_build() {
    dir=$1; shift
    [ -x "$CC_TOP/configure" ] || (cd "$CC_TOP" && autoreconf -fi >/dev/null 2>&1) || cc_die "autoreconf failed"
    mkdir -p "$dir"
    if [ ! -f "$dir/Makefile" ]; then
        (cd "$dir" && "$CC_TOP/configure" "$@" >configure.out 2>&1) || { tail -20 "$dir/configure.out"; cc_die "configure failed (see $dir/config.log)"; }
    fi
    (cd "$dir" && make -j"$(nproc)" >make.out 2>&1) || { tail -30 "$dir/make.out"; cc_die "build failed (see $dir/make.out)"; }
}
