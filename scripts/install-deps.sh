#!/usr/bin/env bash
# Installs every Debian 12 package that inferscope's build, tests, benchmarks and demo need.
# Run as root on a fresh machine; packages already installed are skipped, so a second run costs
# one dpkg query. Daemons shipped by packages (prometheus, node-exporter) are not started: the
# project starts its own copies on loopback when a test or the demo needs them.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake make pkg-config git ca-certificates
  # libraries (each is the project's one choice for its job; see docs/architecture.md)
  libboost-dev libboost-system-dev libssl-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev
  libfmt-dev libspdlog-dev zlib1g-dev libyaml-cpp-dev libsqlite3-dev libcurl4-openssl-dev libhiredis-dev
  # bcrypt password hashes of up's web.users (crypt_rn)
  libcrypt-dev
  # build speed: ccache is picked up as the compiler launcher when present; scripts/build.sh
  # generates for Ninja when it is installed; lld links when present (CMakeLists.txt)
  ccache ninja-build lld
  # tests, benchmarks, fuzzing
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  # real peers used by tests and benchmarks: Prometheus + promtool, Alertmanager, node-exporter,
  # wrk, nginx (the gateway's peer), curl, openssl (independent signature checks), chromium
  # (headless page tests), nodejs/npm (web assets, browser driver)
  prometheus prometheus-alertmanager prometheus-node-exporter wrk nginx-light curl openssl chromium
  nodejs
  # the queue tier: Redis and its exporter, and real RQ/Celery/redis-py workers for Debian's
  # /usr/bin/python3 (the queue collector's tests and benchmark)
  redis-server prometheus-redis-exporter python3-rq python3-celery python3-redis
  # a hand-instrumented FastAPI service (prometheus_client, its own metric names) for the tests
  # of up's `kind: custom` targets
  python3-fastapi python3-uvicorn python3-prometheus-client
)

# npm (the dashboard page's build: npm ci + esbuild): Debian packages it apart from nodejs, while
# NodeSource's nodejs bundles it and conflicts with Debian's npm, so ask for it only when absent.
if ! command -v npm >/dev/null 2>&1; then packages+=(npm); fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: cannot install ${missing[*]}: run as root" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
# Keep package maintainer scripts from starting system services during the install.
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
