# Sourced by the demos (scripts/demo.sh, scripts/demo-facilities.sh): what they share before running.
#   demo_say TEXT              a bold heading
#   demo_die TEXT              prints "demo: TEXT" on stderr, exits 1
#   demo_configure             installs the Debian packages that are missing (unless
#                              XFFL_SKIP_PACKAGES=1), configures the dev preset into build/dev
#   demo_build TARGET...       builds the targets (log: build/dev/demo-build.log)
#   demo_program DIR NAME      prints the path of the built program NAME under DIR, or dies
# The caller is in the repository root.

demo_say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
demo_die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

demo_configure() {
  if [ "${XFFL_SKIP_PACKAGES:-0}" != 1 ]; then
    # shellcheck source=scripts/packages.sh
    source scripts/packages.sh
    xffl_install_packages >/dev/null || demo_die "could not install the Debian packages (run as root)"
  fi
  demo_say "configure and build (dev preset, build/dev)"
  mkdir -p build
  cmake --preset dev >build/dev.configure.log 2>&1 || { cat build/dev.configure.log; demo_die "configure failed"; }
}

demo_build() {
  cmake --build --preset dev --target "$@" >build/dev/demo-build.log 2>&1 ||
    { tail -40 build/dev/demo-build.log; demo_die "build failed (log: build/dev/demo-build.log)"; }
}

demo_program() {
  local found
  for found in "$1/tools/$2/$2" "$1/examples/$2"; do
    [ -x "$found" ] && { echo "$found"; return; }
  done
  found=$(find "$1" -type f -name "$2" -perm -u+x | head -1)
  [ -n "$found" ] || demo_die "$2 was not found under $1 (not built?)"
  echo "$found"
}
