# tests/docs/wrong-pointer-clang.sh — docs/generated-api.md's report of a
# wrong pointer type under clang (check-docs runs it): wrong-pointer.sh's
# caller, an int * for saxpy's const float *x in C11, compiled by clang.
DOC_CC=clang exec sh tests/docs/wrong-pointer.sh
