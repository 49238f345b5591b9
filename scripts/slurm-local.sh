#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests of `verify`
# through `srun` and `sbatch` (Debian's slurm-wlm, which
# scripts/install-deps.sh installs).
#
#   scripts/slurm-local.sh start DIR   writes DIR/slurm.conf, starts slurmctld
#                                      and slurmd with their state, logs and
#                                      pid files in DIR, waits until the node
#                                      takes jobs; use SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop DIR    stops the two daemons started in DIR
#
# The node declares 64 CPUs on whatever the machine has (oversubscribed:
# the ranks of a verified job mostly wait), authentication is off (the
# daemons and the jobs are this user's, on loopback), and the ports are
# taken from a free range so that a real Slurm on the machine is not
# disturbed. Needs root, as slurmd does.
set -euo pipefail

command=${1:?usage: slurm-local.sh start|stop DIR}
dir=${2:?usage: slurm-local.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Stops the daemons and waits until they are gone (slurmctld takes a few
# seconds to save its state), then the job-step daemons of this cluster
# that outlived slurmd (a step cancelled while it launched can leave one).
stop() {
  local pid
  stop_daemons
  for pid in $(pgrep -x slurmstepd || true); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}

stop_daemons() {
  local pid
  for daemon in slurmd slurmctld; do
    if [[ -f $dir/$daemon.pid ]]; then
      pid=$(cat "$dir/$daemon.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$daemon.pid"
    fi
  done
}

if [[ $command == stop ]]; then
  stop
  exit 0
fi
[[ $command == start ]] || { echo "slurm-local.sh: unknown command $command" >&2; exit 2; }

if [[ $(id -u) -ne 0 ]]; then
  echo "slurm-local.sh: slurmd runs jobs as their users and needs root; run as root" >&2
  exit 2
fi
for tool in slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || {
    echo "slurm-local.sh: $tool is missing: run scripts/install-deps.sh" >&2
    exit 2
  }
done

# Two free ports next to each other, above the usual 6817/6818.
port=$(python3 -c '
import socket
for p in range(16817, 17817, 2):
    try:
        for q in (p, p + 1):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
        print(p); break
    except OSError:
        pass
')
host=$(hostname -s)
mkdir -p "$dir/state" "$dir/spool"
cat > "$dir/slurm.conf" <<CONF
ClusterName=mbhybrid-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
SlurmdParameters=config_overrides
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=64 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:64
CONF

# Slurm's PMIx plugin (Open MPI's wire-up) makes a folder per job step,
# named by job and step id, under /tmp by default. Job ids start at 1 in
# every test cluster, so a folder left by a step cancelled in an earlier
# cluster would make the same step of the next fail to launch ("Cannot
# create client cli tmpdir ... File exists"): each cluster keeps them in
# its own folder.
mkdir -p "$dir/pmix"
cat > "$dir/mpi.conf" <<CONF
PMIxCliTmpDirBase=$dir/pmix
CONF

export SLURM_CONF=$dir/slurm.conf
stop
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 100); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm-local.sh: the node did not come up in 20 s; logs in $dir" >&2
stop
exit 1
