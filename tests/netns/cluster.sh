#!/bin/sh
# cluster.sh - a multi-host cluster on one machine: H "hosts" as network namespaces, each with
# one veth link (eth0, 198.18.0.(i+1)/24 - benchmark-test addresses only - and, where the
# kernel has IPv6, fd00:cc:18::(i+1)/64, a unique-local address) to a bridge that
# lives in its own "switch" namespace, each link shaped with tbf in both directions; one MPI
# rank per host, launched by mpirun inside h0 (docs/netns.md).
#
# Command:   cluster.sh [-H N] [-r RATE] [-s I=RATE]... [-d I=RATE@SEC] [-c I@SEC [-R SEC]] -- CMD...
#   -H N        hosts (default 4)           -r RATE   tbf rate of every link (default 1gbit)
#   -s I=RATE   host I's link at RATE       -d I=RATE@SEC  change host I's rate SEC s into the run
#   -c I@SEC    cut host I's link SEC s in  -R SEC    restore the cut link SEC s after cutting
#   CMD runs under mpirun with one rank per host, e.g. "$CCBENCH bench --backend tcp ...".
#   Exit status: CMD's (mpirun's); 77 when the machine cannot host the cluster (reason printed).
# Library:   CLUSTER_LIB=1 . cluster.sh; cl_check || skip...; cl_up N RATE; cl_mpirun [-t SEC] CMD...;
#            cl_rate I RATE; cl_cut I; cl_restore I; cl_ns I; cl_ip I; cl_ip6 I (empty without
#            IPv6: CL_IPV6=0); cl_down (also on EXIT).
# Names are unique per invocation (ccb<pid>h0, ..., ccb<pid>sw) so parallel runs never collide.

CL_P="ccb$$"
CL_N=0
CL_DIR=""
CL_SW="${CL_P}sw"

cl_ns() { echo "${CL_P}h$1"; }
cl_ip() { echo "198.18.0.$(($1 + 1))"; }
CL_IPV6=1
cl_ip6() { [ "$CL_IPV6" = 1 ] && echo "fd00:cc:18::$(($1 + 1))"; }

# cl_check: can this machine host the cluster? Sets CL_SKIP to the reason when not.
cl_check() {
    CL_SKIP=""
    if [ "$(id -u)" != 0 ]; then CL_SKIP="needs root (network namespaces)"; return 1; fi
    for t in ip tc unshare mpirun; do
        command -v $t >/dev/null 2>&1 || { CL_SKIP="'$t' not found"; return 1; }
    done
    if ! ip netns add "${CL_P}probe" 2>/dev/null; then
        CL_SKIP="cannot create network namespaces"; return 1
    fi
    ok_=0
    ip -n "${CL_P}probe" link add ccv0 type veth peer name ccv1 2>/dev/null &&
        ip -n "${CL_P}probe" link add ccbr0 type bridge 2>/dev/null &&
        ip netns exec "${CL_P}probe" tc qdisc replace dev ccv0 root tbf rate 1gbit burst 128k latency 20ms \
            2>/dev/null && ok_=1
    ip netns del "${CL_P}probe" 2>/dev/null
    [ $ok_ = 1 ] || { CL_SKIP="veth, bridge or tbf not available in this kernel"; return 1; }
    return 0
}

# cl_shape I RATE: tbf on both ends of host I's link (upload on eth0, download on the switch port)
cl_shape() {
    timeout 10 ip netns exec "$(cl_ns $1)" tc qdisc replace dev eth0 root tbf rate "$2" burst 128k latency 20ms &&
        timeout 10 ip netns exec "$CL_SW" tc qdisc replace dev "p$1" root tbf rate "$2" burst 128k latency 20ms
}
cl_rate() { cl_shape "$1" "$2"; }
cl_cut() { timeout 10 ip -n "$CL_SW" link set "p$1" down; }
cl_restore() { timeout 10 ip -n "$CL_SW" link set "p$1" up; }

