# tests/docs/deps-list.sh — README.md's list of the packages scripts/deps.sh
# installs, as it prints them (check-docs runs it).
set -e
printf '$ bash scripts/deps.sh --list\n'
bash scripts/deps.sh --list
