#!/bin/sh
# install-torch.sh installs Debian's python3-torch (PyTorch 1.13 for CPU)
# when no python3 on this machine can import torch. The calibration test
# (scripts/calibrate/calibrate_test.go) runs calibrate.py on the CPU with a
# tiny model; in CI it fails, not skips, without torch.
set -eu

for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' >/dev/null 2>&1; then
		echo "install-torch: $("$py" -c 'import torch; print("torch", torch.__version__)') ($py)"
		exit 0
	fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends python3-torch

/usr/bin/python3 -c 'import torch; print("install-torch: torch", torch.__version__)'
