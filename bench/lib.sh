# bench/lib.sh: what the benchmarks share (sourced from bench/*.sh).
#
# same_scan A B: exits non-zero when the brictl scan JSON files differ in
# rows or in any column's hash.
same_scan() {
  node -e '
    const [a, b] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f)));
    if (a.rows !== b.rows) { console.error(`rows changed: ${a.rows} -> ${b.rows}`); process.exit(1); }
    for (const [k, v] of Object.entries(a.columns))
      if (!b.columns[k] || v.sha256 !== b.columns[k].sha256) { console.error("hash changed:", k); process.exit(1); }' "$1" "$2"
}
