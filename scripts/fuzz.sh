#!/usr/bin/env bash
# `make fuzz` / `make fuzz-smoke`: builds cellpath-fuzz with libFuzzer and AddressSanitizer in
# .build/fuzz, runs every target FUZZ_RUNS times from its seed corpus (Tests/FuzzCorpus/<target>)
# one after the other, and prints a Markdown table. Exits non-zero when a target crashed or broke
# an invariant; the input is in .build/fuzz/artifacts/<target>/. How to use it: docs/fuzzing.md.
#
#   FUZZ_RUNS     executions per target (default: 1000000)
#   FUZZ_TARGETS  the targets to run, space-separated (default: all, in `cellpath-fuzz`'s order)
#   FUZZ_JOBS     build jobs (default: 2)
#   FUZZ_MAX_SECONDS  stop each target after this many seconds even before FUZZ_RUNS (default: none)
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
RUNS=${FUZZ_RUNS:-1000000}
SCRATCH=.build/fuzz
# libFuzzer without its main(): cellpath-fuzz has its own and calls LLVMFuzzerRunDriver.
RESOURCE_DIR=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/../lib/clang
LIBFUZZER=$(ls "$RESOURCE_DIR"/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -n 1)
[ -n "$LIBFUZZER" ] || { echo "fuzz: libclang_rt.fuzzer_no_main not found under $RESOURCE_DIR" >&2; exit 1; }

echo "fuzz: building cellpath-fuzz (AddressSanitizer, libFuzzer coverage) in $SCRATCH" >&2
# The linker's notes about ASan's local symbols are noise: filtered out.
mkdir -p "$SCRATCH"
build_status=0
CELLPATH_FUZZ=1 "$SWIFT" build -c release --scratch-path "$SCRATCH" --product cellpath-fuzz -j "${FUZZ_JOBS:-2}" \
    -Xswiftc -enable-testing -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
    -Xlinker "$LIBFUZZER" -Xlinker -lstdc++ > "$SCRATCH/build.log" 2>&1 || build_status=$?
grep -v -e "Cannot export local symbol" "$SCRATCH/build.log" | grep -E "error|warning: .*Fuzz/|Build" >&2 || true
[ "$build_status" = 0 ] || { echo "fuzz: the build failed (full log: $SCRATCH/build.log)" >&2; exit 1; }
FUZZER="$SCRATCH/release/cellpath-fuzz"

# Seeds are hand-made and named for what they are; libFuzzer names what it writes by its SHA-1,
# which lands there when a hand run names the seed directory first.
generated=$(find Tests/FuzzCorpus -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' | head -n 3)
[ -z "$generated" ] || { echo "fuzz: generated inputs in the seed corpus (name the seeds, or move them out): $generated" >&2; exit 1; }

targets=${FUZZ_TARGETS:-$("$FUZZER" --list)}
# Swift's own crash backtracer takes seconds per crash; libFuzzer and ASan print what is needed.
export SWIFT_BACKTRACE=enable=no
failed=0
printf '| target | executions | executions/s | coverage (edges) | crashes |\n|---|---:|---:|---:|---:|\n'
for target in $targets; do
    work="$SCRATCH/corpus/$target" artifacts="$SCRATCH/artifacts/$target" log="$SCRATCH/logs/$target.log"
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*
    # The first directory receives the inputs libFuzzer finds; the seeds stay as they are.
    # GLib's key-file parser keeps what it interns (quarks) for the process, and Swift's concurrency
    # runtime what its executor allocates: every run of those targets looks like a leak to libFuzzer,
    # whose leak scan then takes three quarters of the time or more. Off for them.
    options=()
    case "$target" in configuration | webhook) options+=(-detect_leaks=0) ;; esac
    [ -n "${FUZZ_MAX_SECONDS:-}" ] && options+=(-max_total_time="$FUZZ_MAX_SECONDS")
    status=0
    started=$(date +%s%N)
    "$FUZZER" "$target" -runs="$RUNS" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 "${options[@]}" \
        -artifact_prefix="$artifacts/" "$work" "Tests/FuzzCorpus/$target" >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    # Over the whole run, start-up included (libFuzzer's own figure is 0 for a run under a second).
    elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
    speed=${executions:+$(( executions * 1000 / (elapsed_ms > 0 ? elapsed_ms : 1) ))}
    edges=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+' || true)
    crashes=$(find "$artifacts" -type f | wc -l)
    printf '| %s | %s | %s | %s | %s |\n' "$target" "${executions:-?}" "${speed:-?}" "${edges:-?}" "$crashes"
    if [ "$status" != 0 ] || [ "$crashes" != 0 ]; then
        failed=1
        echo "fuzz: $target failed (exit $status); log $log, inputs in $artifacts/:" >&2
        grep -E -m 5 'invariant failed|ERROR: AddressSanitizer|Fatal error|deadly signal|ERROR: libFuzzer' "$log" >&2 || tail -n 20 "$log" >&2
    fi
done
exit "$failed"
