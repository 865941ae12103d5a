#!/usr/bin/env bash
# Downloads, where a Debian package mirror answers, the packages scripts/gpu-check.sh may find missing on
# a GPU machine that reaches no mirror (a lent one): pkg-config, OpenSSL's headers, UCX and cmocka, with
# the libraries they need at run time. They go into .gpu-deps/ (ignored by git); carry that folder to the
# GPU machine beside the checkout, and gpu-check.sh unpacks there, under its build folder, only the
# groups the machine lacks (never into /).
#   scripts/gpu-deps.sh            (from the repository root, as root or a user apt-get download works for)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/.gpu-deps
packages="pkgconf pkgconf-bin libpkgconf3 libssl-dev libssl3 libucx0 libucx-dev libnuma1 libcmocka0 libcmocka-dev"
mkdir -p "$dest"
rm -f "$dest"/*.deb
(cd "$dest" && apt-get download $packages)
ls -l "$dest"
