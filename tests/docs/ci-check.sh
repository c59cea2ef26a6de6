# tests/docs/ci-check.sh — docs/ci.md's kstub check report (check-docs runs it).
. tests/docs/setup.sh
kstub check kernels/vector_ops.cu -o build/vector_ops.kstub --manifest build/vector_ops.kstub.json 2>&1 || true
