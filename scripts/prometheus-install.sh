#!/bin/sh
# prometheus-install.sh installs Debian's prometheus package (which ships both
# the prometheus server and promtool) when either binary is missing. The digest
# integration test (digest/prometheus_integration_test.go) needs both: promtool
# backfills a day of dcgm-exporter series, prometheus serves them.
#
# The package's postinst tries to start a service; in a container policy-rc.d
# denies that, which is harmless: the test runs the binary itself.
set -eu

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
	echo "prometheus-install: $(prometheus --version 2>&1 | head -n 1)"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# --no-install-recommends skips prometheus-node-exporter, which the test does not need.
$SUDO apt-get install -y --no-install-recommends prometheus

prometheus --version 2>&1 | head -n 1
promtool --version 2>&1 | head -n 1
