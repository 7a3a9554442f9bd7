#!/usr/bin/env bash
# Fails when code in lib/ outside lib/storage/ and lib/util/ opens, reads,
# writes, lists, links, renames, stats or deletes a file itself instead of
# going through the storage interface (lib/storage/store.h): every access to
# a table's files must pass through one door, so that an object-store
# backend is a new file set and the beneath-the-root and permission rules
# hold everywhere (docs/architecture.md). A line that touches a file that is
# not a table's (the job store's lock file) says so with the marker
#   /* storage: not a table file */
# on that line.
# Fails too when a file of one object-store dialect in lib/storage/ names
# another store (code or comment): each dialect is its own file set, and
# what the dialects share lives in the object_* and http_* files.
#   scripts/check-storage.sh [ROOT]     (ROOT defaults to the repository)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"

# System calls and libc functions on paths or file descriptors, the util/
# helpers that wrap them, and jansson's file functions.
CALLS='open|openat|openat2|creat|fopen|fdopen|freopen|opendir|fdopendir|readdir|scandir|nftw|ftw|'
CALLS+='unlink|unlinkat|remove|rmdir|rename|renameat|renameat2|link|linkat|symlink|symlinkat|'
CALLS+='mkdir|mkdirat|stat|lstat|fstat|fstatat|statx|access|faccessat|truncate|ftruncate|'
CALLS+='read|pread|readv|preadv|write|pwrite|writev|pwritev|fsync|fdatasync|sync_file_range|'
CALLS+='copy_file_range|sendfile|splice|mmap|utimensat|futimens|utimes|chmod|fchmod|fchmodat|'
CALLS+='chown|fchown|lchown|fchownat|realpath|getdents64|'
CALLS+='bri_read_file|bri_pread_exact|bri_file_size|bri_list_dir|bri_list_dirfd|bri_real_dir|'
CALLS+='bri_copy_fd|bri_file_link_or_copy|bri_dir_open|bri_open_beneath|bri_open_beneath_walk|'
CALLS+='bri_unlink_beneath|bri_remove_beneath|bri_mkdir_beneath|'
CALLS+='bri_stat_beneath|bri_parent_beneath|bri_link_beneath|bri_link_or_copy_beneath|'
CALLS+='bri_adopt_parent_mode|json_load_file|json_dump_file'
# A call: the name not preceded by an identifier character, '.' or '->'
# (members such as ops->read( or a.release( are not system calls).
PATTERN="(^|[^A-Za-z0-9_.>])($CALLS)[[:space:]]*\\("

bad=0
while IFS= read -r f; do
  # match code only: comment text (one-line comments, and the lines of block
  # comments, which start with '*') and string literals are blanked first;
  # the marker is looked for on the original line
  while IFS=: read -r line text; do
    orig=$(sed -n "${line}p" "$f")
    case "$orig" in *"/* storage: not a table file"*) continue ;; esac
    name=$(grep -oE "$PATTERN" <<<"$text" | head -1 | sed -E 's/^[^A-Za-z_]*//; s/[[:space:]]*\($//')
    echo "$f:$line: calls $name(): table files are reached only through lib/storage/store.h" >&2
    bad=$((bad + 1))
  done < <(sed -E 's:^[[:space:]]*(/\*|\*).*$::; s://.*$::; s:/\*([^*]|\*+[^*/])*\*+/: :g; s:"([^"\\]|\\.)*":"":g' "$f" |
             grep -nE "$PATTERN" || true)
done < <(find lib -name '*.c' -not -path 'lib/storage/*' -not -path 'lib/util/*' | sort)

# The dialects: the files of each (globs in lib/storage/) and the words that
# name its store (grep -iE). A new dialect adds a line to both.
declare -A DIALECT_FILES=([s3]='s3_* aws_*' [azure]='azure_*')
declare -A DIALECT_NAMES=([s3]='(^|[^a-z0-9])(s3|aws|amz|sigv4)' [azure]='azure|(^|[^a-z0-9])az://|x-ms-')
mixed=0
for d in "${!DIALECT_FILES[@]}"; do
  for other in "${!DIALECT_NAMES[@]}"; do
    [ "$other" != "$d" ] || continue
    for glob in ${DIALECT_FILES[$d]}; do
      for f in lib/storage/$glob; do
        [ -f "$f" ] || continue
        while IFS=: read -r line _; do
          echo "$f:$line: names $other: the $d dialect's files speak of their own store alone (what dialects share: lib/storage/object_*)" >&2
          mixed=$((mixed + 1))
        done < <(grep -niE "${DIALECT_NAMES[$other]}" "$f" || true)
      done
    done
  done
done

if ((bad)); then
  echo "check-storage: $bad call(s) bypass the storage interface (docs/architecture.md)" >&2
fi
if ((mixed)); then
  echo "check-storage: $mixed line(s) of a dialect's files name another store (docs/architecture.md)" >&2
fi
((bad || mixed)) && exit 1
echo "check-storage: ok"
