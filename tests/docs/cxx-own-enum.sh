# tests/docs/cxx-own-enum.sh — docs/generated-api.md's excerpt of a generated
# header (check-docs runs it): how tests/corpus/real/cxx_own_enums.cu's
# nn::Norm, from a header host C++ can include, is the application's own
# enum in C++ and a mirror in C.
set -e
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"${KSTUB:-build/bin/kstub}" tests/corpus/real/cxx_own_enums.cu -o "$t/e.kstub"
sed -n '/^#define KS_TYPE_nn_Norm$/,/^#endif$/p' "$t/e.kstub.h" | sed '1d'
