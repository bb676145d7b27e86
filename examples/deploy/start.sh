#!/usr/bin/env bash
# Serve examples/remote_agent.py's agent from N worker processes behind HAProxy (docs/deploy.md).
#
#     examples/deploy/start.sh [WORKERS]      # 1 to 4, default 2; Ctrl-C stops everything
#
# Worker i is `python examples/remote_agent.py --port PORT` with ACP_WORKER=wi, on 127.0.0.1;
# HAProxy (haproxy.cfg beside this file) listens on ACP_LISTEN (127.0.0.1:8000) and sends each
# connection's requests to the worker named in its id.  ACP_PORT_BASE (8000) numbers the workers'
# ports: worker i listens on ACP_PORT_BASE + i.  PYTHON names the interpreter (python3), ACP_SERVE
# the script each worker runs with --port (examples/remote_agent.py; benchmarks use their own).
# A worker that exits is started again a second later (the connections it held are gone: their
# clients get an error and initialize anew); when HAProxy exits, everything stops.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
workers="${1:-2}"
if ! [[ "$workers" =~ ^[1-4]$ ]]; then
    echo "start.sh: WORKERS must be 1 to 4 (haproxy.cfg names w1..w4), not '$workers'" >&2
    exit 2
fi
command -v haproxy >/dev/null || { echo "start.sh: haproxy is not installed (apt-get install haproxy)" >&2; exit 2; }
base="${ACP_PORT_BASE:-8000}"
export ACP_LISTEN="${ACP_LISTEN:-127.0.0.1:$base}"
for i in 1 2 3 4; do
    export "ACP_W${i}_PORT=$((base + i))"
done

pids=()
stop() {
    trap - EXIT INT TERM
    kill "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

keep_running() {  # worker $1, started again whenever it exits, until this loop gets TERM
    local i="$1" child
    trap 'kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; exit 0' TERM
    while true; do
        ACP_WORKER="w$i" PYTHONPATH="$root/generated${PYTHONPATH:+:$PYTHONPATH}" \
            "${PYTHON:-python3}" "${ACP_SERVE:-$root/examples/remote_agent.py}" --port "$((base + i))" &
        child="$!"
        wait "$child" && status=0 || status=$?
        echo "start.sh: worker w$i exited (status $status); starting it again in 1 s" >&2
        sleep 1
    done
}

for i in $(seq 1 "$workers"); do
    keep_running "$i" &
    pids+=("$!")
done
# HAProxy checks each worker every second: start it once they all accept connections
for i in $(seq 1 "$workers"); do
    until (exec 3<>"/dev/tcp/127.0.0.1/$((base + i))") 2>/dev/null; do
        sleep 0.1
    done
done
haproxy -q -db -f "$here/haproxy.cfg" &
haproxy_pid="$!"
pids+=("$haproxy_pid")
echo "haproxy on http://$ACP_LISTEN/acp (ws://$ACP_LISTEN/acp) in front of $workers workers" >&2
wait "$haproxy_pid" && status=0 || status=$?
exit "$status"
