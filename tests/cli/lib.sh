# Shared by tests/cli/*.sh: a scratch directory removed on exit, the brictl
# under test, and fail().
: "${BRI_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BRICTL:=$BRI_SOURCE_DIR/build/bin/brictl}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
