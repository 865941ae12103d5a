#!/usr/bin/env bash
# Rewrites README.md's table of environment variables from the registry (src/bootstrap/env_registry.cpp),
# as `xffl-run --help-env=markdown` of the given build prints it. The test tools.readme_env_table fails
# while the two differ.  usage: scripts/update-readme-env.sh [BUILD_DIR]   (default build/ci)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
table=$("$build/tools/xffl-run/xffl-run" --help-env=markdown)
begin='<!-- xffl-run --help-env=markdown: begin -->'
end='<!-- xffl-run --help-env=markdown: end -->'
grep -qxF "$begin" README.md && grep -qxF "$end" README.md || { echo "README.md lacks the table's markers" >&2; exit 1; }
TABLE="$table" BEGIN="$begin" END="$end" python3 - <<'PY'
import os
text = open("README.md").read()
head, rest = text.split(os.environ["BEGIN"] + "\n", 1)
_, tail = rest.split(os.environ["END"], 1)
open("README.md", "w").write(head + os.environ["BEGIN"] + "\n" + os.environ["TABLE"] + "\n" + os.environ["END"] + tail)
PY
