#!/usr/bin/env bash
# Memory per idle client connection: open N keep-alive connections to the gateway (each sends one
# /health request, then stays idle), read the gateway's RSS before and after, report bytes per
# connection. The gateway's client idle timeout is raised so none closes during the measurement.
# Usage: bench/gateway/idle_connections.sh [connections=10000]
source "$(dirname "$0")/common.sh"
N="${1:-10000}"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
PORT="$(free_port)"; GPORT="$(free_port)"
start_serve "$PORT" --profile zero-cost
cat > "$WORK/gw.yaml" <<YAML
timeouts: {client_idle: 10m}
YAML
start_gateway "$GPORT" "http://127.0.0.1:$PORT" --config "$WORK/gw.yaml"
python3 - "$GPORT" "$N" "$GATEWAY_PID" <<'PY'
import resource, socket, sys, time
port, n, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) * 1024
before = rss(); socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    socks.append(s)
for s in socks:
    s.settimeout(10); data = b""
    while b"ok\n" not in data: data += s.recv(4096)
time.sleep(1)
after = rss()
print(f"{n} idle connections held: gateway RSS {before/2**20:.1f} MiB -> {after/2**20:.1f} MiB, {(after-before)/n:.0f} bytes per connection")
PY
