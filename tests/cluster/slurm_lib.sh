# A throw-away single-node Slurm cluster for tests, from Debian's slurmctld
# and slurmd (22.05): sourced by the cluster tests.
#
#   slurm_start DIR      writes DIR/slurm.conf, starts slurmctld and slurmd
#                        in the foreground of background jobs (so their pids
#                        are ours), exports SLURM_CONF, waits for the node to
#                        be idle. Everything the daemons write (state, spool,
#                        logs, pid files) stays under DIR.
#   slurm_stop           stops the daemons slurm_start started, by pid.
#   slurm_wait_gone ID   waits until no task of job ID is pending or running.
#   slurm_job_state ID   JobState of one job or array task (e.g. 12_1).
#
# Everything listens on 127.0.0.1 only, on ports found free at start, with
# AuthType=auth/none (no munge daemon or key to manage) and SlurmUser=root.
# A test that sources this must call slurm_stop from an EXIT trap.

source "$(dirname "${BASH_SOURCE[0]}")/../../tools/cores.sh"

SLURM_TEST_PIDS=()
SLURM_TEST_DIR=""

slurm_log() { printf '[slurm %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Ports some process listens on, from /proc (no ss/netstat needed).
slurm_listening_ports() {
  awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print strtonum("0x" a[2]) }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u
}

# N distinct ports in 20000..59999 that nothing listens on now.
slurm_free_ports() {
  local n="$1" used p picked=()
  used=" $(slurm_listening_ports | tr '\n' ' ') "
  while [ ${#picked[@]} -lt "$n" ]; do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    [[ "$used" == *" $p "* ]] && continue
    [[ " ${picked[*]} " == *" $p "* ]] && continue
    picked+=("$p")
  done
  echo "${picked[@]}"
}

# Polls `$@` every 0.2 s until it succeeds or `timeout` seconds pass.
slurm_poll() {
  local timeout="$1"; shift
  local deadline=$(( SECONDS + timeout ))
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

slurm_node_idle() {
  [ "$(sinfo -h -n localhost -o '%t' 2>/dev/null)" = "idle" ]
}

slurm_job_state() {
  scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1
}

slurm_no_live_tasks() {
  [ -z "$(squeue -h -j "$1" -o '%i' 2>/dev/null)" ]
}

slurm_wait_gone() {
  slurm_poll "${2:-60}" slurm_no_live_tasks "$1"
}

slurm_dump_logs() {
  local f
  for f in "$SLURM_TEST_DIR"/slurmctld.log "$SLURM_TEST_DIR"/slurmd.log; do
    [ -f "$f" ] || continue
    echo "---- last lines of $f" >&2
    tail -n 30 "$f" >&2
  done
}

slurm_start() {
  local dir="$1"
  SLURM_TEST_DIR="$dir"
  local cmd
  for cmd in slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
    command -v "$cmd" >/dev/null 2>&1 || {
      slurm_log "$cmd not found: install Debian's slurmctld, slurmd and slurm-client (tools/bootstrap.sh does)"
      return 1
    }
  done
  mkdir -p "$dir/state" "$dir/spool"
  local ports ctld_port slurmd_port cpus mem
  read -r ctld_port slurmd_port <<<"$(slurm_free_ports 2)"
  cpus=$(tg_cores)
  # slurmd -C reports what slurmd will find; declaring more would drain the
  # node. Keep a little memory back so a rounding difference cannot either.
  mem=$(slurmd -C 2>/dev/null | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  mem=$(( ${mem:-1024} * 9 / 10 ))
  cat >"$dir/slurm.conf" <<EOF
# Written by tests/cluster/slurm_lib.sh for one test run.
ClusterName=torchgauge-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
# Finished jobs stay visible to scontrol long enough for the checks.
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  slurm_log "slurm.conf in $dir (slurmctld port $ctld_port, slurmd port $slurmd_port, $cpus CPUs, ${mem} MB)"
  # -D: stay in the foreground, so $! is the daemon itself and slurm_stop
  # can end exactly it. -i: ignore (absent) saved state.
  slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.stdout" 2>&1 &
  SLURM_TEST_PIDS+=("$!")
  if ! slurm_poll 20 scontrol ping >/dev/null 2>&1; then
    slurm_log "slurmctld did not answer within 20 s"; slurm_dump_logs; return 1
  fi
  slurmd -D -N localhost -f "$SLURM_CONF" >"$dir/slurmd.stdout" 2>&1 &
  SLURM_TEST_PIDS+=("$!")
  if ! slurm_poll 30 slurm_node_idle; then
    slurm_log "node localhost not idle within 30 s: $(sinfo -h -N -o '%N %t %E' 2>&1)"
    slurm_dump_logs; return 1
  fi
  slurm_log "node localhost idle"
}

slurm_stop() {
  local pid i jobs
  # Jobs first, through the scheduler, so no slurmstepd outlives slurmd.
  # Every job on this private cluster is the test's own.
  if [ ${#SLURM_TEST_PIDS[@]} -gt 0 ] && jobs=$(squeue -h -o '%A' 2>/dev/null) && [ -n "$jobs" ]; then
    scancel $jobs 2>/dev/null || true
    slurm_poll 10 eval '[ -z "$(squeue -h -o %A 2>/dev/null)" ]' || true
  fi
  # Reverse order: slurmd before slurmctld.
  for (( i = ${#SLURM_TEST_PIDS[@]} - 1; i >= 0; i-- )); do
    pid="${SLURM_TEST_PIDS[$i]}"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      slurm_log "pid $pid ignored SIGTERM for 5 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  SLURM_TEST_PIDS=()
}
