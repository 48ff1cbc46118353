# tap.sh - TAP helpers for test scripts: source it, call ok/skip_all, end with tap_done.
#   . "$CC_SRCDIR/tests/tap.sh"
#   run "bench np2" 0 mpirun ...; has "a summary" "busbw"; tap_done
tap_n=0
tap_failed=0
ok() { # ok COND_EXIT_STATUS "name" [diagnostic]
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else
        echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1))
        [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
    fi
    return 0
}
skip_all() { echo "1..0 # SKIP $*"; tap_cleanup; exit 0; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
tap_done() { echo "1..$tap_n"; tap_cleanup; [ "$tap_failed" -eq 0 ]; }
tap_cleanup() { [ -n "${tap_ompi_tmp:-}" ] && rm -rf "$tap_ompi_tmp"; return 0; }
# run NAME WANT_RC CMD...: one check that CMD exits WANT_RC; its output is kept in $out
run() {
    name=$1 want=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" -eq "$want" ]
    ok $? "$name (exit $rc, want $want)" "$out"
}
# has NAME REGEX [FILE]: one check that the last output (or FILE) matches REGEX
has() {
    if [ -n "${3:-}" ]; then grep -Eq -e "$2" "$3"; else printf '%s\n' "$out" | grep -Eq -e "$2"; fi
    ok $? "$1" "$(printf '%s\n' "$out" | tail -5)"
}
# LeakSanitizer: scripts/test's sanitizer build checks leaks (detect_leaks=1). Open MPI keeps
# memory to the end in components it has unloaded by then, so no suppression can tell its
# memory from ccbench's: a script that starts MPI (mpirun, or bench or probe run alone) calls
# uses_mpi first, and leaks_checked where only commands without MPI follow. Without
# ASAN_OPTIONS (a build without sanitizers) both leave the environment alone.
tap_asan=${ASAN_OPTIONS-}
uses_mpi() { [ -z "$tap_asan" ] || { ASAN_OPTIONS="$tap_asan:detect_leaks=0"; export ASAN_OPTIONS; }; }
leaks_checked() { [ -z "$tap_asan" ] || { ASAN_OPTIONS=$tap_asan; export ASAN_OPTIONS; }; }
# Open MPI refuses root unless told; these machines run as root.
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Each script gets its own directory for Open MPI's session files: with one shared
# /tmp/ompi.HOST.UID, a job that removes it as empty races another that is creating its own
# directory in it, and that job fails to start ("A call to mkdir was unable to create...").
# Sticky and open to all, like /tmp itself: some tests run ccbench as another user.
if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ] && tap_ompi_tmp=$(mktemp -d /tmp/ccbtap.XXXXXX) &&
    chmod 1777 "$tap_ompi_tmp"; then
    export OMPI_MCA_orte_tmpdir_base="$tap_ompi_tmp"
fi
# Oversubscribed local ranks must yield or they starve each other on small machines.
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
: "${CC_MPIRUN:=mpirun --oversubscribe --bind-to none --mca btl self,vader,tcp --mca pml ob1}"
# Helpers for tests that stop or signal one rank of a running bench:
# wait_rows FILE N: until the JSON file holds N results (30 s at most)
wait_rows() {
    i=0
    while [ $i -lt 300 ]; do
        n=$(grep -c '"type":"result"' "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
    n_=$(($1 * 5)); shift
    while [ $n_ -gt 0 ]; do "$@" 2>/dev/null && return 0; sleep 0.2; n_=$((n_ - 1)); done
    return 1
}

# rank_pid RANK PATTERN: the pid of that MPI rank among the processes matching PATTERN
rank_pid() {
    for p in $(pgrep -f "$2"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
            { echo "$p"; return 0; }
    done
    return 1
}
