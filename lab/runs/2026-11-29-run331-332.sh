#!/usr/bin/env bash
# Runs 332 then 331 in one call: each writes its own summary under $OUT.
set -uo pipefail
O=$OUT
mkdir -p $O/r332 $O/r331
OUT=$O/r332 bash lab/runs/2026-11-29-run332.sh > /dev/null 2>&1
OUT=$O/r331 bash lab/runs/2026-11-29-run331.sh > /dev/null 2>&1
cat $O/r332/summary.txt; echo ======; cat $O/r331/summary.txt
