#!/usr/bin/env bash
# Install the Debian packages the test suite needs and Python cannot bring: redis-server (Redis
# broker tests), PostgreSQL (the scale-out pass), Debian's chromium (browser tests; never a
# downloaded browser build), Pango + fonts for WeasyPrint and poppler-utils (pdftoppm: the PDF as PNG pages). Only missing packages are installed.
set -euo pipefail

packages=(chromium redis-server postgresql libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core poppler-utils)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "system-deps: missing ${missing[*]} and no root to install them; the tests that need them will fail." >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