# cl_up N RATE: create the switch and N hosts; each link shaped to RATE
cl_up() {
    CL_N=$1
    CL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/${CL_P}.XXXXXX") || return 1
    trap cl_down EXIT
    trap 'exit 130' INT TERM
    # a namespace of this name left by a killed run of an earlier process of this pid
    ip netns del "$CL_SW" 2>/dev/null
    ip netns add "$CL_SW" || return 1
    ip -n "$CL_SW" link set lo up
    ip -n "$CL_SW" link add br0 type bridge || return 1
    ip -n "$CL_SW" link set br0 up
    : >"$CL_DIR/hostfile"
    i=0
    while [ $i -lt "$CL_N" ]; do
        h=$(cl_ns $i)
        ip netns del "$h" 2>/dev/null
        ip netns add "$h" || return 1
        ip -n "$h" link set lo up
        ip -n "$h" link add eth0 type veth peer name "p$i" netns "$CL_SW" || return 1
        ip -n "$h" addr add "$(cl_ip $i)/24" dev eth0
        # nodad: usable at once (duplicate address detection would hold it for a second)
        [ "$CL_IPV6" = 1 ] && { ip -n "$h" addr add "$(cl_ip6 $i)/64" dev eth0 nodad 2>/dev/null ||
            CL_IPV6=0; }
        ip -n "$h" link set eth0 up
        ip -n "$CL_SW" link set "p$i" master br0
        ip -n "$CL_SW" link set "p$i" up
        cl_shape $i "$2" || return 1
        echo "$h slots=1" >>"$CL_DIR/hostfile"
        i=$((i + 1))
    done
    # rsh agent: start a daemon inside the host's namespace with its own hostname (two
    # daemons sharing a hostname collide on their session directory)
    cat >"$CL_DIR/agent" <<AGENT
#!/bin/sh
host=\$1; shift
exec ip netns exec "\$host" unshare --uts sh -c "hostname \$host && \$*"
AGENT
    chmod +x "$CL_DIR/agent"
}

# cl_mpirun [-t SEC] CMD...: one rank per host; mpirun itself runs inside h0 (killed after SEC)
cl_mpirun() {
    h0=$(cl_ns 0) t_=0
    [ "$1" = -t ] && { t_=$2; shift 2; }
    timeout -k 5 "$t_" ip netns exec "$h0" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h0" \
        env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun -np "$CL_N" --hostfile "$CL_DIR/hostfile" --bind-to none \
        --mca plm_rsh_agent "$CL_DIR/agent" --mca orte_tmpdir_base "$CL_DIR" \
        --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include 198.18.0.0/24 --mca oob_tcp_if_include 198.18.0.0/24 \
        --mca mpi_yield_when_idle 1 "$@"
}

# cl_down: kill what runs in the namespaces, then delete them (a namespace with live
# processes outlives `ip netns del`)
cl_down() {
    [ -n "$CL_DIR" ] || return 0
    for pass in 1 2; do
        i=0
        while [ $i -lt "$CL_N" ]; do
            pids=$(ip netns pids "$(cl_ns $i)" 2>/dev/null)
            [ -n "$pids" ] && kill -9 $pids 2>/dev/null
            i=$((i + 1))
        done
        [ $pass = 1 ] && sleep 0.2
    done
    i=0
    while [ $i -lt "$CL_N" ]; do
        ip netns del "$(cl_ns $i)" 2>/dev/null
        i=$((i + 1))
    done
    ip netns del "$CL_SW" 2>/dev/null
    rm -rf "$CL_DIR"
    CL_DIR=""
}

[ -n "${CLUSTER_LIB:-}" ] && return 0

# ---- command ---------------------------------------------------------------------------------
hosts=4 rate=1gbit sets="" degrade="" cut="" restore=""
while [ $# -gt 0 ]; do
    case $1 in
    -H) hosts=$2; shift 2 ;;
    -r) rate=$2; shift 2 ;;
    -s) sets="$sets $2"; shift 2 ;;
    -d) degrade=$2; shift 2 ;;
    -c) cut=$2; shift 2 ;;
    -R) restore=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "cluster.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "cluster.sh: no command to run (see --help)" >&2; exit 2; }
cl_check || { echo "cluster.sh: cannot build the cluster: $CL_SKIP" >&2; exit 77; }
cl_up "$hosts" "$rate" || { echo "cluster.sh: cluster set-up failed" >&2; exit 3; }
for s in $sets; do cl_rate "${s%%=*}" "${s#*=}"; done
if [ -n "$degrade" ]; then
    i=${degrade%%=*} r=${degrade#*=}
    (sleep "${r#*@}" && cl_rate "$i" "${r%@*}" && echo "cluster.sh: host $i now at ${r%@*}" >&2) &
fi
if [ -n "$cut" ]; then
    (sleep "${cut#*@}" && cl_cut "${cut%@*}" && echo "cluster.sh: host ${cut%@*} cut" >&2 &&
        if [ -n "$restore" ]; then sleep "$restore" && cl_restore "${cut%@*}" &&
            echo "cluster.sh: host ${cut%@*} restored" >&2; fi) &
fi
cl_mpirun "$@"
