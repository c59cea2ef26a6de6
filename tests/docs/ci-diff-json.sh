# tests/docs/ci-diff-json.sh — docs/ci.md's kstub diff --format=json (check-docs runs it).
. tests/docs/setup.sh
kstub kernels/vector_ops.cu -o new/vector_ops.kstub --manifest new/vector_ops.kstub.json
kstub diff --format=json build/vector_ops.kstub.json new/vector_ops.kstub.json 2>&1 || true
